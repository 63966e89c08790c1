"""Virtual keys: API keys an operator issues from their own key, each held to some models,
a USD budget (for all time or per period), tokens, requests, a request rate and a lifetime,
with its spend metered (``POST /api/v1/keys`` and the routes under it)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence
from urllib.parse import quote

from ._http import Client
from .errors import MissingIdError


def issue_key(*, name: Optional[str] = None, models: Optional[Sequence[str]] = None,
              max_budget_usd: Optional[float] = None, budget_duration: Optional[str] = None,
              max_tokens: Optional[int] = None, max_requests: Optional[int] = None,
              requests_per_minute: Optional[int] = None, tokens_per_minute: Optional[int] = None,
              expires_at: Optional[str] = None, metadata: Optional[Dict[str, Any]] = None,
              blocked: Optional[bool] = None, guardrails: Optional[Sequence[str]] = None,
              team_id: Optional[str] = None, soft_budget_usd: Optional[float] = None,
              mcp_servers: Optional[Sequence[str]] = None,
              client: Optional[Client] = None) -> Dict[str, Any]:
    """Issues a virtual key and returns it; its ``key`` is shown this once. ``models`` are
    provider/model names, bare names or model groups; ``budget_duration`` is e.g. ``"30d"``;
    ``expires_at`` an RFC 3339 time; ``guardrails`` names server guardrails every chat request
    of the key runs; ``team_id`` puts the key in a team (its budget, models and rates);
    ``soft_budget_usd`` is a mark that never blocks and sends a budget alert; ``mcp_servers``
    are the MCP servers the key may use (none given: every one). A bad field raises
    ValidationError naming it."""
    body = {k: v for k, v in {
        "name": name, "models": list(models) if models is not None else None, "max_budget_usd": max_budget_usd,
        "budget_duration": budget_duration, "max_tokens": max_tokens, "max_requests": max_requests,
        "requests_per_minute": requests_per_minute, "tokens_per_minute": tokens_per_minute,
        "expires_at": expires_at, "metadata": metadata, "blocked": blocked,
        "guardrails": list(guardrails) if guardrails is not None else None, "team_id": team_id,
        "soft_budget_usd": soft_budget_usd,
        "mcp_servers": list(mcp_servers) if mcp_servers is not None else None}.items() if v is not None}
    return (client or Client()).request("POST", "/api/v1/keys", body=body)


def list_keys(*, client: Optional[Client] = None) -> List[Dict[str, Any]]:
    """Returns the virtual keys the calling key issued, newest first, with their spend."""
    return (client or Client()).request("GET", "/api/v1/keys").get("data", [])


def key_info(key_id: str = "self", *, client: Optional[Client] = None) -> Dict[str, Any]:
    """Returns one virtual key the calling key issued; ``"self"`` (the default) is the calling
    virtual key itself: its limits and spend."""
    if not key_id:
        raise MissingIdError("no key id")
    return (client or Client()).request("GET", "/api/v1/keys/" + quote(key_id, safe=""))


def update_key(key_id: str, *, client: Optional[Client] = None, **fields: Any) -> Dict[str, Any]:
    """Changes the fields given (``name``, ``models``, ``max_budget_usd``,
    ``budget_duration``, ``max_tokens``, ``max_requests``, ``requests_per_minute``,
    ``tokens_per_minute``, ``expires_at``, ``metadata``, ``blocked``, ``guardrails``,
    ``team_id``, ``soft_budget_usd``, ``mcp_servers``; ``expires_at=None`` removes the expiry,
    ``team_id=None`` takes the key out of its team) and returns the key; its spend is kept."""
    if not key_id:
        raise MissingIdError("no key id")
    return (client or Client()).request("PATCH", "/api/v1/keys/" + quote(key_id, safe=""), body=fields)


def rotate_key(key_id: str, *, client: Optional[Client] = None) -> Dict[str, Any]:
    """Gives a virtual key a new value (its ``key``, shown this once) and returns the key: the
    old value is refused at once on every replica; the id, limits and spend stay."""
    if not key_id:
        raise MissingIdError("no key id")
    return (client or Client()).request("POST", "/api/v1/keys/" + quote(key_id, safe="") + "/rotate")


def revoke_key(key_id: str, *, client: Optional[Client] = None) -> Dict[str, Any]:
    """Revokes a virtual key at once on every replica; returns ``{"id", "deleted": True}``."""
    if not key_id:
        raise MissingIdError("no key id")
    return (client or Client()).request("DELETE", "/api/v1/keys/" + quote(key_id, safe=""))
