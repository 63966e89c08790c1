"""The server's usage reports: the daily spend per request tag or model, kept in its store
(``GET /api/v1/usage/spend``)."""

from __future__ import annotations

from typing import Any, Dict, Optional

from ._http import Client


def spend(*, by: str = "tag", from_day: Optional[str] = None, to_day: Optional[str] = None,
          client: Optional[Client] = None) -> Dict[str, Any]:
    """Returns this key's daily spend per request tag (``by="tag"``) or model
    (``by="model"``) from ``from_day`` to ``to_day`` (``YYYY-MM-DD``, UTC; default the 30
    days ending today): ``{"from", "to", "by", "data": [{"day", "tag", "requests",
    "prompt_tokens", "completion_tokens", "cost_usd", "cache_hits", "saved_usd"}, ...]}``."""
    query = {"by": by}
    if from_day:
        query["from"] = from_day
    if to_day:
        query["to"] = to_day
    return (client or Client()).request("GET", "/api/v1/usage/spend", query=query)


def _daily_activity(path: str, start_date: str, end_date: str, client: Optional[Client],
                    params: Dict[str, Any]) -> Dict[str, Any]:
    query = {"start_date": start_date, "end_date": end_date}
    for name, value in params.items():
        if value is None:
            continue
        if isinstance(value, (list, tuple)):
            value = ",".join(value)
        query[name] = str(value)
    return (client or Client()).request("GET", path, query=query)


def user_daily_activity(start_date: str, end_date: str, *, user_id: Optional[str] = None,
                        client: Optional[Client] = None, **params: Any) -> Dict[str, Any]:
    """Returns LiteLLM's daily activity (``GET /user/daily/activity``) from ``start_date`` to
    ``end_date`` (``YYYY-MM-DD``, UTC): ``{"results": [{"date", "metrics", "breakdown"}, ...],
    "metadata": {"total_spend", ..., "page", "total_pages", "has_more"}}``, newest day first.
    ``user_id`` keeps one user's requests (those of the virtual keys made for it).
    ``params`` are the route's other query parameters (``model``, ``api_key``, ``page``,
    ``page_size``, …; a list is sent comma-separated); an unknown or unsupported one raises
    BadRequestError naming it. An operator key reads any user's days or every request; a
    virtual key with a user_id reads its own user's (another ``user_id`` raises
    PermissionDeniedError), and one without a user_id gets PermissionDeniedError."""
    return _daily_activity("/user/daily/activity", start_date, end_date, client, dict(params, user_id=user_id))


def team_daily_activity(start_date: str, end_date: str, *, client: Optional[Client] = None,
                        **params: Any) -> Dict[str, Any]:
    """Is ``user_daily_activity`` for ``GET /team/daily/activity`` (LiteLLM's activity of
    teams' keys)."""
    return _daily_activity("/team/daily/activity", start_date, end_date, client, params)


def tag_daily_activity(start_date: str, end_date: str, *, client: Optional[Client] = None,
                       **params: Any) -> Dict[str, Any]:
    """Is ``user_daily_activity`` for ``GET /tag/daily/activity``: a request's spend counts
    under each of its tags (``breakdown.entities``); ``tags=[...]`` narrows them."""
    return _daily_activity("/tag/daily/activity", start_date, end_date, client, params)
