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
