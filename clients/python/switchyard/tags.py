"""Tag budgets: LiteLLM's ``POST /tag/new`` and the routes beside it. A tag given a budget
holds one account that every request naming the tag (``complete(..., tags=[...])``, the
OpenAI surfaces' ``metadata.tags``, an ``x-litellm-tags`` header), of any virtual key of the
calling key, also draws on; past it those requests are refused (RateLimitError, "Budget has
been exceeded! Tag=...") while requests without the tag go on. They mirror the Go client's
(client/tags.go)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from ._http import Client
from .errors import MissingIdError


def create_tag(name: str, *, description: Optional[str] = None, max_budget: Optional[float] = None,
               soft_budget: Optional[float] = None, budget_duration: Optional[str] = None,
               tpm_limit: Optional[int] = None, models: Optional[Sequence[str]] = None,
               client: Optional[Client] = None) -> Dict[str, Any]:
    """Gives the tag ``name`` (1-64 letters, digits or ``. _ : / -``) a budget and returns it
    (``{"name", "description", "litellm_budget_table": {"max_budget", ...}, "spend",
    ...}``): ``max_budget`` is what the requests naming it may spend together, per
    ``budget_duration`` (``"30d"``); ``models`` are deployments (``model_info.id``, or model
    group names) that carry the tag for tag routing (LiteLLM's tag models). A bad field
    raises BadRequestError naming it; a tag that exists ConflictError."""
    if not name:
        raise MissingIdError("no tag")
    body = {k: v for k, v in {
        "name": name, "description": description, "max_budget": max_budget, "soft_budget": soft_budget,
        "budget_duration": budget_duration, "tpm_limit": tpm_limit,
        "models": list(models) if models is not None else None}.items() if v is not None}
    return (client or Client()).request("POST", "/tag/new", body=body)["tag"]


def update_tag(name: str, *, client: Optional[Client] = None, **fields: Any) -> Dict[str, Any]:
    """Changes the fields given (``description``, ``max_budget``, ``soft_budget``,
    ``budget_duration``, ``tpm_limit``, ``models``) and returns the tag as it is now; its
    spend is kept. ``None`` is sent as null, which removes a bound; ``models`` replaces the
    tag's deployments (``[]`` or ``None`` removes them). NotFoundError for an unknown tag."""
    if not name:
        raise MissingIdError("no tag")
    body = dict(fields)
    body["name"] = name
    return (client or Client()).request("POST", "/tag/update", body=body)["tag"]


def get_tag(name: str, *, client: Optional[Client] = None) -> Dict[str, Any]:
    """Returns the tag with its limits and ``spend``; NotFoundError for an unknown tag."""
    if not name:
        raise MissingIdError("no tag")
    return (client or Client()).request("POST", "/tag/info", body={"names": [name]})[name]


def list_tags(*, client: Optional[Client] = None) -> List[Dict[str, Any]]:
    """Returns the calling key's tags with budgets."""
    return (client or Client()).request("GET", "/tag/list") or []


def delete_tag(name: str, *, client: Optional[Client] = None) -> Dict[str, Any]:
    """Deletes the tag with its account (requests naming it then draw on no budget);
    NotFoundError for an unknown tag."""
    if not name:
        raise MissingIdError("no tag")
    return (client or Client()).request("POST", "/tag/delete", body={"name": name})
