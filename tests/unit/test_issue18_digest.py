"""Issue 18 item 3 (M4): someone writes the recent-conversation digest. After a
conversation goes quiet (or on `learn`), one line per conversation is written through the
extractor port as a journal event; incognito and deleted conversations get none."""

from __future__ import annotations

import json
import time
from datetime import timedelta
from typing import Any

from engram.control.conversations import delete_conversation
from engram.control.session import PersonSession
from engram.engine.assembly import DIGEST_HEADING
from engram.engine.fold import fold
from engram.engine.rule_extractor import RuleExtractor
from engram.model.clock import ManualClock
from engram.model.conversation import ConversationInfo
from engram.model.events import EventType
from engram.model.ids import PersonId
from engram.model.notes import PersonMemory
from engram.runtime.agents import set_agent
from engram.runtime.context import Attribution, assemble_turn, recall_turn
from engram.runtime.conversations import append_turn, start_conversation
from engram.runtime.digests import QUIET_AFTER, write_digests
from engram.runtime.extraction import learn_now
from engram.runtime.learning_worker import LearningWorker
from engram.runtime.openai_extractor import OpenAIExtractor
from engram.store import journal, projection_memory
from engram.store.store import Store
from tests.unit.test_openai_extractor import FakeServer

ANA = PersonId("ana")
RULES = RuleExtractor()


def _agent(store: Store, mode: str = "suggest") -> str:
    set_agent(store, "helper", {"memory": {"learning": {"mode": mode}}}, "staff:ops")
    return "helper"


def _talk(store: Store, *said: str, incognito: bool = False) -> ConversationInfo:
    info = start_conversation(store, [ANA], agent=_agent(store), incognito=incognito)
    for text in said:
        append_turn(store, info.id, role="user", author=ANA, text=text)
        append_turn(store, info.id, role="assistant", author="helper", text="Lisbon is lovely.")
    return info


def _digest(store: Store, info: ConversationInfo) -> list[str]:
    return list(recall_turn(store, Attribution(ANA, info.id)).digest)


def test_issue18_item3_M4_a_quiet_conversation_gets_one_line_in_the_block(
    store: Store, clock: ManualClock
) -> None:
    info = _talk(
        store,
        "We are planning the garden for spring.",
        "The garden needs a fence, and the spring is early this year.",
    )
    assert write_digests(store, ANA, RULES) == []  # not quiet yet
    clock.advance(QUIET_AFTER)
    (report,) = write_digests(store, ANA, RULES)
    assert report.written
    # honest: the person's own most used words, never the assistant's ("Lisbon")
    assert _digest(store, info) == ["Talked about garden, spring and planning."]
    block = assemble_turn(store, Attribution(ANA, info.id)).block
    assert f"{DIGEST_HEADING}\n- Talked about garden, spring and planning." in block
    assert write_digests(store, ANA, RULES, quiet_after=None) == []  # one line each
    with store.read() as conn:  # a journal event: replay gives the same digest (F5)
        events = list(journal.events(conn, ANA))
        assert [e.type for e in events].count(EventType.DIGEST_LINE_ADDED) == 1
        replayed = fold(events, PersonMemory(ANA))
        assert projection_memory.unscoped_memory(conn, ANA) == replayed


def test_issue18_item3_M4_W7_incognito_deleted_and_unlearning_conversations_get_none(
    store: Store,
) -> None:
    hidden = _talk(store, "Secret plans for the garden party.", incognito=True)
    gone = _talk(store, "Plans for the garden party.")
    delete_conversation(PersonSession(store, ANA, ANA), gone.id)
    quiet = start_conversation(store, [ANA])  # no agent: learning is off (P2)
    append_turn(store, quiet.id, role="user", author=ANA, text="Plans for the garden party.")
    assert write_digests(store, ANA, RULES, quiet_after=None) == []
    assert _digest(store, hidden) == [] and _digest(store, quiet) == []


def test_issue18_item3_M4_the_learning_worker_writes_the_line_once_it_is_quiet(
    store: Store, clock: ManualClock
) -> None:
    worker = LearningWorker(store, RULES, poll_seconds=0.02)
    try:
        info = _talk(store, "Booking the ferry to Porto for the festival.")
        worker.after_turn(info)
        worker.drain()
        time.sleep(0.1)  # a few polls: the conversation is not quiet yet
        assert _digest(store, info) == []
        clock.advance(QUIET_AFTER + timedelta(minutes=1))
        deadline = time.monotonic() + 5
        while not _digest(store, info) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _digest(store, info) == ["Talked about booking, ferry and Porto."]
    finally:
        worker.close()


def test_issue18_item3_M4_the_openai_adapter_asks_for_the_line_and_a_sensitive_one_is_not_kept(
    store: Store,
) -> None:
    server = FakeServer()
    try:
        info = _talk(store, "We planned the trip to Porto.")
        server.content = {"line": "  Planned a trip\\nto Porto. "}
        (done,) = write_digests(store, ANA, OpenAIExtractor(server.url, "m"), quiet_after=None)
        assert done.written and _digest(store, info) == ["Planned a trip\\nto Porto."]
        asked = server.requests[-1]["messages"]
        assert "one line for a digest" in asked[0]["content"]
        assert json.loads(asked[1]["content"])["turns"][0]["by_subject"] is True
        other = _talk(store, "Talked with my doctor.")
        server.content = {"line": "Discussed their diabetes treatment."}
        (refused,) = write_digests(store, ANA, OpenAIExtractor(server.url, "m"), quiet_after=None)
        assert not refused.written and "sensitive topic (health)" in str(refused.skipped)
        assert _digest(store, other) == ["Planned a trip\\nto Porto."]  # the earlier one only
    finally:
        server.httpd.shutdown()


def test_issue18_item3_M4_engram_learn_writes_the_digest(cli: Any, tmp_path: Any) -> None:
    assert cli("init").code == 0
    config = tmp_path / "agent.json"
    config.write_text(json.dumps({"memory": {"learning": {"mode": "suggest"}}}))
    assert cli("agents", "set", "helper", "--config", str(config)).code == 0
    chat = cli("conversation", "start", "--participants", "ana", "--agent", "helper").out.strip()
    for role, author, text in (
        ("user", "ana", "Choosing tiles for the kitchen, blue kitchen tiles."),
        ("assistant", "helper", "Blue is a good choice."),
    ):
        args = ["--role", role, "--author", author, "--text", text]
        assert cli("conversation", "append", chat, *args).code == 0
    answer = cli("learn", "--json").json()
    assert answer["digests"] == [
        {"person": "ana", "conversation": chat, "written": True, "skipped": None, "error": None}
    ]
    recalled = cli("recall", "--person", "ana", "--conversation", chat, "--json").json()
    assert recalled["digest"] == ["Talked about tiles, kitchen and choosing."]


def test_issue18_item3_M4_learning_now_from_a_face_writes_the_digest_too(store: Store) -> None:
    info = _talk(store, "Repainting the hallway green this weekend, the hallway first.")
    learn_now(store, ANA, RULES)  # what the inspector's "Learn from new turns" runs
    assert _digest(store, info) == ["Talked about hallway, repainting and green."]
