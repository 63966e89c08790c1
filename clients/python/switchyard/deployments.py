"""Deployments: LiteLLM's dynamic models (a proxy with ``store_model_in_db``: its admin UI's
"Add Model"). ``POST /model/new`` adds one, ``PATCH /model/{model_id}/update`` changes it and
``POST /model/delete`` removes it; the server keeps them in its store, serves them at once
(a deployment's ``model_name`` is a model group, asked through ``chat_completion``) and
seals their ``api_key``: no answer ever holds it. They are the operator's: a virtual key
gets PermissionDeniedError. The calls mirror the Go client's (client/deployments.go)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional
from urllib.parse import quote

from ._http import Client
from .errors import MissingIdError


def _entry(model_id: Optional[str], model_name: Optional[str], model: Optional[str], api_base: Optional[str],
           api_key: Optional[str], api_version: Optional[str], rpm: Optional[int], tpm: Optional[int],
           params: Optional[Dict[str, Any]], info: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """A config.yaml model_list entry {model_name, litellm_params, model_info} of what is set;
    the named arguments win over the same keys of params and info."""
    litellm_params = dict(params or {})
    for k, v in (("model", model), ("api_base", api_base), ("api_key", api_key),
                 ("api_version", api_version), ("rpm", rpm), ("tpm", tpm)):
        if v:
            litellm_params[k] = v
    model_info = dict(info or {})
    if model_id:
        model_info["id"] = model_id
    out: Dict[str, Any] = {}
    if model_name:
        out["model_name"] = model_name
    if litellm_params:
        out["litellm_params"] = litellm_params
    if model_info:
        out["model_info"] = model_info
    return out


def add_deployment(model_name: str, model: str, *, model_id: Optional[str] = None, api_base: Optional[str] = None,
                   api_key: Optional[str] = None, api_version: Optional[str] = None, rpm: Optional[int] = None,
                   tpm: Optional[int] = None, params: Optional[Dict[str, Any]] = None,
                   info: Optional[Dict[str, Any]] = None, client: Optional[Client] = None) -> Dict[str, Any]:
    """Adds a deployment and returns it as stored (``{"model_id", "model_name",
    "litellm_params", "model_info", "created_at", "updated_at"}``, never its api_key).
    ``model_name`` is the name clients send (a model group); ``model`` the provider/model it
    calls (``"openai/gpt-4o"``); ``api_key`` the provider's credential or
    ``os.environ/NAME``; ``params`` other litellm_params (``timeout``, ``weight``,
    ``input_cost_per_token``, ...), ``info`` other model_info keys; ``model_id`` its id (none:
    the server makes one). A bad field raises BadRequestError naming it; an id taken
    ConflictError."""
    body = _entry(model_id, model_name, model, api_base, api_key, api_version, rpm, tpm, params, info)
    return (client or Client()).request("POST", "/model/new", body=body)


def update_deployment(model_id: str, *, model_name: Optional[str] = None, model: Optional[str] = None,
                      api_base: Optional[str] = None, api_key: Optional[str] = None,
                      api_version: Optional[str] = None, rpm: Optional[int] = None, tpm: Optional[int] = None,
                      params: Optional[Dict[str, Any]] = None, info: Optional[Dict[str, Any]] = None,
                      client: Optional[Client] = None) -> Dict[str, Any]:
    """Changes the stored deployment ``model_id``: the settings given replace its own, the
    others stay (its api_key too when none is given); returns it as it is now. An unknown
    id raises NotFoundError; a deployment of the config file BadRequestError."""
    if not model_id:
        raise MissingIdError("no deployment id")
    body = _entry(None, model_name, model, api_base, api_key, api_version, rpm, tpm, params, info)
    return (client or Client()).request("PATCH", "/model/" + quote(model_id, safe="") + "/update", body=body)


def delete_deployment(model_id: str, *, client: Optional[Client] = None) -> None:
    """Removes the stored deployment ``model_id``: the server stops routing to it at once.
    An unknown id raises NotFoundError."""
    if not model_id:
        raise MissingIdError("no deployment id")
    (client or Client()).request("POST", "/model/delete", body={"id": model_id})


def deployment_infos(*, client: Optional[Client] = None) -> List[Dict[str, Any]]:
    """Returns the deployments the server routes to (``GET /model/info``): the config file's
    and the stored ones (``model_info.db_model`` true), each ``{"model_name",
    "litellm_params": {"model", "api_base"}, "model_info": {"id", "db_model", "mode", ...}}``
    without any key."""
    out = (client or Client()).request("GET", "/model/info")
    return (out or {}).get("data", [])
