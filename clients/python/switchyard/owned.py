"""List and delete what an API key owns: training jobs, router models, optimization jobs
and conversations (with their messages)."""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterator, Optional, Sequence, Union
from urllib.parse import quote

from ._http import Client
from .errors import MissingIdError

#: Listing paths by resource.
_PATHS = {
    "training_jobs": "/api/v1/routers/train/jobs",
    "router_models": "/api/v1/routers/models",
    "optimization_jobs": "/api/v1/optimize/jobs",
    "conversations": "/api/v1/conversations",
}


def _query(status: Union[None, str, Sequence[str]], created_after: Optional[str],
           created_before: Optional[str], limit: Optional[int], cursor: Optional[str]) -> Dict[str, str]:
    q: Dict[str, str] = {}
    if status:
        q["status"] = status if isinstance(status, str) else ",".join(status)
    if created_after:
        q["created_after"] = created_after
    if created_before:
        q["created_before"] = created_before
    if limit is not None:
        q["limit"] = str(limit)
    if cursor:
        q["cursor"] = cursor
    return q


def list_page(resource: str, *, status: Union[None, str, Sequence[str]] = None,
              created_after: Optional[str] = None, created_before: Optional[str] = None,
              limit: Optional[int] = None, cursor: Optional[str] = None,
              client: Optional[Client] = None) -> Dict[str, Any]:
    """Returns one page, newest first, of ``resource``: ``training_jobs``, ``router_models``,
    ``optimization_jobs`` or ``conversations``, as ``{"data": [...], "next_cursor": ...}``
    (no ``next_cursor`` on the last page). Times are RFC 3339 strings or Unix seconds;
    ``status`` is one state or several. A bad filter raises ValidationError naming it."""
    if resource not in _PATHS:
        raise ValueError(f"resource must be one of {', '.join(_PATHS)}, got {resource!r}")
    c = client or Client()
    return c.request("GET", _PATHS[resource], _query(status, created_after, created_before, limit, cursor))


def iterate(resource: str, *, client: Optional[Client] = None, **filters: Any) -> Iterator[Dict[str, Any]]:
    """Yields every record of ``resource`` (see ``list_page``), page after page."""
    c = client or Client()
    return _each_page(lambda **q: list_page(resource, client=c, **q), filters)


def _each_page(list_one: Callable[..., Dict[str, Any]], filters: Dict[str, Any]) -> Iterator[Dict[str, Any]]:
    """Yields the records of every page ``list_one(cursor=..., **filters)`` answers, from
    the filters' cursor (none: the first page) to the page without a ``next_cursor``."""
    filters = dict(filters)
    cursor = filters.pop("cursor", None)
    while True:
        page = list_one(cursor=cursor, **filters)
        yield from page.get("data", [])
        cursor = page.get("next_cursor")
        if not cursor:
            return


_DELETE_PATHS = {
    "training_job": "/api/v1/routers/train/jobs/",
    "router_model": "/api/v1/routers/models/",
    "optimization_job": "/api/v1/optimize/jobs/",
    "conversation": "/api/v1/conversations/",
}


def delete(kind: str, id: str, *, client: Optional[Client] = None) -> Dict[str, Any]:
    """Deletes one record: ``kind`` is ``training_job``, ``router_model``,
    ``optimization_job`` or ``conversation``. A queued or running job is cancelled first;
    an optimization job takes its best-agent files with it, a conversation its messages.
    Raises NotFoundError for an unknown id (or another key's), ConflictError when a running
    job did not stop within 30 s (retry)."""
    if kind not in _DELETE_PATHS:
        raise ValueError(f"kind must be one of {', '.join(_DELETE_PATHS)}, got {kind!r}")
    if not id:
        raise MissingIdError(f"no {kind} id")
    c = client or Client()
    return c.request("DELETE", _DELETE_PATHS[kind] + quote(id, safe=""))


def conversation(id: str, *, client: Optional[Client] = None) -> Dict[str, Any]:
    """Returns one conversation (title, times, message count) without its messages."""
    if not id:
        raise MissingIdError("no conversation id")
    c = client or Client()
    return c.request("GET", "/api/v1/conversations/" + quote(id, safe=""))


def conversation_messages(id: str, *, client: Optional[Client] = None) -> Iterator[Dict[str, Any]]:
    """Yields every message of a conversation, oldest first."""
    if not id:
        raise MissingIdError("no conversation id")
    c = client or Client()
    cursor = None
    while True:
        page = c.request("GET", "/api/v1/conversations/" + quote(id, safe="") + "/messages",
                         _query(None, None, None, 100, cursor))
        yield from page.get("data", [])
        cursor = page.get("next_cursor")
        if not cursor:
            return
