"""multipart/form-data bodies of uploads (batch inputs, image edits)."""

from __future__ import annotations

import mimetypes
import os
import uuid
from typing import Any, BinaryIO, Iterable, List, Optional, Sequence, Tuple, Union

#: What an upload's content may be: its bytes, a path, or an open binary file.
Content = Union[bytes, bytearray, str, "os.PathLike[str]", BinaryIO]


class Part:
    """One file of a form: its form field, file name, media type and bytes."""

    def __init__(self, field: str, filename: str, content_type: str, data: bytes):
        self.field = field
        self.filename = filename
        self.content_type = content_type
        self.data = data


def read_content(content: Any, filename: Optional[str] = None) -> Tuple[bytes, str]:
    """Returns the bytes of ``content`` (bytes, a path, or an open binary file, read from
    where it is to its end) and its file name: ``filename`` when given, else the path's or
    the file's base name ("" when it has none)."""
    if isinstance(content, (str, os.PathLike)):
        with open(content, "rb") as f:
            return f.read(), filename or os.path.basename(os.fspath(content))
    if isinstance(content, (bytes, bytearray)):
        return bytes(content), filename or ""
    data = content.read()
    if not isinstance(data, bytes):
        raise TypeError(f"content must be bytes, a path or a binary file, not a {type(content).__name__} "
                        "giving " + type(data).__name__)
    return data, filename or os.path.basename(getattr(content, "name", "") or "")


def guess_type(filename: str, default: str) -> str:
    """The media type of ``filename`` by its extension, or ``default``."""
    return mimetypes.guess_type(filename)[0] or default


def _quote(value: str) -> str:
    return value.replace('"', "%22").replace("\r", "").replace("\n", "")


def encode(fields: Iterable[Tuple[str, str]], parts: Sequence[Part]) -> Tuple[bytes, str]:
    """Returns the form of ``fields`` (name, value pairs, in order) then ``parts``, and its
    Content-Type (with the boundary)."""
    boundary = "switchyard-" + uuid.uuid4().hex
    out: List[bytes] = []
    for name, value in fields:
        out.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{_quote(name)}"\r\n\r\n'
                   f'{value}\r\n'.encode("utf-8"))
    for p in parts:
        out.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{_quote(p.field)}"; '
                   f'filename="{_quote(p.filename)}"\r\nContent-Type: {p.content_type}\r\n\r\n'.encode("utf-8"))
        out.append(p.data)
        out.append(b"\r\n")
    out.append(f"--{boundary}--\r\n".encode("utf-8"))
    return b"".join(out), "multipart/form-data; boundary=" + boundary
