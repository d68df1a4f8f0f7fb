"""Starting conversations and appending turns to their signed logs."""

from __future__ import annotations

from collections.abc import Sequence

from engram.engine.exchanges import exchanges, waiting
from engram.engine.scope import audience_for
from engram.model.conversation import ConversationInfo, EntryKind, LogEntry, Surface, TurnStatus
from engram.model.errors import InvalidInput, NotAllowed, NotFound
from engram.model.ids import CallId, ConversationId, PersonId, TurnId, new_call_id, new_turn_id
from engram.model.scope import Audience
from engram.store import conversation_log, journal, pending_erasure, projection_state
from engram.store.store import Store, WriteTxn

MAX_TURN_CHARS = 200_000
# What a transcript shows: not the log's opening, nor the host's marks that an exchange is
# complete (they hold nothing to read; learning reads them, engine.exchanges).
TRANSCRIPT_KINDS = tuple(
    k for k in EntryKind if k not in (EntryKind.CREATED, EntryKind.EXCHANGE_END)
)


def start_conversation(
    store: Store,
    participants: Sequence[PersonId],
    *,
    surface: Surface = Surface.CHAT,
    incognito: bool = False,
    agent: str | None = None,
) -> ConversationInfo:
    """Start a conversation; participants are everyone who can read it (S3)."""
    if not participants:
        raise InvalidInput("A conversation needs at least one participant.")
    with store.write() as txn:
        for person in participants:
            journal.ensure_person(store, txn, person)
        return conversation_log.create(
            store, txn, participants, surface=surface, incognito=incognito, agent=agent
        )


def require_conversation(store: Store, conversation: ConversationId) -> ConversationInfo:
    """The conversation, or a one-sentence NotFound."""
    with store.read() as conn:
        info = conversation_log.get(conn, conversation)
    if info is None:
        raise no_such_conversation(conversation)
    return info


def no_such_conversation(conversation: ConversationId) -> NotFound:
    """The error for a conversation id the store does not hold (or no longer holds)."""
    return NotFound(f"There is no conversation {conversation!r} in this store.")


class ConversationGone(NotFound):
    """A conversation the person took part in was deleted."""


def conversation_of(
    store: Store, person: PersonId, conversation: ConversationId
) -> ConversationInfo:
    """A conversation the person takes part in. One that is not theirs is refused in the
    same words as one that does not exist, so its id reveals nothing; one of theirs that
    was deleted says so."""
    with store.read() as conn:
        info = conversation_log.get(conn, conversation)
        if info is None and conversation in projection_state.deleted_conversations(conn, person):
            raise ConversationGone(
                f"Conversation {conversation} was deleted; nothing more can be added to or "
                "read from it."
            )
    if info is None or person not in info.participants:
        raise NotFound(f"There is no conversation {conversation!r} for {person}.")
    return info


def check_turn(role: str, text: str) -> EntryKind:
    """A turn's role as a log entry kind, once its role and size are known to be fine."""
    if role not in (EntryKind.USER.value, EntryKind.ASSISTANT.value):
        raise InvalidInput(f"{role!r} is not a turn role; use user or assistant.")
    if len(text) > MAX_TURN_CHARS:
        raise InvalidInput(
            f"The turn is {len(text):,} characters; the most one turn may hold is "
            f"{MAX_TURN_CHARS:,}."
        )
    return EntryKind(role)


def check_speaker(info: ConversationInfo, kind: EntryKind, author: str) -> None:
    """Only a participant speaks as the user (S3)."""
    if kind is EntryKind.USER and author not in info.participants:
        raise NotAllowed(
            f"{author!r} is not a participant of conversation {info.id}; only "
            "participants speak as the user."
        )


def append_turn(
    store: Store,
    conversation: ConversationId,
    *,
    role: str,
    author: str,
    text: str,
    status: TurnStatus = TurnStatus.COMMITTED,
) -> TurnId:
    """Append a user or assistant turn; returns its turn id."""
    kind = check_turn(role, text)
    check_speaker(require_conversation(store, conversation), kind, author)
    turn = new_turn_id()
    with store.write() as txn:
        conversation_log.append_entry(
            store,
            txn,
            conversation,
            kind,
            ref=turn,
            author=author,
            status=status.value,
            text=text,
        )
    return turn


def complete_exchange(store: Store, conversation: ConversationId, author: str = "host") -> bool:
    """The host marks the exchange under way complete though no reply was logged (it logs
    only the person's turns), so its user turns may be learned from (P4). False, and
    nothing written, when no exchange waits for a reply (none yet, already complete, or
    its reply failed or was cancelled: a failed exchange teaches nothing)."""
    require_conversation(store, conversation)
    with store.write() as txn:
        found = exchanges(
            conversation_log.unprocessed_exchange_entries(txn.conn, conversation, None)
        )
        if not found or not waiting(found[-1]):
            return False
        conversation_log.append_entry(
            store, txn, conversation, EntryKind.EXCHANGE_END, author=author
        )
    return True


def turns(store: Store, conversation: ConversationId) -> list[tuple[LogEntry, str | None]]:
    """Every user and assistant turn with its text (None where removed)."""
    return [
        (entry, text)
        for entry, text in transcript(store, conversation)
        if entry.kind in (EntryKind.USER, EntryKind.ASSISTANT)
    ]


def transcript(
    store: Store, conversation: ConversationId, after: int = 0, limit: int | None = None
) -> list[tuple[LogEntry, str | None]]:
    """Turns, tool calls, tool results and excision notices (with their reasons), in order
    (those after log position `after`, at most `limit` log entries); None where a payload
    was removed."""
    with store.read() as conn:
        entries = conversation_log.entries(conn, conversation, after, limit, TRANSCRIPT_KINDS)
        texts = conversation_log.entry_texts(store, conn, conversation, [e.seq for e in entries])
    return [(entry, texts[entry.seq]) for entry in entries]


def conversations_of(store: Store, person: PersonId) -> list[ConversationInfo]:
    """A person's conversations, oldest first."""
    with store.read() as conn:
        journal.require_person(conn, person)
        return conversation_log.for_person(conn, person)


def opening_words(store: Store, conversations: Sequence[ConversationId]) -> dict[str, str]:
    """The first words of each conversation (its first turn that still has text), to show
    a conversation by what it was about rather than by its id."""
    found: dict[str, str] = {}
    with store.read() as conn:
        for conversation in conversations:
            turns = [
                e
                for e in conversation_log.entries(conn, conversation)
                if e.kind in (EntryKind.USER, EntryKind.ASSISTANT)
            ][:3]
            texts = conversation_log.entry_texts(store, conn, conversation, [e.seq for e in turns])
            for entry in turns:
                text = texts.get(entry.seq)
                if text:
                    found[conversation] = " ".join(text.split())
                    break
    return found


def audience_of(info: ConversationInfo, subject: PersonId) -> Audience:
    """Who reads this conversation, relative to the subject (S3)."""
    return audience_for(subject, info)


def record_tool_call(
    store: Store,
    conversation: ConversationId,
    *,
    name: str,
    arguments: str,
    result: str,
    author: str = "assistant",
    status: str = "ok",
) -> CallId:
    """Record a tool call and its result (both sealed); returns the call id."""
    check_tool_call(name, arguments, result)
    require_conversation(store, conversation)
    call = new_call_id()
    with store.write() as txn:
        append_tool_call(
            store, txn, conversation, call, name, arguments, result, author=author, status=status
        )
    return call


def check_tool_call(name: str, arguments: str, result: str) -> None:
    """A tool call needs a name, and neither its arguments nor its result may be too long."""
    if not name.strip():
        raise InvalidInput("A tool call needs a tool name.")
    for text, what in ((arguments, "arguments"), (result, "result")):
        if len(text) > MAX_TURN_CHARS:
            raise InvalidInput(
                f"The tool {what} are {len(text):,} characters; at most {MAX_TURN_CHARS:,}."
            )


def append_tool_call(
    store: Store,
    txn: WriteTxn,
    conversation: ConversationId,
    call: CallId,
    name: str,
    arguments: str,
    result: str,
    *,
    author: str,
    status: str,
) -> LogEntry:
    """Inside a write: the call and its result, two entries under one call id."""
    called = conversation_log.append_entry(
        store,
        txn,
        conversation,
        EntryKind.TOOL_CALL,
        ref=call,
        author=author,
        body={"name": name},
        text=arguments,
    )
    conversation_log.append_entry(
        store,
        txn,
        conversation,
        EntryKind.TOOL_RESULT,
        ref=call,
        author=author,
        status=status,
        body={"name": name},
        text=result,
    )
    return called


def excise_tool_result(
    store: Store, conversation: ConversationId, call: str, *, actor: str, reason: str
) -> None:
    """An administrator removes a tool result's content; the chain keeps its place (H4, H5)."""
    if not reason.strip():
        raise InvalidInput(
            "Say why the tool result is removed; a reason is required.",
            cli_message="Say why the tool result is removed: --reason is required.",
        )
    require_conversation(store, conversation)
    with store.write() as txn:
        entries = conversation_log.entries(txn.conn, conversation)
        result = next(
            (e for e in entries if e.kind is EntryKind.TOOL_RESULT and e.ref == call), None
        )
        if result is None:
            raise NotFound(f"There is no tool call {call!r} in conversation {conversation}.")
        if any(
            e.kind is EntryKind.EXCISION and result.seq in e.body.get("excised", [])
            for e in entries
        ):
            raise NotAllowed(f"The result of {call} was already removed.")
        conversation_log.excise(
            store, txn, conversation, [result.seq], actor, reason, body={"call": call}
        )
    pending_erasure.finish_or_raise(store, f"The result of {call} was removed")
