"""Teams: one USD budget, request and token rate and model list shared by every virtual key
given its ``team_id`` (``POST /api/v1/teams`` and the routes under it; LiteLLM's teams)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence
from urllib.parse import quote

from ._http import Client
from .errors import MissingIdError


def _team_path(team_id: str) -> str:
    if not team_id:
        raise MissingIdError("no team id")
    return "/api/v1/teams/" + quote(team_id, safe="")


def create_team(*, team_id: Optional[str] = None, name: Optional[str] = None,
                models: Optional[Sequence[str]] = None, max_budget_usd: Optional[float] = None,
                budget_duration: Optional[str] = None, requests_per_minute: Optional[int] = None,
                tokens_per_minute: Optional[int] = None, metadata: Optional[Dict[str, Any]] = None,
                blocked: Optional[bool] = None, organization_id: Optional[str] = None,
                tags: Optional[Sequence[str]] = None, max_parallel_requests: Optional[int] = None,
                client: Optional[Client] = None) -> Dict[str, Any]:
    """Creates a team of the calling key and returns it (``{"team_id", "name", ...,
    "created_at", "spend", "key_ids"}``). ``team_id`` is its id (letters, digits and
    ``. _ - :``; none: the server makes one); ``models`` the models its keys may call (none:
    every one); ``max_budget_usd`` what all its keys together may spend, per
    ``budget_duration`` (e.g. ``"30d"``) when given; ``requests_per_minute`` and
    ``tokens_per_minute`` bound all its keys together; ``blocked`` creates it with every key
    refused until unblocked; ``organization_id`` puts it in an organization
    (``create_organization``), within whose models its own must be; ``tags`` are the team's
    tags (LiteLLM's team-level tags, kept as ``metadata["tags"]``): every request of its keys
    carries them after the key's own, for tag routing, tag budgets and spend per tag;
    ``max_parallel_requests`` bounds the requests all its keys together have in flight at
    once (LiteLLM's team max_parallel_requests; each key's own bound still applies; one
    more raises RateLimitError naming the team). Put a key in it with ``issue_key(team_id=...)``. A bad field
    raises ValidationError naming it; a ``team_id`` taken ConflictError; a virtual key
    calling PermissionDeniedError."""
    body = {k: v for k, v in {
        "team_id": team_id, "name": name, "models": list(models) if models is not None else None,
        "max_budget_usd": max_budget_usd, "budget_duration": budget_duration,
        "requests_per_minute": requests_per_minute, "tokens_per_minute": tokens_per_minute,
        "metadata": metadata, "blocked": blocked, "organization_id": organization_id,
        "tags": list(tags) if tags is not None else None,
        "max_parallel_requests": max_parallel_requests}.items() if v is not None}
    return (client or Client()).request("POST", "/api/v1/teams", body=body)


def get_team(team_id: str, *, client: Optional[Client] = None) -> Dict[str, Any]:
    """Returns one team of the calling key with its spend and the ids of its keys;
    NotFoundError for an unknown id (or another key's)."""
    return (client or Client()).request("GET", _team_path(team_id))


def list_teams(*, client: Optional[Client] = None) -> List[Dict[str, Any]]:
    """Returns the calling key's teams, oldest first, with their spend and keys."""
    return (client or Client()).request("GET", "/api/v1/teams").get("data", [])


def update_team(team_id: str, *, client: Optional[Client] = None, **fields: Any) -> Dict[str, Any]:
    """Changes the fields given (``name``, ``models``, ``max_budget_usd``,
    ``budget_duration``, ``requests_per_minute``, ``tokens_per_minute``, ``metadata``,
    ``blocked``, ``tags``, ``max_parallel_requests``; ``max_parallel_requests=0`` or ``None``
    removes the bound, ``models=[]`` allows every model, ``metadata`` replaces the labels
    whole, ``tags`` the team's tags alone, ``[]`` or ``None`` removing them)
    and returns the team as it is now; its spend and keys are kept. A bad or unknown field
    raises ValidationError naming it (a team's id cannot be changed); an unknown team
    NotFoundError."""
    return (client or Client()).request("PATCH", _team_path(team_id), body=fields)


def delete_team(team_id: str, *, client: Optional[Client] = None) -> Dict[str, Any]:
    """Deletes a team and revokes its virtual keys at once on every replica; returns
    ``{"team_id", "deleted": True, "deleted_keys": [key ids]}``. NotFoundError for an
    unknown id."""
    return (client or Client()).request("DELETE", _team_path(team_id))
