"""Post-turn learning and candidate review: W1-W5, W7, W8, P2-P6, through the real store."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.control import candidates
from engram.control.notes import list_notes
from engram.control.session import PersonSession
from engram.engine.extraction import (
    MAX_KNOWN_NOTES,
    ExtractionRequest,
    KnownNote,
    Proposal,
    VisibleTurn,
    admit,
    bounded,
)
from engram.engine.rule_extractor import RuleExtractor
from engram.model.agents import AgentConfig
from engram.model.conversation import ConversationInfo, Surface, TurnStatus
from engram.model.errors import Conflict, InvalidInput, NotAllowed
from engram.model.ids import NoteId, PersonId, TurnId
from engram.model.scope import Kind, Scope
from engram.runtime import extraction
from engram.runtime.agents import set_agent
from engram.runtime.conversations import append_turn, complete_exchange, start_conversation
from engram.runtime.extraction import HostPolicy, learn_person
from engram.runtime.learning_worker import LearningWorker
from engram.runtime.sensitive_lexicon import sensitive_category
from engram.store.store import Store

ANA = PersonId("ana")
BEN = PersonId("ben")
RULES = RuleExtractor()


def _agent(store: Store, name: str, mode: str, **learning: Any) -> str:
    set_agent(store, name, {"memory": {"learning": {"mode": mode, **learning}}}, "staff:ops")
    return name


def _chat(
    store: Store,
    agent: str | None,
    *lines: str,
    surface: Surface = Surface.CHAT,
    incognito: bool = False,
    people: Sequence[PersonId] = (ANA,),
) -> tuple[ConversationInfo, list[str]]:
    info = start_conversation(store, people, surface=surface, incognito=incognito, agent=agent)
    turns = [append_turn(store, info.id, role="user", author=ANA, text=line) for line in lines]
    complete_exchange(store, info.id)  # the host logs no reply: the exchange is complete (P4)
    return info, turns


def _texts(store: Store, person: PersonId = ANA) -> list[str]:
    return [v.text or "" for v in list_notes(PersonSession(store, person, person))]


def _pending(store: Store, person: PersonId = ANA) -> list[dict[str, Any]]:
    return candidates.list_candidates(PersonSession(store, person, person), "pending")


class Recording:
    """An extractor that remembers what it was shown and proposes what it is told to."""

    name = "recording"

    def __init__(self, answer: Sequence[Proposal] = (), delay: float = 0.0) -> None:
        self.requests: list[ExtractionRequest] = []
        self.answer = list(answer)
        self.delay = delay

    def extract(self, request: ExtractionRequest) -> Sequence[Proposal]:
        time.sleep(self.delay)
        self.requests.append(request)
        return self.answer or RULES.extract(request)


def test_P2_learning_is_off_unless_the_agent_turns_it_on(store: Store) -> None:
    _chat(store, None, "I live in Porto.")
    _chat(store, _agent(store, "quiet", "off"), "I live in Porto.")
    assert learn_person(store, ANA, RULES) == []
    assert _texts(store) == [] and _pending(store) == []


def test_P2_memory_settings_narrow_the_host_policy_never_widen_it() -> None:
    config = AgentConfig.from_json(
        "helper", {"memory": {"tools": {"search": True, "remember": True, "forget": False}}}
    )
    assert config.exposed_tools({"memory_search", "memory_forget"}) == ["memory_search"]
    assert config.exposed_tools(set()) == []
    with pytest.raises(InvalidInput, match="unknown settings: delete_all"):
        AgentConfig.from_json("helper", {"memory": {"tools": {"delete_all": True}}})
    with pytest.raises(InvalidInput, match="mode must be one of"):
        AgentConfig.from_json("helper", {"memory": {"learning": {"mode": "always"}}})


def test_P3_write_scope_is_always_the_invocation_user() -> None:
    with pytest.raises(InvalidInput, match="invocation-user"):
        AgentConfig.from_json("helper", {"memory": {"tools": {"writeScope": "message-text"}}})


def test_P4_only_committed_turns_on_chat_or_channel_teach_and_the_host_can_switch_it_off(
    store: Store,
) -> None:
    agent = _agent(store, "helper", "automatic")
    with pytest.raises(InvalidInput, match="chat and channel only"):
        _agent(store, "tasker", "automatic", surfaces=["task"])
    _chat(store, agent, "I live in Porto.", surface=Surface.TASK)
    _chat(store, agent, "I live in Faro.", surface=Surface.SCHEDULE)
    info = start_conversation(store, [ANA], agent=agent)
    for status in (TurnStatus.FAILED, TurnStatus.CANCELLED, TurnStatus.AWAITING_USER):
        append_turn(store, info.id, role="user", author=ANA, text="I work at Acme.", status=status)
    assert learn_person(store, ANA, RULES, HostPolicy(learning=True)) == []
    _chat(store, agent, "I live in Braga.")
    assert learn_person(store, ANA, RULES, HostPolicy(learning=False)) == []  # kill switch
    assert _texts(store) == []
    learn_person(store, ANA, RULES)
    assert _texts(store) == ["Lives in Braga."]


def test_W2_each_turn_is_analysed_once_even_when_it_taught_nothing(store: Store) -> None:
    agent = _agent(store, "helper", "suggest")
    info, turns = _chat(store, agent, "Hello there.", "How are you?")
    recording = Recording()
    first = learn_person(store, ANA, recording)
    assert [r.turns for r in first] == [turns] and first[0].suggested == []
    assert learn_person(store, ANA, recording) == []  # the checkpoint remembers them
    newer = append_turn(store, info.id, role="user", author=ANA, text="I live in Porto.")
    complete_exchange(store, info.id)
    again = learn_person(store, ANA, recording)
    assert [r.turns for r in again] == [[newer]]
    assert [t.turn for t in recording.requests[-1].turns] == [newer]


def test_W2_learning_runs_beside_the_reply_never_inside_it(store: Store) -> None:
    agent = _agent(store, "helper", "automatic")
    info, _ = _chat(store, agent, "I live in Porto.")
    worker = LearningWorker(store, Recording(delay=0.5))
    try:
        start = time.monotonic()
        worker.after_turn(info)
        assert time.monotonic() - start < 0.1  # the host's reply is not held up
        assert _texts(store) == []
        worker.drain()
        assert _texts(store) == ["Lives in Porto."]
    finally:
        worker.close()


def test_W3_the_extractor_sees_at_most_24_ranked_active_notes(store: Store) -> None:
    agent = _agent(store, "helper", "automatic")
    _chat(store, agent, "I live in Porto.")
    session = PersonSession(store, ANA, ANA)
    from engram.control.notes import add_note

    for i in range(30):
        add_note(
            session, text=f"Note {i}.", kind=Kind.FACT, scope=Scope.UNSPECIFIED, confidence_bp=i
        )
    recording = Recording()
    learn_person(store, ANA, recording)
    shown = recording.requests[0].notes
    assert len(shown) == MAX_KNOWN_NOTES == 24
    assert [n.text for n in shown] == [f"Note {i}." for i in range(29, 5, -1)]  # best first


def test_W3_W8_admission_keeps_only_the_subjects_own_words_about_shown_notes() -> None:
    request = bounded(
        [
            VisibleTurn(TurnId("t1"), "user", "I live in Porto.", by_subject=True),
            VisibleTurn(TurnId("t2"), "assistant", "You live in Rome.", by_subject=False),
            VisibleTurn(TurnId("t3"), "user", "Ben lives in Faro.", by_subject=False),
        ],
        [KnownNote(NoteId("n_1"), Kind.FACT, "Lives in Lyon.")],
        set(Kind),
    )
    proposals = [
        Proposal(Kind.FACT, "Lives in Porto.", TurnId("t1"), contradicts=NoteId("n_1")),
        Proposal(Kind.FACT, "Lives in Rome.", TurnId("t2")),
        Proposal(Kind.FACT, "Lives in Faro.", TurnId("t3")),
        Proposal(Kind.FACT, "Lives in Porto too.", TurnId("t1"), restates=NoteId("n_9")),
    ]
    verdicts = admit(request, proposals, sensitive_category)
    assert [p.text for p in verdicts.kept] == ["Lives in Porto."]
    reasons = [reason for _, reason in verdicts.dropped]
    assert reasons[:2] == ["not from one of the person's own turns (W8)"] * 2
    assert reasons[2] == "names a note it was not shown (W3)"


def test_W8_assistant_claims_alone_teach_nothing(store: Store) -> None:
    agent = _agent(store, "helper", "automatic")
    info = start_conversation(store, [ANA], agent=agent)
    append_turn(store, info.id, role="assistant", author="helper", text="I live in Rome.")
    append_turn(store, info.id, role="user", author=ANA, text="Thanks!")
    complete_exchange(store, info.id)
    greedy = Recording([Proposal(Kind.FACT, "Lives in Rome.", TurnId("whatever"))])
    reports = learn_person(store, ANA, greedy)
    assert _texts(store) == [] and reports[0].dropped
    shown = greedy.requests[0].turns
    assert [t.by_subject for t in shown] == [False, True]


def test_W4_a_conversation_made_unlearnable_meanwhile_gets_nothing_written(store: Store) -> None:
    agent = _agent(store, "helper", "automatic")
    info, _ = _chat(store, agent, "I live in Porto.")

    class Deleting(Recording):
        def extract(self, request: ExtractionRequest) -> Sequence[Proposal]:
            from engram.control.conversations import delete_conversation

            answer = super().extract(request)
            delete_conversation(PersonSession(store, ANA, ANA), info.id)  # while it thinks
            return answer

    reports = learn_person(store, ANA, Deleting())
    assert reports[0].skipped and "no longer exists" in reports[0].skipped
    assert _texts(store) == [] and _pending(store) == []


def test_W5_passes_for_one_person_run_one_at_a_time(store: Store) -> None:
    agent = _agent(store, "helper", "suggest")
    _chat(store, agent, "I live in Porto.")
    inside = 0
    most = 0
    guard = threading.Lock()

    class Counting(Recording):
        def extract(self, request: ExtractionRequest) -> Sequence[Proposal]:
            nonlocal inside, most
            with guard:
                inside += 1
                most = max(most, inside)
            time.sleep(0.2)
            with guard:
                inside -= 1
            return super().extract(request)

    counting = Counting()
    threads = [threading.Thread(target=learn_person, args=(store, ANA, counting)) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert most == 1
    assert len(_pending(store)) == 1  # the later passes found the turn already handled


def test_W5_a_pass_whose_notes_changed_underneath_looks_again(store: Store) -> None:
    agent = _agent(store, "helper", "automatic")
    _chat(store, agent, "I live in Porto.")
    from engram.control.notes import add_note

    class Racing(Recording):
        def extract(self, request: ExtractionRequest) -> Sequence[Proposal]:
            if not self.requests:  # someone adds a note while the first look is running
                add_note(
                    PersonSession(store, ANA, ANA),
                    text="Lives in Lyon.",
                    kind=Kind.FACT,
                    scope=Scope.UNSPECIFIED,
                )
            return super().extract(request)

    racing = Racing()
    learn_person(store, ANA, racing)
    assert len(racing.requests) == 2
    assert [n.text for n in racing.requests[1].notes] == ["Lives in Lyon."]
    assert "Lives in Porto." in _texts(store) and "Lives in Lyon." not in _texts(store)


def test_W7_incognito_conversations_teach_nothing(store: Store) -> None:
    agent = _agent(store, "helper", "automatic")
    _chat(store, agent, "I live in Porto.", incognito=True)
    assert learn_person(store, ANA, RULES) == []
    assert _texts(store) == []


def test_P5_suggest_queues_everything_automatic_applies_only_what_is_safe(store: Store) -> None:
    _chat(store, _agent(store, "careful", "suggest"), "I live in Porto.")
    learn_person(store, ANA, RULES)
    assert _texts(store) == [] and [c["text"] for c in _pending(store)] == ["Lives in Porto."]

    _chat(
        store,
        _agent(store, "eager", "automatic"),
        "I work at Acme.",
        "I'm allergic to peanuts.",  # sensitive: waits for a person
        "I think I like jazz.",  # hedged: waits too
    )
    learn_person(store, ANA, RULES)
    assert _texts(store) == ["Works at Acme."]
    waiting = {c["text"]: c for c in _pending(store)}
    assert waiting["Is allergic to peanuts."]["sensitive"] is True
    assert waiting["Likes jazz."]["ambiguous"] is True


def test_P5_automatic_contradiction_closes_the_old_note(store: Store) -> None:
    agent = _agent(store, "eager", "automatic")
    _chat(store, agent, "I live in Lyon.")
    learn_person(store, ANA, RULES)
    _chat(store, agent, "I moved to Porto, and later I moved to Faro.")
    learn_person(store, ANA, RULES)
    assert _texts(store) == ["Lives in Faro."]  # Lyon and Porto closed, in order


def test_P6_decisions_carry_the_revision_and_a_stale_one_conflicts(store: Store) -> None:
    _chat(store, _agent(store, "careful", "suggest"), "I live in Porto.", "I work at Acme.")
    learn_person(store, ANA, RULES)
    porto, acme = _pending(store)
    dana = PersonSession(store, ANA, "staff:dana")
    lee = PersonSession(store, ANA, "staff:lee")
    approved = candidates.approve(dana, porto["id"], porto["revision"])
    assert approved["status"] == "approved" and approved["revision"] == 2
    with pytest.raises(Conflict, match="revision 2, not 1"):
        candidates.reject(lee, porto["id"], porto["revision"], "too vague")
    assert _texts(store) == []  # approval is not application
    applied = candidates.apply(dana, porto["id"])
    assert applied["status"] == "applied" and _texts(store) == ["Lives in Porto."]
    with pytest.raises(NotAllowed, match="only an approved suggestion"):
        candidates.apply(dana, acme["id"])
    candidates.reject(lee, acme["id"], 1, "Temporary job")
    trail = candidates.audit(dana, acme["id"])
    assert [(t["event"], t["actor"]) for t in trail] == [
        ("candidate_suggested", "extractor"),
        ("candidate_reviewed", "staff:lee"),
    ]
    assert trail[1]["decision"] == "rejected" and trail[1]["reason"] == "Temporary job"
    assert [t["event"] for t in candidates.audit(dana, porto["id"])] == [
        "candidate_suggested",
        "candidate_reviewed",
        "candidate_applied",
    ]


def test_P6_concurrent_reviewers_one_wins_the_other_conflicts(store: Store) -> None:
    _chat(store, _agent(store, "careful", "suggest"), "I live in Porto.")
    learn_person(store, ANA, RULES)
    (porto,) = _pending(store)
    outcomes: list[str] = []

    def decide(actor: str) -> None:
        try:
            candidates.approve(PersonSession(store, ANA, actor), porto["id"], 1)
            outcomes.append("won")
        except Conflict:
            outcomes.append("conflict")

    threads = [threading.Thread(target=decide, args=(f"staff:{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["conflict", "conflict", "conflict", "won"]


def test_W1_W4_an_approved_candidate_from_a_deleted_conversation_is_not_applied(
    store: Store,
) -> None:
    from engram.control.conversations import delete_conversation

    info, _ = _chat(store, _agent(store, "careful", "suggest"), "I live in Porto.")
    learn_person(store, ANA, RULES)
    (porto,) = _pending(store)
    session = PersonSession(store, ANA, ANA)
    candidates.approve(session, porto["id"], 1)
    delete_conversation(session, info.id)
    with pytest.raises(NotAllowed, match="no longer exists"):
        candidates.apply(session, porto["id"])
    assert _texts(store) == []


def test_extraction_only_learns_about_the_person_who_spoke(store: Store) -> None:
    agent = _agent(store, "helper", "automatic")
    info = start_conversation(store, [ANA, BEN], agent=agent, surface=Surface.CHANNEL)
    append_turn(store, info.id, role="user", author=ANA, text="I live in Porto.")
    append_turn(store, info.id, role="user", author=BEN, text="I live in Faro.")
    complete_exchange(store, info.id)
    extraction.learn_all(store, RULES)
    assert _texts(store, ANA) == ["Lives in Porto."]
    assert _texts(store, BEN) == ["Lives in Faro."]


_said = st.lists(
    st.sampled_from(
        [
            "I live in Porto.",
            "I work at Acme",
            "I like tea and I hate crowds!",
            "Do I live in Rome?",
            "She said she lives in Faro.",
            "I don't like jazz",
            "remind me to call Sam",
            "Maybe I prefer short answers.",
            "lorem ipsum",
        ]
    ),
    max_size=6,
).map(" ".join)


@settings(max_examples=150, deadline=None)
@given(user=_said, other=_said, role=st.sampled_from(["assistant", "user"]))
def test_W8_the_rule_extractor_never_learns_from_anyone_but_the_subject(
    user: str, other: str, role: str
) -> None:
    turns = [
        VisibleTurn(TurnId("mine"), "user", user, by_subject=True),
        VisibleTurn(TurnId("theirs"), role, other, by_subject=False),
    ]
    request = bounded(turns, [], set(Kind))
    proposals = RULES.extract(request)
    assert all(p.turn == "mine" for p in proposals)
    assert RULES.extract(request) == proposals  # deterministic
    reasons = {reason for _, reason in admit(request, proposals, sensitive_category).dropped}
    assert reasons <= {"a repeat of another proposal"}  # the rest is admissible


def test_P7_a_legacy_memory_file_becomes_candidates_never_notes(store: Store) -> None:
    from engram.runtime.legacy_import import import_legacy

    start_conversation(store, [ANA])
    legacy = """# Memory for ana

- Prefers **short** answers.
- Lives in Porto
1. Remind her to renew the passport

```
not a statement
```
Works at Acme.
"""
    made = import_legacy(store, ANA, legacy, "staff:ops")
    assert [(m["text"], m["kind"]) for m in made] == [
        ("Prefers short answers.", "preference"),
        ("Lives in Porto", "fact"),
        ("Remind her to renew the passport", "open_thread"),
        ("Works at Acme.", "fact"),
    ]
    assert _texts(store) == []  # nothing is kept until someone approves it
    pending = _pending(store)
    assert len(pending) == 4 and all(c["ambiguous"] and c["scope"] == "direct" for c in pending)
    assert {(c["extractor"], c["suggested_by"]) for c in pending} == {
        ("legacy-import", "staff:ops")
    }
    with pytest.raises(InvalidInput, match="no statements"):
        import_legacy(store, ANA, "# only a heading\n")
    with pytest.raises(InvalidInput, match="Line 2: 'statement' is longer than 300 characters"):
        import_legacy(store, ANA, "- fine\n- " + "x" * 400)
    assert len(_pending(store)) == 4  # the refused files imported nothing


def test_W2_a_pass_that_lost_the_race_to_another_process_writes_nothing(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = _agent(store, "careful", "suggest")
    _chat(store, agent, "I live in Porto.")
    # Another process has its own locks: give every pass a fresh one.
    monkeypatch.setattr(extraction, "person_lock", lambda _store, _person: threading.Lock())

    class Overtaken(Recording):
        def extract(self, request: ExtractionRequest) -> Sequence[Proposal]:
            if not self.requests:
                learn_person(store, ANA, RULES)  # the other process finishes first
            return super().extract(request)

    (report,) = learn_person(store, ANA, Overtaken())
    assert report.skipped and "meanwhile" in report.skipped
    assert [c["text"] for c in _pending(store)] == ["Lives in Porto."]  # once, not twice


def test_P5_settings_changed_during_a_pass_are_the_ones_obeyed(store: Store) -> None:
    agent = _agent(store, "helper", "automatic")
    _chat(store, agent, "I live in Porto.")

    class Switching(Recording):
        def extract(self, request: ExtractionRequest) -> Sequence[Proposal]:
            _agent(store, "helper", "suggest")  # an operator narrows it meanwhile
            return super().extract(request)

    learn_person(store, ANA, Switching())
    assert _texts(store) == [] and [c["text"] for c in _pending(store)] == ["Lives in Porto."]


def test_W8_a_proposal_must_share_words_with_the_turn_it_cites_and_topics_stay_generic(
    store: Store,
) -> None:
    agent = _agent(store, "helper", "automatic")
    _, turns = _chat(store, agent, "I live in Porto.")
    invented = Recording(
        [
            Proposal(Kind.FACT, "Has a secret illness.", TurnId(turns[0])),
            Proposal(Kind.FACT, "Lives in Porto.", TurnId(turns[0]), topic="hiv status positive"),
        ]
    )
    (report,) = learn_person(store, ANA, invented)
    assert report.dropped[0]["reason"] == "shares no words with the turn it cites (W8)"
    (note,) = list_notes(PersonSession(store, ANA, ANA))
    assert note.text == "Lives in Porto." and note.note.topic is None  # never in the clear


def test_P6_approve_and_apply_is_all_or_nothing(store: Store) -> None:
    from engram.store import erasure

    info, _ = _chat(store, _agent(store, "careful", "suggest"), "I live in Porto.")
    learn_person(store, ANA, RULES)
    (porto,) = _pending(store)
    session = PersonSession(store, ANA, ANA)
    # A store from before issue 18 item 5 may hold a pending candidate whose conversation
    # is gone (deletion now rejects them): its rows are removed the way that release did.
    with store.write() as txn:
        erasure.shred_conversation(store, txn, info.id)
    with pytest.raises(NotAllowed):
        candidates.approve(session, porto["id"], 1, apply_now=True)
    assert candidates.get_candidate(session, porto["id"])["status"] == "pending"


def test_P6_the_fold_itself_refuses_out_of_order_decisions(store: Store) -> None:
    from engram.model.event_bodies import CandidateApplied, CandidateReviewed
    from engram.model.events import EventType, NewEvent
    from engram.store import journal

    _chat(store, _agent(store, "careful", "suggest"), "I live in Porto.")
    learn_person(store, ANA, RULES)
    (porto,) = _pending(store)
    applied = NewEvent(EventType.CANDIDATE_APPLIED, "x", CandidateApplied(porto["id"], NoteId("n")))
    with pytest.raises(NotAllowed, match="which is pending"), store.write() as txn:
        journal.append(store, txn, ANA, [applied])
    session = PersonSession(store, ANA, ANA)
    candidates.reject(session, porto["id"], 1, "no")
    again = NewEvent(
        EventType.CANDIDATE_REVIEWED,
        "x",
        CandidateReviewed(porto["id"], 2, "approved"),
    )
    with pytest.raises(NotAllowed, match="already rejected"), store.write() as txn:
        journal.append(store, txn, ANA, [again])


def test_candidate_flags_and_text_are_sealed_not_in_the_clear_journal(store: Store) -> None:
    from engram.store import journal

    _chat(store, _agent(store, "careful", "suggest"), "I'm allergic to peanuts.")
    learn_person(store, ANA, RULES)
    (peanuts,) = _pending(store)
    assert peanuts["sensitive"] is True
    with store.read() as conn:
        bodies = [json.dumps(e.body.to_json()) for e in journal.events(conn, ANA)]
    assert not any("sensitive" in b or "peanut" in b for b in bodies)
