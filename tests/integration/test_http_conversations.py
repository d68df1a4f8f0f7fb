"""Conversations and turns over HTTP (issue 16 item 1), driven by httpx against a real
uvicorn server: start, append with an Idempotency-Key, tool calls, read, list, delete with
its cascade, the five history tools bound to the conversation in the path (H1-H6), and
learning on the server's own worker after a committed exchange (W2, W5, P2, P4, W7)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import Any

import httpx
import pytest

from engram.api.app import build_app
from engram.control import notes
from engram.control.session import PersonSession
from engram.engine.extraction import ExtractionRequest, Proposal
from engram.engine.rule_extractor import RuleExtractor
from engram.model.ids import ConversationId, PersonId
from engram.runtime import api_keys, history
from engram.runtime.agents import set_agent
from engram.runtime.conversations import transcript
from engram.store.store import Store
from engram.store.verify import verify
from tests.integration.test_http_api import Client, running

BASE = "/v1/memory/agents/helper/memory"
CONVERSATIONS = f"{BASE}/conversations"
ANA, BEN = PersonId("ana"), PersonId("ben")


def _agent(store: Store, name: str = "helper", mode: str = "suggest") -> None:
    config = {"memory": {"tools": {"remember": True}, "learning": {"mode": mode}}}
    set_agent(store, name, config, "ops")


class Gated:
    """The rule extractor behind a gate: a pass waits until the test opens it, and the
    extractor counts passes running at once (W5)."""

    name = "rules"

    def __init__(self, delay: float = 0.0) -> None:
        self.gate = threading.Event()
        self.delay = delay
        self.running = self.most = self.calls = 0
        self._lock = threading.Lock()

    def extract(self, request: ExtractionRequest) -> Sequence[Proposal]:
        with self._lock:
            self.running += 1
            self.calls += 1
            self.most = max(self.most, self.running)
        try:
            self.gate.wait(10)
            time.sleep(self.delay)
            return RuleExtractor().extract(request)
        finally:
            with self._lock:
                self.running -= 1


def _client(store: Store, **app: Any) -> Iterator[Client]:
    _, key = api_keys.create_key(store, "backend", "ops")
    with running(build_app(store, **app)) as base:
        client = Client(base, key)
        yield client
        client.http.close()


@pytest.fixture
def api(store: Store) -> Iterator[Client]:
    _agent(store)
    yield from _client(store)


def _start(api: Client, body: dict[str, Any] | None = None, person: str = "ana") -> str:
    status, made = api("POST", CONVERSATIONS, body or {}, person=person)
    assert status == 201, made
    return str(made["id"])


def _say(api: Client, conversation: str, role: str, text: str, **extra: Any) -> dict[str, Any]:
    status, turn = api(
        "POST", f"{CONVERSATIONS}/{conversation}/turns", {"role": role, "text": text, **extra}
    )
    assert status == 201, turn
    return dict(turn)


def _post(
    api: Client, path: str, body: Any, key: str | None = None, person: str = "ana"
) -> httpx.Response:
    headers = {"Authorization": f"Bearer {api.key}", "X-Engram-External-User-Id": person}
    if key is not None:
        headers["Idempotency-Key"] = key
    return api.http.post(path, json=body, headers=headers)


def _items(api: Client) -> list[Any]:
    return list(api("GET", f"{BASE}/items")[1]["items"])


def _candidates(api: Client) -> list[Any]:
    return list(api("GET", f"{BASE}/candidates")[1]["candidates"])


def _until(found: Callable[[], Any], seconds: float = 10) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if value := found():
            return value
        time.sleep(0.02)
    raise AssertionError("it never happened")


def _entries(store: Store, conversation: str) -> list[str | None]:
    return [text for _, text in transcript(store, ConversationId(conversation))]


# ---- start, append, read, list -----------------------------------------------------------


def test_issue16_item1_C1_the_header_person_is_always_a_participant(
    api: Client, store: Store
) -> None:
    alone = _start(api)
    status, shown = api("GET", f"{CONVERSATIONS}/{alone}")
    assert status == 200 and shown["participants"] == ["ana"] and shown["agent"] == "helper"
    assert shown["audience"] == "subject_alone"
    shared = _start(api, {"participants": ["ben"], "surface": "channel"})
    status, shown = api("GET", f"{CONVERSATIONS}/{shared}")
    assert shown["participants"] == ["ana", "ben"] and shown["surface"] == "channel"
    # A body cannot name the person, nor start a conversation without them.
    for body in ({"person": "ben"}, {"participants": ["ben"], "user": "ben"}):
        status, refused = api("POST", CONVERSATIONS, body)
        assert status == 400 and "never from the body" in refused["error"]
    status, refused = api("POST", CONVERSATIONS, {"participants": ["not a person!"]})
    assert status == 400 and "not a valid person id" in refused["error"]
    # Ben sees the shared one only; another agent's prefix sees neither.
    status, listed = api("GET", CONVERSATIONS, person="ben")
    assert status == 200 and [c["id"] for c in listed["conversations"]] == [shared]
    assert [c["id"] for c in api("GET", CONVERSATIONS)[1]["conversations"]] == [alone, shared]
    _agent(store, "other")
    status, listed = api("GET", "/v1/memory/agents/other/memory/conversations")
    assert status == 200 and listed["conversations"] == []


def test_issue16_item1_turns_are_authored_by_the_header_person_and_the_agent(
    api: Client, store: Store
) -> None:
    conversation = _start(api, {"participants": ["ben"]})
    user = _say(api, conversation, "user", "I live in Porto.")
    assert (user["author"], user["role"], user["status"]) == ("ana", "user", "committed")
    by_ben = _say(api, conversation, "user", "Me too.")
    assert by_ben["author"] == "ana"  # the header decides, and it said ana
    reply = _say(api, conversation, "assistant", "Noted.", status="failed")
    assert (reply["author"], reply["status"]) == ("helper", "failed")
    status, refused = api(
        "POST",
        f"{CONVERSATIONS}/{conversation}/turns",
        {"role": "user", "text": "x", "author": "ben"},
    )
    assert status == 400 and "author" in refused["error"]
    status, shown = api("GET", f"{CONVERSATIONS}/{conversation}")
    assert [(e["kind"], e["author"], e["text"]) for e in shown["entries"]] == [
        ("user", "ana", "I live in Porto."),
        ("user", "ana", "Me too."),
        ("assistant", "helper", "Noted."),
    ]
    status, page = api("GET", f"{CONVERSATIONS}/{conversation}?limit=2")
    assert [e["text"] for e in page["entries"]] == ["I live in Porto.", "Me too."]
    status, rest = api("GET", f"{CONVERSATIONS}/{conversation}?after={page['next_after']}")
    assert [e["text"] for e in rest["entries"]] == ["Noted."] and rest["next_after"] is None


def test_issue16_item1_a_tool_call_and_its_result_are_recorded(api: Client, store: Store) -> None:
    conversation = _start(api)
    body = {"name": "weather", "arguments": {"city": "Porto"}, "result": "Sunny, 24 °C"}
    status, called = api("POST", f"{CONVERSATIONS}/{conversation}/tool-calls", body)
    assert status == 201 and called["name"] == "weather" and called["call_id"].startswith("k_")
    assert _entries(store, conversation) == ['{"city": "Porto"}', "Sunny, 24 °C"]
    deep: dict[str, Any] = {"a": 1}
    for _ in range(40):
        deep = {"a": deep}
    status, refused = api(
        "POST", f"{CONVERSATIONS}/{conversation}/tool-calls", {**body, "arguments": deep}
    )
    assert status == 400 and "nested more than 32 deep" in refused["error"]
    status, refused = api(
        "POST", f"{CONVERSATIONS}/{conversation}/tool-calls", {**body, "name": ""}
    )
    assert status == 400 and "'name'" in refused["error"]
    assert len(_entries(store, conversation)) == 2  # nothing half written


# ---- idempotency ---------------------------------------------------------------------------


def test_issue16_item1_a_retried_turn_is_recorded_once(api: Client, store: Store) -> None:
    conversation = _start(api)
    path = f"{CONVERSATIONS}/{conversation}/turns"
    body = {"role": "user", "text": "I live in Porto."}
    first = _post(api, path, body, key="retry-1")
    again = _post(api, path, body, key="retry-1")
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()  # the same answer, turn id and time included
    assert "idempotent-replayed" not in first.headers
    assert again.headers["idempotent-replayed"] == "true"
    assert _entries(store, conversation) == ["I live in Porto."]

    changed = _post(api, path, {**body, "text": "I live in Faro."}, key="retry-1")
    assert changed.status_code == 422
    assert changed.json()["error"] == (
        "This idempotency key already recorded a different turn; send the same request to "
        "retry it, or a new key for a new one."
    )
    assert _post(api, path, {**body, "status": "failed"}, key="retry-1").status_code == 422
    assert _post(api, path, {**body, "role": "assistant"}, key="retry-1").status_code == 422
    assert _entries(store, conversation) == ["I live in Porto."]

    # Keys are scoped per conversation: the same key elsewhere is a new turn.
    other = _start(api)
    elsewhere = _post(api, f"{CONVERSATIONS}/{other}/turns", body, key="retry-1")
    assert elsewhere.status_code == 201 and "idempotent-replayed" not in elsewhere.headers
    assert elsewhere.json()["turn_id"] != first.json()["turn_id"]
    # A key that could not be a header's key is refused in one sentence.
    bad = _post(api, path, body, key="has space")
    assert bad.status_code == 400 and "Idempotency-Key holds 1 to 200" in bad.json()["error"]
    assert _entries(store, conversation) == ["I live in Porto."]


def test_issue16_item1_retried_starts_and_tool_calls_are_recorded_once(
    api: Client, store: Store
) -> None:
    first = _post(api, CONVERSATIONS, {"participants": ["ben"]}, key="start-1")
    again = _post(api, CONVERSATIONS, {"participants": ["ben"]}, key="start-1")
    assert first.status_code == again.status_code == 201 and again.json() == first.json()
    assert again.headers["idempotent-replayed"] == "true"
    assert _post(api, CONVERSATIONS, {}, key="start-1").status_code == 422
    # Scoped to the person: Ben's start-1 is his own.
    assert (
        _post(api, CONVERSATIONS, {}, key="start-1", person="ben").json()["id"]
        != first.json()["id"]
    )
    assert len(api("GET", CONVERSATIONS)[1]["conversations"]) == 1

    conversation = first.json()["id"]
    path = f"{CONVERSATIONS}/{conversation}/tool-calls"
    call = {"name": "weather", "arguments": {"city": "Porto"}, "result": "Sunny."}
    made = _post(api, path, call, key="call-1")
    assert _post(api, path, call, key="call-1").json() == made.json()
    assert _post(api, path, {**call, "result": "Rain."}, key="call-1").status_code == 422
    assert (
        _post(api, path, {**call, "arguments": {"city": "Faro"}}, key="call-1").status_code == 422
    )
    assert _entries(store, conversation) == ['{"city": "Porto"}', "Sunny."]
    assert verify(store).ok


# ---- the five history tools ----------------------------------------------------------------


def test_issue16_item1_H1_H6_history_tools_bound_to_the_path(api: Client, store: Store) -> None:
    conversation = _start(api)
    porto = _say(api, conversation, "user", "I live in Porto and I like green tea.")
    _say(api, conversation, "assistant", "Porto is lovely.")
    status, called = api(
        "POST",
        f"{CONVERSATIONS}/{conversation}/tool-calls",
        {"name": "weather", "arguments": {"city": "Porto"}, "result": "Porto: sunny"},
    )
    call = called["call_id"]
    other = _start(api)
    _say(api, other, "user", "Porto again, elsewhere.")
    cid = ConversationId(conversation)
    at = f"{CONVERSATIONS}/{conversation}"

    # The same answers as the runtime's tools, key for key.
    status, found = api("POST", f"{at}/find", {"query": "Porto"})
    assert status == 200 and found == history.find(store, cid, "Porto")
    assert {m.get("turn_id") or m.get("call_id") for m in found["matches"]} == {
        porto["turn_id"],
        _entry_ref(api, conversation, "assistant"),
        call,
    }
    status, pattern = api("POST", f"{at}/find", {"query": "sun+y", "mode": "pattern"})
    assert pattern == history.find(store, cid, "sun+y", "pattern")
    assert [m["call_id"] for m in pattern["matches"]] == [call]
    # H6: a conversation or person the model adds to the arguments is ignored.
    status, ignored = api(
        "POST", f"{at}/find", {"query": "Porto", "conversation": other, "person": "ben"}
    )
    assert status == 200 and ignored == found
    status, refused = api("POST", f"{at}/find", {"query": "Porto", "modus": "x"})
    assert status == 400 and "'modus'" in refused["error"]

    status, read = api("GET", f"{at}/turns/{porto['turn_id']}")
    assert read == history.read_turn(store, cid, porto["turn_id"])
    assert read["text"] == "I live in Porto and I like green tea."
    status, result = api("GET", f"{at}/tool-calls/{call}/result")
    assert (
        result == history.read_tool_result(store, cid, call) and result["result"] == "Porto: sunny"
    )
    status, recent = api("GET", f"{at}/turns?limit=1")
    assert recent == history.recent_turns(store, cid, 1)
    assert [t["excerpt"] for t in recent["turns"]] == ["Porto is lovely."]
    status, calls = api("GET", f"{at}/tool-calls")
    assert (
        calls
        == history.list_tool_calls(store, cid)
        == {"calls": [{"call_id": call, "name": "weather", "removed": False}]}
    )
    # Ids from another conversation are unknown here (the tools are bound to the path).
    other_turn = _entry_ref(api, other, "user")
    status, missing = api("GET", f"{at}/turns/{other_turn}")
    assert status == 404 and other_turn in missing["error"]
    assert api("GET", f"{CONVERSATIONS}/{other}/tool-calls/{call}/result")[0] == 404


def _entry_ref(api: Client, conversation: str, kind: str) -> str:
    entries = api("GET", f"{CONVERSATIONS}/{conversation}")[1]["entries"]
    return str(next(e["id"] for e in entries if e["kind"] == kind))


def test_issue16_item1_a_conversation_not_theirs_is_404_so_ids_do_not_leak(
    api: Client, store: Store
) -> None:
    bens = _start(api, person="ben")
    _say_as = {"role": "user", "text": "Hello."}
    api("POST", CONVERSATIONS, {}, person="carl")  # carl exists, in none of them
    unknown = "c_000000000000"
    routes: list[tuple[str, str, Any]] = [
        ("GET", "", None),
        ("GET", "/deletion-preview", None),
        ("DELETE", "", None),
        ("POST", "/turns", _say_as),
        ("POST", "/tool-calls", {"name": "x", "result": "y"}),
        ("POST", "/find", {"query": "hello"}),
        ("GET", "/turns/t_x", None),
        ("GET", "/tool-calls/k_x/result", None),
        ("GET", "/turns", None),
        ("GET", "/tool-calls", None),
    ]
    for method, tail, body in routes:
        status, foreign = api(method, f"{CONVERSATIONS}/{bens}{tail}", body, person="carl")
        status_unknown, missing = api(
            method, f"{CONVERSATIONS}/{unknown}{tail}", body, person="carl"
        )
        assert (status, status_unknown) == (404, 404), (method, tail, foreign)
        assert foreign["error"].replace(bens, unknown) == missing["error"]  # same words
    # Another agent's prefix does not reach it either, even for Ben.
    _agent(store, "other")
    status, _ = api("GET", f"/v1/memory/agents/other/memory/conversations/{bens}", person="ben")
    assert status == 404
    assert _entries(store, bens) == []  # nothing was written into it


# ---- bad input and faults ------------------------------------------------------------------


def test_issue16_bad_input_one_sentence_each_and_nothing_half_written(
    api: Client, store: Store
) -> None:
    conversation = _start(api)
    path = f"{CONVERSATIONS}/{conversation}/turns"
    headers = {
        "Authorization": f"Bearer {api.key}",
        "X-Engram-External-User-Id": "ana",
        "Content-Type": "application/json",
    }
    for where, raw in (
        (path, b'{"role": "user", "text": "a \\udc00 b"}'),
        (f"{CONVERSATIONS}/{conversation}/tool-calls", b'{"name": "x\\ud800", "result": "y"}'),
        (
            f"{CONVERSATIONS}/{conversation}/tool-calls",
            b'{"name": "x", "arguments": {"q": ["\\ud800"]}, "result": "y"}',
        ),
        (f"{CONVERSATIONS}/{conversation}/find", b'{"query": "\\ud800"}'),
    ):
        sent = api.http.post(where, content=raw, headers=headers)  # a lone surrogate
        assert sent.status_code == 400, (where, sent.json())
        assert "not valid Unicode" in sent.json()["error"], sent.json()
    sent = api.http.post(CONVERSATIONS, content=b'{"participants": ["\\ud800"]}', headers=headers)
    assert sent.status_code == 400 and "not a valid person id" in sent.json()["error"]
    status, body = api("POST", path, {"role": "system", "text": "x"})
    assert status == 400 and "'role'" in body["error"]
    status, body = api("POST", path, {"role": "user", "text": "x", "status": "awaiting_user"})
    assert status == 400 and "'status'" in body["error"]
    status, body = api("POST", path, {"role": "user", "text": "x" * 200_001})
    assert status == 400 and "'text'" in body["error"]
    too_big = _post(api, path, {"role": "user", "text": "x" * (4 * 1024 * 1024 + 1000)})
    assert too_big.status_code == 413 and "KiB" in too_big.json()["error"]
    big = _say(api, conversation, "user", "y" * 200_000)  # a long turn fits (not 64 KiB)
    assert big["status"] == "committed"
    status, body = api("POST", f"{CONVERSATIONS}/{conversation}/find", {"query": "(" * 600})
    assert status == 400 and "'query'" in body["error"]
    assert len(_entries(store, conversation)) == 1 and verify(store).ok


def test_issue16_a_deleted_conversation_takes_no_turns_and_says_so(
    api: Client, store: Store
) -> None:
    conversation = _start(api)
    _say(api, conversation, "user", "I live in Porto.")
    shared = _start(api, {"participants": ["ben"]})
    status, preview = api("GET", f"{CONVERSATIONS}/{conversation}/deletion-preview")
    assert status == 200 and preview["deleted"] is False
    status, deleted = api("DELETE", f"{CONVERSATIONS}/{conversation}")
    assert status == 200 and deleted["deleted"] is True and deleted["report"]["rows_deleted"]
    for method, tail, body in (
        ("POST", "/turns", {"role": "user", "text": "Still there?"}),
        ("GET", "", None),
        ("POST", "/find", {"query": "Porto"}),
        ("DELETE", "", None),
    ):
        status, gone = api(method, f"{CONVERSATIONS}/{conversation}{tail}", body)
        assert status == 410 and gone["error"] == (
            f"Conversation {conversation} was deleted; nothing more can be added to or read "
            "from it."
        )
    assert [c["id"] for c in api("GET", CONVERSATIONS)[1]["conversations"]] == [shared]
    assert verify(store).ok


def test_issue18_item5_C4_over_http_a_person_deletes_a_shared_conversation_for_themself(
    api: Client, store: Store
) -> None:
    """Issue 18 item 5, C4: DELETE on a shared conversation (a 403 before) deletes it for
    the calling person: their turns excised, the other participant keeps it and their
    turns; `for_everyone` is a staff action, refused to an API key in one sentence."""
    shared = _start(api, {"participants": ["ben"]})
    _say(api, shared, "user", "I'm Ana, I live in Porto.")
    status, bens = api(
        "POST",
        f"{CONVERSATIONS}/{shared}/turns",
        {"role": "user", "text": "I'm Ben, a pilot."},
        person="ben",
    )
    assert status == 201, bens
    status, refused = api("DELETE", f"{CONVERSATIONS}/{shared}?for_everyone=true")
    assert status == 403 and refused["error"] == (
        "Only support staff may delete a shared conversation for everyone in it (from the "
        "inspector or the CLI); delete it for this person without for_everyone, or ask support."
    )
    status, preview = api("GET", f"{CONVERSATIONS}/{shared}/deletion-preview")
    assert status == 200 and preview["for_everyone"] is False and preview["kept_by"] == ["ben"]
    status, deleted = api("DELETE", f"{CONVERSATIONS}/{shared}")
    assert status == 200 and deleted["deleted"] is True, deleted
    assert deleted["report"]["turns_excised"] == 1
    assert api("GET", CONVERSATIONS)[1]["conversations"] == []  # gone for ana
    status, kept = api("GET", f"{CONVERSATIONS}/{shared}", person="ben")
    assert status == 200 and kept["id"] == shared  # ben keeps it, his turn, not her words
    assert _entries(store, shared) == [None, "I'm Ben, a pilot.", None]
    assert verify(store).ok


def test_issue16_C4_deleting_over_http_closes_the_notes_learned_there(store: Store) -> None:
    _agent(store, mode="automatic")
    for api in _client(store):
        conversation = _start(api)
        _say(api, conversation, "user", "I really like green tea.")
        _say(api, conversation, "assistant", "Green tea it is.")
        item = _until(partial(_items, api))
        _, preview = api("GET", f"{CONVERSATIONS}/{conversation}/deletion-preview")
        assert [n["id"] for n in preview["closes"]] == [item[0]["id"]]
        assert "comes from this conversation" in preview["closes"][0]["reason"]
        _, deleted = api("DELETE", f"{CONVERSATIONS}/{conversation}")
        assert [n["id"] for n in deleted["closes"]] == [item[0]["id"]]
        assert api("GET", f"{BASE}/items")[1]["items"] == []


def test_issue16_a_store_busy_with_another_writer_is_503_and_a_retry_records_once(
    store: Store, store_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    import engram.store.dialect as dialect
    from tests.conftest import PASSPHRASE

    _agent(store)
    monkeypatch.setattr(dialect, "BUSY_TIMEOUT_MS", 300)  # the server's store waits 0.3 s
    impatient = Store.open(str(store_path), passphrase=PASSPHRASE)
    try:
        for api in _client(impatient):
            conversation = _start(api)
            path = f"{CONVERSATIONS}/{conversation}/turns"
            body = {"role": "user", "text": "I live in Porto."}
            writer = sqlite3.connect(store_path, isolation_level=None)
            writer.execute("BEGIN IMMEDIATE")  # another process holds the write lock
            try:
                busy = _post(api, path, body, key="k1")
                assert busy.status_code == 503 and busy.headers["retry-after"] == "1"
                assert busy.json()["error"] == (
                    "The store is busy with another writer; nothing was written — try again "
                    "in a moment."
                )
                assert api("GET", f"{CONVERSATIONS}/{conversation}")[0] == 200  # reads go on
            finally:
                writer.execute("ROLLBACK")
                writer.close()
            retried = _post(api, path, body, key="k1")
            assert retried.status_code == 201 and "idempotent-replayed" not in retried.headers
            assert _post(api, path, body, key="k1").headers["idempotent-replayed"] == "true"
            assert _entries(impatient, conversation) == ["I live in Porto."]
    finally:
        impatient.close()


# ---- learning in the server's background ---------------------------------------------------


def test_issue16_item1_W2_learning_runs_after_the_exchange_and_never_delays_it(
    store: Store,
) -> None:
    _agent(store, mode="suggest")
    extractor = Gated()
    for api in _client(store, extractor=extractor):
        conversation = _start(api)
        user = _say(api, conversation, "user", "I live in Porto.")
        assert user["learning"] == "learning runs once the assistant's reply to it commits"
        started = time.monotonic()
        reply = _say(api, conversation, "assistant", "Porto is lovely.")
        took = time.monotonic() - started
        assert reply["learning"] == "queued"
        assert took < 1.0  # answered while the pass is still held at the gate (W2)
        _until(lambda: extractor.calls == 1)
        assert api("GET", f"{BASE}/candidates")[1]["candidates"] == []
        extractor.gate.set()
        found = _until(partial(_candidates, api))
        assert [c["text"] for c in found] == ["Lives in Porto."]
        assert found[0]["source"] == {"conversation": conversation, "turn": user["turn_id"]}


def test_issue16_item1_W5_P2_P4_W7_what_learning_does_with_each_turn(store: Store) -> None:
    _agent(store, mode="automatic")
    _agent(store, "quiet", mode="off")
    extractor = Gated()
    extractor.gate.set()
    for api in _client(store, extractor=extractor):
        secret = _start(api, {"incognito": True})
        assert _say(api, secret, "user", "I live in Faro.")["status"] == "committed"
        assert _say(api, secret, "assistant", "Ok.")["learning"] == "the conversation is incognito"
        failed = _start(api)
        _say(api, failed, "user", "I live in Braga.", status="cancelled")
        reply = _say(api, failed, "assistant", "Ok.", status="failed")
        assert reply["learning"].startswith("nothing is learned from a failed turn")
        quiet = "/v1/memory/agents/quiet/memory/conversations"
        _, made = api("POST", quiet, {})
        for role, text in (("user", "I live in Lagos."), ("assistant", "Ok.")):
            _, turn = api("POST", f"{quiet}/{made['id']}/turns", {"role": role, "text": text})
        assert turn["learning"] == "learning is off for agent 'quiet'"
        # Two conversations of one person, learned one pass at a time (W5).
        first, second = _start(api), _start(api)
        for conversation, text in ((first, "I live in Porto."), (second, "I really like tea.")):
            _say(api, conversation, "user", text)
            _say(api, conversation, "assistant", "Ok.")
        items = _until(lambda: _two(_items(api)))  # noqa: B023 (called at once)
        assert sorted(i["text"] for i in items) == ["Likes tea.", "Lives in Porto."]
        assert extractor.most == 1
        assert api("GET", f"{BASE}/candidates")[1]["candidates"] == []  # automatic: applied


def _two(items: list[Any]) -> list[Any] | None:
    return items if len(items) == 2 else None


def test_issue16_item1_shutdown_leaves_pending_work_and_a_restart_picks_it_up(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    import engram.api.conversation_routes as conversation_routes

    _agent(store, mode="automatic")
    monkeypatch.setattr(conversation_routes, "SHUTDOWN_SECONDS", 0.1)
    slow = Gated(delay=0.5)  # the first pass waits at the gate until every turn is in
    towns = ["Porto", "Faro", "Braga", "Lagos", "Evora"]
    people = [f"p{i}" for i in range(len(towns))]
    for api in _client(store, extractor=slow):
        for person, town in zip(people, towns, strict=True):
            conversation = _start(api, person=person)
            for role, text in (("user", f"I live in {town}."), ("assistant", "Ok.")):
                status, _ = api(
                    "POST",
                    f"{CONVERSATIONS}/{conversation}/turns",
                    {"role": role, "text": text},
                    person=person,
                )
                assert status == 201
        slow.gate.set()  # then the server stops while the first pass is under way

    # The server stopped: the pass under way finished, the rest were left pending.
    def learned() -> list[str | None]:
        return [
            view.text
            for person in people
            for view in notes.list_notes(PersonSession(store, PersonId(person), "test"))
        ]

    left = learned()
    assert 1 <= len(left) < len(towns) and verify(store).ok
    for _api in _client(store):  # a restart catches up before its first request
        _until(lambda: len(learned()) == len(towns))
    assert sorted(map(str, learned())) == sorted(f"Lives in {town}." for town in towns)  # once
