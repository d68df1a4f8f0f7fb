"""Person-wide search across every conversation a person takes part in (the inspector's).

Where the index lives — a decision: it is built in memory, after unlock, in the background,
and dies with the session. Plaintext never reaches the disk. A keyed "blind" index kept on
disk would also keep plaintext off the disk, but it still leaks which messages share words
and how often words recur, and it cannot serve pattern search. Rebuilding costs one pass of
decryption per unlock; that is the price of nothing searchable staying behind.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engram.engine.history_search import Message, MessageIndex
from engram.model.conversation import SEARCHABLE_KINDS, EntryKind
from engram.model.ids import ConversationId, PersonId
from engram.model.scope import Audience
from engram.runtime import conversations, pattern_search, search_language
from engram.runtime.history import TOOL_RESULT, TURN, match_json
from engram.store.store import Store

Progress = Callable[[int, int], None]
Cancelled = Callable[[], bool]
PERSON_PATTERN_BUDGET_S = 5.0  # a pattern over every conversation may take this long in all


@dataclass(frozen=True, slots=True)
class PersonHit:
    """One message found somewhere in the person's conversations."""

    conversation: ConversationId
    turn: str  # the message's id: a turn id, or a call id for a tool result (see `kind`)
    excerpt: str
    kind: str = TURN

    def to_json(self) -> dict[str, Any]:
        """As conversation_find's matches (H1, H3), plus the conversation it is in."""
        return {"conversation": self.conversation, **match_json(self.kind, self.turn, self.excerpt)}


@dataclass
class PersonIndex:
    """Every searchable message of one person's conversations, with an inverted index."""

    person: PersonId
    index: MessageIndex = field(default_factory=MessageIndex)
    where: dict[str, ConversationId] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict)  # tool results only; the rest are turns
    added: int = 0  # positions are never reused, so ties stay newest first

    @staticmethod
    def build(
        store: Store,
        own_view: Audience,
        progress: Progress | None = None,
        cancelled: Cancelled | None = None,
    ) -> PersonIndex:
        """Decrypt and index every conversation of the person whose own view this is (the
        inspector hands it over: control.notes.own_audience), run off the UI thread,
        stemmed in the language of the person's profile (H1)."""
        person = own_view.subject
        with store.read() as conn:
            language = search_language.own_language(store, conn, own_view)
        index = PersonIndex(person, MessageIndex(language=language))
        infos = conversations.conversations_of(store, person)
        for done, info in enumerate(infos, start=1):
            if cancelled and cancelled():
                break
            for entry, text in conversations.transcript(store, info.id):
                if entry.kind in SEARCHABLE_KINDS and text is not None and entry.ref:
                    result = entry.kind is EntryKind.TOOL_RESULT
                    index.add(info.id, entry.ref, text, kind=TOOL_RESULT if result else TURN)
            if progress:
                progress(done, len(infos))
        return index

    def add(self, conversation: ConversationId, ref: str, text: str, *, kind: str = TURN) -> None:
        """Index one message (a turn, or a tool result); its position orders ties newest
        first."""
        self.index.add(Message(ref, self.added, text))
        self.added += 1
        self.where[ref] = conversation
        if kind != TURN:
            self.kinds[ref] = kind

    def search(
        self, query: str, mode: str = "relevance", limit: int | None = 25
    ) -> tuple[list[PersonHit], bool]:
        """Relevance or a bounded pattern. No seed rule binds this search (H1 is
        conversation_find's), so relevance ranks by BM25 over the postings (issue 18 item
        14)."""
        if mode == "pattern":
            result = pattern_search.find(
                self.index.messages(), query, limit, PERSON_PATTERN_BUDGET_S
            )
        else:
            result = self.index.find_best(query, limit)
        hits = [
            PersonHit(self.where[m.turn], m.turn, m.excerpt, self.kinds.get(m.turn, TURN))
            for m in result.matches
        ]
        return hits, result.truncated
