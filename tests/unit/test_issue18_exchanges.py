"""Issue 18 item 2 (P4): an exchange is the unit of learning. A user turn teaches only
once the assistant's reply to it committed, or once the host marks the exchange complete;
an exchange whose reply failed or was cancelled teaches nothing."""

from __future__ import annotations

import pytest

from engram.control.notes import list_notes
from engram.control.session import PersonSession
from engram.engine.rule_extractor import RuleExtractor
from engram.model.conversation import ConversationInfo, TurnStatus
from engram.model.ids import PersonId
from engram.runtime.agents import set_agent
from engram.runtime.conversations import (
    append_turn,
    complete_exchange,
    start_conversation,
    transcript,
)
from engram.runtime.extraction import learn_person, left_alone
from engram.store.store import Store

ANA = PersonId("ana")
RULES = RuleExtractor()


def _conversation(store: Store) -> ConversationInfo:
    set_agent(store, "helper", {"memory": {"learning": {"mode": "automatic"}}}, "staff:ops")
    return start_conversation(store, [ANA], agent="helper")


def _said(store: Store, info: ConversationInfo, text: str) -> str:
    return append_turn(store, info.id, role="user", author=ANA, text=text)


def _reply(store: Store, info: ConversationInfo, status: TurnStatus) -> str:
    return append_turn(
        store, info.id, role="assistant", author="helper", text="Right.", status=status
    )


def _texts(store: Store) -> list[str]:
    return sorted(v.text or "" for v in list_notes(PersonSession(store, ANA, ANA)))


@pytest.mark.parametrize("status", [TurnStatus.FAILED, TurnStatus.CANCELLED])
def test_issue18_item2_P4_a_user_turn_whose_reply_failed_teaches_nothing(
    store: Store, status: TurnStatus
) -> None:
    info = _conversation(store)
    _said(store, info, "I live in Porto.")
    _reply(store, info, status)
    assert learn_person(store, ANA, RULES) == []
    assert complete_exchange(store, info.id) is False  # a failed exchange stays failed
    _said(store, info, "I work at Acme.")  # the next exchange goes well
    _reply(store, info, TurnStatus.COMMITTED)
    learn_person(store, ANA, RULES)
    assert _texts(store) == ["Works at Acme."]


def test_issue18_item2_P4_a_retried_reply_that_commits_completes_the_exchange(
    store: Store,
) -> None:
    info = _conversation(store)
    _said(store, info, "I live in Porto.")
    _reply(store, info, TurnStatus.FAILED)
    _reply(store, info, TurnStatus.COMMITTED)
    learn_person(store, ANA, RULES)
    assert _texts(store) == ["Lives in Porto."]


def test_issue18_item2_P4_a_user_turn_waits_for_its_reply_or_the_hosts_mark(
    store: Store,
) -> None:
    info = _conversation(store)
    _said(store, info, "I live in Porto.")
    assert learn_person(store, ANA, RULES) == []  # the reply is still being written
    (waiting,) = left_alone(store, [ANA])
    assert waiting.turns == 1 and "waits for the assistant's reply" in waiting.reason
    _reply(store, info, TurnStatus.AWAITING_USER)  # it asked something: not finished yet
    _said(store, info, "I work at Acme.")
    assert learn_person(store, ANA, RULES) == []
    assert complete_exchange(store, info.id) is True  # a host that logs no replies
    assert complete_exchange(store, info.id) is False  # once is enough
    learn_person(store, ANA, RULES)
    assert _texts(store) == ["Lives in Porto.", "Works at Acme."]
    assert left_alone(store, [ANA]) == []


def test_issue18_item2_P4_the_hosts_mark_is_not_part_of_the_transcript(store: Store) -> None:
    info = _conversation(store)
    said = _said(store, info, "I live in Porto.")
    assert complete_exchange(store, info.id)
    assert [e.ref for e, _ in transcript(store, info.id)] == [said]  # nothing to read in it
