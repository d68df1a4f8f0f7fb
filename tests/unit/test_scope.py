"""The scope rule S1-S4 (pure) and the unscoped-accessor allow-list S5 (syntax trees)."""

from __future__ import annotations

import ast
from datetime import UTC, datetime
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from engram.engine.assembly import TextNote, assemble
from engram.engine.fold import fold
from engram.engine.recall import recall
from engram.engine.scope import audience_for, eligible_ranked, eligible_scopes, is_eligible
from engram.engine.unscoped import ALLOWED_CALLERS, unscoped_audience
from engram.model.conversation import ConversationInfo, Surface
from engram.model.events import Event
from engram.model.ids import ConversationId, PersonId
from engram.model.notes import PersonMemory
from engram.model.scope import Audience, AudienceKind, Scope
from tests.journals import PERSON, journals

APP = Path(__file__).resolve().parents[2] / "app" / "engram"
SUBJECT = PersonId("p1")


def test_S1_scopes_are_direct_unspecified_portable_and_filter_before_ranking() -> None:
    assert {s.value for s in Scope} == {"direct", "unspecified", "portable"}
    # A private note of top confidence is not merely ranked low for a shared audience:
    # it is never a candidate at all.
    from tests.unit.test_fold import _add, _events

    memory = fold(
        _events(_add("n_top", scope="direct", bp=10_000), _add("n_low", scope="portable", bp=1)),
        PersonMemory(PERSON),
    )
    assert [n.id for n in eligible_ranked(memory, Audience.shared(SUBJECT))] == ["n_low"]
    assert [n.id for n in eligible_ranked(memory, unscoped_audience(SUBJECT))] == [
        "n_top",
        "n_low",
    ]


def test_S2_private_scopes_need_the_subject_alone() -> None:
    assert eligible_scopes(unscoped_audience(SUBJECT)) == frozenset(Scope)
    for audience in (Audience.shared(SUBJECT), Audience.unknown(SUBJECT)):
        assert eligible_scopes(audience) == frozenset({Scope.PORTABLE})


@settings(max_examples=120, deadline=None)
@given(journal=journals(), kind=st.sampled_from([AudienceKind.SHARED, AudienceKind.UNKNOWN]))
def test_S2_no_private_note_ever_reaches_a_shared_audience(
    journal: list[Event], kind: AudienceKind
) -> None:
    memory = fold(journal, PersonMemory(PERSON))
    audience = Audience(kind, SUBJECT)
    ranked = eligible_ranked(memory, audience)
    assert all(not n.scope.is_private for n in ranked)
    texts = [TextNote(n, f"text-of-{n.id}") for n in ranked]
    block = assemble(texts, [], audience).block
    answer = recall(texts, [], audience, limit=25)
    from engram.engine.unscoped import unscoped_notes

    for note in unscoped_notes(memory):
        if note.scope.is_private:
            assert f"text-of-{note.id}\n" not in block + "\n"
            assert note.id not in {t.note.id for t in answer.notes}
            assert not is_eligible(note, audience)


def _conversation(readers: list[PersonId], surface: str) -> ConversationInfo:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    people = tuple(readers)
    return ConversationInfo(ConversationId("c_1"), at, Surface(surface), False, None, people)


def test_S3_audience_is_who_can_read_not_who_spoke() -> None:
    # Two readers: shared, even though only the subject spoke in the turn.
    two = _conversation([SUBJECT, PersonId("p2")], "chat")
    assert audience_for(SUBJECT, two).kind is AudienceKind.SHARED
    alone = _conversation([SUBJECT], "chat")
    assert audience_for(SUBJECT, alone).kind is AudienceKind.SUBJECT_ALONE
    # A channel can be read by members who never spoke.
    assert audience_for(SUBJECT, _conversation([SUBJECT], "channel")).kind is AudienceKind.SHARED
    assert audience_for(SUBJECT, _conversation([SUBJECT], "task")).kind is AudienceKind.UNKNOWN


def test_S4_where_a_note_was_learned_does_not_decide_its_scope() -> None:
    from tests.unit.test_fold import _add, _events

    # A direct note learned in a shared conversation is still private...
    memory = fold(_events(_add("n_1", "c_shared", scope="direct")), PersonMemory(PERSON))
    assert eligible_ranked(memory, Audience.shared(SUBJECT)) == []
    # ...and reaches the subject alone in any other conversation.
    assert [n.id for n in eligible_ranked(memory, unscoped_audience(SUBJECT))] == ["n_1"]


# ---- S5 ------------------------------------------------------------------------------------


def _accessor(name: str) -> bool:
    """The accessor family: `unscoped_notes` and every `unscoped_*` read beside it."""
    return name.startswith("unscoped_")


# Where the accessor family is defined (infrastructure), not called: the store's note reads
# and whole-memory reads (projection_memory compares every stored note with a replay).
DEFINERS = {
    "engram.engine.unscoped",
    "engram.store.projection_notes",
    "engram.store.projection_memory",
}
# Private note storage may be read only by the model, the accessor and the scope rule.
PRIVATE_READERS = {"engram.model.notes", "engram.engine.unscoped", "engram.engine.scope"}


def _modules() -> list[tuple[str, ast.Module]]:
    found = []
    for path in sorted(APP.rglob("*.py")):
        parts = path.relative_to(APP.parent).with_suffix("").parts
        name = ".".join(p for p in parts if p != "__init__")
        found.append((name, ast.parse(path.read_text("utf-8"), str(path))))
    return found


def accessor_callers(modules: list[tuple[str, ast.Module]]) -> dict[str, set[str]]:
    """Module -> accessor names it references, and modules touching `_notes`."""
    uses: dict[str, set[str]] = {}
    for name, tree in modules:
        for node in ast.walk(tree):
            hit = None
            if isinstance(node, ast.Name) and _accessor(node.id):
                hit = node.id
            elif isinstance(node, ast.Attribute) and (
                _accessor(node.attr) or node.attr == "_notes"
            ):
                hit = node.attr
            elif isinstance(node, ast.ImportFrom):
                hit = next((a.name for a in node.names if _accessor(a.name)), None)
            elif (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and (_accessor(node.value) or node.value == "_notes")
            ):
                hit = node.value  # getattr(memory, "_notes"), getattr(m, "unscoped_notes")
            if hit:
                uses.setdefault(name, set()).add(hit)
    return uses


def test_S5_only_five_modules_call_the_unscoped_accessor() -> None:
    assert len(ALLOWED_CALLERS) == 5
    uses = accessor_callers(_modules())
    offenders = {
        module: names
        for module, names in uses.items()
        if (names - {"_notes"} and module not in ALLOWED_CALLERS | DEFINERS)
        or ("_notes" in names and module not in PRIVATE_READERS)
    }
    assert offenders == {}
    assert "engram.control.notes" in uses  # the check does see real callers


def test_S5_the_check_fails_on_a_new_caller() -> None:
    rogue = ast.parse("from engram.engine.unscoped import unscoped_notes\nunscoped_notes(m)\n")
    sneaky = ast.parse("def f(m):\n    return m._notes\n")
    uses = accessor_callers([("engram.runtime.prompting", rogue), ("engram.api.items", sneaky)])
    assert uses == {"engram.runtime.prompting": {"unscoped_notes"}, "engram.api.items": {"_notes"}}


def test_S5_the_check_catches_loading_a_memory_and_reading_a_note_from_it() -> None:
    """Issue 11 item 3: loading a person's whole memory and reading a note out of it used
    to go round the allow-list (`load_memory` + the public `get_note`). Both steps are now
    part of the accessor family, so the syntax-tree check sees either one."""
    route = ast.parse(
        "from engram.store import projection_memory\n"
        "def leak(conn, person, note):\n"
        "    memory = projection_memory.unscoped_memory(conn, person)\n"
        "    return memory.unscoped_note(note)\n"
    )
    handed = ast.parse("def leak(stored, note):\n    return stored.unscoped_memory()\n")
    sneaky = ast.parse("def leak(memory):\n    return getattr(memory, '_notes')\n")
    uses = accessor_callers(
        [("engram.runtime.a", route), ("engram.runtime.b", handed), ("engram.api.c", sneaky)]
    )
    assert uses == {
        "engram.runtime.a": {"unscoped_memory", "unscoped_note"},
        "engram.runtime.b": {"unscoped_memory"},
        "engram.api.c": {"_notes"},
    }


def test_S5_no_public_reader_hands_out_notes_outside_the_accessor_family() -> None:
    """Issue 11 item 3: a note (or a memory holding notes) leaves the store or a folded
    memory only through an `unscoped_*` accessor or a scope-filtered `eligible_*` read, so
    a new public reader cannot open a way round the check unnoticed."""
    import importlib
    import inspect
    import pkgutil
    import re

    import engram.store

    # Every module of the store's projection (projection.py and the projection_* beside it).
    projections = [
        importlib.import_module(f"engram.store.{found.name}")
        for found in pkgutil.iter_modules(engram.store.__path__)
        if found.name.startswith("projection")
    ]
    gives_notes = re.compile(r"\b(Note|PersonMemory)\b")
    readers = [
        (f"PersonMemory.{name}", member)
        for name, member in vars(PersonMemory).items()
        if callable(member) and not name.startswith("_") and name != "copy"
    ]
    readers += [
        (f"{module.__name__}.{name}", member)
        for module in projections
        for name, member in vars(module).items()
        if inspect.isfunction(member)
        and member.__module__ == module.__name__
        and not name.startswith("_")
    ]
    leaks = [
        label
        for label, member in readers
        if gives_notes.search(str(inspect.signature(member).return_annotation))
        and not label.split(".")[-1].startswith(("unscoped_", "eligible_"))
    ]
    assert leaks == []
    assert "PersonMemory.unscoped_note" in dict(readers)  # the check does see the readers
    assert "engram.store.projection_notes.unscoped_notes" in dict(readers)  # and the store's
    assert not hasattr(PersonMemory, "get_note")
    assert not any(hasattr(module, "load_memory") for module in projections)


def test_S5_maintenance_reads_no_note_itself_merge_does() -> None:
    """Issue 11 item 3: runtime.maintenance is not allow-listed; it hands the stored memory
    to engine.merge (allow-listed), which reads it."""
    uses = accessor_callers(_modules())
    assert "engram.runtime.maintenance" not in uses
    assert "unscoped_memory" in uses["engram.engine.merge"]


def test_P1_kinds_are_fact_preference_open_thread_style() -> None:
    from engram.model.scope import Kind

    assert [k.value for k in Kind] == ["fact", "preference", "open_thread", "style"]
