"""OpenAI's Files and Batch APIs, run by the server's own gateway: upload a JSONL file of
requests (``purpose="batch"``), run it as a batch as the calling key (its budgets, models
and usage log), poll it, download its output and error files (``POST /v1/files``,
``/v1/batches`` and the routes under them)."""

from __future__ import annotations

import json
import os
from typing import Any, BinaryIO, Dict, List, Mapping, Optional, Union
from urllib.parse import quote

from . import _multipart
from ._http import Client
from ._multipart import read_content
from .errors import MissingIdError, SwitchyardError

#: States after which a batch changes no more.
ENDED = ("completed", "failed", "expired", "cancelled")


def upload_file(content: Union[bytes, str, "os.PathLike[str]", BinaryIO], *, filename: Optional[str] = None,
                purpose: str = "batch", expires_after_seconds: Optional[int] = None,
                client: Optional[Client] = None) -> Dict[str, Any]:
    """Uploads a batch input and returns its file object. ``content`` is the JSONL bytes, a
    path, or an open binary file; one request per line: ``{"custom_id", "method": "POST",
    "url", "body"}``. The server checks every line: a bad one raises BadRequestError whose
    message names the line and the field; a file over the server's bound
    PayloadTooLargeError. ``expires_after_seconds`` (3600 to 2592000) bounds its life
    (default 30 days)."""
    data, filename = read_content(content, filename)
    fields = [("purpose", purpose)]
    if expires_after_seconds is not None:
        fields.append(("expires_after[anchor]", "created_at"))
        fields.append(("expires_after[seconds]", str(expires_after_seconds)))
    body, ctype = _multipart.encode(fields, [_multipart.Part("file", filename or "batch.jsonl", "application/jsonl", data)])
    return (client or Client()).request("POST", "/v1/files", raw=body, content_type=ctype)


def _id(kind: str, value: str) -> str:
    if not value:
        raise MissingIdError(f"no {kind} id")
    return quote(value, safe="")


def get_file(file_id: str, *, client: Optional[Client] = None) -> Dict[str, Any]:
    """Returns one of the key's files (NotFoundError for another key's or an expired one)."""
    return (client or Client()).request("GET", "/v1/files/" + _id("file", file_id))


def list_files(*, purpose: Optional[str] = None, limit: Optional[int] = None, after: Optional[str] = None,
               order: Optional[str] = None, client: Optional[Client] = None) -> Dict[str, Any]:
    """Returns a page of the key's files: ``{"data", "first_id", "last_id", "has_more"}``;
    ``purpose`` is ``batch`` or ``batch_output``, ``order`` ``desc`` (default) or ``asc``,
    ``after`` the previous page's ``last_id``."""
    q = {k: str(v) for k, v in {"purpose": purpose, "limit": limit, "after": after, "order": order}.items() if v is not None}
    return (client or Client()).request("GET", "/v1/files", q)


def file_content(file_id: str, *, client: Optional[Client] = None) -> bytes:
    """Returns a file's content."""
    return (client or Client()).request_bytes("GET", "/v1/files/" + _id("file", file_id) + "/content",
                                               accept="application/jsonl, application/octet-stream")


def delete_file(file_id: str, *, client: Optional[Client] = None) -> Dict[str, Any]:
    """Deletes a file; ConflictError when it is the input of a batch that has not ended."""
    return (client or Client()).request("DELETE", "/v1/files/" + _id("file", file_id))


def create_batch(input_file_id: str, endpoint: str = "/v1/chat/completions", *, completion_window: str = "24h",
                 metadata: Optional[Mapping[str, str]] = None, output_expires_after_seconds: Optional[int] = None,
                 client: Optional[Client] = None) -> Dict[str, Any]:
    """Runs an uploaded batch input through the gateway as the calling key and returns the
    batch (status ``validating``). ``endpoint`` is ``/v1/chat/completions``,
    ``/v1/embeddings``, ``/v1/responses`` or ``/v1/completions``: every line's url."""
    body: Dict[str, Any] = {"input_file_id": input_file_id, "endpoint": endpoint, "completion_window": completion_window}
    if metadata is not None:
        body["metadata"] = dict(metadata)
    if output_expires_after_seconds is not None:
        body["output_expires_after"] = {"anchor": "created_at", "seconds": output_expires_after_seconds}
    return (client or Client()).request("POST", "/v1/batches", body=body)


def get_batch(batch_id: str, *, client: Optional[Client] = None) -> Dict[str, Any]:
    """Returns one of the key's batches: its status, request_counts, usage and files."""
    return (client or Client()).request("GET", "/v1/batches/" + _id("batch", batch_id))


def list_batches(*, after: Optional[str] = None, limit: Optional[int] = None,
                 client: Optional[Client] = None) -> Dict[str, Any]:
    """Returns a page of the key's batches, newest first (``limit`` 1 to 100, default 20)."""
    q = {k: str(v) for k, v in {"after": after, "limit": limit}.items() if v is not None}
    return (client or Client()).request("GET", "/v1/batches", q)


def cancel_batch(batch_id: str, *, client: Optional[Client] = None) -> Dict[str, Any]:
    """Cancels a batch: it answers ``cancelling`` (``cancelled`` for one not started) and
    ends cancelled with what it had answered. ConflictError for a batch that has ended."""
    return (client or Client()).request("POST", "/v1/batches/" + _id("batch", batch_id) + "/cancel")


def wait_batch(batch_id: str, *, poll_every: float = 2.0, timeout: Optional[float] = None,
               client: Optional[Client] = None) -> Dict[str, Any]:
    """Polls the batch every ``poll_every`` seconds until it has ended (completed, failed,
    expired or cancelled) and returns it. Past ``timeout`` seconds (None: no bound) raises
    SwitchyardError. ``poll_every`` of 0 or less is the default 2 s (never a busy loop). The
    waits go through the client's ``sleep``, the timeout is measured
    with its ``clock``."""
    c = client or Client()
    deadline = None if timeout is None else c._now() + timeout
    while True:
        b = get_batch(batch_id, client=c)
        if b.get("status") in ENDED:
            return b
        wait = poll_every if poll_every > 0 else 2.0  # 0: the default, as in Go
        if deadline is not None:
            left = deadline - c._now()
            if left <= 0:
                raise SwitchyardError(f"batch {batch_id} is still {b.get('status')} after {timeout:g} s")
            wait = min(wait, left)  # a last poll at the deadline, as wait() does
        c._wait(wait)


def batch_results(file_id: Optional[str], *, client: Optional[Client] = None) -> List[Dict[str, Any]]:
    """Downloads a batch's output or error file and returns its lines, in input order:
    ``{"id", "custom_id", "response": {"status_code", "request_id", "body"}, "error"}``.
    None (a batch without that file) gives an empty list."""
    if not file_id:
        return []
    raw = file_content(file_id, client=client)
    # Split on "\n" only: str.splitlines also breaks at U+0085 and U+001C-1E, which JSON
    # leaves unescaped inside strings.
    return [json.loads(line) for line in raw.split(b"\n") if line.strip()]
