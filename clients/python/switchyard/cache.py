"""The server's response cache (``switchyard serve --cache``): take the calling key's
answers out of it (``DELETE /api/v1/cache`` and ``DELETE /api/v1/cache/{key}``)."""

from __future__ import annotations

from typing import Optional
from urllib.parse import quote

from ._http import Client
from .errors import MissingIdError


def purge_cache(*, namespace: Optional[str] = None, client: Optional[Client] = None) -> int:
    """Deletes this key's cached answers — only those asked for in ``namespace`` when it is
    given ("" for those asked without one) — and returns how many were deleted."""
    query = None if namespace is None else {"namespace": namespace}
    return (client or Client()).request("DELETE", "/api/v1/cache", query=query)["deleted"]


def delete_cached(key: str, *, client: Optional[Client] = None) -> None:
    """Deletes one cached answer by the key it was answered with (``response["cache"]["key"]``,
    the X-Switchyard-Cache-Key header); NotFoundError when it is not cached (any more)."""
    if not key:
        raise MissingIdError("no cache key")
    (client or Client()).request("DELETE", "/api/v1/cache/" + quote(key, safe=""))
