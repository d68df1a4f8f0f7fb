"""When a call is tried again, shared by the sync and async clients.

A retry never records anything twice: a request that never reached the server (a connect
error) and a 503 with Retry-After (the server says nothing was written) are safe to repeat
for any call; a request that may have been received but whose answer was lost is repeated
only when repeating it cannot change anything — a read, or a write carrying an
Idempotency-Key, which the server answers from what the first attempt recorded.
"""

from __future__ import annotations

import httpx

from engram.client.routes import Prepared

NEVER_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
MAX_WAIT_SECONDS = 5.0  # a Retry-After longer than this is the caller's decision, not ours
FIRST_BACKOFF_SECONDS = 0.2


def wait_after_error(
    error: httpx.TransportError, prepared: Prepared[object], attempt: int, retries: int
) -> float | None:
    """Seconds to wait before trying again after a transport error, or None to give up."""
    if attempt >= retries:
        return None
    if isinstance(error, NEVER_SENT) or prepared.repeatable:
        return FIRST_BACKOFF_SECONDS * 2.0**attempt
    return None


def wait_after_answer(response: httpx.Response, attempt: int, retries: int) -> float | None:
    """Seconds to wait before trying again after this answer, or None to take it."""
    if attempt >= retries or response.status_code != 503:
        return None
    try:
        seconds = float(response.headers.get("Retry-After", ""))
    except ValueError:  # absent, or an HTTP date: the server did not ask for a retry soon
        return None
    if not 0 <= seconds <= MAX_WAIT_SECONDS:
        return None
    return seconds
