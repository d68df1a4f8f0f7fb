"""LangGraph's long-term memory store over one person's Engram notes (the `langgraph` extra).

    memory = EngramStore(store, person="maya", agent="helper")   # the host's trusted person
    create_manage_memory_tool(namespace=("memories",), store=memory)   # LangMem, unchanged

The person is fixed when the store is made, from the host's trusted identity (P3): no
namespace, key or value can name anyone else (C1). The items are that person's active
notes as the audience may receive them (S1, S2): the person alone, or whoever can read
the conversation the store is bound to (S3).

- Namespaces: `(*root, kind)`, root `("memories",)` unless given, e.g. ("memories",
  "fact"). A put goes to the root (the kind from the value, else fact) or to a kind's
  namespace; any other namespace holds nothing here.
- Keys (control.keyed_notes): every note answers to a UUID key, which listings show; a key
  a caller chose keeps naming the note it put, through its new versions.
- Values: {"content": text, "kind": kind, "scope": scope}; a put gives the content, and a
  kind or scope where it wants one (a new note is private, `unspecified`, by default).
- Search: memory_search's (BM25, then the ranking; the item's score is its BM25 score;
  without a query the ranking alone), over the best-ranked notes the audience may see;
  `filter` matches value fields by equality ($eq, $ne); `limit` and `offset` page. Items
  handed out by a search or a get are recorded in the usage ledger, as memory_search's are.
- Writes (control.agent_writes): the agent's configuration decides, as on every face —
  remember off refuses new notes, learning mode suggest makes candidates for review, an
  existing key makes a new version (C5), a delete closes the note (C2) — and the agent is
  the actor of every event. Each op is its own transaction, in order; a batch whose ops
  are malformed runs none of them.

A refusal is an EngramStoreError, one sentence: a LangChain ToolException, so a LangMem
tool with `handle_tool_error` on (or a ToolNode handling errors) gives it to the model.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, TypeVar

try:
    from langchain_core.tools import ToolException
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        InvalidNamespaceError,
        Item,
        ListNamespacesOp,
        MatchCondition,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
    )
except ImportError as missing:
    raise ImportError(
        "Engram's LangGraph store needs the langgraph extra: "
        "pip install 'engram-inspector[langgraph]'."
    ) from missing

from engram.control import agent_writes, keyed_notes
from engram.control import notes as memory_control
from engram.control.session import PersonSession
from engram.engine.assembly import TextNote
from engram.model.agents import AgentConfig
from engram.model.errors import EngramError, InvalidInput
from engram.model.events import Cause
from engram.model.ids import ConversationId, NoteId, PersonId, person_id
from engram.model.notes import Note
from engram.model.scope import Audience, Kind, Scope, parse_enum
from engram.runtime import agents, context, memory_tools
from engram.runtime.context import Attribution
from engram.runtime.note_writes import NoteDraft
from engram.store.store import Store

ROOT = ("memories",)
DEFAULT_KIND = Kind.FACT
VALUE_FIELDS = ("content", "kind", "scope")
FILTER_OPERATORS = ("$eq", "$ne")
USED_VIA = "store"  # the usage ledger's name for what this face handed out

E = TypeVar("E", bound=StrEnum)


class EngramStoreError(ToolException):
    """Engram refused a store operation, or could not do it; the message says why in one
    sentence. `error` is Engram's own error (None once the exception was unpickled)."""

    def __init__(self, message: str, error: EngramError | None = None) -> None:
        super().__init__(message)
        self.error = error


@contextmanager
def _refusals() -> Iterator[None]:
    try:
        yield
    except EngramError as error:
        raise EngramStoreError(str(error), error) from error


@dataclass(frozen=True, slots=True)
class _Put:
    """A put's value, checked."""

    content: str
    kind: Kind | None
    scope: Scope | None


@dataclass(frozen=True, slots=True)
class _Batch:
    """What every op of one batch shares, read once: the agent's settings as they stand."""

    session: PersonSession
    config: AgentConfig
    audience: Audience


class EngramStore(BaseStore):
    """A LangGraph BaseStore whose items are one person's Engram notes."""

    def __init__(
        self,
        store: Store,
        *,
        person: str,
        agent: str,
        namespace: tuple[str, ...] = ROOT,
        conversation: str | None = None,
    ) -> None:
        """`person`: the host's trusted identity of whom the items are; `agent`: a
        configured agent (P2) whose settings govern writes; `namespace`: the root the items
        live under; `conversation`: the Engram conversation the agent talks in, which sets
        the audience (S3) and is the source of what is written (C4)."""
        self._store = store
        self._root = _checked_root(namespace)
        with _refusals():
            self._person = person_id(person)
            self._agent = agents.require_agent(store, agent).name
            self._conversation = ConversationId(conversation) if conversation else None
            self._shared()  # the conversation exists and the person takes part in it

    @property
    def person(self) -> PersonId:
        """Whose notes the items are."""
        return self._person

    @property
    def namespace(self) -> tuple[str, ...]:
        """The root every item's namespace starts with."""
        return self._root

    # ---- LangGraph's two entry points ---------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the ops in order; none runs when any is malformed."""
        listed = list(ops)
        with _refusals():
            puts = [self._checked(op) for op in listed]
            shared = self._shared()
            return [self._run(shared, op, put) for op, put in zip(listed, puts, strict=True)]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """`batch` on a worker thread: the store's reads and writes block."""
        listed = list(ops)
        return await asyncio.to_thread(self.batch, listed)

    # ---- checking a batch before anything runs ------------------------------------------

    def _checked(self, op: Op) -> _Put | None:
        if isinstance(op, PutOp):
            return self._checked_put(op)
        if isinstance(op, SearchOp):
            _check_filter(op.filter)
            if op.limit < 0 or op.offset < 0:
                raise InvalidInput("A search's limit and offset are 0 or more.")
        elif not isinstance(op, (GetOp, ListNamespacesOp)):
            raise InvalidInput(f"{type(op).__name__} is not an operation a LangGraph store runs.")
        return None

    def _checked_put(self, op: PutOp) -> _Put | None:
        if op.value is None:
            return None  # a delete: wherever it points, it writes nothing it should not
        inside, at_kind = self._place(op.namespace)
        if not inside:
            raise InvalidInput(
                f"This store keeps {self._person}'s notes under {self._root} or "
                f"{(*self._root, 'KIND')}, not {tuple(op.namespace)}; nothing was written."
            )
        if op.ttl is not None:
            raise InvalidInput("Engram keeps a note until it is deleted; put it without a ttl.")
        unknown = sorted(set(op.value) - set(VALUE_FIELDS))
        if unknown:
            raise InvalidInput(
                f"A note's value holds content, kind and scope only, not {', '.join(unknown)}."
            )
        content = op.value.get("content")
        if not isinstance(content, str):
            raise InvalidInput("Give the note's words as text in the value's 'content'.")
        kind = _enum_field(op.value, "kind", Kind)
        if kind is not None and at_kind is not None and kind is not at_kind:
            raise InvalidInput(
                f"The value says {kind.value} but the namespace holds {at_kind.value} notes."
            )
        return _Put(content, kind or at_kind, _enum_field(op.value, "scope", Scope))

    # ---- running one op -----------------------------------------------------------------

    def _run(self, shared: _Batch, op: Op, put: _Put | None) -> Result:
        if isinstance(op, GetOp):
            return self._get(shared, op)
        if isinstance(op, SearchOp):
            return self._search(shared, op)
        if isinstance(op, ListNamespacesOp):
            return self._namespaces(shared, op)
        assert isinstance(op, PutOp)
        self._put(shared, op, put)
        return None

    def _get(self, shared: _Batch, op: GetOp) -> Item | None:
        inside, at_kind = self._place(op.namespace)
        if not inside:
            return None
        _, held = self._held(shared, op.key)
        if held is None or at_kind not in (None, held.note.kind):
            return None
        self._used(shared, [held.note.id])
        created, updated = _times(held.note)
        return Item(
            value=_value(held),
            key=op.key,
            namespace=self._namespace_of(held.note),
            created_at=created,
            updated_at=updated,
        )

    def _put(self, shared: _Batch, op: PutOp, put: _Put | None) -> None:
        keyed, held = self._held(shared, op.key)
        session, config = shared.session, shared.config
        if put is None:  # a delete of what is not there (or not here) changes nothing
            inside, at_kind = self._place(op.namespace)
            if inside and held is not None and at_kind in (None, held.note.kind):
                agent_writes.forget(session, held.note.id)
            return
        if held is None:
            draft = NoteDraft(
                put.content,
                put.kind or DEFAULT_KIND,
                put.scope or Scope.UNSPECIFIED,
                confidence_bp=agent_writes.AGENT_NOTE_CONFIDENCE_BP,
            )
            agent_writes.remember(session, config, draft, self._conversation, keyed.fresh)
            return
        if put.kind not in (None, held.note.kind):
            raise InvalidInput(
                f"Item {op.key} is a {held.note.kind.value} note and a note keeps its kind; "
                "delete it and put a new one."
            )
        agent_writes.revise(
            session, config, held.note, held.text, put.content, put.scope, self._conversation
        )

    def _search(self, shared: _Batch, op: SearchOp) -> list[SearchItem]:
        kinds = self._kinds_under(op.namespace_prefix)
        if not kinds or op.limit == 0:
            return []
        query = op.query.strip() if op.query and op.query.strip() else None
        found = memory_tools.matching_notes(self._store, self._person, shared.audience, query)
        if found is None:  # R2: a failed read never reads as "nothing kept"
            raise EngramError(
                "Engram could not read the notes just now, so nothing was searched; go on "
                "without them."
            )
        rows = [
            (score, shown)
            for score, shown in found
            if shown.note.kind in kinds and _matches(op.filter, _value(shown))
        ]
        page = rows[op.offset : op.offset + op.limit]
        self._used(shared, [shown.note.id for _, shown in page])
        items = []
        for score, shown in page:
            created, updated = _times(shown.note)
            items.append(
                SearchItem(
                    namespace=self._namespace_of(shown.note),
                    key=keyed_notes.key_of(shown.note.id),
                    value=_value(shown),
                    created_at=created,
                    updated_at=updated,
                    score=score if query else None,
                )
            )
        return items

    def _namespaces(self, shared: _Batch, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        present = context.kinds_present(self._store, self._person, shared.audience)
        spaces = sorted(self._namespace_of_kind(kind) for kind in present)
        for condition in op.match_conditions or ():
            spaces = [space for space in spaces if _does_match(condition, space)]
        if op.max_depth is not None:
            spaces = list(dict.fromkeys(space[: op.max_depth] for space in spaces))
        return spaces[op.offset : op.offset + op.limit]

    # ---- Engram underneath --------------------------------------------------------------

    def _audience(self, session: PersonSession) -> Audience:
        """Whoever can read the bound conversation (S3); with none, the host's trusted
        person alone, whose own view their session gives (control, not made here)."""
        if self._conversation is None:
            return memory_control.own_audience(session)
        where = Attribution(self._person, self._conversation)
        return context.audience_for_turn(self._store, where)

    def _shared(self) -> _Batch:
        config = agents.require_agent(self._store, self._agent)
        session = PersonSession(self._store, self._person, agent_writes.actor_of(config))
        return _Batch(session, config, self._audience(session))

    def _held(self, shared: _Batch, key: str) -> tuple[keyed_notes.KeyedNote, TextNote | None]:
        """What a key names, and that note with its text if the audience may receive it."""
        keyed = keyed_notes.resolve(shared.session, key)
        if keyed.note is None:
            return keyed, None
        shown = context.read_eligible(self._store, self._person, shared.audience, [keyed.note.id])
        return keyed, shown[0] if shown else None

    def _used(self, shared: _Batch, notes: list[NoteId]) -> None:
        cause = Cause(self._conversation) if self._conversation else None
        context.record_use(self._store, self._person, notes, USED_VIA, cause)

    # ---- namespaces ---------------------------------------------------------------------

    def _namespace_of_kind(self, kind: Kind) -> tuple[str, ...]:
        return (*self._root, kind.value)

    def _namespace_of(self, note: Note) -> tuple[str, ...]:
        return self._namespace_of_kind(note.kind)

    def _place(self, namespace: tuple[str, ...]) -> tuple[bool, Kind | None]:
        """Whether items live in `namespace`, and of which kind (None: the root, any)."""
        given, depth = tuple(namespace), len(self._root)
        if given == self._root:
            return True, None
        if len(given) == depth + 1 and given[:depth] == self._root:
            kind = _KINDS.get(given[depth])
            return kind is not None, kind
        return False, None

    def _kinds_under(self, prefix: tuple[str, ...]) -> frozenset[Kind]:
        """The kinds whose namespaces start with `prefix`."""
        given = tuple(prefix)
        if len(given) <= len(self._root):
            return frozenset(Kind) if self._root[: len(given)] == given else frozenset()
        inside, kind = self._place(given)
        return frozenset({kind}) if inside and kind is not None else frozenset()


_KINDS = {kind.value: kind for kind in Kind}


def _checked_root(namespace: tuple[str, ...]) -> tuple[str, ...]:
    root = tuple(namespace)
    if not root or root[0] == "langgraph":
        raise InvalidNamespaceError(f"{root} cannot be a store's namespace; try {ROOT}.")
    for label in root:
        if not isinstance(label, str) or not label or "." in label or "\0" in label:
            raise InvalidNamespaceError(
                f"{label!r} cannot be a namespace label: labels are non-empty text without periods."
            )
    return root


def _enum_field(value: Mapping[str, Any], field: str, enum: type[E]) -> E | None:
    given = value.get(field)
    if given is None:
        return None
    if not isinstance(given, str):
        raise InvalidInput(f"Give the note's {field} as text.")
    return parse_enum(enum, given, field)


def _value(shown: TextNote) -> dict[str, Any]:
    return {"content": shown.text, "kind": shown.note.kind.value, "scope": shown.note.scope.value}


def _times(note: Note) -> tuple[datetime, datetime]:
    """When this version began, and when it last changed (scope changes, restatements)."""
    return note.valid_from, max([note.valid_from, *(change.at for change in note.changes)])


def _check_filter(given: dict[str, Any] | None) -> None:
    for field, wanted in (given or {}).items():
        if isinstance(wanted, dict):
            odd = sorted(set(wanted) - set(FILTER_OPERATORS))
            if odd:
                raise InvalidInput(
                    f"This store filters {field} by equality ($eq, $ne) only, not {odd[0]}."
                )


_OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "$eq": lambda held, wanted: held == wanted,
    "$ne": lambda held, wanted: held != wanted,
}


def _matches(given: dict[str, Any] | None, value: dict[str, Any]) -> bool:
    """LangGraph's filter on a value: every field as given, or every operator on it holds;
    a field the value lacks never matches."""
    for field, wanted in (given or {}).items():
        if field not in value:
            return False
        tests = wanted.items() if isinstance(wanted, dict) else [("$eq", wanted)]
        if not all(_OPERATORS[op](value[field], operand) for op, operand in tests):
            return False
    return True


def _does_match(condition: MatchCondition, space: tuple[str, ...]) -> bool:
    """LangGraph's namespace match: a prefix or a suffix, "*" matching any one label."""
    path = tuple(condition.path)
    if len(space) < len(path):
        return False
    ends = (
        space[: len(path)] if condition.match_type == "prefix" else space[len(space) - len(path) :]
    )
    return all(want in ("*", got) for want, got in zip(path, ends, strict=True))
