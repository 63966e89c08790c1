"""Moderation through the gateway (OpenAI's ``POST /v1/moderations``)."""

from __future__ import annotations

from typing import Any, Dict, Optional, Sequence

from ._http import Client


def moderate(input: Any, *, model: Optional[str] = None, tags: Optional[Sequence[str]] = None,
             client: Optional[Client] = None) -> Dict[str, Any]:
    """Classifies ``input`` for harm and returns ``{"id", "model", "results": [{"flagged",
    "categories", "category_scores", "category_applied_input_types"}]}``. ``input`` is a
    text, a list of texts (a result each) or a list of parts (one result): ``{"type":
    "text", "text"}`` and ``{"type": "image_url", "image_url": {"url"}}`` (a data URL
    too). ``model`` is ``"provider/model"``, a bare OpenAI moderation model (the gateway's
    default, ``omni-moderation-latest``, when None) or a model group. A bad field raises
    BadRequestError whose ``param`` names it; a model the key may not call
    PermissionDeniedError; an unknown model NotFoundError."""
    body: Dict[str, Any] = {"input": input if isinstance(input, str) else list(input)}
    if model is not None:
        body["model"] = model
    if tags is not None:
        body["tags"] = list(tags)
    return (client or Client()).request("POST", "/v1/moderations", body=body)
