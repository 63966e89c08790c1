"""Typed exceptions raised by the Switchyard client."""

from __future__ import annotations

from typing import Any, Dict, Optional


class SwitchyardError(Exception):
    """Base class of every error raised by this package."""


class APIError(SwitchyardError):
    """The server answered with an error body ``{"error": kind, "message": text}``.

    Attributes:
        status: HTTP status code.
        kind: the ``error`` field, e.g. ``"Validation Error"``.
        message: the ``message`` field, naming the field and rule.
        body: the whole decoded error body (may carry more fields, e.g. ``attempts``).
        retry_after: the Retry-After hint in seconds (sent as seconds or as an HTTP
            date), if any.
        code, param: OpenAI's error code (e.g. ``"model_not_found"``) and the offending
            field, from the envelope the ``/v1/`` routes answer with; None otherwise.
        should_retry: False when the server sent ``x-should-retry: false`` (it already
            retried and fell back); the client then never resends.
        request_id: the ``x-request-id`` the server answered with: the id under which the
            request is in the usage history (``/api/v1/usage/requests``,
            ``/spend/logs?request_id=``) and the server's logs; quote it when reporting a
            failure. None when the answer had none. The message ends with it too.
    """

    def __init__(self, status: int, kind: str, message: str,
                 body: Optional[Dict[str, Any]] = None, retry_after: Optional[float] = None,
                 request_id: Optional[str] = None):
        self.status = status
        self.kind = kind
        self.message = message
        self.body = body or {}
        self.retry_after = retry_after
        self.code = self.body.get("code")
        self.param = self.body.get("param")
        self.should_retry = True
        self.request_id = request_id or None
        super().__init__(self._describe())

    def _describe(self) -> str:
        """``<status> <kind>: <message>``, then `` (request id <id>)`` when there is one."""
        text = f"{self.status} {self.kind}: {self.message}" if self.message else f"{self.status} {self.kind}"
        if self.request_id:
            text += f" (request id {self.request_id})"
        return text


class BadRequestError(APIError):
    """400: malformed JSON, or an invalid model selection request."""


class GuardrailBlockedError(BadRequestError):
    """400: a guardrail of the server (``switchyard serve --guardrails``) blocked the request
    or its answer. ``guardrail`` names it and ``mode`` says when it ran (``pre_call``: nothing
    was sent to a model; ``post_call``: the answer was made, and paid for, then refused)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.guardrail = self.body.get("guardrail")
        self.mode = self.body.get("mode")


class AuthenticationError(APIError):
    """401: the API key is missing or wrong."""


class PermissionDeniedError(APIError):
    """403: the key may not do this (a virtual key outside its models or routes); also the
    ``/v1/`` routes' 401 of type ``key_model_access_denied`` (LiteLLM's answer to a model
    outside the key's models)."""


class NotFoundError(APIError):
    """404: unknown id (or one that belongs to another key)."""


class ConflictError(APIError):
    """409: e.g. results of an optimization job that has not finished."""


class PreconditionFailedError(APIError):
    """412: a conditional request (``if_match=`` of ``rotate_key``, ``revoke_key``,
    ``update_key``) named a version the key is no longer at: it was rotated or changed
    meanwhile, and nothing was changed. ``resent`` is True when the request was sent again
    after an attempt that failed with no answer or a 502/504, which the server may have
    carried out: the change this If-Match refuses may then be this call's own."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.resent = False


class PayloadTooLargeError(APIError):
    """413: the request body is over the server's limit."""


class ValidationError(APIError):
    """422: the request was rejected by validation; ``message`` names the field."""


class RateLimitError(APIError):
    """429: too many requests."""


class ServerError(APIError):
    """5xx: internal error, or every upstream model failing (502)."""


class ConnectionFailedError(SwitchyardError, ConnectionError):
    """No answer arrived: the connection was refused, reset or closed before a response
    (after the client's retries, see RetryPolicy). It is also a ConnectionError, so
    ``except ConnectionError`` keeps catching a server that hung up. ``__cause__`` holds the
    underlying exception."""


class RequestTimeoutError(SwitchyardError, TimeoutError):
    """No answer (or, in a stream, no next event) within the client's ``timeout``. It is
    also a TimeoutError, so ``except TimeoutError`` keeps catching it. ``__cause__`` holds
    the underlying exception. A timeout is not retried: the server may still be working
    on the request."""


class StreamError(SwitchyardError):
    """A streamed completion ended with an error event after its first chunk.
    ``request_id`` is the ``x-request-id`` the stream was answered with (None when it had
    none)."""

    def __init__(self, kind: str, message: str, attempts=None, request_id: Optional[str] = None):
        self.kind = kind
        self.message = message
        self.attempts = attempts or []
        self.request_id = request_id or None
        text = f"stream failed: {kind}: {message}"
        if self.request_id:
            text += f" (request id {self.request_id})"
        super().__init__(text)


class StreamTruncatedError(SwitchyardError):
    """A streamed completion stopped before its end marker: the answer is incomplete."""


class UnknownStateError(SwitchyardError):
    """``RouterTrainer.wait`` or ``AgentOptimizer.wait`` saw a job state this client does
    not know (neither queued or running, which it waits through, nor a terminal one): the
    wait ends rather than polling forever. ``state`` is that state (None when the status
    had none) and ``last`` the whole status."""

    def __init__(self, message: str, state: Any = None, last: Optional[Dict[str, Any]] = None):
        self.state = state
        self.last = last if last is not None else {}
        super().__init__(message)


class MissingIdError(SwitchyardError):
    """A RouterTrainer/AgentOptimizer call needs a job or model id that is not known yet."""


_BY_STATUS = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    412: PreconditionFailedError,
    413: PayloadTooLargeError,
    422: ValidationError,
    429: RateLimitError,
}


def error_for(status: int, kind: str, message: str, body=None, retry_after=None,
              request_id: Optional[str] = None) -> APIError:
    """Returns the APIError subclass instance matching the status."""
    cls = _BY_STATUS.get(status)
    if status == 400 and kind == "Guardrail Violation":
        cls = GuardrailBlockedError
    if status == 401 and kind == "key_model_access_denied":
        # The /v1/ routes refuse a model outside the key's as LiteLLM does (a 401 of this
        # type): a refusal of the call, as the 403 it was, not of the key.
        cls = PermissionDeniedError
    if cls is None:
        cls = ServerError if status >= 500 else APIError
    return cls(status, kind, message, body, retry_after, request_id=request_id)
