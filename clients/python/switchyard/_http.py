"""HTTP transport of the Switchyard client (standard library only)."""

from __future__ import annotations

import http.client
import json
import os
import re
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable, Dict, Iterator, Mapping, Optional, Tuple

from ._retry import (DEFAULT_RETRY_POLICY, RetryPolicy, gateway_exhausted, parse_retry_after,
                     retryable_reason, retryable_status)
from .errors import (ConnectionFailedError, PreconditionFailedError, RequestTimeoutError, SwitchyardError,
                     error_for)

DEFAULT_BASE_URL = "http://127.0.0.1:8080"
# Above the server's default --request-timeout (5 minutes, retries and fallbacks included),
# so that the client does not give up on an answer the server is still producing.
DEFAULT_TIMEOUT = 330.0
ENV_BASE_URL = "SWITCHYARD_BASE_URL"
ENV_API_KEY = "SERVICE_API_KEY"


class Client:
    """A connection to one Switchyard server.

    Args:
        base_url: server address; default ``SWITCHYARD_BASE_URL`` or http://127.0.0.1:8080.
        api_key: bearer key; default the ``SERVICE_API_KEY`` environment variable.
        timeout: seconds to wait for each response (streams: for each read); default 330,
            above the server's default request timeout of 5 minutes. A timeout raises
            :class:`RequestTimeoutError` and is not retried.
        retry: how transient failures are resent (429, 502, 503, 504 and connection errors
            before any response); default ``RetryPolicy()``: 2 retries, backoff from 0.25 s
            doubling up to 4 s with jitter, a Retry-After of at most 30 s honoured. ``None``
            (or ``RetryPolicy(max_retries=0)``) disables retrying. See :class:`RetryPolicy`.
        sleep: the function that waits the given seconds between attempts and between the
            polls of ``RouterTrainer.wait``, ``AgentOptimizer.wait`` and ``wait_batch``
            (default ``time.sleep``); tests pass one that records the waits.
        clock: the function giving the current time in seconds that ``timeout`` of those
            polls is measured with. Default (None): ``time.monotonic`` with the default
            ``sleep``; with a ``sleep`` of your own, the seconds that sleep was asked to wait
            so far, so that a fake sleep returning at once still ends a wait after exactly
            ``timeout`` seconds of polls (pass ``clock=time.monotonic`` to measure real time
            around a sleep of your own that really waits).

    After the last attempt the last error is raised: an :class:`APIError` subclass for an
    answer (e.g. RateLimitError, ServerError), :class:`ConnectionFailedError` when no answer
    arrived.
    """

    def __init__(self, base_url: Optional[str] = None, api_key: Optional[str] = None,
                 timeout: float = DEFAULT_TIMEOUT, retry: Optional[RetryPolicy] = DEFAULT_RETRY_POLICY,
                 sleep: Callable[[float], Any] = time.sleep,
                 clock: Optional[Callable[[], float]] = None):
        base = base_url or os.environ.get(ENV_BASE_URL) or DEFAULT_BASE_URL
        base = base.strip().rstrip("/")
        if base.endswith("/api/v1"):
            base = base[: -len("/api/v1")]
        parsed = urllib.parse.urlparse(base)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise SwitchyardError(f"base URL {base!r} must be an absolute http(s) URL")
        self.base_url = base
        key = api_key if api_key is not None else os.environ.get(ENV_API_KEY, "")
        self.api_key = key.strip()
        self.timeout = timeout
        if retry is not None and not isinstance(retry, RetryPolicy):
            raise TypeError(f"retry must be a RetryPolicy or None, not {type(retry).__name__}")
        self.retry = retry
        self.sleep = sleep
        self.clock = clock
        self._slept = 0.0  # seconds self._wait asked self.sleep for: the clock of a fake sleep

    def _now(self) -> float:
        """The time the deadlines of waits are measured with (see ``clock``)."""
        if self.clock is not None:
            return self.clock()
        if self.sleep is time.sleep:
            return time.monotonic()
        return self._slept

    def _wait(self, seconds: float) -> None:
        """Waits through ``sleep``, advancing the clock of a sleep of the caller's own."""
        self._slept += seconds
        self.sleep(seconds)

    def _open(self, method: str, path: str, query: Optional[Dict[str, str]] = None,
              body: Any = None, accept: str = "application/json",
              raw: Optional[bytes] = None, content_type: Optional[str] = None,
              headers: Optional[Mapping[str, str]] = None, public_url: Optional[str] = None):
        # public_url: a whole URL that is its own credential (an artifact link), fetched
        # without the API key, which must not leave for another host.
        url = public_url or self.base_url + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        data = None
        extra = headers
        headers = {"Accept": accept, "User-Agent": "switchyard-python-client/0.1"}
        if extra:
            headers.update(extra)
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        elif raw is not None:
            data = raw
            headers["Content-Type"] = content_type or "application/octet-stream"
        if self.api_key and not public_url:
            headers["Authorization"] = "Bearer " + self.api_key
        policy = self.retry or RetryPolicy(max_retries=0)
        attempt = 0
        # An earlier attempt failed in a way the server may have carried it out after (no
        # answer, a 502 or 504): a 412 to a conditional request sent again says so.
        maybe_done = False
        while True:
            # A new Request per attempt; data is bytes, so every attempt sends the same body.
            req = urllib.request.Request(url, data=data, method=method, headers=headers)
            try:
                return urllib.request.urlopen(req, timeout=self.timeout)
            except (TimeoutError, socket.timeout) as e:  # socket.timeout: Python < 3.10
                raise RequestTimeoutError(f"{method} {url}: no answer within {self.timeout:g} s") from e
            except urllib.error.HTTPError as e:
                err = _api_error(e)
                if isinstance(err, PreconditionFailedError) and maybe_done and "If-Match" in headers:
                    err.resent = True
                    err.message += (" (sent again after an earlier attempt failed, which the server may have"
                                    " carried out: the change this If-Match refuses may be this call's own)")
                    err.args = (err._describe(),)
                if e.code in (502, 504):
                    maybe_done = True
                if (attempt >= policy.max_retries or not retryable_status(e.code)
                        or gateway_exhausted(e.code, err.body) or not err.should_retry):
                    raise err from None
                ra = err.retry_after
                if ra is not None and ra > 0 and ra > policy.max_retry_after:
                    raise err from None  # the server asks for a longer wait than we honour
                wait = ra if ra is not None else policy.backoff(attempt)
            except urllib.error.URLError as e:
                # Raised while connecting or sending: e.reason is the OSError (or a string).
                if isinstance(e.reason, (TimeoutError, socket.timeout)):
                    raise RequestTimeoutError(f"{method} {url}: no connection within {self.timeout:g} s") from e
                if not retryable_reason(e.reason):
                    raise SwitchyardError(f"{method} {url}: {e.reason}") from e
                if attempt >= policy.max_retries:
                    raise ConnectionFailedError(f"{method} {url}: {e.reason}") from e
                wait = policy.backoff(attempt)
                maybe_done = True
            except (ConnectionError, http.client.HTTPException) as e:
                # Raised while waiting for the response's head (RemoteDisconnected, a reset,
                # a malformed status line): no answer arrived.
                if attempt >= policy.max_retries:
                    raise ConnectionFailedError(f"{method} {url}: {e or type(e).__name__}") from e
                wait = policy.backoff(attempt)
                maybe_done = True
            self._wait(wait)
            attempt += 1

    def request_bytes(self, method: str, path: str, query: Optional[Dict[str, str]] = None,
                      raw: Optional[bytes] = None, content_type: Optional[str] = None,
                      accept: str = "application/json") -> bytes:
        """Sends ``raw`` (a body of ``content_type``; none when None) and returns the
        answer's bytes as they came (a file's content)."""
        with self._open(method, path, query, None, accept=accept, raw=raw, content_type=content_type) as resp:
            try:
                return resp.read()
            except (TimeoutError, socket.timeout) as e:  # socket.timeout: Python < 3.10
                raise RequestTimeoutError(f"{method} {path}: the answer stopped for {self.timeout:g} s") from e

    def get_public(self, url: str, accept: str = "*/*") -> bytes:
        """GETs a whole URL that is its own credential (an optimization job's
        agent_code_url) without the API key, with the client's retries and errors."""
        with self._open("GET", "", None, None, accept=accept, public_url=url) as resp:
            try:
                return resp.read()
            except (TimeoutError, socket.timeout) as e:  # socket.timeout: Python < 3.10
                raise RequestTimeoutError(f"GET {url}: the answer stopped for {self.timeout:g} s") from e

    def request(self, method: str, path: str, query: Optional[Dict[str, str]] = None,
                body: Any = None, raw: Optional[bytes] = None, content_type: Optional[str] = None,
                headers: Optional[Mapping[str, str]] = None) -> Any:
        """Sends a JSON request (or ``raw`` bytes of ``content_type``), with ``headers``
        added to the client's own, and returns the decoded JSON answer."""
        return self.request_with_headers(method, path, query, body, raw, content_type, headers)[0]

    def request_with_headers(self, method: str, path: str, query: Optional[Dict[str, str]] = None,
                             body: Any = None, raw: Optional[bytes] = None, content_type: Optional[str] = None,
                             headers: Optional[Mapping[str, str]] = None) -> Tuple[Any, Any]:
        """As ``request``, and returns the answer's headers too (an
        ``email.message.Message``: ``.get(name)`` is case-insensitive) beside its JSON."""
        with self._open(method, path, query, body, raw=raw, content_type=content_type, headers=headers) as resp:
            try:
                raw = resp.read()
            except (TimeoutError, socket.timeout) as e:  # socket.timeout: Python < 3.10
                raise RequestTimeoutError(f"{method} {path}: the answer stopped for {self.timeout:g} s") from e
            got = resp.headers
        if not raw:
            return None, got
        try:
            return json.loads(raw), got
        except ValueError as e:
            raise SwitchyardError(f"{method} {path}: answer is not JSON: {raw[:200]!r}") from e

    def stream_events(self, path: str, body: Any) -> Iterator[Dict[str, Any]]:
        """Posts body and returns an iterator of its server-sent events as
        {"event": name, "data": text}.

        The request is sent at once, so an error answer (401, 422, ...) is raised here,
        not while iterating. The connection is closed when the iterator is closed or
        exhausted. Retries (see RetryPolicy) apply to the initial response only: once the
        answer's status is 2xx and its events are being read, a failure is raised, never
        resent.
        """
        return self.open_events(path, body)[0]

    def open_events(self, path: str, body: Any) -> Tuple[Iterator[Dict[str, Any]], Optional[str]]:
        """As ``stream_events``, and returns the ``x-request-id`` the stream was answered
        with (None when it had none) beside the events."""
        resp = self._open("POST", path, None, body, accept="text/event-stream")
        return self._events(resp, path), resp.headers.get("X-Request-Id")

    def _events(self, resp, path: str) -> Iterator[Dict[str, Any]]:
        try:
            ctype = resp.headers.get("Content-Type", "")
            if not ctype.startswith("text/event-stream"):
                yield {"event": "json", "data": resp.read().decode("utf-8")}
                return
            event, data = "", []
            first = True  # a BOM beginning the stream is ignored (the SSE specification)
            for raw in _lines(resp, path, self.timeout):
                line = raw.decode("utf-8")
                if first:
                    first = False
                    if line.startswith("\ufeff"):
                        line = line[1:]
                if line == "":
                    if data:
                        yield {"event": event, "data": "\n".join(data)}
                    event, data = "", []
                    continue
                if line.startswith(":"):
                    continue
                field, _, value = line.partition(":")
                if value.startswith(" "):
                    value = value[1:]
                if field == "event":
                    event = value
                elif field == "data":
                    data.append(value)
            if data:
                yield {"event": event, "data": "\n".join(data)}
        finally:
            resp.close()


# How much of a stream is asked for at a time (read1 returns what has arrived, up to this).
_READ_SIZE = 64 << 10

# An SSE line ending: CRLF, LF or CR alone (the SSE specification allows all three).
_EOL = re.compile(rb"\r\n?|\n")


def _chunks(resp) -> Iterator[bytes]:
    """The response's bytes as they arrive: read1 returns what one read of the socket got,
    so an event is seen when it arrives, whatever its line endings (iterating a response
    waits for an LF). A response without read1 gives its lines (split at LF)."""
    read1 = getattr(resp, "read1", None)
    if read1 is None:
        yield from resp
        return
    while True:
        chunk = read1(_READ_SIZE)
        if not chunk:
            return
        yield chunk


def _lines(resp, path: str, timeout: float) -> Iterator[bytes]:
    """The response's lines without their endings: CRLF, LF or CR alone. A line ended by a
    CR is given at once, without waiting to see whether an LF follows (the stream may pause
    there, right after an event); an LF that then begins the next read is the rest of that
    CRLF and skipped, so a CRLF split across two reads is one line ending, not two (which
    would end an event early). A read that waits longer than timeout raises
    RequestTimeoutError."""
    it = _chunks(resp)
    pending = []  # the start of a line whose ending has not arrived
    after_cr = False  # the last chunk ended with a CR: a leading LF belongs to it
    while True:
        try:
            chunk = next(it)
        except StopIteration:
            if pending:
                yield b"".join(pending)  # a last line with no ending
            return
        except (TimeoutError, socket.timeout) as e:  # socket.timeout: Python < 3.10
            raise RequestTimeoutError(f"POST {path}: no stream event for {timeout:g} s") from e
        if after_cr and chunk[:1] == b"\n":
            chunk = chunk[1:]
        after_cr = chunk[-1:] == b"\r"
        start = 0
        for m in _EOL.finditer(chunk):
            pending.append(chunk[start:m.start()])
            yield b"".join(pending)
            pending = []
            start = m.end()
        if start < len(chunk):
            pending.append(chunk[start:])


def _api_error(e: "urllib.error.HTTPError"):
    raw = b""
    try:
        raw = e.read()
    except Exception:  # the body may be gone; the status is still known
        pass
    kind, message, body = "", "", {}
    try:
        body = json.loads(raw)
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            # OpenAI's envelope (the /v1/ routes): {"error": {"message", "type", "param", "code"}}.
            env = body["error"]
            kind = env.get("type") or ""
            message = env.get("message") or ""
            body = dict(env)
        elif isinstance(body, dict):
            kind = body.get("error", "") if isinstance(body.get("error"), str) else ""
            message = body.get("message", "") or ""
        else:
            body = {}
    except ValueError:
        message = raw.decode("utf-8", "replace")[:200]
    retry_after = parse_retry_after(e.headers.get("Retry-After")) if e.headers else None
    try:
        e.close()
    except Exception:
        pass
    request_id = e.headers.get("X-Request-Id") if e.headers else None
    err = error_for(e.code, kind or (e.reason or ""), message, body, retry_after, request_id=request_id)
    if e.headers and (e.headers.get("X-Should-Retry") or "").lower() == "false":
        err.should_retry = False
    return err
