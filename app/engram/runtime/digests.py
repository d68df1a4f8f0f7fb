"""The recent-conversation digest pass (M4): one line per conversation, once it is quiet.

After a conversation has gone quiet (no new turn for QUIET_AFTER, on the store's clock) —
or at once on `engram learn` — each participant gets one digest line for it, written
through the extractor port as a journal event (so replay reproduces it), from the turns
of its complete exchanges (P4), bounded like an extraction request (W8). Conversations
that learning leaves alone get none: incognito ones (W7), deleted or erased ones, and
those whose agent does not learn (P2). A line that touches a sensitive topic (P5) is not
written: a digest line goes into turns without anyone's review.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from engram.engine.digest import DigestRequest, DigestWriter, tidy_line
from engram.engine.exchanges import learnable_turns
from engram.engine.extraction import MAX_TURN_CHARS, MAX_TURNS, Extractor, VisibleTurn
from engram.model.conversation import ConversationInfo, EntryKind, LogEntry
from engram.model.errors import EngramError, NotAllowed, NotFound
from engram.model.ids import ConversationId, PersonId, TurnId
from engram.runtime.busy_retry import while_busy
from engram.runtime.learning_policy import HostPolicy, learning_allowed, person_lock
from engram.runtime.note_writes import digest_event, writable_conversation
from engram.runtime.sensitive_lexicon import sensitive_category
from engram.store import conversation_log, journal, people, projection_state
from engram.store.store import Store

log = logging.getLogger(__name__)

ACTOR = "extractor"  # the digest is written through the extractor port, as notes are
QUIET_AFTER = timedelta(minutes=30)


@dataclass
class DigestReport:
    """What the pass did for one person and conversation (no text: ids and reasons)."""

    person: PersonId
    conversation: ConversationId
    written: bool = False
    skipped: str | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def write_digests(
    store: Store,
    person: PersonId,
    extractor: Extractor,
    host: HostPolicy = HostPolicy(),
    quiet_after: timedelta | None = QUIET_AFTER,
    conversation: ConversationId | None = None,
) -> list[DigestReport]:
    """M4 for one person (in one conversation, if given): a line for each conversation of
    theirs that has none yet and has gone quiet (`quiet_after` None: at once)."""
    if not isinstance(extractor, DigestWriter):
        return []  # an extractor that writes no digest lines: nothing to ask
    reports: list[DigestReport] = []
    with person_lock(store, person):
        for info, turns in _due(store, person, host, quiet_after, conversation):
            report = DigestReport(person, info.id)
            try:
                _write(store, person, info, turns, extractor, report)
            except EngramError as error:
                report.error = str(error)
            reports.append(report)
    return reports


def write_all_digests(
    store: Store,
    extractor: Extractor,
    host: HostPolicy = HostPolicy(),
    quiet_after: timedelta | None = QUIET_AFTER,
) -> list[DigestReport]:
    """M4 for everyone in the store."""
    with store.read() as conn:
        everyone = people.all_ids(conn)
    reports: list[DigestReport] = []
    for person in everyone:
        reports.extend(write_digests(store, person, extractor, host, quiet_after))
    return reports


def _due(
    store: Store,
    person: PersonId,
    host: HostPolicy,
    quiet_after: timedelta | None,
    only: ConversationId | None,
) -> list[tuple[ConversationInfo, list[LogEntry]]]:
    now = store.now()
    due: list[tuple[ConversationInfo, list[LogEntry]]] = []
    with store.read() as conn:
        done = projection_state.digested_conversations(conn, person)
        deleted = projection_state.deleted_conversations(conn, person)
        listed = conversation_log.for_person(conn, person)
        for info in listed if only is None else [i for i in listed if i.id == only]:
            if info.id in done or info.id in deleted:
                continue
            if not learning_allowed(store, conn, info, host):
                continue  # W7 and P2: incognito, or an agent that does not learn
            entries = conversation_log.unprocessed_exchange_entries(conn, info.id, None)
            turns = learnable_turns(entries)
            if not turns:
                continue
            if quiet_after is not None and now - entries[-1].at < quiet_after:
                continue  # still going: its line waits until it is quiet
            due.append((info, turns))
    return due


def _write(
    store: Store,
    person: PersonId,
    info: ConversationInfo,
    turns: Sequence[LogEntry],
    writer: DigestWriter,
    report: DigestReport,
) -> None:
    newest = list(turns)[-MAX_TURNS:]
    with store.read() as conn:
        texts = conversation_log.entry_texts(store, conn, info.id, [e.seq for e in newest])
    visible = tuple(
        VisibleTurn(
            TurnId(str(e.ref)),
            e.kind.value,
            text[:MAX_TURN_CHARS],
            by_subject=e.kind is EntryKind.USER and e.author == person,
        )
        for e in newest
        if (text := texts.get(e.seq)) is not None  # an excised turn shows nothing
    )
    line = tidy_line(writer.digest_line(DigestRequest(visible))) if visible else None
    if line is None:
        report.skipped = "nothing to say about it"
        return
    if (category := sensitive_category(line)) is not None:
        report.skipped = f"the line touched a sensitive topic ({category.value}); none was kept"
        return

    def write() -> None:
        with store.write() as txn:
            journal.lock(txn, person)
            try:
                writable_conversation(txn, person, info.id)  # W4, W7: gone or incognito now
            except (NotAllowed, NotFound) as refusal:
                report.skipped = str(refusal)
                return
            if info.id in projection_state.digested_conversations(txn.conn, person):
                report.skipped = "another pass wrote its line meanwhile"
                return
            if info.id in projection_state.deleted_conversations(txn.conn, person):
                report.skipped = "the conversation was deleted"
                return
            journal.append(store, txn, person, [digest_event(info.id, line, ACTOR)])
        report.written = True

    while_busy(write)  # another program writing meanwhile is waited out
