"""Virtual keys: API keys an operator issues from their own key, each held to some models,
a USD budget (for all time or per period), tokens, requests, a request rate and a lifetime,
with its spend metered (``POST /api/v1/keys`` and the routes under it)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence
from urllib.parse import quote

from ._http import Client
from .errors import MissingIdError


def _key_call(c: Client, method: str, path: str, if_match: Optional[str], body: Any = None) -> Dict[str, Any]:
    """Sends a keys API request, with If-Match ``if_match`` when given, and returns the key
    with its version, the answer's ETag header, as ``"etag"`` (None from a server without
    it)."""
    headers = {"If-Match": if_match} if if_match else None
    out, got = c.request_with_headers(method, path, body=body, headers=headers)
    out["etag"] = got.get("ETag")
    return out


def _key_path(key_id: str) -> str:
    if not key_id:
        raise MissingIdError("no key id")
    return "/api/v1/keys/" + quote(key_id, safe="")


def issue_key(*, name: Optional[str] = None, models: Optional[Sequence[str]] = None,
              max_budget_usd: Optional[float] = None, budget_duration: Optional[str] = None,
              max_tokens: Optional[int] = None, max_requests: Optional[int] = None,
              requests_per_minute: Optional[int] = None, tokens_per_minute: Optional[int] = None,
              expires_at: Optional[str] = None, metadata: Optional[Dict[str, Any]] = None,
              blocked: Optional[bool] = None, guardrails: Optional[Sequence[str]] = None,
              team_id: Optional[str] = None, soft_budget_usd: Optional[float] = None,
              mcp_servers: Optional[Sequence[str]] = None, user_id: Optional[str] = None,
              budget_id: Optional[str] = None, organization_id: Optional[str] = None,
              tags: Optional[Sequence[str]] = None, max_parallel_requests: Optional[int] = None,
              aliases: Optional[Dict[str, str]] = None,
              model_max_budget: Optional[Dict[str, Dict[str, Any]]] = None,
              model_rpm_limit: Optional[Dict[str, int]] = None,
              model_tpm_limit: Optional[Dict[str, int]] = None,
              client: Optional[Client] = None) -> Dict[str, Any]:
    """Issues a virtual key and returns it; its ``key`` is shown this once. ``models`` are
    provider/model names, bare names or model groups; ``budget_duration`` is e.g. ``"30d"``;
    ``expires_at`` an RFC 3339 time; ``guardrails`` names server guardrails every chat request
    of the key runs; ``team_id`` puts the key in a team (its budget, models and rates);
    ``soft_budget_usd`` is a mark that never blocks and sends a budget alert; ``mcp_servers``
    are the MCP servers the key may use (none given: every one); ``user_id`` makes the key a
    user's (``create_user``): it also draws on the user's budget and the user lists it (kept
    as ``metadata["user_id"]``; given both, they must agree); ``budget_id`` names a LiteLLM
    budget of yours (``/budget/new``) whose limits the key takes, now and whenever the budget
    changes (its ``max_budget_usd``, ``soft_budget_usd``, ``budget_duration``,
    ``tokens_per_minute``, ``requests_per_minute`` (its rpm_limit) and
    ``max_parallel_requests``, which may not be given beside it with other values, and its
    ``model_max_budget`` when the key has none of its own); ``organization_id`` puts a key
    without a team in an organization (``create_organization``: its budget, models and
    rates; beside ``team_id`` it must be the team's); ``tags`` are the key's tags (LiteLLM's
    key-level tags, kept as ``metadata["tags"]`` and answered as ``tags``; given beside a
    ``metadata["tags"]`` they win and replace it), which every request of the key carries:
    tag routing, tag budgets (``create_tag``), spend per tag; ``max_parallel_requests``
    bounds the key's requests in flight at once (LiteLLM's: each gateway request until its
    answer ends, a stream until its last event, and each realtime session; one more raises
    RateLimitError naming max_parallel_requests); ``aliases`` are model names of the key's
    own, ``{"my-model": "gpt-4o"}`` sending its requests naming ``my-model`` to ``gpt-4o``
    (as ``model``, or in ``complete``'s ``models`` and ``fallback_models``; which ``models``
    must allow; each a model or model group the server routes to; not listed by GET /v1/models);
    ``model_max_budget`` gives single models a USD budget of their own,
    ``{"gpt-4o": {"max_budget_usd": 10, "budget_duration": "1d"}}`` (a request for a model
    whose budget is spent is refused while its other models still work; ``key_info``'s
    ``spend["models"]`` says what each spent), ``model_rpm_limit`` and ``model_tpm_limit``
    requests and tokens per minute of single models, ``{"gpt-4o": 10}`` (past them
    RateLimitError), models named as in ``models``. The answer's ``etag`` is the
    key's version (see ``rotate_key``). A bad field raises ValidationError naming it; a
    ``team_id`` of no team of yours, a ``user_id`` of no user, a ``budget_id`` of no budget or
    an ``organization_id`` of no organization NotFoundError."""
    body = {k: v for k, v in {
        "name": name, "models": list(models) if models is not None else None, "max_budget_usd": max_budget_usd,
        "budget_duration": budget_duration, "max_tokens": max_tokens, "max_requests": max_requests,
        "requests_per_minute": requests_per_minute, "tokens_per_minute": tokens_per_minute,
        "expires_at": expires_at, "metadata": metadata, "blocked": blocked,
        "guardrails": list(guardrails) if guardrails is not None else None, "team_id": team_id,
        "soft_budget_usd": soft_budget_usd,
        "mcp_servers": list(mcp_servers) if mcp_servers is not None else None,
        "user_id": user_id, "budget_id": budget_id, "organization_id": organization_id,
        "tags": list(tags) if tags is not None else None,
        "max_parallel_requests": max_parallel_requests,
        "aliases": dict(aliases) if aliases is not None else None,
        "model_max_budget": dict(model_max_budget) if model_max_budget is not None else None,
        "model_rpm_limit": dict(model_rpm_limit) if model_rpm_limit is not None else None,
        "model_tpm_limit": dict(model_tpm_limit) if model_tpm_limit is not None else None,
    }.items() if v is not None}
    return _key_call(client or Client(), "POST", "/api/v1/keys", None, body)


def list_keys(*, client: Optional[Client] = None) -> List[Dict[str, Any]]:
    """Returns the virtual keys the calling key issued, newest first, with their spend (no
    ``etag``: ``key_info`` gives a key's version)."""
    return (client or Client()).request("GET", "/api/v1/keys").get("data", [])


def key_info(key_id: str = "self", *, client: Optional[Client] = None) -> Dict[str, Any]:
    """Returns one virtual key the calling key issued; ``"self"`` (the default) is the calling
    virtual key itself: its limits and spend (``spend["models"]``: what each model of
    ``model_max_budget`` spent in its own period, LiteLLM's ``model_max_budget_usage``). Its ``etag`` is the key's version: it changes
    with every rotation and every change of its name or limits, not with its spend; give it
    as ``if_match`` to ``rotate_key``, ``update_key`` or ``revoke_key`` to act only on that
    version. NotFoundError for an unknown id (or another key's)."""
    return _key_call(client or Client(), "GET", _key_path(key_id), None)


def update_key(key_id: str, *, if_match: Optional[str] = None, client: Optional[Client] = None,
               **fields: Any) -> Dict[str, Any]:
    """Changes the fields given (``name``, ``models``, ``max_budget_usd``,
    ``budget_duration``, ``max_tokens``, ``max_requests``, ``requests_per_minute``,
    ``tokens_per_minute``, ``expires_at``, ``metadata``, ``blocked``, ``guardrails``,
    ``team_id``, ``soft_budget_usd``, ``mcp_servers``, ``user_id``, ``budget_id``,
    ``organization_id``, ``tags``, ``max_parallel_requests``, ``aliases``,
    ``model_max_budget``, ``model_rpm_limit``, ``model_tpm_limit``; ``aliases`` and the
    ``model_*`` limits each replace the key's whole, ``{}`` or ``None`` removing them;
    ``max_parallel_requests=0`` or ``None`` removes the bound; ``tags`` replaces the key's tags alone, its other
    ``metadata`` kept (``tags=[]`` or ``None`` removes them); ``expires_at=None`` removes the expiry, ``team_id=None`` takes the
    key out of its team (it stays in the team's organization unless ``organization_id`` is
    given too), ``organization_id=None`` out of its organization,
    ``user_id=None`` from its user, ``budget_id=""`` from its budget keeping the budget's
    values) and returns the key with its new
    ``etag``; its spend is kept. With ``if_match`` (an ``etag``) the change is made only if
    the key is still at that version: otherwise nothing changes and PreconditionFailedError
    (412) is raised. A bad field raises ValidationError naming it, an unknown id
    NotFoundError."""
    return _key_call(client or Client(), "PATCH", _key_path(key_id), if_match, fields)


def rotate_key(key_id: str, *, if_match: Optional[str] = None, client: Optional[Client] = None) -> Dict[str, Any]:
    """Gives a virtual key a new value (its ``key``, shown this once) and returns the key with
    its new ``etag``: the old value is refused at once on every replica; the id, limits and
    spend stay. Without ``if_match`` it rotates whatever version the key is at (of two
    callers rotating at once both succeed, and the first one's new key no longer works);
    with ``if_match`` (an ``etag`` from ``key_info`` or an earlier rotation or update) only
    if the key is still at that version, else PreconditionFailedError (412) and nothing
    changes: of concurrent calls giving one version exactly one succeeds. A call resent
    after a connection error or a 502/504 may have rotated the key on that earlier
    attempt, its new key lost: the 412 it then gets says so (``resent``). NotFoundError
    for an unknown id."""
    return _key_call(client or Client(), "POST", _key_path(key_id) + "/rotate", if_match)


def revoke_key(key_id: str, *, if_match: Optional[str] = None, client: Optional[Client] = None) -> Dict[str, Any]:
    """Revokes a virtual key at once on every replica; returns ``{"id", "deleted": True}``.
    With ``if_match`` (an ``etag``) only if the key is still at that version: otherwise
    the key is kept and PreconditionFailedError (412) is raised. NotFoundError for an
    unknown id."""
    headers = {"If-Match": if_match} if if_match else None
    return (client or Client()).request("DELETE", _key_path(key_id), headers=headers)
