"""Pattern search under a time budget (H2): the answer, or one sentence, in time.

RE2 bounds memory and makes the work linear in the text, but linear can still be long: a
pattern near the size cap over a 200,000-character message may take seconds when RE2's
DFA gives way to its NFA, and RE2 cannot be interrupted. So the search runs on a worker
thread (RE2 lets go of the GIL while it matches) and the caller waits at most the budget:
past it, the answer is a refusal in one sentence and the worker stops at its next
message. One search runs at a time per process, so a refusal leaves at most one RE2 call
finishing in the background, never a pile of them; a process that exits meanwhile waits
for that call (a few seconds at most) rather than abort.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

from engram.engine.history_search import FindResult, Message, find_pattern
from engram.engine.pattern import PatternQuery, compile_query
from engram.model.errors import InvalidInput

T = TypeVar("T")
BUSY = "An earlier pattern search is still finishing; try again in a few seconds."
_ONE_AT_A_TIME = threading.Lock()


class _Stopped(Exception):
    """The caller stopped waiting; the worker gives up at the next message."""


def too_slow(budget_s: float) -> str:
    """The refusal when the budget runs out."""
    return (
        f"That pattern takes too long to match (over {budget_s:g} s here); use a simpler "
        "pattern or plain text."
    )


def find(
    messages: Sequence[Message],
    query: str,
    limit: int | None,
    budget_s: float,
) -> FindResult:
    """H2 over `messages`, newest first, within `budget_s` for the whole search."""
    return within(budget_s, lambda stop: _find(messages, query, limit, stop))


def _find(
    messages: Sequence[Message], query: str, limit: int | None, stop: threading.Event
) -> FindResult:
    compiled = compile_query(query)
    return find_pattern(messages, query, limit, _stoppable(compiled, stop))


def _stoppable(
    compiled: PatternQuery, stop: threading.Event
) -> Callable[[str], tuple[int, int] | None]:
    def search(text: str) -> tuple[int, int] | None:
        if stop.is_set():
            raise _Stopped
        return compiled.first(text)

    return search


def settle(timeout_s: float) -> bool:
    """Wait until no pattern search is running (a refused one may still be finishing its
    last RE2 call); False if one still is after `timeout_s`."""
    if not _ONE_AT_A_TIME.acquire(timeout=timeout_s):
        return False
    _ONE_AT_A_TIME.release()
    return True


def within(budget_s: float, job: Callable[[threading.Event], T]) -> T:
    """Run `job(stop)` on a worker thread; its result, its exception, or InvalidInput when
    it has not finished within the budget (then `stop` is set for it to notice)."""
    stop = threading.Event()
    began = threading.Event()
    done = threading.Event()
    outcome: list[tuple[bool, object]] = []

    def work() -> None:
        with _ONE_AT_A_TIME:
            if stop.is_set():
                return
            began.set()
            try:
                outcome.append((True, job(stop)))
            except BaseException as error:  # handed to the caller, who raises it
                outcome.append((False, error))
            finally:
                done.set()

    # Not a daemon: a process that exits right after a refusal waits for the RE2 call still
    # running (linear, so bounded) instead of tearing the thread down inside it, which
    # aborts the process ("terminate called without an active exception").
    threading.Thread(target=work, name="engram-pattern-search", daemon=False).start()
    if not done.wait(budget_s):
        stop.set()
        raise InvalidInput(too_slow(budget_s) if began.is_set() else BUSY)
    finished, value = outcome[0]
    if not finished:
        assert isinstance(value, BaseException)
        raise value
    return value  # type: ignore[return-value]
