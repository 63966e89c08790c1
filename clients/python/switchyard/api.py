"""Model selection, completions, RouterTrainer and AgentOptimizer."""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from . import _multipart
from ._http import Client
from .errors import MissingIdError, StreamError, StreamTruncatedError, SwitchyardError, UnknownStateError

#: The server's limit of inputs per prediction request; RouterTrainer.predict splits more.
MAX_PREDICT_INPUTS = 500

TRAINING_DONE = ("completed", "failed")
OPTIMIZATION_DONE = ("completed", "failed", "interrupted")
#: States a wait polls through; any other state that is not done ends it (UnknownStateError).
PENDING = ("queued", "running")


def _drop_none(d: Dict[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


class _Record(dict):
    """A JSON object of an answer that is also read by attribute (``r.session_id`` as
    ``r["session_id"]``), as the objects of Not Diamond's SDK are. Being a dict, it keeps
    every dict use (``r["x"]``, ``r.get``, ``json.dumps(r)``, ``r == {...}``). A field the
    server left out that the class lists in ``_optional`` reads None by attribute; any
    other missing name raises AttributeError (so ``hasattr`` answers False)."""

    __slots__ = ()
    _optional: Tuple[str, ...] = ()

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            if name in self._optional:
                return None
            raise AttributeError("%s has no field %r" % (type(self).__name__, name)) from None

    def __dir__(self):
        return sorted(set(super().__dir__()) | {k for k in self if isinstance(k, str) and k.isidentifier()}
                      | set(self._optional))

    def __reduce__(self):
        # pickle and copy make the same class again from the plain dict
        return (type(self), (dict(self),))


class RankedProvider(_Record):
    """One entry of a selection's ``providers``, best first: ``provider`` and ``model`` (or
    ``name`` for a candidate given as ``{"name": ...}``; the others then read None),
    ``rank``, ``score``, ``quality``, ``score_source`` and the other fields the server
    sends, by key or attribute (Not Diamond's ``Provider`` has ``provider`` and ``model``)."""

    __slots__ = ()
    _optional = ("provider", "model", "name", "estimated_from")


class SelectModelResult(_Record):
    """The answer of ``select_model``, by key (``res["llm_label"]``, as before) or by
    attribute as Not Diamond's ``ModelRouterSelectModelResponse`` (``res.providers[0].model``,
    ``res.session_id``). ``providers`` holds :class:`RankedProvider` entries;
    ``router_fallback`` and ``tradeoff_fallback`` read None by attribute when absent."""

    __slots__ = ()
    _optional = ("router_fallback", "tradeoff_fallback")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        ranked = self.get("providers")
        if isinstance(ranked, list):
            self["providers"] = [RankedProvider(p) if isinstance(p, dict) else p for p in ranked]


def select_model(messages: Sequence[Dict[str, str]], llm_providers: Sequence[Any], *,
                 tools=None, max_model_depth: Optional[int] = None,
                 tradeoff: Optional[str] = None, preference_id: Optional[str] = None,
                 hash_content: Optional[bool] = None, previous_session: Optional[str] = None,
                 tradeoff_tolerance: Optional[float] = None,
                 timeout: Optional[float] = None, default: Any = None,
                 metric: Optional[str] = None,
                 client: Optional[Client] = None) -> "SelectModelResult":
    """Asks which LLM should answer the conversation.

    ``llm_providers`` entries are ``{"provider": ..., "model": ...}``, ``{"name": ...}`` or
    plain ``"provider/model"`` strings (entries may carry Not Diamond's ``input_price``,
    ``output_price``, ``context_length`` and ``is_custom``). Returns a
    :class:`SelectModelResult`: ``{"llm_label", "providers", "session_id"}``, read by key or,
    as Not Diamond's SDK answers, by attribute (``res.providers[0].model``,
    ``res.session_id``), with ``"router_fallback"`` when the preference's router is
    gone and ``"tradeoff_fallback"`` (``"no_latency_data"``, ``"no_price_data"``) when the
    tradeoff had no figure to compare. ``tradeoff_tolerance`` (a Switchyard extension, 0-1) is
    how much estimated quality the cost/latency tradeoff may give up; None means the
    router's default. ``timeout`` (seconds) bounds the selection: past it ``default`` (a
    candidate or its index) answers alone, or without one the server answers 504.
    """
    c = client or Client()
    body = _drop_none({
        "messages": list(messages),
        "llm_providers": [_provider(p, candidate=True) for p in llm_providers],
        "tools": tools, "max_model_depth": max_model_depth, "tradeoff": tradeoff,
        "tradeoff_tolerance": tradeoff_tolerance,
        "preference_id": preference_id, "hash_content": hash_content,
        "previous_session": previous_session,
        "timeout": timeout, "default": default, "metric": metric,
    })
    res = c.request("POST", "/api/v1/model-select", body=body)
    return SelectModelResult(res) if isinstance(res, dict) else res


class LLMProvider:
    """One candidate of a selection as Not Diamond's SDK hands it back (its ``LLMConfig``):
    ``provider`` and ``model`` for a candidate sent as ``"provider/model"`` or ``{"provider",
    "model"}``, else ``name``. ``str()`` is the label (``llm_label``), usable as a completions
    model; ``report_feedback``, ``report_latency`` and ``select_model`` take it as it is."""

    __slots__ = ("provider", "model", "name")

    def __init__(self, provider: Optional[str] = None, model: Optional[str] = None, name: Optional[str] = None):
        self.provider, self.model, self.name = provider, model, name

    @classmethod
    def from_ranked(cls, entry: Dict[str, Any]) -> "LLMProvider":
        """The candidate of one ``providers`` entry of a ``select_model`` answer."""
        if entry.get("name"):
            return cls(name=entry["name"])
        return cls(provider=entry.get("provider"), model=entry.get("model"))

    def to_dict(self) -> Dict[str, str]:
        """The request's shape: ``{"name"}`` or ``{"provider", "model"}``."""
        if self.name:
            return {"name": self.name}
        return {"provider": self.provider or "", "model": self.model or ""}

    def __str__(self) -> str:
        return self.name or "%s/%s" % (self.provider, self.model)

    def __repr__(self) -> str:
        return "LLMProvider(%r)" % str(self)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, LLMProvider) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(str(self))


def model_select(messages: Sequence[Dict[str, str]], model: Sequence[Any], *,
                 client: Optional[Client] = None, **options: Any) -> Tuple[str, LLMProvider]:
    """Not Diamond's ``model_select``: ``session_id, provider = model_select(messages,
    ["openai/gpt-4o", "openai/gpt-4o-mini"], tradeoff="cost")``. ``model`` lists the
    candidates as ``select_model``'s ``llm_providers``; ``options`` are ``select_model``'s
    (``tradeoff``, ``preference_id``, ``max_model_depth``, ``previous_session``, ``timeout``,
    ``default``, ...). Returns the session id and the chosen candidate (an
    :class:`LLMProvider`); call ``select_model`` for the whole answer (the ranking,
    ``router_fallback``, ``tradeoff_fallback``)."""
    res = select_model(messages, model, client=client, **options)
    ranked = res.get("providers") or []
    if ranked:
        chosen = LLMProvider.from_ranked(ranked[0])
    else:
        label = res.get("llm_label", "")
        prov, sep, mod = label.partition("/")
        chosen = LLMProvider(provider=prov, model=mod) if sep else LLMProvider(name=label)
    return res.get("session_id", ""), chosen


def create_preference_id(name: Optional[str] = None, *, client: Optional[Client] = None) -> str:
    """Not Diamond's ``create_preference_id``: creates a preference and returns its id
    (``create_preference`` returns the whole preference)."""
    return create_preference(name, client=client)["preference_id"]


def create_preference(name: Optional[str] = None, *, router_model_id: Optional[str] = None,
                      client: Optional[Client] = None) -> Dict[str, Any]:
    """Creates a preference (``pref_...``): ``select_model(..., preference_id=...)`` with it
    learns from ``report_feedback`` on its sessions. ``router_model_id`` personalizes one of
    your trained routers instead of the default router. Returns the preference."""
    c = client or Client()
    return c.request("POST", "/api/v1/preferences",
                     body=_drop_none({"name": name, "router_model_id": router_model_id}))


def report_feedback(session_id: str, provider: Any, accuracy: int, *,
                    client: Optional[Client] = None) -> Dict[str, Any]:
    """Thumbs up (``accuracy=1``) or down (0) on ``provider`` (a candidate of the session:
    ``{"provider", "model"}``, ``{"name"}``, ``"provider/model"`` or the ``llm_label``
    select_model answered). ``True``/``False`` count as 1 and 0. Returns
    ``{"session_id", "feedback", "provider", "personalized", ...}``."""
    c = client or Client()
    if isinstance(accuracy, bool):  # the server takes a number: JSON true would be refused
        accuracy = int(accuracy)
    return c.request("POST", "/api/v1/feedback", body={
        "session_id": session_id, "provider": _provider(provider), "feedback": {"accuracy": accuracy}})


def report_latency(session_id: str, provider: Any, tokens_per_second: float, *,
                   client: Optional[Client] = None) -> Dict[str, Any]:
    """How fast ``provider`` (a candidate of the session) answered, in output tokens per
    second; under a ``pref_`` preference, ``tradeoff="latency"`` ranks by it. Returns
    ``{"session_id", "feedback", "provider", "personalized", ...}``."""
    c = client or Client()
    return c.request("POST", "/api/v1/feedback/latency", body={
        "session_id": session_id, "provider": _provider(provider),
        "feedback": {"tokens_per_second": tokens_per_second}})


# What a Not Diamond LLMConfig sends of a candidate besides provider and model (its
# prepare_for_request), which a selection ranks by: prices for tradeoff="cost", latency for
# "latency", context_length to filter, is_custom for a model no catalogue knows.
_LLM_CONFIG_FIGURES = ("is_custom", "context_length", "input_price", "output_price", "latency")


def _provider(p: Any, candidate: bool = False) -> Any:
    if isinstance(p, LLMProvider):
        return p.to_dict()
    if not isinstance(p, (str, dict)) and isinstance(getattr(p, "provider", None), str) \
            and isinstance(getattr(p, "model", None), str):
        # Not Diamond's LLMConfig (or anything shaped like it): its provider and model, and
        # as a candidate of a selection the figures it was given
        out = {"provider": p.provider, "model": p.model}
        if candidate:
            for k in _LLM_CONFIG_FIGURES:
                v = getattr(p, k, None)
                if v is not None and v is not False:
                    out[k] = v
        return out
    if isinstance(p, str) and "/" in p:
        provider, _, model = p.partition("/")
        return {"provider": provider, "model": model}
    return p


def _message(m: Dict[str, Any]) -> Dict[str, Any]:
    content = m.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    return {"role": m["role"], "content": content}


def _stream_error(raw: str, request_id: Optional[str] = None) -> StreamError:
    """The StreamError an error event says, whatever its payload's shape: Switchyard's
    ``{"error": kind, "message", "attempts"}``, OpenAI's ``{"error": {"type", "message"}}``,
    a JSON string, or text that is not JSON (the whole of it is the message). The kind is
    ``Stream Error`` when the payload names none."""
    kind, message, attempts = "", raw, None
    try:
        data = json.loads(raw)
    except ValueError:
        data = raw
    if isinstance(data, str):
        message = data
    elif isinstance(data, dict):
        err = data.get("error")
        message = data.get("message") or ""
        attempts = data.get("attempts")
        if isinstance(err, str):
            kind = err
        elif isinstance(err, dict):
            kind = err.get("type") or err.get("code") or ""
            message = message or err.get("message") or ""
    return StreamError(str(kind or "Stream Error"), str(message), attempts, request_id=request_id)


def _stream_object(ev: Dict[str, str], what: str, request_id: Optional[str]) -> Dict[str, Any]:
    """The JSON object of a stream event ``ev`` of a ``what`` ("stream", "chat stream"):
    an error event raises its StreamError; a payload that is not a JSON object raises
    SwitchyardError quoting its start."""
    if ev["event"] == "error":
        raise _stream_error(ev["data"], request_id)
    try:
        data = json.loads(ev["data"])
    except ValueError as e:
        raise SwitchyardError(f"malformed {what} event: {ev['data'][:120]!r}") from e
    if not isinstance(data, dict):
        raise SwitchyardError(f"malformed {what} event (not an object): {ev['data'][:120]!r}")
    return data


class CompletionStream:
    """Iterates over the chunks of a streamed completion.

    After the iteration ends, ``final`` holds the full response (usage, costs, latency,
    conversation fields). A failure after the first chunk raises StreamError; a stream cut
    before its end marker raises StreamTruncatedError. ``request_id`` is the
    ``x-request-id`` the stream was answered with: the request's id in the usage history.
    """

    def __init__(self, events: Iterator[Dict[str, Any]], request_id: Optional[str] = None):
        self._events = events
        self._read = False
        self.final: Optional[Dict[str, Any]] = None
        self.text = ""
        self.request_id = request_id

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        if self._read:
            raise SwitchyardError("a CompletionStream can be iterated once; its text and final hold the answer")
        self._read = True
        done = False
        try:
            for ev in self._events:
                if ev["event"] == "json":  # the server did not stream; one chunk
                    self.final = json.loads(ev["data"])
                    self.text = "".join(b.get("text", "") for b in self.final["message"]["content"])
                    chunk = {"type": "text", "text": self.text, "provider": self.final.get("provider"),
                             "model": self.final.get("model")}
                    if self.final.get("logprobs") is not None:
                        chunk["logprobs"] = self.final["logprobs"]
                    yield chunk
                    done = True
                    break
                if ev["data"] == "[DONE]":
                    done = True
                    break
                data = _stream_object(ev, "stream", self.request_id)
                if data.get("type") == "error" or data.get("error"):
                    raise _stream_error(ev["data"], self.request_id)
                if data.get("final") is True or data.get("type") == "final":
                    self.final = data
                    continue
                self.text += data.get("text", "")
                yield data
        finally:
            close = getattr(self._events, "close", None)
            if close:
                close()
        if not done:
            raise StreamTruncatedError("stream ended before [DONE]; the answer is incomplete")
        if self.final is None:
            raise StreamTruncatedError("stream ended without its final response")

    def close(self) -> None:
        """Closes the connection early."""
        close = getattr(self._events, "close", None)
        if close:
            close()


def complete(messages: Sequence[Dict[str, Any]], models: Union[str, Sequence[str]], *,
             stream: bool = False, fallback_models: Optional[Sequence[str]] = None,
             temperature: Optional[float] = None, max_tokens: Optional[int] = None,
             max_retries: Optional[int] = None, search: Optional[bool] = None,
             conversation_id: Optional[str] = None, cache: Optional[Dict[str, Any]] = None,
             tags: Optional[Sequence[str]] = None, guardrails: Optional[Sequence[str]] = None,
             logprobs: Optional[bool] = None, top_logprobs: Optional[int] = None,
             client: Optional[Client] = None) -> Union[Dict[str, Any], CompletionStream]:
    """Generates an assistant message.

    ``messages`` may give ``content`` as a plain string or as the spec's list of text blocks.
    With ``stream=False`` returns the response dict; with ``stream=True`` a CompletionStream
    to iterate over once (its ``final`` attribute holds the full response afterwards); the
    request is sent at once either way, so an error answer (401, 422, ...) is raised here.
    ``cache`` is the request's say over the server's response cache, in LiteLLM's words
    (``{"no-cache": True}``, ``{"ttl": 600, "namespace": "eval-1"}``, ...); a response
    answered from it has ``response["cache"]["result"] == "hit"``. ``tags`` label the request
    for cost attribution (the usage log's per-tag totals). ``guardrails`` names the server's
    opt-in guardrails to run on this request (LiteLLM's ``guardrails``); a block raises
    GuardrailBlockedError. ``logprobs=True`` asks for the log probability of each token of
    the answer, ``top_logprobs`` (0 to 20) for that many likeliest alternatives at each
    position: the response's ``logprobs`` is OpenAI's ``{"content": [{"token", "logprob",
    "bytes", "top_logprobs"}, ...], "refusal": None}``, and each streamed chunk's holds its
    own tokens. Only the models that give them are tried; when none of the request's can,
    ValidationError naming ``logprobs``.
    """
    c = client or Client()
    if isinstance(models, str):
        models = [models]
    body = _drop_none({
        "messages": [_message(m) for m in messages],
        "models": list(models),
        "fallback_models": list(fallback_models) if fallback_models else None,
        "stream": True if stream else None,
        "temperature": temperature, "maxTokens": max_tokens, "maxRetries": max_retries,
        "search": search, "conversationId": conversation_id, "cache": cache,
        "tags": list(tags) if tags else None,
        "guardrails": list(guardrails) if guardrails else None,
        "logprobs": True if logprobs else None, "top_logprobs": top_logprobs,
    })
    if stream:
        events, request_id = c.open_events("/api/v1/completions", body)
        return CompletionStream(events, request_id)
    return c.request("POST", "/api/v1/completions", body=body)


def _poll(kind: str, get: Callable[[], Dict[str, Any]], done: Sequence[str], poll_every: float,
          timeout: Optional[float], on_status, client: Client, default_every: float) -> Dict[str, Any]:
    deadline = None if timeout is None else client._now() + timeout
    while True:
        st = get()
        if on_status:
            on_status(st)
        state = st.get("status") if isinstance(st, dict) else None
        if state in done:
            return st
        if state not in PENDING:
            # A state this client does not know (a newer server's): never poll it forever.
            raise UnknownStateError(f"{kind} job is {state!r}, a state this client does not know", state,
                                    st if isinstance(st, dict) else None)
        wait = poll_every if poll_every > 0 else default_every  # 0: the default, as in Go
        if deadline is not None:
            left = deadline - client._now()
            if left <= 0:
                raise TimeoutError(f"{kind} job still {state} after {timeout:g} s")
            wait = min(wait, left)  # a last poll at the deadline
        client._wait(wait)


class RouterTrainer:
    """Trains custom routers and predicts with them.

    Remembers the latest training job id (from ``train``) and model id (from a completed
    ``status``), so ``status``, ``wait``, ``cancel``, ``model`` and ``predict`` need no id.
    """

    def __init__(self, client: Optional[Client] = None, *, job_id: Optional[str] = None,
                 model_id: Optional[str] = None):
        self.client = client or Client()
        self.job_id = job_id
        self.model_id = model_id

    def train(self, data_urls: Union[str, Sequence[str]],
              model_prices: Optional[Dict[str, float]] = None) -> Dict[str, Any]:
        """Starts a training job from dataset file URLs (JSON, JSONL or CSV).

        ``model_prices`` (a Switchyard extension) prices the models, USD per 1M tokens, for
        the cost/quality frontier the job measures. Remembers the new job's id; when the
        server refuses the job (ValidationError, RateLimitError, ServerError, ...) the
        remembered ids stay as they were, since no new job exists.
        """
        if isinstance(data_urls, str):
            data_urls = [data_urls]
        body: Dict[str, Any] = {"Data_URLs": list(data_urls)}
        if model_prices is not None:
            body["model_prices"] = dict(model_prices)
        job = self.client.request("POST", "/api/v1/routers/train", body=body)
        self.job_id = job["training_job_id"]
        return job

    def train_upload(self, content: Any, *, filename: Optional[str] = None, format: Optional[str] = None,
                     prompt_column: Optional[str] = None, maximize: Optional[bool] = None,
                     llm_providers: Optional[Sequence[Any]] = None,
                     model_prices: Optional[Dict[str, float]] = None) -> Dict[str, Any]:
        """Starts a training job on a dataset file sent with the request
        (``POST /api/v1/routers/train/upload``) rather than fetched from a URL.

        ``content`` is the file's bytes, a path, or an open binary file: a records file
        (JSON, JSONL or CSV; ``format`` says which, else detected), or Not Diamond's joint CSV
        with ``prompt_column`` (and ``maximize=False`` when lower scores are better,
        ``llm_providers`` as ``"provider/model"`` strings or ``{"provider", "model"}`` objects to
        route among some of its score columns). A row that breaks a rule raises
        ValidationError naming its line and column. Remembers the new job's id.

        There is no ``preference_id`` here: this route, like the specification's
        ``POST /api/v1/routers/train`` (``train``), trains a router model (``rm_...``) that
        belongs to no preference. To retrain the router of a preference, as Not Diamond's
        ``CustomRouter.fit(..., preference_id=...)`` does, use :meth:`train_custom_router`.
        """
        fields = []
        if format is not None:
            fields.append(("format", format))
        body, ctype = self._training_form(content, filename, "file", fields, prompt_column, maximize,
                                          llm_providers, model_prices)
        job = self.client.request("POST", "/api/v1/routers/train/upload", raw=body, content_type=ctype)
        self.job_id = job["training_job_id"]
        return job

    def train_custom_router(self, content: Any, prompt_column: str, *, preference_id: Optional[str] = None,
                            maximize: Optional[bool] = None, llm_providers: Optional[Sequence[Any]] = None,
                            model_prices: Optional[Dict[str, float]] = None,
                            filename: Optional[str] = None) -> Dict[str, Any]:
        """Trains the router of a preference from Not Diamond's joint CSV, as Not Diamond's
        ``CustomRouter.fit`` does (``POST /v2/pzn/trainCustomRouter``), and returns
        ``{"preference_id", "training_job_id", "status", "version"}``.

        Without ``preference_id`` a new preference (``pref_...``) is made for the router;
        with the ``preference_id`` of an earlier call its router is retrained: the earlier
        router keeps ranking until the new job completes (and for good if it fails), and
        the feedback the preference learned is kept. Until its first job completes a new
        preference ranks with the server's default router. ``select_model(...,
        preference_id=...)`` routes with it. ``content``, ``prompt_column``, ``maximize``,
        ``llm_providers`` and ``model_prices`` are as in :meth:`train_upload`. A bad field
        raises BadRequestError (400) naming it (``preference_id`` when it is not one of
        this key's preferences). Remembers the new job's id, so ``wait`` follows it.
        """
        fields = []
        if preference_id is not None:
            fields.append(("preference_id", preference_id))
        body, ctype = self._training_form(content, filename, "dataset_file", fields, prompt_column, maximize,
                                          llm_providers, model_prices)
        job = self.client.request("POST", "/v2/pzn/trainCustomRouter", raw=body, content_type=ctype)
        self.job_id = job["training_job_id"]
        return job

    @staticmethod
    def _training_form(content: Any, filename: Optional[str], file_field: str, fields: List[Tuple[str, str]],
                       prompt_column: Optional[str], maximize: Optional[bool],
                       llm_providers: Optional[Sequence[Any]],
                       model_prices: Optional[Dict[str, float]]) -> Tuple[bytes, str]:
        """The multipart form of a training upload: ``fields``, the joint CSV's options, then
        the file in ``file_field``."""
        data, filename = _multipart.read_content(content, filename)
        fields = list(fields)
        if prompt_column is not None:
            fields.append(("prompt_column", prompt_column))
        if maximize is not None:
            fields.append(("maximize", "true" if maximize else "false"))
        if llm_providers is not None:
            fields.append(("llm_providers", json.dumps(list(llm_providers))))
        if model_prices is not None:
            fields.append(("model_prices", json.dumps(dict(model_prices))))
        return _multipart.encode(fields, [_multipart.Part(file_field, filename or "dataset.csv", "text/csv", data)])

    def status(self, job_id: Optional[str] = None) -> Dict[str, Any]:
        """Returns the state of the remembered (or given) job; remembers its model when completed."""
        jid = job_id or self.job_id
        if not jid:
            raise MissingIdError("no training job id: call train() first or pass job_id")
        st = self.client.request("GET", "/api/v1/routers/train/status", {"task_id": jid})
        if st.get("status") == "completed" and st.get("model_id"):
            self.model_id = st["model_id"]
        return st

    def cancel(self, job_id: Optional[str] = None) -> Dict[str, Any]:
        """Stops the remembered (or given) queued or running job; it ends ``failed`` with an
        ``error_message`` saying it was cancelled (a running job a moment later). Raises
        ConflictError (409) when the job already ended."""
        jid = job_id or self.job_id
        if not jid:
            raise MissingIdError("no training job id: call train() first or pass job_id")
        return self.client.request("POST", "/api/v1/routers/train/cancel", {"task_id": jid})

    def wait(self, poll_every: float = 10.0, timeout: Optional[float] = None,
             on_status: Optional[Callable[[Dict[str, Any]], None]] = None) -> Dict[str, Any]:
        """Polls until the job is completed or failed and returns the last status.

        Raises UnknownStateError when the job reports a state other than queued, running,
        completed or failed (rather than polling it forever), and TimeoutError when it has
        not ended within ``timeout`` seconds (None: no bound; the last poll is made at the
        deadline). ``poll_every`` of 0 or less is the default 10 s (never a busy loop). The
        waits between polls go through the client's ``sleep``, the timeout is measured with
        its ``clock``."""
        return _poll("training", self.status, TRAINING_DONE, poll_every, timeout, on_status, self.client, 10.0)

    def model(self, model_id: Optional[str] = None) -> Dict[str, Any]:
        """Returns the details (with metrics) of the remembered (or given) router model."""
        mid = model_id or self.model_id
        if not mid:
            raise MissingIdError("no model id: wait for a completed job or pass model_id")
        return self.client.request("GET", "/api/v1/routers/models", {"model_id": mid})

    def predict(self, inputs: Union[str, Sequence[str]], model_id: Optional[str] = None) -> Dict[str, Any]:
        """Ranks models for each input; more than 500 inputs are sent in several requests
        and the predictions joined in input order."""
        mid = model_id or self.model_id
        if not mid:
            raise MissingIdError("no model id: wait for a completed job or pass model_id")
        if isinstance(inputs, str):
            inputs = [inputs]
        inputs = list(inputs)
        out: Dict[str, Any] = {"predictions": [], "version": ""}
        start = 0
        while True:
            batch = inputs[start:start + MAX_PREDICT_INPUTS]
            part = self.client.request("POST", "/api/v1/routers/predict",
                                       body={"model_id": mid, "inputs": batch})
            if len(part.get("predictions", [])) != len(batch):
                raise SwitchyardError(f"server returned {len(part.get('predictions', []))} predictions for {len(batch)} inputs")
            out["predictions"].extend(part["predictions"])
            out["version"] = part.get("version", "")
            start += MAX_PREDICT_INPUTS
            if start >= len(inputs):
                return out


class AgentOptimizer:
    """Optimizes an agent's system prompt. Remembers the latest job id (from ``submit``),
    so ``status``, ``wait``, ``results`` and ``cancel`` need no id."""

    def __init__(self, client: Optional[Client] = None, *, job_id: Optional[str] = None):
        self.client = client or Client()
        self.job_id = job_id

    def submit(self, input_url: str, target_model: Union[str, Sequence[str]], *,
               n_iterations: Optional[int] = None, overall_timeout_seconds: Optional[int] = None,
               llm_call_timeout_seconds: Optional[int] = None,
               sandbox_timeout_seconds: Optional[int] = None,
               optimizer: str = "agentopt", seed: Optional[int] = None) -> Dict[str, Any]:
        """Submits a bundle URL (ZIP with agent.py, eval.py, dataset.json and optionally
        valset.json, the held-out rows as DSPy's valset) for one target
        model (or a list of them) and remembers the new job's id; when the server refuses
        it (ValidationError, RateLimitError, ServerError, ...) the remembered id stays as it
        was, since no new job exists. The server checks the bundle first: one it cannot
        fetch or use (a dataset.json row without ``input`` or ``answer``, ...) is a
        BadRequestError (400) naming the file and row. ``seed`` (a Switchyard extension, as
        DSPy optimizers take one) draws the job's train/held-out split and minibatches
        (server default 42; with a valset.json, the minibatches only); results report it as
        ``seed``, ``held_out`` says whether the held-out rows are the 30% ``split`` of
        dataset.json or the ``valset``, and ``metric`` names what the scores measure."""
        models = [target_model] if isinstance(target_model, str) else list(target_model)
        body = _drop_none({
            "optimizer": optimizer, "input_url": input_url, "target_models": models,
            "n_iterations": n_iterations, "overall_timeout_seconds": overall_timeout_seconds,
            "llm_call_timeout_seconds": llm_call_timeout_seconds,
            "sandbox_timeout_seconds": sandbox_timeout_seconds, "seed": seed,
        })
        job = self.client.request("POST", "/api/v1/optimize", body=body)
        self.job_id = job["job_id"]
        return job

    def _id(self, job_id: Optional[str]) -> str:
        jid = job_id or self.job_id
        if not jid:
            raise MissingIdError("no optimization job id: call submit() first or pass job_id")
        return jid

    def status(self, job_id: Optional[str] = None) -> Dict[str, Any]:
        """Returns the live state of the remembered (or given) job."""
        return self.client.request("GET", "/api/v1/optimize/status", {"job_id": self._id(job_id)})

    def wait(self, poll_every: float = 30.0, timeout: Optional[float] = None,
             on_status: Optional[Callable[[Dict[str, Any]], None]] = None) -> Dict[str, Any]:
        """Polls until completed, failed or interrupted and returns the last status.

        Raises UnknownStateError when the job reports a state other than those, queued and
        running (rather than polling it forever), and TimeoutError when it has not ended
        within ``timeout`` seconds (None: no bound; the last poll is made at the deadline).
        ``poll_every`` of 0 or less is the default 30 s (never a busy loop). The waits between
        polls go through the client's ``sleep``, the timeout is measured with its ``clock``."""
        return _poll("optimization", self.status, OPTIMIZATION_DONE, poll_every, timeout, on_status, self.client, 30.0)

    def results(self, job_id: Optional[str] = None) -> Dict[str, Any]:
        """Returns the outcome; raises ConflictError (409) while the job is not finished."""
        return self.client.request("GET", "/api/v1/optimize/results", {"job_id": self._id(job_id)})

    def agent_code(self, result: Optional[Dict[str, Any]] = None, *, job_id: Optional[str] = None,
                   model: Optional[str] = None, path: Optional[str] = None) -> str:
        """Downloads the best agent.py (the submitted agent with the winning prompt) of
        ``result`` (an entry of ``results()["results"]``), else of the remembered (or given)
        job's result for ``model`` (the first when None), and writes it to ``path`` when
        given. The link is its own credential: it is fetched without the API key. Raises
        MissingIdError when the result has no ``agent_code_url`` (the job ended before its
        baseline) or no result is for ``model``."""
        if result is None:
            results = self.results(job_id)["results"]
            matches = [r for r in results if model is None or r.get("model") == model]
            if not matches:
                raise MissingIdError("no result for model %r in the job's results" % model)
            result = matches[0]
        link = result.get("agent_code_url")
        if not link:
            raise MissingIdError("the result has no agent_code_url (the job ended before its baseline)")
        code = self.client.get_public(link, accept="text/x-python, */*").decode("utf-8")
        if path is not None:
            with open(path, "w", encoding="utf-8") as f:
                f.write(code)
        return code

    def cancel(self, job_id: Optional[str] = None) -> Dict[str, Any]:
        """Stops the job; it ends interrupted. Returns its status once the server saw the run
        stop (``interrupted``, with the cancel's ``error_message``); a run slower to stop than
        the server waits (10 s), or running on another worker, is still ``running``: wait()."""
        return self.client.request("POST", "/api/v1/optimize/cancel", {"job_id": self._id(job_id)})
