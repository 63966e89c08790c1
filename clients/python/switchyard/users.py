"""Users (LiteLLM's internal users): one USD budget, token rate and model list shared by
every virtual key made for the user (its ``metadata`` ``user_id``), and the teams the user
is a member of (``POST /api/v1/users``, ``/api/v1/teams/{team_id}/members`` and the routes
under them; the same users as LiteLLM's ``/user/...`` routes)."""

from __future__ import annotations

from typing import Any, Dict, Iterator, List, Optional, Sequence
from urllib.parse import quote

from ._http import Client
from .errors import MissingIdError
from .owned import _each_page


def _user_path(user_id: str) -> str:
    if not user_id:
        raise MissingIdError("no user id")
    return "/api/v1/users/" + quote(user_id, safe="")


def _members_path(team_id: str, user_id: Optional[str] = None) -> str:
    if not team_id:
        raise MissingIdError("no team id")
    path = "/api/v1/teams/" + quote(team_id, safe="") + "/members"
    if user_id is None:
        return path
    if not user_id:
        raise MissingIdError("no user id")
    return path + "/" + quote(user_id, safe="")


def create_user(*, user_id: Optional[str] = None, email: Optional[str] = None, alias: Optional[str] = None,
                role: Optional[str] = None, models: Optional[Sequence[str]] = None,
                max_budget_usd: Optional[float] = None, budget_duration: Optional[str] = None,
                tokens_per_minute: Optional[int] = None, metadata: Optional[Dict[str, Any]] = None,
                blocked: Optional[bool] = None, teams: Optional[Sequence[str]] = None,
                client: Optional[Client] = None) -> Dict[str, Any]:
    """Creates a user of the calling key and returns it (``{"user_id", "email", "role", ...,
    "created_at", "spend", "teams", "key_ids"}``). ``user_id`` is its id (letters, digits and
    ``. _ - : @ +``; none: the server makes a UUID); ``email`` its address (one user each);
    ``role`` a label (``internal_user`` by default); ``models`` the models its keys may call
    (none: every one); ``max_budget_usd`` what all its keys together may spend, per
    ``budget_duration`` (e.g. ``"30d"``) when given; ``blocked`` refuses every key of it;
    ``teams`` the teams it joins with role user. Make a key for it with
    ``issue_key(metadata={"user_id": ...})``. A bad field raises ValidationError naming it;
    a ``user_id`` or ``email`` taken ConflictError; an unknown team NotFoundError; a virtual
    key calling PermissionDeniedError."""
    body = {k: v for k, v in {
        "user_id": user_id, "email": email, "alias": alias, "role": role,
        "models": list(models) if models is not None else None, "max_budget_usd": max_budget_usd,
        "budget_duration": budget_duration, "tokens_per_minute": tokens_per_minute, "metadata": metadata,
        "blocked": blocked, "teams": list(teams) if teams is not None else None}.items() if v is not None}
    return (client or Client()).request("POST", "/api/v1/users", body=body)


def get_user(user_id: str, *, client: Optional[Client] = None) -> Dict[str, Any]:
    """Returns one user of the calling key with its spend, teams and the ids of its keys;
    NotFoundError for an unknown id (or another key's)."""
    return (client or Client()).request("GET", _user_path(user_id))


def list_users(*, limit: Optional[int] = None, cursor: Optional[str] = None,
               created_after: Optional[str] = None, created_before: Optional[str] = None,
               client: Optional[Client] = None) -> Dict[str, Any]:
    """Returns one page of the calling key's users, oldest first, as ``{"data": [...],
    "next_cursor": ...}`` (no ``next_cursor`` on the last page). Times are RFC 3339 strings
    or Unix seconds. A bad parameter raises ValidationError naming it."""
    q = {k: str(v) for k, v in {"limit": limit, "cursor": cursor, "created_after": created_after,
                                "created_before": created_before}.items() if v is not None and v != ""}
    return (client or Client()).request("GET", "/api/v1/users", q)


def iterate_users(*, client: Optional[Client] = None, **filters: Any) -> Iterator[Dict[str, Any]]:
    """Yields every user of the calling key, oldest first, page after page (``filters`` as
    ``list_users``'s; ``limit`` is the page size, default 100)."""
    c = client or Client()
    filters.setdefault("limit", 100)
    return _each_page(lambda **q: list_users(client=c, **q), filters)


def update_user(user_id: str, *, client: Optional[Client] = None, **fields: Any) -> Dict[str, Any]:
    """Changes the fields given (``email``, ``alias``, ``role``, ``models``,
    ``max_budget_usd``, ``budget_duration``, ``tokens_per_minute``, ``metadata``,
    ``blocked``; ``models=[]`` allows every model, ``metadata`` replaces the labels whole)
    and returns the user as it is now; its spend, teams and keys are kept. A bad or unknown
    field raises ValidationError naming it (a user's id cannot be changed, nor its teams
    here: ``add_team_member``); an address taken ConflictError; an unknown user
    NotFoundError."""
    return (client or Client()).request("PATCH", _user_path(user_id), body=fields)


def delete_user(user_id: str, *, client: Optional[Client] = None) -> Dict[str, Any]:
    """Deletes a user and its team memberships and revokes its virtual keys at once on every
    replica; returns ``{"user_id", "deleted": True, "deleted_keys": [key ids]}``.
    NotFoundError for an unknown id."""
    return (client or Client()).request("DELETE", _user_path(user_id))


def add_team_member(team_id: str, user_id: str, *, role: Optional[str] = None,
                    max_budget_usd: Optional[float] = None, blocked: Optional[bool] = None,
                    client: Optional[Client] = None) -> Dict[str, Any]:
    """Adds a user to a team and returns the membership (``{"team_id", "user_id", "role",
    ..., "spend"}``): ``role`` admin or user (the default); ``max_budget_usd`` what the
    user's keys of the team may spend together; ``blocked`` refuses them. NotFoundError for
    an unknown team or user; ConflictError for a member already."""
    if not user_id:
        raise MissingIdError("no user id")
    body = {k: v for k, v in {"user_id": user_id, "role": role, "max_budget_usd": max_budget_usd,
                              "blocked": blocked}.items() if v is not None}
    return (client or Client()).request("POST", _members_path(team_id), body=body)


def list_team_members(team_id: str, *, client: Optional[Client] = None) -> List[Dict[str, Any]]:
    """Returns the members of a team by user id, with their roles and spend in it."""
    return (client or Client()).request("GET", _members_path(team_id)).get("data", [])


def update_team_member(team_id: str, user_id: str, *, client: Optional[Client] = None,
                       **fields: Any) -> Dict[str, Any]:
    """Changes the fields given of a membership (``role``, ``max_budget_usd``, ``blocked``)
    and returns it; its spend in the team is kept. NotFoundError when the user is not a
    member."""
    return (client or Client()).request("PATCH", _members_path(team_id, user_id), body=fields)


def remove_team_member(team_id: str, user_id: str, *, client: Optional[Client] = None) -> Dict[str, Any]:
    """Takes a user out of a team (the user and its keys stay); returns ``{"team_id",
    "user_id", "deleted": True}``. NotFoundError when the user is not a member."""
    return (client or Client()).request("DELETE", _members_path(team_id, user_id))
