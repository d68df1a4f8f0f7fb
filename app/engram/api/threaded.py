"""One worker-thread hop per request.

FastAPI runs every plain `def` route and dependency on a worker thread of its own, and
then validates a plain route's answer on yet another: five hops for one call of the memory
API, each a thread woken and the GIL handed over, which cost as much CPU as the store work
of a small read (issue 19 item 3). A route made `async` by `threaded` runs its body on one
worker thread and has its answer validated on the event loop; the call's key and person
are resolved in one more hop, before the body is read (an unauthenticated request still
gets 401 first).
"""

import functools
from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar

import anyio.to_thread

P = ParamSpec("P")
R = TypeVar("R")


def threaded(handler: Callable[P, R]) -> Callable[P, Awaitable[R]]:
    """`handler` as a coroutine that runs it on a worker thread (FastAPI reads the
    parameters of `handler` itself through `__wrapped__`)."""

    @functools.wraps(handler)
    async def run(*args: P.args, **kwargs: P.kwargs) -> R:
        return await anyio.to_thread.run_sync(functools.partial(handler, *args, **kwargs))

    return run
