"""Retry policy of the Switchyard client: which failures are resent and how long to wait.

It follows the Go client (client/retry.go) rule for rule and default for default.
"""

from __future__ import annotations

import datetime
import email.utils
import random
import re
import socket
import ssl
import time
from dataclasses import dataclass
from typing import Any, Optional

#: Answers that may succeed when the request is sent again.
RETRYABLE_STATUSES = frozenset((429, 502, 503, 504))

_MAX_RETRY_AFTER_VALUE = 365 * 24 * 3600.0  # a longer Retry-After is read as a year
_SECONDS = re.compile(r"\d+(\.\d+)?")


@dataclass(frozen=True)
class RetryPolicy:
    """How a :class:`~switchyard.Client` resends a request that failed in a way that may
    pass on a second try.

    Retried: an answer with status 429, 502, 503 or 504, and a connection error before any
    response arrived (refused, reset, closed without an answer, DNS failure, TLS handshake
    error). Not retried: any other status; Switchyard's own 502 whose JSON body lists the
    ``attempts`` of a completion whose every model failed (the server has retried each
    model already, resending would repeat and pay for all of them); a timeout (the
    client's ``timeout`` is the caller's deadline); a refused server certificate.
    Note that a POST which failed with a connection error or a 502/504 may still have
    been carried out by the server.

    Between attempts the client waits the ``Retry-After`` the server asked for (seconds or
    an HTTP date), or else an exponential backoff with jitter: retry ``n`` (from 0) waits a
    random time between half and all of ``min(initial * 2**n, max)``. A ``Retry-After``
    longer than ``max_retry_after`` ends the retries at once: the error is raised rather
    than waited for. After the last attempt the last error is raised.

    A streamed completion is retried only on its initial response status, never once its
    first byte has been handed to the caller.

    Attributes:
        max_retries: retries after the first attempt (default 2; 0 disables retrying,
            as does ``Client(retry=None)``).
        initial: backoff in seconds before the first retry (default 0.25).
        max: bound in seconds of each backoff (default 4.0; raised to ``initial`` if lower).
        max_retry_after: longest ``Retry-After`` in seconds that is waited for (default
            30.0; 0 waits only for ``Retry-After: 0``).

    The defaults (three attempts within about a second) ride out a restart or a brief
    overload without hiding a real outage; 30 s covers the server's own "queue full, retry
    in 30 s" answers.
    """

    max_retries: int = 2
    initial: float = 0.25
    max: float = 4.0
    max_retry_after: float = 30.0

    def __post_init__(self):
        if isinstance(self.max_retries, bool) or not isinstance(self.max_retries, int) or self.max_retries < 0:
            raise ValueError(f"RetryPolicy.max_retries must be an int >= 0, not {self.max_retries!r}")
        for name in ("initial", "max", "max_retry_after"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0 or v == float("inf"):
                raise ValueError(f"RetryPolicy.{name} must be a finite number of seconds >= 0, not {v!r}")

    def backoff(self, n: int, rand=random.uniform) -> float:
        """The wait in seconds before retry ``n`` (from 0): a random time in [b/2, b] with
        ``b = min(initial * 2**n, max)``."""
        top = max(self.max, self.initial)
        b = self.initial
        for _ in range(n):
            if b >= top:
                break
            b *= 2
        b = min(b, top)
        return rand(b / 2, b)


#: The policy of a Client built without ``retry``.
DEFAULT_RETRY_POLICY = RetryPolicy()


def retryable_status(status: int) -> bool:
    """Whether an answer with this status may succeed when resent."""
    return status in RETRYABLE_STATUSES


def gateway_exhausted(status: int, body: Any) -> bool:
    """Whether this is Switchyard's own 502 for a completion whose every model and fallback
    failed (its body lists the ``attempts``): the server retried each upstream already."""
    return status == 502 and isinstance(body, dict) and "attempts" in body


def retryable_reason(reason: Any) -> bool:
    """Whether a connection failure (the ``reason`` of a URLError, or the exception raised
    before any response) may pass on a second try: an OS-level error, except a timeout and
    a refused certificate. A string reason (a malformed URL) is not retried."""
    if not isinstance(reason, OSError):
        return False
    if isinstance(reason, (TimeoutError, socket.timeout, ssl.SSLCertVerificationError)):
        return False
    return True


def parse_retry_after(value: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """Reads a Retry-After value given in seconds or as an HTTP date (a date in the past is
    0) and returns seconds, or None when the value is absent or unreadable. ``now`` is a
    Unix time (default: the current time)."""
    if value is None:
        return None
    v = value.strip()
    if not v:
        return None
    if _SECONDS.fullmatch(v):
        return min(float(v), _MAX_RETRY_AFTER_VALUE)
    try:
        when = email.utils.parsedate_to_datetime(v)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:  # "-0000": UTC
        when = when.replace(tzinfo=datetime.timezone.utc)
    if now is None:
        now = time.time()
    return min(max(when.timestamp() - now, 0.0), _MAX_RETRY_AFTER_VALUE)
