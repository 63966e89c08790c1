"""End users (customers) of an app: the budget, block and models of every request that
names one (OpenAI's ``user``, Anthropic's ``metadata.user_id``, the
``x-litellm-end-user-id`` header), with their spend across every key (``POST
/api/v1/customers`` and the routes under it; LiteLLM's customers). A request naming an end
user not created yet makes it with no limits, so its spend is always kept."""

from __future__ import annotations

from typing import Any, Dict, Iterator, Optional, Sequence
from urllib.parse import quote

from ._http import Client
from .errors import MissingIdError
from .owned import _each_page


def _customer_path(end_user_id: str) -> str:
    if not end_user_id:
        raise MissingIdError("no end user id")
    return "/api/v1/customers/" + quote(end_user_id, safe="")


def create_customer(end_user_id: str, *, alias: Optional[str] = None, models: Optional[Sequence[str]] = None,
                    max_budget_usd: Optional[float] = None, soft_budget_usd: Optional[float] = None,
                    budget_duration: Optional[str] = None, blocked: Optional[bool] = None,
                    tokens_per_minute: Optional[int] = None, budget_id: Optional[str] = None,
                    requests_per_minute: Optional[int] = None,
                    model_max_budget: Optional[Dict[str, Dict[str, Any]]] = None,
                    client: Optional[Client] = None) -> Dict[str, Any]:
    """Creates an end user of the calling key and returns it (``{"end_user_id", "alias",
    ..., "created_at", "spend"}``). ``end_user_id`` is the id the app gives it in its
    requests; ``models`` the models its requests may call (none: every one);
    ``max_budget_usd`` what its requests may spend across every key, per
    ``budget_duration`` (e.g. ``"30d"``) when given; ``soft_budget_usd`` a mark that sends a
    budget alert and never blocks; ``blocked`` refuses every request naming it;
    ``tokens_per_minute`` bounds the tokens its answers use per minute across every key,
    ``requests_per_minute`` the requests naming it per minute (LiteLLM's rpm_limit: past it
    a RateLimitError); ``model_max_budget`` its USD budgets of single models across every key
    (``{"openai/gpt-4o": {"max_budget_usd": 10, "budget_duration": "30d"}}``: a spent model is
    passed over, a request all of whose models are spent a BadRequestError;
    ``spend["models"]`` says what each spent);
    ``budget_id`` names a LiteLLM budget of the key (``/budget/new``) whose limits it takes,
    model_max_budget too, now and whenever the budget changes (the budget fields may not be
    given with it). A bad
    field raises ValidationError naming it, a ``budget_id`` of no budget NotFoundError; an
    end user of that id already (one a request made: ``update_customer`` it)
    ConflictError."""
    if not end_user_id:
        raise MissingIdError("no end user id")
    body = {k: v for k, v in {
        "end_user_id": end_user_id, "alias": alias, "models": list(models) if models is not None else None,
        "max_budget_usd": max_budget_usd, "soft_budget_usd": soft_budget_usd,
        "budget_duration": budget_duration, "blocked": blocked,
        "tokens_per_minute": tokens_per_minute, "requests_per_minute": requests_per_minute,
        "model_max_budget": model_max_budget, "budget_id": budget_id}.items() if v is not None}
    return (client or Client()).request("POST", "/api/v1/customers", body=body)


def get_customer(end_user_id: str, *, client: Optional[Client] = None) -> Dict[str, Any]:
    """Returns one end user of the calling key with its spend (``created_by_request`` is
    True when the first request naming it made it); NotFoundError for an unknown id."""
    return (client or Client()).request("GET", _customer_path(end_user_id))


def list_customers(*, limit: Optional[int] = None, cursor: Optional[str] = None,
                   created_after: Optional[str] = None, created_before: Optional[str] = None,
                   client: Optional[Client] = None) -> Dict[str, Any]:
    """Returns one page of the calling key's end users, oldest first, as ``{"data": [...],
    "next_cursor": ...}`` (no ``next_cursor`` on the last page). Times are RFC 3339 strings
    or Unix seconds. A bad parameter raises ValidationError naming it."""
    q = {k: str(v) for k, v in {"limit": limit, "cursor": cursor, "created_after": created_after,
                                "created_before": created_before}.items() if v is not None and v != ""}
    return (client or Client()).request("GET", "/api/v1/customers", q)


def iterate_customers(*, client: Optional[Client] = None, **filters: Any) -> Iterator[Dict[str, Any]]:
    """Yields every end user of the calling key, oldest first, page after page (``filters``
    as ``list_customers``'s; ``limit`` is the page size, default 100)."""
    c = client or Client()
    filters.setdefault("limit", 100)
    return _each_page(lambda **q: list_customers(client=c, **q), filters)


def update_customer(end_user_id: str, *, client: Optional[Client] = None, **fields: Any) -> Dict[str, Any]:
    """Changes the fields given (``alias``, ``models``, ``max_budget_usd``,
    ``soft_budget_usd``, ``budget_duration``, ``blocked``, ``tokens_per_minute``,
    ``requests_per_minute``, ``model_max_budget`` (replaced whole; ``{}`` or None removes
    it), ``budget_id``; ``models=[]`` allows every model; ``budget_id=""`` leaves the end user's
    budget, keeping its values as the end user's own) and returns the end user as it is now; its spend is kept. A bad or unknown field raises
    ValidationError naming it; an unknown end user NotFoundError."""
    return (client or Client()).request("PATCH", _customer_path(end_user_id), body=fields)


def delete_customer(end_user_id: str, *, client: Optional[Client] = None) -> Dict[str, Any]:
    """Deletes an end user and its spend; returns ``{"end_user_id", "deleted": True}``. A
    later request naming it makes it again with no limits. NotFoundError for an unknown
    id."""
    return (client or Client()).request("DELETE", _customer_path(end_user_id))
