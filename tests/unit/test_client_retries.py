"""Issue 16 item 3: when the HTTP client tries a call again. Only what cannot record twice
is repeated: a request that never left (connect error), a 503 whose Retry-After says
nothing was written, and after a lost answer only a read or a keyed write."""

from __future__ import annotations

import httpx

from engram.client.retries import wait_after_answer, wait_after_error
from engram.client.routes import Routes

ROUTES = Routes("helper")
REQUEST = httpx.Request("POST", "http://127.0.0.1/")


def _busy(retry_after: str | None) -> httpx.Response:
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    return httpx.Response(503, headers=headers, json={"error": "busy"}, request=REQUEST)


def test_issue16_3_a_busy_store_is_retried_after_what_the_server_asks() -> None:
    assert wait_after_answer(_busy("1"), attempt=0, retries=2) == 1.0
    assert wait_after_answer(_busy("1"), attempt=2, retries=2) is None  # bounded
    assert wait_after_answer(_busy(None), attempt=0, retries=2) is None  # not asked to retry
    assert wait_after_answer(_busy("3600"), attempt=0, retries=2) is None  # too long to wait
    refused = httpx.Response(404, json={"error": "no"}, request=REQUEST)
    assert wait_after_answer(refused, attempt=0, retries=2) is None


def test_issue16_3_after_a_lost_answer_only_reads_and_keyed_writes_are_repeated() -> None:
    lost = httpx.ReadError("dropped", request=REQUEST)
    turn = ROUTES.append_turn("c_1", "user", "hi", "committed", None)
    assert turn.idempotency_key  # a key is made when none is given
    assert wait_after_error(lost, turn, attempt=0, retries=2) is not None
    assert wait_after_error(lost, ROUTES.find("c_1", "hi", "relevance", None), 0, 2) is not None
    assert wait_after_error(lost, ROUTES.recent_turns("c_1", None), 0, 2) is not None
    # An unkeyed write that may have been received is not repeated: it could record twice.
    for unkeyed in (ROUTES.create_item("t", "fact", "direct", "lasting"), ROUTES.assemble("c_1")):
        assert wait_after_error(lost, unkeyed, attempt=0, retries=2) is None
        never_sent = httpx.ConnectError("refused", request=REQUEST)
        assert wait_after_error(never_sent, unkeyed, attempt=0, retries=2) is not None
    assert wait_after_error(lost, turn, attempt=2, retries=2) is None  # bounded


def test_issue16_3_each_call_gets_its_own_key_and_keeps_it() -> None:
    first = ROUTES.append_turn("c_1", "user", "hi", "committed", None)
    second = ROUTES.append_turn("c_1", "user", "hi", "committed", None)
    assert first.idempotency_key != second.idempotency_key
    assert first.headers == {"Idempotency-Key": first.idempotency_key}
    given = ROUTES.record_tool_call("c_1", "t", {}, "r", "ok", "mine")
    assert given.idempotency_key == "mine"
