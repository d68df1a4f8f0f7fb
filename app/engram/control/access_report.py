"""A person's access report: everything kept about them, as the document a data-access
request deserves (issue 17 item 14). Qt-free: it builds a ReportDocument (sections of
unsplittable blocks) that the inspector prints to PDF and the CLI can write too.

Page 1 is a summary (counts by kind and scope, what is shared and with whom, what was
erased); page 2 says plainly how to ask for a correction or an erasure and how to check
the document. Then every note — its text, kind, scope in words, validity, where it came
from, every turn, audience and agent it was disclosed to (the usage ledger), its history —
every conversation as kept (removed parts marked), the suggested notes, the profile and
digest, the audit log, and the integrity check. Actors are words, times are local with
their zone; ids appear only in the appendix, so the person can quote them to staff.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import datetime, tzinfo
from typing import Any

from engram.control import candidates as candidate_control
from engram.control import notes as memory_control
from engram.control.audit_sentences import describe
from engram.control.report_document import Block, Counts, ReportDocument, Section, Tone
from engram.control.report_pages import rights_section, summary_section
from engram.control.report_signature import key_fingerprint
from engram.control.report_transcripts import Conversations, transcript
from engram.control.report_words import (
    KIND_WORDS,
    SCOPE_SHORT,
    SCOPE_WORDS,
    actor_words,
    agent_words,
    local_time,
    readers_words,
    use_words,
)
from engram.control.session import PersonSession
from engram.control.verify_process import VerifyStopped, verify_in_child
from engram.control.views import NoteView
from engram.control.wording import counted, verb
from engram.engine.scope import audience_for
from engram.model.event_bodies import ConversationDeleted, body_as
from engram.model.events import Event, EventType
from engram.model.ids import PersonId
from engram.model.notes import NoteStatus, Usage
from engram.model.progress import Progress
from engram.model.release import let_go
from engram.model.scope import Kind, Scope
from engram.store import conversation_log, erasure, journal, projection_state

QUOTED_CHARS = 60
# Events the history of a note does not list: its uses have their own list, and these
# name no note.
_NOT_HISTORY = {EventType.ITEM_USED, EventType.EXTRACTION_CHECKPOINT}

STATUS_WORDS = {
    NoteStatus.ACTIVE: "holds now",
    NoteStatus.CONTRADICTED: "no longer holds: something newer contradicted it",
    NoteStatus.CORRECTED: "no longer holds: it was corrected",
    NoteStatus.DELETED: "deleted",
    NoteStatus.RETIRED: "no longer holds: it was short-lived and its time ran out",
    NoteStatus.MERGED: "no longer holds: merged into another note",
    NoteStatus.REMOVED: "removed as a duplicate",
}

# Short rows travel in small groups: each group is one block, so a row is still never
# split across pages, and 100,000 notes lay out in a tenth of the blocks.
AUDIT_ROWS = 10
REFERENCE_ROWS = 25

Cancelled = Callable[[], bool]


def grouped(lines: list[str], size: int, tone: Tone) -> tuple[Block, ...]:
    """Rows as blocks of `size` rows each."""
    return tuple(
        Block(lines=tuple(lines[i : i + size]), tone=tone) for i in range(0, len(lines), size)
    )


class ReportCancelled(Exception):
    """The report was asked to stop (a lock in the inspector): nothing is written."""


def build_report(
    session: PersonSession,
    zone: tzinfo | None = None,
    progress: Progress | None = None,
    cancelled: Cancelled | None = None,
) -> ReportDocument:
    """Everything kept about the session's person, with a fresh verify of the store.
    `zone` is the reader's time zone (None: this machine's). ReportCancelled when
    `cancelled` says stop."""
    stop = cancelled or (lambda: False)
    store, person = session.store, session.person
    views = memory_control.all_notes(session)
    if stop():
        raise ReportCancelled
    known = Conversations()
    conversation_blocks: list[Block] = []
    with store.read() as conn:
        infos = conversation_log.for_person(conn, person)
        for number, info in enumerate(infos, 1):
            known.infos[info.id], known.number[info.id] = info, number
        for number, info in enumerate(infos, 1):
            if stop():
                raise ReportCancelled
            conversation_blocks += transcript(store, conn, info, number, person, zone, known)
        usage = projection_state.person_usage(conn, person)
        events = list(journal.events(conn, person))
        texts = journal.texts(store, conn, person, [e.seq for e in events if _has_text(e)])
        digest = projection_state.recent_digest(conn, person, 1 << 30)
        digest_texts = journal.texts(store, conn, person, [d.seq for d in digest])
        records = {r.get("subject"): r for r in erasure.erasure_records(conn)}
    erased = _erased(session, events, records, views, zone)
    if stop():
        raise ReportCancelled
    numbers = {str(v.note.id): n for n, v in enumerate(views, 1)}
    audit, history = _journal_lines(events, texts, views, numbers, known, person, zone)
    if stop():
        raise ReportCancelled
    note_blocks = [
        _note_block(
            v, n, usage.get(v.note.id, []), history.get(str(v.note.id), []), known, session, zone
        )
        for n, v in enumerate(views, 1)
    ]
    counts = _counts(views, usage, conversation_blocks, events, len(infos))
    try:  # in a child process: the walk's collections never stop this one's threads
        verified = verify_in_child(store, progress, stop)
    except VerifyStopped:
        raise ReportCancelled from None
    if verified.cancelled or stop():
        raise ReportCancelled
    integrity = (
        f"Checked when this report was made: all {verified.entries:,} entries of the store's "
        "signed chains and their signatures are intact, and the notes equal a replay of "
        "their history."
        if verified.ok
        else f"The integrity check found {counted(len(verified.problems), 'problem')}: "
        + " ".join(verified.problems)
    )
    made_at = local_time(store.now(), zone)
    shared = _shared_lines(views, usage, known, session)
    sections = [
        summary_section(
            person, made_at, actor_words(session.actor, person), counts, shared, integrity
        ),
        rights_section(person),
        Section(
            "Your notes",
            tuple(note_blocks) or (Block(lines=("Nothing has been kept about you.",)),),
            (
                "Every note, whether it holds now or not: closed notes are kept so their "
                "history can be checked, and are never used.",
            ),
            key="notes",
        ),
        Section(
            "Your conversations, as kept",
            tuple(conversation_blocks) or (Block(lines=("No conversations are kept.",)),),
            (
                "Every message and tool exchange kept from each conversation you took part in. "
                "Where a part was removed, a marker says so, by whom, when and why.",
            ),
            key="conversations",
        ),
        _candidates(session, zone),
        _profile(session, digest, digest_texts, known, zone),
        Section(
            "Everything that happened, oldest first",
            grouped(audit, AUDIT_ROWS, "row"),
            ("The history of your memory as its signed journal records it: when, who, what.",),
            key="audit",
        ),
        erased,
        Section(
            "Integrity",
            (Block(lines=(integrity,), tone="good" if verified.ok else "bad"),),
            key="integrity",
            new_page=False,
        ),
        _appendix(store.info.id, store.signer.verify_key, views, known),
    ]
    # What built the blocks goes a piece at a time, not in one cascade as this returns.
    let_go(views, events, texts, numbers, history, usage, note_blocks, conversation_blocks)
    return ReportDocument(
        person, f"What Engram keeps about {person}", sections, counts, store.info.id, made_at
    )


def _journal_lines(
    events: list[Event],
    texts: dict[int, str | None],
    views: list[NoteView],
    numbers: dict[str, int],
    known: Conversations,
    person: PersonId,
    zone: tzinfo | None,
) -> tuple[list[str], dict[str, list[str]]]:
    """Every journal event as a line in words (the audit log), and, per note, the lines
    of the events that name it (its history). Notes are named by number and words."""
    words = {str(v.note.id): v.text for v in views}

    def quoted(note: str) -> str:
        if note not in numbers:
            return "a note no longer kept"
        text = words.get(note)
        if text is None:
            return f"note {numbers[note]} (its words were erased)"
        short = text if len(text) <= QUOTED_CHARS else text[: QUOTED_CHARS - 1].rstrip() + "…"
        return f"note {numbers[note]} “{short}”"

    history: dict[str, list[str]] = {}
    audit: list[str] = []
    for event in events:
        said = describe(event, quoted, quoted)
        if event.type is EventType.CONVERSATION_DELETED:
            deleted = body_as(event.body, ConversationDeleted)
            said = f"deleted {known.name(deleted.conversation, zone)}"
        reason = texts.get(event.seq)
        line = f"{local_time(event.at, zone)} · {actor_words(event.actor, person)}: {said}"
        if reason and event.type is EventType.DELETED:
            line += f" (reason given: “{reason}”)"
        if event.cause is not None and event.cause.conversation:
            line += f", during {known.turn(event.cause.conversation, event.cause.turn, zone)}"
        audit.append(line)
        if event.type not in _NOT_HISTORY:
            for value in event.body.named_notes():
                if value in numbers:
                    history.setdefault(value, []).append(line)
    return audit, history


def _erased(
    session: PersonSession,
    events: list[Event],
    records: dict[Any, dict[str, Any]],
    views: list[NoteView],
    zone: tzinfo | None,
) -> Section:
    """What was erased: each deleted conversation (when, by whom, what it closed, the rows
    the store's content-free erasure record counts), the deleted notes, and the notes whose
    words went with their conversation."""
    person, blocks = session.person, []
    for event in events:
        if event.type is not EventType.CONVERSATION_DELETED:
            continue
        gone = body_as(event.body, ConversationDeleted)
        closed = len(gone.closed)
        record = records.get(session.store.hidden_name(gone.conversation))
        rows = sum(int(n) for n in record.get("rows", {}).values()) if record else None
        lines = [
            f"Its text and its keys were destroyed; {counted(closed, 'note')} learned from it "
            f"{verb(closed, 'was', 'were')} closed."
        ]
        if rows is not None:
            lines.append(f"The store's erasure record counts {counted(rows, 'row')} deleted.")
        blocks.append(
            Block(
                f"A conversation deleted on {local_time(event.at, zone)} by "
                f"{actor_words(event.actor, person)}",
                lines=tuple(lines),
                tone="note",
            )
        )
    deleted = [n for n, v in enumerate(views, 1) if v.note.status is NoteStatus.DELETED]
    wordless = [n for n, v in enumerate(views, 1) if v.text is None]
    if deleted:
        blocks.append(
            Block(
                lines=(
                    f"Deleted notes (closed, never used again): "
                    f"{', '.join(f'note {n}' for n in deleted)}.",
                )
            )
        )
    if wordless:
        blocks.append(
            Block(
                lines=(
                    "Notes whose words were erased with their conversation: "
                    f"{', '.join(f'note {n}' for n in wordless)}.",
                )
            )
        )
    return Section(
        "What was erased",
        tuple(blocks) or (Block(lines=("Nothing about you has been erased.",)),),
        key="erased",
    )


def _has_text(event: Event) -> bool:
    return event.type in (EventType.DELETED, EventType.DIGEST_LINE_ADDED)


def _note_block(
    view: NoteView,
    number: int,
    uses: list[Usage],
    history: list[str],
    known: Conversations,
    session: PersonSession,
    zone: tzinfo | None,
) -> Block:
    note, person = view.note, session.person
    held = (
        f"since {local_time(note.valid_from, zone)}"
        if note.valid_to is None
        else f"from {local_time(note.valid_from, zone)} to {local_time(note.valid_to, zone)}"
    )
    sources = [
        f"what was said in {known.turn(s.conversation, s.turn, zone)}" for s in note.sources
    ] or [f"written by {actor_words(note.actor, person)}"]
    facts = [
        ("Kind", KIND_WORDS[note.kind]),
        ("Scope", SCOPE_WORDS[note.scope]),
        ("Status", STATUS_WORDS.get(note.status, note.status.value)),
        ("Valid", held),
        ("Learned from", "; ".join(sources)),
        ("Confidence", f"{note.confidence_bp / 100:.0f} in 100"),
    ]
    if uses:
        lines = [f"Disclosed {counted(len(uses), 'time')}:"]
        lines += [f"• {_disclosure(u, known, session, zone)}" for u in uses]
    else:
        lines = ["Never disclosed: no agent has been given this note."]
    lines += ["History:", *(f"• {h}" for h in history)] if history else []
    text = (
        view.text if view.text is not None else "[Its words were erased with their conversation.]"
    )
    return Block(f"Note {number}: {text}", tuple(facts), tuple(lines), tone="note")


def _disclosure(
    use: Usage, known: Conversations, session: PersonSession, zone: tzinfo | None
) -> str:
    info = known.infos.get(use.conversation or "")
    agent = info.agent if info else None
    what = use_words(use.via, agent)
    where = known.turn(use.conversation, use.turn, zone)
    if info is None:
        return f"{local_time(use.at, zone)}: {what}, in {where}"
    audience = audience_for(session.person, info).kind
    readers = readers_words(info, session.person, audience)
    return f"{local_time(use.at, zone)}: {what}, in {where}; who could read the answer: {readers}"


def _counts(
    views: list[NoteView],
    usage: dict[Any, list[Usage]],
    conversation_blocks: list[Block],
    events: list[Event],
    conversations: int,
) -> Counts:
    kinds = Counter(KIND_WORDS[v.note.kind].split(" (")[0] for v in views)
    scopes = Counter(SCOPE_SHORT[v.note.scope] for v in views)
    holding = sum(1 for v in views if v.note.is_active)
    return Counts(
        by_kind=dict(sorted(kinds.items())),
        by_scope=dict(sorted(scopes.items())),
        holding=holding,
        closed=len(views) - holding,
        conversations=conversations,
        disclosures=sum(len(u) for u in usage.values()),
        removed_parts=sum(1 for b in conversation_blocks if b.tone == "removed"),
        deleted_notes=sum(1 for v in views if v.note.status is NoteStatus.DELETED),
        deleted_conversations=sum(1 for e in events if e.type is EventType.CONVERSATION_DELETED),
    )


def _shared_lines(
    views: list[NoteView],
    usage: dict[Any, list[Usage]],
    known: Conversations,
    session: PersonSession,
) -> list[str]:
    """Who received what: the agents given notes, the people who could read answers that
    used them, and how many notes may be used with anyone."""
    person = session.person
    agents: dict[str, set[str]] = {}
    readers: dict[str, set[str]] = {}
    for note, uses in usage.items():
        for use in uses:
            info = known.infos.get(use.conversation or "")
            if info is None:
                continue
            agents.setdefault(agent_words(info.agent), set()).add(str(note))
            for other in info.participants:
                if other != person:
                    readers.setdefault(other, set()).add(str(note))
    portable = sum(1 for v in views if v.note.is_active and not v.note.scope.is_private)
    lines = [
        f"{counted(portable, 'note')} that {'holds' if portable == 1 else 'hold'} now "
        f"{'is' if portable == 1 else 'are'} shared: any agent may use "
        f"{'it' if portable == 1 else 'them'} whoever reads the answer."
    ]
    lines += [
        f"{agent[0].upper()}{agent[1:]} was given {counted(len(notes), 'note')}."
        for agent, notes in sorted(agents.items())
    ]
    lines += [
        f"{other} could read answers that used {len(notes)} of your notes."
        for other, notes in sorted(readers.items())
    ]
    if not agents:
        lines.append("No note has been disclosed to any agent yet.")
    return lines


def _candidates(session: PersonSession, zone: tzinfo | None) -> Section:
    rows = []
    for c in candidate_control.list_candidates(session):
        when = (
            f"{local_time(datetime.fromisoformat(c['suggested_at']), zone)} by "
            f"{actor_words(c.get('suggested_by'), session.person)}"
            if c.get("suggested_at")
            else ""
        )
        rows.append(
            Block(
                c.get("text") or "[Its words were erased with their conversation.]",
                (
                    ("Kind", KIND_WORDS[Kind(c["kind"])]),
                    ("Scope", SCOPE_SHORT[Scope(c["scope"])]),
                    ("Decision", str(c["status"])),
                    ("Suggested", when),
                ),
                tone="note",
            )
        )
    return Section(
        "Notes suggested about you",
        tuple(rows) or (Block(lines=("None.",)),),
        ("What learning proposed to keep, and what was decided; pending ones are not used.",),
        key="candidates",
    )


def _profile(
    session: PersonSession,
    digest: list[Any],
    digest_texts: dict[int, str | None],
    known: Conversations,
    zone: tzinfo | None,
) -> Section:
    profile = memory_control.profile_document(session)
    blocks = [
        Block("Profile", lines=tuple(profile.splitlines()) or ("No profile has been built.",))
    ]
    for line in sorted(digest, key=lambda d: d.seq):
        text = digest_texts.get(line.seq) or "[erased with its conversation]"
        blocks.append(
            Block(
                lines=(
                    f"{local_time(line.at, zone)} · {known.name(line.conversation, zone)}: {text}",
                ),
                tone="row",
            )
        )
    return Section(
        "Profile and recent-conversation digest",
        tuple(blocks),
        (
            "What agents are told first about how to answer you, and one line per recent "
            "conversation.",
        ),
        key="profile",
    )


def _appendix(
    store_id: str, verify_key: bytes, views: list[NoteView], known: Conversations
) -> Section:
    blocks = [
        Block(
            "Reference numbers",
            (
                ("Store", store_id),
                ("Store signing key (fingerprint)", key_fingerprint(verify_key)),
            ),
            ("Staff can find each note and conversation by the reference below.",),
            tone="small",
        )
    ]
    references = [f"Note {n}: {v.note.id}" for n, v in enumerate(views, 1)]
    references += [f"Conversation {known.number[c]}: {c}" for c in known.infos]
    blocks += grouped(references, REFERENCE_ROWS, "small")
    return Section("Appendix: reference numbers", tuple(blocks), key="appendix")
