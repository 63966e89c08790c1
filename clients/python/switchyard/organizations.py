"""Organizations: LiteLLM's level above teams (``POST /organization/new`` and the routes
beside it). An organization's models bound what its teams may name, and its account
(``max_budget`` per ``budget_duration``, ``tpm_limit``, ``rpm_limit``) holds the spend of
every key of its teams as well as the key's and the team's. A team joins one through
``create_team(organization_id=...)`` or ``update_team(team_id, organization_id=...)``. The
calls use LiteLLM's routes and field names, as the server offers organizations on those
only; they mirror the Go client's (client/organizations.go)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from ._http import Client
from .errors import MissingIdError, SwitchyardError

_UNSET: Any = object()


def _member_body(organization_id: str, user: str) -> Dict[str, Any]:
    if not organization_id:
        raise MissingIdError("no organization id")
    if not user:
        raise MissingIdError("no user")
    key = "user_email" if "@" in user else "user_id"
    return {"organization_id": organization_id, key: user}


def create_organization(alias: str, *, organization_id: Optional[str] = None,
                        models: Optional[Sequence[str]] = None, budget_id: Optional[str] = None,
                        max_budget: Optional[float] = None, soft_budget: Optional[float] = None,
                        budget_duration: Optional[str] = None, tpm_limit: Optional[int] = None,
                        rpm_limit: Optional[int] = None, metadata: Optional[Dict[str, Any]] = None,
                        blocked: Optional[bool] = None, client: Optional[Client] = None) -> Dict[str, Any]:
    """Creates an organization of the calling key and returns it as LiteLLM describes one
    (``{"organization_id", "organization_alias", "models", "spend", "litellm_budget_table":
    {"max_budget", ...}, "teams", "members", ...}``). ``alias`` is its name (required);
    ``organization_id`` its id (none: the server makes a UUID); ``models`` the models its
    teams may name (none: every one); ``max_budget`` what all the keys of its teams together
    may spend, per ``budget_duration`` (``"30d"``); ``budget_id`` takes a LiteLLM budget's
    limits instead (its max_budget, soft_budget, budget_duration, tpm_limit and rpm_limit). A bad field raises BadRequestError naming it; an id taken ConflictError."""
    body = {k: v for k, v in {
        "organization_alias": alias, "organization_id": organization_id,
        "models": list(models) if models is not None else None, "budget_id": budget_id,
        "max_budget": max_budget, "soft_budget": soft_budget, "budget_duration": budget_duration,
        "tpm_limit": tpm_limit, "rpm_limit": rpm_limit, "metadata": metadata, "blocked": blocked}.items()
        if v is not None}
    return (client or Client()).request("POST", "/organization/new", body=body)


def get_organization(organization_id: str, *, client: Optional[Client] = None) -> Dict[str, Any]:
    """Returns one organization of the calling key with its spend, limits, teams and members
    (each member with its ``spend`` in the organization and its ``litellm_budget_table``
    ``max_budget``: the ``max_budget_in_organization``); NotFoundError for an unknown id."""
    if not organization_id:
        raise MissingIdError("no organization id")
    return (client or Client()).request("GET", "/organization/info", query={"organization_id": organization_id})


def list_organizations(*, org_id: Optional[str] = None, org_alias: Optional[str] = None,
                       client: Optional[Client] = None) -> List[Dict[str, Any]]:
    """Returns the calling key's organizations, oldest first; ``org_id`` keeps only the one of
    that exact id, ``org_alias`` those whose alias holds that text (case-insensitive), as
    LiteLLM's filters. A virtual key sees only the organizations its user is a member of."""
    query = {k: v for k, v in (("org_id", org_id), ("org_alias", org_alias)) if v}
    return (client or Client()).request("GET", "/organization/list", query=query or None) or []


def update_organization(organization_id: str, *, client: Optional[Client] = None, **fields: Any) -> Dict[str, Any]:
    """Changes the fields given in LiteLLM's names (``organization_alias``, ``models``,
    ``max_budget``, ``soft_budget``, ``budget_duration``, ``tpm_limit``, ``rpm_limit``,
    ``budget_id``, ``metadata``, ``blocked``) and returns the organization as it is now; its
    spend, teams and members are kept. ``None`` is sent as null, which removes a bound
    (``max_budget=None``); ``max_budget=0`` is LiteLLM's budget of nothing, which blocks it.
    A bad field raises BadRequestError naming it; an unknown organization NotFoundError."""
    if not organization_id:
        raise MissingIdError("no organization id")
    body = dict(fields)
    body["organization_id"] = organization_id
    return (client or Client()).request("PATCH", "/organization/update", body=body)


def delete_organizations(*organization_ids: str, client: Optional[Client] = None) -> List[Dict[str, Any]]:
    """Deletes the organizations with their teams, their teams' virtual keys (revoked at once)
    and their memberships, all or none (an unknown id deletes nothing: NotFoundError), and
    returns them as they were."""
    if not organization_ids or not all(organization_ids):
        raise MissingIdError("no organization id")
    return (client or Client()).request("DELETE", "/organization/delete",
                                        body={"organization_ids": list(organization_ids)})


def add_organization_members(organization_id: str, members: Sequence[Dict[str, str]], *,
                             max_budget_in_organization: Optional[float] = None,
                             client: Optional[Client] = None) -> List[Dict[str, Any]]:
    """Adds users to the organization and returns their memberships (each ``{"user_id",
    "organization_id", "user_role", "user_email", "spend", "budget_id",
    "litellm_budget_table", ...}``). Each member is ``{"user_id" or "user_email", "role"}``,
    the role ``org_admin``, ``internal_user`` or ``internal_user_viewer`` (a user is made
    for an id or address no user has). ``max_budget_in_organization`` bounds what each
    member's keys of the organization's teams may spend together (0 blocks them). A user
    already in it raises BadRequestError and none is added."""
    if not organization_id:
        raise MissingIdError("no organization id")
    if not members:
        raise SwitchyardError("add_organization_members: no member given")
    body: Dict[str, Any] = {"organization_id": organization_id, "member": list(members)}
    if max_budget_in_organization is not None:
        body["max_budget_in_organization"] = max_budget_in_organization
    out = (client or Client()).request("POST", "/organization/member_add", body=body)
    return out.get("updated_organization_memberships", [])


def update_organization_member(organization_id: str, user: str, *, role: Any = _UNSET,
                               max_budget_in_organization: Any = _UNSET,
                               client: Optional[Client] = None) -> Dict[str, Any]:
    """Changes the role or ``max_budget_in_organization`` of ``user`` (a user id, or an
    address when it holds ``@``) in the organization, the ones given, and returns the
    membership; its spend is kept. ``max_budget_in_organization=None`` leaves the bound as it
    is (LiteLLM reads null so; a bound is taken away by removing the member and adding it
    again), 0 blocks the member's keys of the organization's teams."""
    body = _member_body(organization_id, user)
    if role is not _UNSET:
        body["role"] = role
    if max_budget_in_organization is not _UNSET:
        body["max_budget_in_organization"] = max_budget_in_organization
    return (client or Client()).request("PATCH", "/organization/member_update", body=body)


def remove_organization_member(organization_id: str, user: str, *,
                               client: Optional[Client] = None) -> Dict[str, Any]:
    """Takes ``user`` (a user id, or an address when it holds ``@``) out of the organization
    and returns the membership it had, its spend too; the user and its keys stay."""
    return (client or Client()).request("DELETE", "/organization/member_delete",
                                        body=_member_body(organization_id, user))
