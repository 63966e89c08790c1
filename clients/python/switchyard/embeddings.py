"""Embeddings through the gateway (OpenAI's ``POST /v1/embeddings``)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Union

from ._http import Client


def embed(input: Union[str, Sequence[str]], *, model: str, dimensions: Optional[int] = None,
          user: Optional[str] = None, tags: Optional[Sequence[str]] = None,
          client: Optional[Client] = None) -> Dict[str, Any]:
    """Embeds ``input`` (a text, or up to 2,048 texts, none empty) with ``model``
    (``"provider/model"``, a bare name one configured provider catalogues such as
    ``"text-embedding-3-small"``, or a model group of deployments of one model) and returns
    OpenAI's answer: ``{"data": [{"index", "embedding": [floats]}], "model", "usage":
    {"prompt_tokens", "total_tokens", "costs"}}``; ``vectors(answer)`` gives the vectors in
    the inputs' order. ``dimensions`` shortens the vectors where the model allows it;
    ``tags`` label the request for cost attribution. A bad field raises BadRequestError
    whose ``param`` names it; a model the key may not call PermissionDeniedError; an
    unknown model NotFoundError."""
    body: Dict[str, Any] = {"model": model, "input": input if isinstance(input, str) else list(input)}
    if dimensions is not None:
        body["dimensions"] = dimensions
    if user is not None:
        body["user"] = user
    if tags is not None:
        body["tags"] = list(tags)
    return (client or Client()).request("POST", "/v1/embeddings", body=body)


def vectors(answer: Dict[str, Any]) -> List[List[float]]:
    """The vectors of an ``embed`` answer, in the inputs' order."""
    data = answer.get("data") or []
    out: List[List[float]] = [[] for _ in data]
    for d in data:
        i = d.get("index", -1)
        if 0 <= i < len(out):
            out[i] = d.get("embedding") or []
    return out
