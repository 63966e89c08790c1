"""Reranking through the gateway (Cohere's ``POST /v1/rerank``)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Union

from ._http import Client


def rerank(query: str, documents: Sequence[Union[str, Dict[str, Any]]], *, model: str,
           top_n: Optional[int] = None, return_documents: Optional[bool] = None,
           max_tokens_per_doc: Optional[int] = None, rank_fields: Optional[Sequence[str]] = None,
           tags: Optional[Sequence[str]] = None, client: Optional[Client] = None) -> Dict[str, Any]:
    """Ranks ``documents`` (up to 1,000 texts, none empty, or objects with a ``text``) by
    their relevance to ``query`` with ``model`` (``"cohere/rerank-v3.5"``, a bare name one
    configured provider catalogues, or a model group) and returns ``{"id", "results":
    [{"index", "relevance_score", "document"}], "meta": {"billed_units"}, "model",
    "usage"}``, most relevant first (``indexes(answer)`` gives the documents' indexes).
    ``top_n`` keeps that many results; ``return_documents`` puts each result's document in
    the answer; ``max_tokens_per_doc`` truncates each document (Cohere's models only);
    ``rank_fields`` names the fields of object documents to rank on. A bad field raises
    BadRequestError whose ``param`` names it; a model the key may not call
    PermissionDeniedError; an unknown model NotFoundError."""
    body: Dict[str, Any] = {"model": model, "query": query, "documents": list(documents)}
    for name, value in (("top_n", top_n), ("return_documents", return_documents),
                        ("max_tokens_per_doc", max_tokens_per_doc),
                        ("rank_fields", list(rank_fields) if rank_fields is not None else None),
                        ("tags", list(tags) if tags is not None else None)):
        if value is not None:
            body[name] = value
    return (client or Client()).request("POST", "/v1/rerank", body=body)


def indexes(answer: Dict[str, Any]) -> List[int]:
    """The documents' indexes of a ``rerank`` answer, most relevant first."""
    return [r["index"] for r in answer.get("results") or []]
