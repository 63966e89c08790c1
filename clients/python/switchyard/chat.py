"""OpenAI-compatible chat completions (``POST /v1/chat/completions``), whole or streamed,
as the Go client's ChatCompletion and ChatCompletionStream."""

from __future__ import annotations

import json
from typing import Any, Dict, Iterator, List, Optional, Sequence, Union

from ._http import Client
from .api import _stream_error, _stream_object
from .errors import StreamTruncatedError, SwitchyardError

CHAT_COMPLETIONS_PATH = "/v1/chat/completions"


class ChatCompletionStream:
    """Iterates over the ``chat.completion.chunk`` dicts of a streamed chat completion.

    While and after iterating: ``text`` is the first choice's content so far, ``tool_calls``
    its tool calls assembled from their fragments (as a whole answer gives them),
    ``finish_reason`` the first choice's once sent, and ``usage`` the usage chunk's usage
    (asked for with ``include_usage=True``), else None; ``summary`` the gateway's
    ``switchyard`` member sent with it (provider, costs, latency, attempts: what a whole
    answer's ``switchyard`` says), else None. ``request_id`` is the
    ``x-request-id`` the stream was answered with: the request's id in the usage history.

    A failure after the first chunk raises StreamError (its ``request_id`` set); a stream
    cut before ``data: [DONE]`` raises StreamTruncatedError. A server that answered with a
    whole ``chat.completion`` is presented as the chunks a stream of it would carry.
    """

    def __init__(self, events: Iterator[Dict[str, Any]], request_id: Optional[str] = None,
                 include_usage: bool = False):
        self._events = events
        self._include_usage = include_usage
        self._read = False
        self.request_id = request_id
        self.text = ""
        self.tool_calls: List[Dict[str, Any]] = []
        self.finish_reason: Optional[str] = None
        self.usage: Optional[Dict[str, Any]] = None
        self.summary: Optional[Dict[str, Any]] = None

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        if self._read:
            raise SwitchyardError("a ChatCompletionStream can be iterated once; its text, tool_calls and usage hold the answer")
        self._read = True
        done = False
        try:
            for ev in self._events:
                if ev["event"] == "json":  # the server did not stream
                    try:
                        whole = json.loads(ev["data"])
                    except ValueError as e:
                        raise SwitchyardError(f"malformed chat completion: {ev['data'][:120]!r}") from e
                    for chunk in _chunks_of(whole, self._include_usage):
                        self._add(chunk)
                        yield chunk
                    done = True
                    break
                if ev["data"] == "[DONE]":
                    done = True
                    break
                data = _stream_object(ev, "chat stream", self.request_id)
                if data.get("error"):
                    raise _stream_error(ev["data"], self.request_id)
                self._add(data)
                yield data
        finally:
            self.close()
        if not done:
            raise StreamTruncatedError("chat stream ended before [DONE]; the answer is incomplete")

    def _add(self, chunk: Dict[str, Any]) -> None:
        if chunk.get("usage") is not None:
            self.usage = chunk["usage"]
            self.summary = chunk.get("switchyard")
        choices = chunk.get("choices") or []
        if not choices:
            return
        first = choices[0]
        delta = first.get("delta") or {}
        if isinstance(delta.get("content"), str):
            self.text += delta["content"]
        if first.get("finish_reason"):
            self.finish_reason = first["finish_reason"]
        for frag in delta.get("tool_calls") or []:
            i = frag.get("index", len(self.tool_calls))
            while len(self.tool_calls) <= i:
                self.tool_calls.append({"id": "", "type": "function", "function": {"name": "", "arguments": ""}})
            call = self.tool_calls[i]
            if frag.get("id"):
                call["id"] = frag["id"]
            if frag.get("type"):
                call["type"] = frag["type"]
            fn = frag.get("function") or {}
            if fn.get("name"):
                call["function"]["name"] = fn["name"]
            if fn.get("arguments"):
                call["function"]["arguments"] += fn["arguments"]

    def close(self) -> None:
        """Closes the connection early."""
        close = getattr(self._events, "close", None)
        if close:
            close()


def _chunks_of(whole: Dict[str, Any], include_usage: bool) -> List[Dict[str, Any]]:
    """The chunks a stream of the whole chat.completion ``whole`` would carry."""
    base = {"id": whole.get("id"), "object": "chat.completion.chunk", "created": whole.get("created"),
            "model": whole.get("model")}
    choices = []
    for ch in whole.get("choices") or []:
        msg = ch.get("message") or {}
        delta = {k: v for k, v in msg.items() if k != "tool_calls"}
        if msg.get("tool_calls"):
            delta["tool_calls"] = [dict(tc, index=i) for i, tc in enumerate(msg["tool_calls"])]
        choices.append({"index": ch.get("index", 0), "delta": delta, "finish_reason": ch.get("finish_reason")})
    out = [dict(base, choices=choices)]
    if include_usage and whole.get("usage") is not None:
        last = dict(base, choices=[], usage=whole["usage"])
        if whole.get("switchyard") is not None:
            last["switchyard"] = whole["switchyard"]
        out.append(last)
    return out


def chat_completion(messages: Sequence[Dict[str, Any]], model: str, *, stream: bool = False,
                    temperature: Optional[float] = None, max_tokens: Optional[int] = None,
                    top_p: Optional[float] = None, stop: Optional[Union[str, Sequence[str]]] = None,
                    tools: Optional[Sequence[Dict[str, Any]]] = None, tool_choice: Any = None,
                    response_format: Optional[Dict[str, Any]] = None, user: Optional[str] = None,
                    include_usage: bool = False, extra: Optional[Dict[str, Any]] = None,
                    client: Optional[Client] = None) -> Union[Dict[str, Any], ChatCompletionStream]:
    """Asks the OpenAI-compatible ``/v1/chat/completions`` for a chat completion.

    ``messages`` are OpenAI's (``{"role", "content"}``, content a string or a list of
    parts; tool messages and assistant ``tool_calls`` as OpenAI has them). ``model`` is a
    ``provider/model``, a bare OpenAI model or a model group. ``user`` names the end user
    the request is made for (OpenAI's ``user``: the server's end-user budgets and spend
    apply). ``extra`` adds other OpenAI or LiteLLM fields to the body as given (``seed``,
    ``reasoning_effort``, ``metadata``, ...).

    With ``stream=False`` returns the ``chat.completion`` dict; with ``stream=True`` a
    ChatCompletionStream to iterate over once (``include_usage=True`` asks for the usage
    chunk). The request is sent at once either way, so an error answer (400, 401, 429,
    ...) is raised here as an APIError whose ``request_id`` is the request's id.
    """
    c = client or Client()
    body: Dict[str, Any] = dict(extra or {})
    body.update({"model": model, "messages": [dict(m) for m in messages]})
    for name, value in (("temperature", temperature), ("max_tokens", max_tokens), ("top_p", top_p),
                        ("tool_choice", tool_choice), ("response_format", response_format), ("user", user)):
        if value is not None:
            body[name] = value
    if stop is not None:
        body["stop"] = stop if isinstance(stop, str) else list(stop)
    if tools is not None:
        body["tools"] = list(tools)
    if not stream:
        body.pop("stream", None)
        body.pop("stream_options", None)
        return c.request("POST", CHAT_COMPLETIONS_PATH, body=body)
    body["stream"] = True
    if include_usage:
        body["stream_options"] = {"include_usage": True}
    events, request_id = c.open_events(CHAT_COMPLETIONS_PATH, body)
    return ChatCompletionStream(events, request_id, include_usage)
