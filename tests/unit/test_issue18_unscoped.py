"""Issue 18 item 12 (rule S5, with S2 and S3): the unscoped-read check cannot be walked around.

The S5 test (test_scope.py) goes by the accessor's names. Four other ways used to read a
person's private notes for an audience that may not receive them; each has a test here
that fails on the old code, and each is now closed by construction:

1. a widened scope set: the store's `eligible_*` reads took the scopes as a parameter, so
   `eligible_ranked(conn, person, frozenset(Scope), ...)` read every note in a shared turn;
2. a hand-made "alone" audience: `Audience.subject_alone(p)` (or `Audience(SUBJECT_ALONE,
   p)`) could be made anywhere, e.g. for a turn in a shared conversation;
3. forged readers: `audience_for(subject, [subject], "chat")` took the readers from the
   caller, so a shared conversation could be declared the subject's alone;
4. someone else's audience: reads took the person and the audience apart, so one person's
   own (every-scope) audience read another person's private notes.

Then the syntax-tree test: no agent-facing module (runtime, mcp, api, adapters, the
prompt-facing engine) reaches the unscoped accessor, makes an audience of the subject alone,
builds a conversation's readers, or reads the every-scope digest.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.control.notes import add_note, own_audience
from engram.control.session import PersonSession
from engram.engine.scope import audience_for
from engram.engine.unscoped import ALLOWED_CALLERS, unscoped_audience
from engram.model.conversation import ConversationInfo, Surface
from engram.model.errors import NotAllowed
from engram.model.ids import ConversationId, PersonId
from engram.model.scope import Audience, AudienceKind, Kind, Scope
from engram.runtime.context import Attribution, assemble_turn, audience_for_turn, read_scoped
from engram.runtime.conversations import require_conversation, start_conversation
from engram.store import journal
from engram.store.store import Store

APP = Path(__file__).resolve().parents[2] / "app" / "engram"
ANA, BEN = PersonId("ana"), PersonId("ben")


def _people(store: Store) -> None:
    with store.write() as txn:
        for person in (ANA, BEN):
            journal.ensure_person(store, txn, person)
    add_note(PersonSession(store, ANA, ANA), "Ana sees a therapist.", Kind.FACT, Scope.DIRECT)
    add_note(PersonSession(store, ANA, ANA), "Ana plays chess.", Kind.FACT, Scope.PORTABLE)
    add_note(PersonSession(store, BEN, BEN), "Ben owes money.", Kind.FACT, Scope.DIRECT)


# ---- the four walk-arounds --------------------------------------------------------------

READ_MODULES = (
    "engram.store.projection_notes",
    "engram.store.projection_state",
    "engram.engine.scope",
    "engram.runtime.context",
    "engram.runtime.search_pool",
    "engram.runtime.search_language",
    "engram.runtime.memory_tools",
)


def test_item12_walkaround_1_no_prompt_facing_read_takes_a_scope_set() -> None:
    """Issue 18 item 12 / S5: the scope filter is the audience's, not a parameter. The old
    `projection_notes.eligible_ranked(conn, person, scopes, ...)` let any caller pass every
    scope; now no read beside the unscoped accessor takes scopes at all."""
    widened = []
    for name in READ_MODULES:
        module = importlib.import_module(name)
        for label, member in vars(module).items():
            if label.startswith("_") or not inspect.isfunction(member):
                continue
            if member.__module__ != name:
                continue
            for param in inspect.signature(member).parameters.values():
                if param.name == "scopes" or "Scope]" in str(param.annotation):
                    widened.append(f"{name}.{label}({param.name})")
    assert widened == []
    # The store's read takes the audience, and a shared one never gets a private note.
    signature = inspect.signature(importlib.import_module(READ_MODULES[0]).eligible_ranked)
    assert list(signature.parameters)[:2] == ["conn", "audience"]


def test_item12_walkaround_2_an_alone_audience_cannot_be_made_by_hand() -> None:
    """Issue 18 item 12 / S2: the audience of the subject alone comes from a conversation's
    readers or the person's own view; by hand, by a copy, or onto another subject, never."""
    assert not hasattr(Audience, "subject_alone")
    with pytest.raises(NotAllowed):
        Audience(AudienceKind.SUBJECT_ALONE, ANA)
    with pytest.raises(NotAllowed):
        Audience.restricted(AudienceKind.SUBJECT_ALONE, ANA)
    with pytest.raises(NotAllowed):
        dataclasses.replace(Audience.shared(ANA), kind=AudienceKind.SUBJECT_ALONE)
    with pytest.raises(NotAllowed):
        dataclasses.replace(unscoped_audience(ANA), subject=BEN)
    assert Audience.restricted(AudienceKind.UNKNOWN, ANA).scopes == {Scope.PORTABLE}
    assert unscoped_audience(ANA).scopes == frozenset(Scope)


def test_item12_walkaround_3_readers_are_the_conversation_s_never_the_caller_s(
    store: Store,
) -> None:
    """Issue 18 item 12 / S3: in a shared conversation nobody can declare the subject alone
    by naming the readers; the audience is made from the conversation as stored."""
    _people(store)
    shared = start_conversation(store, [ANA, BEN], agent="helper")
    with pytest.raises(TypeError):
        audience_for(ANA, [ANA], "chat")  # type: ignore[call-arg, arg-type]
    info = require_conversation(store, shared.id)
    assert audience_for(ANA, info).kind is AudienceKind.SHARED
    assert audience_for_turn(store, Attribution(ANA, shared.id)).kind is AudienceKind.SHARED
    block = assemble_turn(store, Attribution(ANA, shared.id)).block
    assert "Ana plays chess." in block and "therapist" not in block


def test_item12_walkaround_4_one_person_s_audience_reads_no_one_else_s_notes(
    store: Store,
) -> None:
    """Issue 18 item 12 / C1: a read is for the audience's subject; Ana's own view handed in
    with Ben's name used to read Ben's private notes."""
    _people(store)
    ana_alone = own_audience(PersonSession(store, ANA, ANA))
    with pytest.raises(NotAllowed):
        read_scoped(store, BEN, ana_alone)
    assert {n.text for n in read_scoped(store, ANA, ana_alone).notes} == {
        "Ana sees a therapist.",
        "Ana plays chess.",
    }


@settings(max_examples=200, deadline=None)
@given(
    readers=st.lists(st.sampled_from([ANA, BEN, PersonId("cy")]), min_size=1, max_size=3),
    surface=st.sampled_from(list(Surface)),
    kind=st.sampled_from(list(AudienceKind)),
)
def test_item12_S2_only_a_conversation_read_by_the_subject_alone_opens_private_scopes(
    readers: list[PersonId], surface: Surface, kind: AudienceKind
) -> None:
    """Issue 18 item 12 / S2, S3: of every audience that can be made, only the one made from
    a chat whose sole reader is the subject may receive private notes; a hand-made audience
    of any kind never may."""
    at = datetime(2026, 1, 1, tzinfo=UTC)
    info = ConversationInfo(ConversationId("c_1"), at, surface, False, None, tuple(readers))
    made = audience_for(ANA, info)
    alone = surface is Surface.CHAT and set(readers) == {ANA}
    assert made.private_allowed is alone
    assert (Scope.DIRECT in made.scopes) is alone
    try:
        by_hand = Audience(kind, ANA)
    except NotAllowed:
        assert kind is AudienceKind.SUBJECT_ALONE
    else:
        assert by_hand.scopes == {Scope.PORTABLE}


# ---- the syntax-tree check ----------------------------------------------------------------

# Where the sealed makers of an every-scope audience live (and nowhere else may name them).
MAKERS = {"engram.model.scope", "engram.engine.scope", "engram.engine.unscoped"}
SEALED = {"_subject_alone", "_Seal", "_seal", "subject_alone"}
# The control layer's own view of a person's memory (the inspector's), and the every-scope
# digest: agent-facing code reaches neither.
OWN_VIEW = {"own_audience", "audience_as", "search_own", "unscoped_audience"}
EVERY_SCOPE_READS = {"recent_digest", "_notes"}
# Engine modules that are infrastructure of the rule, not prompt-facing.
ENGINE_NOT_PROMPT = {"engram.engine.fold", "engram.engine.merge", *MAKERS}
# Two faces that serve the person's own memory from their own session, on purpose and by
# name: the memory API's search (like its listing, the person's whole memory) and a
# LangGraph store bound to no conversation (the host's trusted person alone). They get the
# own view from control and may name nothing else here.
OWN_VIEW_FACES = {
    "engram.api.routes": {"search_own"},
    "engram.adapters.langgraph": {"own_audience"},
}


def agent_facing(module: str) -> bool:
    """Runtime, MCP, HTTP, the adapters and the prompt-facing engine."""
    if module.startswith("engram.engine."):
        return module not in ENGINE_NOT_PROMPT
    return module.startswith(("engram.runtime.", "engram.mcp.", "engram.api.", "engram.adapters."))


def _named(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value  # getattr(x, "...")
    return None


def reaches(tree: ast.Module) -> set[str]:
    """What a module names of the unscoped way: accessors, sealed makers, the own view, the
    every-scope reads; hand-made audiences and conversations; a widened scope set."""
    found: set[str] = set()
    for node in ast.walk(tree):
        name = _named(node)
        if name and (
            name.startswith("unscoped_")
            or name in SEALED | OWN_VIEW | EVERY_SCOPE_READS
            or name == "SUBJECT_ALONE"
        ):
            found.add(name)
        if isinstance(node, ast.ImportFrom):
            found |= {a.name for a in node.names if a.name in SEALED | OWN_VIEW}
            found |= {a.name for a in node.names if a.name.startswith("unscoped_")}
        if isinstance(node, ast.Call):
            called = _named(node.func)
            if called in {"Audience", "ConversationInfo"}:
                found.add(f"{called}(...)")
            if (
                called in {"frozenset", "set", "list", "tuple"}
                and node.args
                and _named(node.args[0]) == "Scope"
            ):
                found.add(f"{called}(Scope)")
    return found


def _modules() -> list[tuple[str, ast.Module]]:
    found = []
    for path in sorted(APP.rglob("*.py")):
        parts = path.relative_to(APP.parent).with_suffix("").parts
        name = ".".join(p for p in parts if p != "__init__")
        found.append((name, ast.parse(path.read_text("utf-8"), str(path))))
    return found


def offences(modules: list[tuple[str, ast.Module]]) -> dict[str, set[str]]:
    """Agent-facing modules that reach the unscoped way, and any module naming a sealed
    maker outside the makers."""
    out: dict[str, set[str]] = {}
    for name, tree in modules:
        named = reaches(tree)
        if agent_facing(name):
            bad = named - OWN_VIEW_FACES.get(name, set())
            if name in ALLOWED_CALLERS:  # runtime.extraction: learning reads every note (S5)
                bad -= {n for n in bad if n.startswith("unscoped_") and n != "unscoped_audience"}
        else:
            bad = named & SEALED if name not in MAKERS else set()
        if bad:
            out[name] = bad
    return out


def test_item12_no_agent_facing_module_reaches_the_unscoped_way() -> None:
    """Issue 18 item 12 / S5, on the syntax tree: assembly, recall, the memory tools and
    every face an agent talks to read notes only for an audience made from a real
    conversation; the every-scope view is the inspector's (control) alone."""
    modules = _modules()
    assert offences(modules) == {}
    names = dict(modules)
    assert agent_facing("engram.runtime.context") and agent_facing("engram.mcp.tools")
    assert agent_facing("engram.engine.assembly") and not agent_facing("engram.control.notes")
    # The exemptions are exactly what those faces name (so a new use there fails too).
    for face, allowed in OWN_VIEW_FACES.items():
        assert reaches(names[face]) == allowed


ROGUES = {
    "from engram.model.scope import _subject_alone\n_subject_alone(p)\n": "_subject_alone",
    "from engram.model.scope import Audience, AudienceKind\n"
    "Audience(AudienceKind.SUBJECT_ALONE, p)\n": "Audience(...)",
    "from engram.control import notes\nnotes.own_audience(session)\n": "own_audience",
    "from engram.store import projection_state\n"
    "projection_state.recent_digest(conn, p, 5)\n": "recent_digest",
    "from engram.model.conversation import ConversationInfo\n"
    "ConversationInfo(c, at, s, False, None, (p,))\n": "ConversationInfo(...)",
    "from engram.store import projection_notes\n"
    "projection_notes.eligible_ranked(conn, p, frozenset(Scope), 9)\n": "frozenset(Scope)",
    "from engram.engine.unscoped import unscoped_audience\n": "unscoped_audience",
    "getattr(memory, '_notes')\n": "_notes",
}


@pytest.mark.parametrize("source", list(ROGUES))
def test_item12_the_check_fails_on_each_way_round(source: str) -> None:
    """Each walk-around, dropped into an agent-facing module, is caught; a sealed maker is
    caught in any module outside the makers."""
    tree = ast.parse(source)
    assert ROGUES[source] in offences([("engram.runtime.rogue", tree)])["engram.runtime.rogue"]
    assert ROGUES[source] in offences([("engram.api.rogue", tree)])["engram.api.rogue"]
    if ROGUES[source] == "_subject_alone":
        assert offences([("engram.control.rogue", tree)]) == {
            "engram.control.rogue": {"_subject_alone"}
        }
