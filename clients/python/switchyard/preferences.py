"""Personalized routing preferences (``pref_...``): read, list and delete them
(``/api/v1/preferences``). ``create_preference``, ``report_feedback`` and
``report_latency`` make them and teach them."""

from __future__ import annotations

from typing import Any, Dict, Iterator, Optional
from urllib.parse import quote

from ._http import Client
from .errors import MissingIdError
from .owned import _each_page


def _preference_path(preference_id: str) -> str:
    if not preference_id:
        raise MissingIdError("no preference id")
    return "/api/v1/preferences/" + quote(preference_id, safe="")


def get_preference(preference_id: str, *, client: Optional[Client] = None) -> Dict[str, Any]:
    """Returns a preference with what it learned: ``{"preference_id", "name",
    "router_model_id", "created_at", "updated_at", "feedback_count", "models": [{"model",
    "feedback", "successes", "expected", "adjustment", ...}]}``, and ``"router_fallback"``
    (``"router_deleted"`` or ``"training_job_deleted"``) when the router it follows is gone
    and another ranks in its place. NotFoundError for an unknown id (or another key's)."""
    return (client or Client()).request("GET", _preference_path(preference_id))


def list_preferences(*, limit: Optional[int] = None, cursor: Optional[str] = None,
                     created_after: Optional[str] = None, created_before: Optional[str] = None,
                     client: Optional[Client] = None) -> Dict[str, Any]:
    """Returns one page of the calling key's preferences, newest first, as ``{"data":
    [...], "next_cursor": ...}`` (no ``next_cursor`` on the last page). ``limit`` is 1-100
    (default 20); times are RFC 3339 strings or Unix seconds. A bad parameter raises
    ValidationError (or BadRequestError) naming it."""
    q = {k: str(v) for k, v in {"limit": limit, "cursor": cursor, "created_after": created_after,
                                "created_before": created_before}.items() if v is not None and v != ""}
    return (client or Client()).request("GET", "/api/v1/preferences", q)


def iterate_preferences(*, client: Optional[Client] = None, **filters: Any) -> Iterator[Dict[str, Any]]:
    """Yields every preference of the calling key, newest first, page after page
    (``filters`` as ``list_preferences``'s; ``limit`` is the page size, default 100)."""
    c = client or Client()
    filters.setdefault("limit", 100)
    return _each_page(lambda **q: list_preferences(client=c, **q), filters)


def rename_preference(preference_id: str, name: str, *, client: Optional[Client] = None) -> Dict[str, Any]:
    """Gives a preference a new label (``""`` removes it) and returns it; its router and
    feedback are kept (Not Diamond's ``preferences.update``). NotFoundError for an unknown
    id, ValidationError (or BadRequestError) for a name over 256 characters."""
    return (client or Client()).request("PATCH", _preference_path(preference_id), body={"name": name})


def delete_preference(preference_id: str, *, client: Optional[Client] = None) -> Dict[str, Any]:
    """Deletes a preference with what it learned; returns ``{"preference_id", "deleted":
    True}``. NotFoundError for an unknown id."""
    return (client or Client()).request("DELETE", _preference_path(preference_id))
