"""Post-turn learning: the extraction pass (W1-W5, W7, W8, P4, P5).

For one person and one conversation, the pass takes the committed turns extraction has not
handled yet, shows an extractor those turns and at most 24 ranked active notes, keeps
what `engine.extraction.admit` allows, and — in one write — records either notes (policy-
safe proposals in automatic mode) or pending candidates (everything else), plus a
checkpoint naming every turn it handled, so no turn is analysed twice (W2).

It runs after a turn has committed, never inside the reply: a host calls `learn_person` or
hands conversations to `runtime.learning_worker.LearningWorker`, which runs passes on its
own thread.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from engram.engine.exchanges import exchanges, learnable_turns, waiting
from engram.engine.extraction import (
    MAX_KNOWN_NOTES,
    MAX_TURNS,
    ExtractionRequest,
    Extractor,
    KnownNote,
    Proposal,
    VisibleTurn,
    admit,
    bounded,
    policy_safe,
)
from engram.model.agents import AgentConfig, LearningMode
from engram.model.conversation import ConversationInfo, EntryKind, LogEntry, TurnStatus
from engram.model.errors import Conflict, EngramError, NotAllowed, NotFound
from engram.model.event_bodies import (
    Contradicted,
    ExtractionCheckpoint,
    NoteAdded,
    Restated,
    body_as,
)
from engram.model.events import Cause, EventType, NewEvent
from engram.model.ids import CandidateId, ConversationId, NoteId, PersonId, TurnId
from engram.model.notes import NoteFilter, NoteStatus
from engram.model.progress import Progress
from engram.model.scope import Scope
from engram.runtime import digests
from engram.runtime.busy_retry import backoff, while_busy
from engram.runtime.learning_policy import (
    HostPolicy as HostPolicy,  # re-exported: hosts import it from here
)
from engram.runtime.learning_policy import (
    config_of,
    person_lock,
    why_not,
)
from engram.runtime.note_writes import NoteDraft, note_added, suggestion, writable_conversation
from engram.runtime.sensitive_lexicon import sensitive_category
from engram.store import (
    agent_configs,
    conversation_log,
    journal,
    people,
    projection_notes,
    projection_state,
)
from engram.store.store import Store, WriteTxn

log = logging.getLogger(__name__)

ACTOR = "extractor"
RANKED_ACTIVE = NoteFilter(statuses=(NoteStatus.ACTIVE,), order="rank")
_ATTEMPTS = 8  # looks at the notes again while other writers keep changing them
_TURN_KINDS = (EntryKind.USER, EntryKind.ASSISTANT)
_COMMITTED = TurnStatus.COMMITTED.value


@dataclass
class PassReport:
    """What one pass did, for `engram learn --json` and the host's logs."""

    person: PersonId
    conversation: ConversationId
    turns: list[TurnId] = field(default_factory=list)
    applied: list[NoteId] = field(default_factory=list)
    suggested: list[CandidateId] = field(default_factory=list)
    dropped: list[dict[str, str]] = field(default_factory=list)  # turn, kind, reason: no text
    skipped: str | None = None
    error: str | None = None  # the pass failed; its turns stay pending for the next run

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True, slots=True)
class _Work:
    info: ConversationInfo
    config: AgentConfig
    turns: list[LogEntry]


@dataclass(frozen=True, slots=True)
class LeftAlone:
    """A conversation with committed turns not analysed yet, which learning leaves alone."""

    person: PersonId
    conversation: ConversationId
    turns: int
    reason: str

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _conversations(
    conn: Any, person: PersonId, conversation: ConversationId | None
) -> list[ConversationInfo]:
    if conversation is None:
        return conversation_log.for_person(conn, person)
    one = conversation_log.get(conn, conversation)
    return [one] if one is not None and person in one.participants else []


def learnable(conn: Any, conversation: ConversationId, person: PersonId) -> list[LogEntry]:
    """The committed turns of complete exchanges (a reply committed, or the host marked
    the exchange complete) that extraction has not handled yet for `person` (P4, W2)."""
    return learnable_turns(
        conversation_log.unprocessed_exchange_entries(conn, conversation, person)
    )


def pending(
    store: Store,
    person: PersonId,
    host: HostPolicy = HostPolicy(),
    conversation: ConversationId | None = None,
) -> list[_Work]:
    """The person's conversations (or just one) with committed turns that learning may
    still analyse."""
    if not host.learning:
        return []
    work: list[_Work] = []
    with store.read() as conn:
        for info in _conversations(conn, person, conversation):
            config = config_of(store, conn, info)
            if config is None or why_not(info, config, host) is not None:
                continue  # P4, W7: off, incognito, or a surface the agent does not learn on
            # P4: only committed turns of complete exchanges; W2: once
            turns = learnable(conn, info.id, person)
            if turns:
                work.append(_Work(info, config, turns))
    return work


def left_alone(
    store: Store, persons: Sequence[PersonId] | None = None, host: HostPolicy = HostPolicy()
) -> list[LeftAlone]:
    """Conversations (of these persons, or everyone's) with committed turns not analysed
    yet that learning leaves alone, and why — so `engram learn` can say why it learned
    nothing."""
    found: list[LeftAlone] = []
    with store.read() as conn:
        for person in people.all_ids(conn) if persons is None else persons:
            for info in conversation_log.for_person(conn, person):
                entries = conversation_log.unprocessed_exchange_entries(conn, info.id, person)
                reason = why_not(info, config_of(store, conn, info), host)
                if reason is None:
                    reason, entries = _waiting_for_reply(info, entries)
                turns = [e for e in entries if e.kind in _TURN_KINDS and e.status == _COMMITTED]
                if reason is not None and turns:
                    found.append(LeftAlone(person, info.id, len(turns), reason))
    return found


def _waiting_for_reply(
    info: ConversationInfo, entries: list[LogEntry]
) -> tuple[str | None, list[LogEntry]]:
    """P4: the latest exchange's turns, when it still waits for its reply, and why."""
    found = exchanges(entries)
    if not found or not waiting(found[-1]):
        return None, []
    reason = (
        "its latest exchange waits for the assistant's reply; a host that logs no replies "
        f"marks it complete ('engram conversation complete {info.id}')"
    )
    return reason, found[-1]


def learn_person(
    store: Store,
    person: PersonId,
    extractor: Extractor,
    host: HostPolicy = HostPolicy(),
    conversation: ConversationId | None = None,
    progress: Progress | None = None,
) -> list[PassReport]:
    """Run every pending pass for one person (in one conversation, if given), one after
    another (W5). A pass that fails (an extractor down, a conversation gone) is reported
    and the others still run. `progress` counts the conversations."""
    reports: list[PassReport] = []
    with person_lock(store, person):
        works = pending(store, person, host, conversation)
        for done, work in enumerate(works, start=1):
            for chunk in _chunks(work.turns, MAX_TURNS):
                try:
                    reports.append(_run(store, person, work, chunk, extractor))
                except EngramError as error:
                    turns = [TurnId(str(e.ref)) for e in chunk]
                    reports.append(PassReport(person, work.info.id, turns, error=str(error)))
                    break  # later turns of this conversation wait for the earlier ones
            if progress:
                progress(done, len(works))
    return reports


def learn_now(store: Store, person: PersonId, extractor: Extractor) -> list[PassReport]:
    """`learn` for one person, as a face asks for it: the pending passes, then a digest
    line for each of their conversations that has none yet, quiet or not (M4)."""
    reports = learn_person(store, person, extractor)
    digests.write_digests(store, person, extractor, quiet_after=None)
    return reports


def learn_all(
    store: Store,
    extractor: Extractor,
    host: HostPolicy = HostPolicy(),
    progress: Progress | None = None,
) -> list[PassReport]:
    """Run pending passes for everyone in the store (`engram learn`); `progress` counts
    the people."""
    with store.read() as conn:
        everyone = people.all_ids(conn)
    reports: list[PassReport] = []
    for done, person in enumerate(everyone, start=1):
        reports.extend(learn_person(store, person, extractor, host))
        if progress:
            progress(done, len(everyone))
    return reports


def _chunks(turns: list[LogEntry], size: int) -> list[list[LogEntry]]:
    return [turns[i : i + size] for i in range(0, len(turns), size)]


def _run(
    store: Store, person: PersonId, work: _Work, turns: list[LogEntry], extractor: Extractor
) -> PassReport:
    info = work.info
    report = PassReport(person, info.id, [TurnId(str(e.ref)) for e in turns])
    for attempt in range(_ATTEMPTS):
        if attempt:  # other writers changed the notes it was shown: give them room
            time.sleep(backoff(attempt - 1))
        request, shown = _request(store, person, info.id, turns, work.config)
        proposals = extractor.extract(request) if request.turns else []
        verdicts = admit(request, proposals, sensitive_category)
        report.dropped = [
            {"turn": p.turn, "kind": p.kind.value, "reason": reason}
            for p, reason in verdicts.dropped
        ]
        kept = verdicts.kept
        write = partial(_write_pass, store, person, info, report, shown, kept, extractor.name)
        if while_busy(write):  # another program writing meanwhile is waited out
            return report
    start = (
        f"{person}'s notes kept changing while learning from conversation {info.id}; "
        "nothing was written"
    )
    raise Conflict(f"{start} — learn again.", cli_message=f"{start} — run 'engram learn' again.")


def _write_pass(
    store: Store,
    person: PersonId,
    info: ConversationInfo,
    report: PassReport,
    shown: list[NoteId],
    kept: Sequence[Proposal],
    extractor_name: str,
) -> bool:
    """The pass's notes and checkpoint in one transaction; False (nothing written) when the
    notes it was shown changed meanwhile."""
    with store.write() as txn:
        journal.lock(txn, person)  # what is checked next cannot change before the append
        config, skipped = _recheck(store, txn, person, info, report.turns)
        if skipped or config is None:
            report.skipped = skipped  # W4 (or W2: done meanwhile): write nothing at all
            return True
        now = projection_notes.unscoped_notes(
            txn.conn, person, RANKED_ACTIVE, limit=MAX_KNOWN_NOTES
        )
        if [n.id for n in now] != shown:
            return False  # the notes it was shown changed meanwhile: look again (W5)
        events = _events(report, kept, info.id, config, extractor_name)
        journal.append(store, txn, person, events)
    return True


def _request(
    store: Store,
    person: PersonId,
    conversation: ConversationId,
    turns: Sequence[LogEntry],
    config: AgentConfig,
) -> tuple[ExtractionRequest, list[NoteId]]:
    """W3 and W8: the turns' visible text and the best-ranked active notes, bounded."""
    with store.read() as conn:
        notes = projection_notes.unscoped_notes(conn, person, RANKED_ACTIVE, limit=MAX_KNOWN_NOTES)
        note_texts = journal.texts(store, conn, person, [n.text_seq for n in notes])
        turn_texts = conversation_log.entry_texts(store, conn, conversation, [e.seq for e in turns])
    known = [
        KnownNote(n.id, n.kind, text, n.topic)
        for n in notes
        if (text := note_texts.get(n.text_seq)) is not None
    ]
    visible = [
        VisibleTurn(
            TurnId(str(e.ref)),
            e.kind.value,
            text,
            by_subject=e.kind is EntryKind.USER and e.author == person,
        )
        for e in turns
        if (text := turn_texts.get(e.seq)) is not None  # an excised turn shows nothing
    ]
    return bounded(visible, known, config.learning.kinds), [n.id for n in notes]


def _recheck(
    store: Store, txn: WriteTxn, person: PersonId, info: ConversationInfo, turns: list[TurnId]
) -> tuple[AgentConfig | None, str | None]:
    """Inside the write, before anything is appended: the conversation still exists, is
    not incognito and is still theirs (W4, W7); its agent still learns, with the settings
    in force now (P5); and no other pass handled these turns meanwhile (W2). Returns the
    agent's current configuration, or a reason to write nothing."""
    try:
        writable_conversation(txn, person, info.id)
    except (NotAllowed, NotFound) as refusal:
        return None, str(refusal)
    config = agent_configs.get(store, txn.conn, info.agent) if info.agent else None
    if config is None or not config.learns_on(info.surface):
        return None, f"learning was turned off for agent {info.agent!r}; nothing was written."
    if set(turns) & projection_state.processed_turns(txn.conn, person, info.id):
        return None, "another pass analysed these turns meanwhile; nothing was written."
    return config, None


def _events(
    report: PassReport,
    proposals: Sequence[Proposal],
    conversation: ConversationId,
    config: AgentConfig,
    extractor: str,
) -> list[NewEvent]:
    """Notes for what automatic mode may apply, candidates for the rest, then the
    checkpoint that marks every turn handled (W2)."""
    automatic = config.learning.mode is LearningMode.AUTOMATIC
    replaced: dict[NoteId, NoteId] = {}  # an old note closed earlier in this batch -> its successor
    events: list[NewEvent] = []
    for proposal in proposals:
        cause = Cause(conversation, proposal.turn)
        if automatic and policy_safe(proposal, config.learning.kinds, config.learning.auto_apply):
            events += _note_events(report, proposal, cause, replaced)
        else:
            candidate, event = suggestion(
                draft_of(proposal),
                ACTOR,
                extractor,
                cause,
                sensitive=proposal.sensitive,
                ambiguous=proposal.ambiguous,
                category=proposal.category,
                reason=proposal.reason,
                restates=proposal.restates,
                contradicts=proposal.contradicts,
            )
            events.append(event)
            report.suggested.append(candidate)
    events.append(
        NewEvent(
            EventType.EXTRACTION_CHECKPOINT,
            ACTOR,
            ExtractionCheckpoint(conversation, tuple(report.turns)),
            Cause(conversation),
        )
    )
    return events


def _note_events(
    report: PassReport, proposal: Proposal, cause: Cause, replaced: dict[NoteId, NoteId]
) -> list[NewEvent]:
    target = proposal.restates or proposal.contradicts
    while target in replaced:  # follow what this batch already put in its place
        target = replaced[target]
    if proposal.restates and target:
        report.applied.append(target)
        return [NewEvent(EventType.RESTATED, ACTOR, Restated(target, cause), cause)]
    added = note_added(draft_of(proposal), ACTOR, cause, cause.conversation)
    new_id = body_as(added.body, NoteAdded).note
    report.applied.append(new_id)
    if not (proposal.contradicts and target):
        return [added]
    replaced[target] = new_id
    closing = NewEvent(EventType.CONTRADICTED, ACTOR, Contradicted(target, new_id), cause)
    return [added, closing]


def draft_of(proposal: Proposal) -> NoteDraft:
    """The note a proposal becomes: private to the person until they say otherwise."""
    return NoteDraft(
        text=proposal.text,
        kind=proposal.kind,
        scope=Scope.UNSPECIFIED,
        durability=proposal.durability,
        confidence_bp=proposal.confidence_bp,
        topic=proposal.topic,
    )
