"""Image generation and edits through the gateway (OpenAI's ``POST
/v1/images/generations`` and ``POST /v1/images/edits``)."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _multipart
from ._http import Client
from ._multipart import Content, guess_type, read_content

#: An image of an edit: its content (bytes, a path or an open binary file), or a tuple
#: ``(filename, content)`` or ``(filename, content, content_type)``.
ImageInput = Union[Content, Tuple[str, Content], Tuple[str, Content, str]]


def generate_images(prompt: str, *, model: Optional[str] = None, n: Optional[int] = None,
                    size: Optional[str] = None, quality: Optional[str] = None,
                    response_format: Optional[str] = None, style: Optional[str] = None,
                    background: Optional[str] = None, output_format: Optional[str] = None,
                    output_compression: Optional[int] = None, moderation: Optional[str] = None,
                    user: Optional[str] = None, tags: Optional[Sequence[str]] = None,
                    extra: Optional[Mapping[str, Any]] = None,
                    client: Optional[Client] = None) -> Dict[str, Any]:
    """Draws images from ``prompt`` and returns ``{"created", "data": [{"url" or
    "b64_json", "revised_prompt"}], "model", "usage"}``. ``model`` is ``"provider/model"``,
    a bare OpenAI image model (``"dall-e-3"``, ``"gpt-image-1"``; the gateway's default is
    dall-e-2) or a model group; ``n`` 1 to 10; ``size`` WIDTHxHEIGHT or auto; ``quality``
    standard or hd (dall-e-3), low, medium or high (gpt-image), or auto;
    ``response_format`` url or b64_json (dall-e only); ``style`` vivid or natural
    (dall-e-3); ``background``, ``output_format``, ``output_compression`` and
    ``moderation`` gpt-image's only. ``extra`` are more body fields passed on to the
    provider as they are (the named ones win). A bad field raises BadRequestError whose
    ``param`` names it; a model the key may not call PermissionDeniedError; an unknown
    model NotFoundError."""
    body: Dict[str, Any] = dict(extra or {})
    named = {"model": model, "prompt": prompt, "n": n, "size": size, "quality": quality,
             "response_format": response_format, "style": style, "background": background,
             "output_format": output_format, "output_compression": output_compression,
             "moderation": moderation, "user": user, "tags": list(tags) if tags is not None else None}
    body.update({k: v for k, v in named.items() if v is not None})
    return (client or Client()).request("POST", "/v1/images/generations", body=body)


def _image_part(field: str, image: Any) -> _multipart.Part:
    name, ctype = None, None
    if isinstance(image, tuple):
        if len(image) == 2:
            name, image = image
        elif len(image) == 3:
            name, image, ctype = image
        else:
            raise ValueError(f"{field}: a tuple must be (filename, content) or (filename, content, content_type)")
    data, name = read_content(image, name)
    name = name or "image.png"
    return _multipart.Part(field, name, ctype or guess_type(name, "image/png"), data)


def edit_images(prompt: str, images: Union[ImageInput, Sequence[ImageInput]], *, mask: Optional[ImageInput] = None,
                model: Optional[str] = None, n: Optional[int] = None, size: Optional[str] = None,
                quality: Optional[str] = None, response_format: Optional[str] = None,
                background: Optional[str] = None, output_format: Optional[str] = None,
                output_compression: Optional[int] = None, input_fidelity: Optional[str] = None,
                user: Optional[str] = None, extra: Optional[Mapping[str, str]] = None,
                client: Optional[Client] = None) -> Dict[str, Any]:
    """Edits ``images`` as ``prompt`` says and returns the images made, as
    ``generate_images`` does. ``images`` is one image or a list of them (dall-e-2: one
    square PNG under 4 MB; gpt-image models: up to 16 png, webp or jpg files under 50 MB
    each), each its bytes, a path, an open binary file, or a tuple ``(filename,
    content[, content_type])``; the media type is told from the file name's extension
    when not given (else image/png). ``mask`` is a PNG whose fully transparent areas say
    where to edit. ``model`` is ``"provider/model"``, a bare OpenAI image model (the
    gateway's default is dall-e-2, or gpt-image-1 with several images or a gpt-image
    field) or a model group; ``input_fidelity`` high or low (gpt-image-1); ``extra`` more
    form fields passed on as they are. The form is built in memory and sent as one body
    (so a failed attempt can be resent). A bad field raises BadRequestError whose
    ``param`` names it; files over the route's limit PayloadTooLargeError; a model the
    key may not call PermissionDeniedError."""
    if isinstance(images, list):
        many: List[Any] = images
    else:
        many = [images]
    fields = [(k, str(v)) for k, v in (("model", model), ("prompt", prompt), ("n", n), ("size", size),
                                        ("quality", quality), ("response_format", response_format),
                                        ("background", background), ("output_format", output_format),
                                        ("output_compression", output_compression),
                                        ("input_fidelity", input_fidelity), ("user", user))
              if v is not None and (v != "" or k == "prompt")]
    fields.extend((k, str(v)) for k, v in (extra or {}).items())
    field = "image[]" if len(many) > 1 else "image"
    parts = [_image_part(field, im) for im in many]
    if mask is not None:
        parts.append(_image_part("mask", mask))
    body, ctype = _multipart.encode(fields, parts)
    return (client or Client()).request("POST", "/v1/images/edits", raw=body, content_type=ctype)
