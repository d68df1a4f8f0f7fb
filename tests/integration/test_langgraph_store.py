"""Issue 16 item 4: the LangGraph BaseStore over a person's notes, with the real LangGraph
and LangMem (no model: LangMem's tools are invoked with arguments, as an agent would).

The person is the host's (P3, C1); writes take every face's path and agent policy (P2,
P5, C2, C5); what the store hands out obeys the scope rule for its audience (S1-S3).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langgraph.config import get_store
from langgraph.func import entrypoint
from langgraph.store.base import GetOp, PutOp, SearchOp
from langmem import create_manage_memory_tool, create_search_memory_tool

from engram.adapters.langgraph import EngramStore, EngramStoreError
from engram.control import candidates, forensics
from engram.control import notes as memory_control
from engram.control.keyed_notes import derived_id, key_of
from engram.control.session import PersonSession
from engram.model.errors import InvalidInput, NotAllowed
from engram.model.ids import NoteId, PersonId
from engram.model.notes import NoteStatus
from engram.model.scope import Kind, Scope
from engram.runtime.agents import set_agent
from engram.runtime.conversations import start_conversation
from engram.store.store import Store

ANA, BEN = PersonId("ana"), PersonId("ben")
TOOLS = {"search": True, "remember": True, "update": True, "forget": True}
WRITES = {"memory": {"tools": TOOLS}}
SUGGESTS = {"memory": {"tools": TOOLS, "learning": {"mode": "suggest"}}}
READS_ONLY = {"memory": {"tools": {"search": True}}}
ROOT = ("memories",)


def _memory(store: Store, settings: dict[str, Any] = WRITES, **where: Any) -> EngramStore:
    set_agent(store, "helper", settings, "staff:ops")
    return EngramStore(store, person=where.pop("person", ANA), agent="helper", **where)


def _session(store: Store, person: PersonId = ANA) -> PersonSession:
    return PersonSession(store, person, "staff:ops")


def _add(store: Store, text: str, kind: Kind, scope: Scope, person: PersonId = ANA) -> NoteId:
    """A note the person wrote themself (in the inspector)."""
    return memory_control.add_note(_session(store, person), text, kind, scope, create_person=True)


def _texts(store: Store, person: PersonId = ANA) -> list[str]:
    return sorted(str(v.text) for v in memory_control.list_notes(_session(store, person)))


def test_item4_put_get_search_delete_round_trip_C5_C2(store: Store) -> None:
    memory = _memory(store)
    memory.put(ROOT, "home", {"content": "Lives in Grenoble."})
    item = memory.get(ROOT, "home")
    assert item is not None and item.key == "home"
    assert item.value == {"content": "Lives in Grenoble.", "kind": "fact", "scope": "unspecified"}
    assert item.namespace == ("memories", "fact")
    assert memory.get(("memories", "fact"), "home") == item
    assert memory.get(("memories", "preference"), "home") is None  # not that kind's

    memory.put(ROOT, "home", {"content": "Lives in Lyon."})  # C5: a new version
    (note,) = memory_control.list_notes(_session(store))
    assert note.text == "Lives in Lyon."
    shown = memory_control.show_note(_session(store), note.note.id)
    assert [(v["text"], v["status"]) for v in shown["versions"]] == [
        ("Lives in Grenoble.", "corrected"),
        ("Lives in Lyon.", "active"),
    ]
    assert memory.get(ROOT, "home").value["content"] == "Lives in Lyon."  # type: ignore[union-attr]
    memory.put(ROOT, "home", {"content": "Lives in Lyon."})  # the same words: no new version
    assert len(memory_control.show_note(_session(store), note.note.id)["versions"]) == 2

    (found,) = memory.search(ROOT, query="where does she live in lyon")
    # the BM25 score of the one note holding "live" and "lyon" (issue 18 item 14)
    assert found.key == key_of(note.note.id) and found.score is not None and found.score > 0
    assert memory.get(ROOT, found.key) is not None  # a listing's key names the note too

    memory.delete(ROOT, "home")  # C2: closed, the record stays
    assert memory.get(ROOT, "home") is None and memory.search(ROOT, query="lyon") == []
    every = memory_control.list_notes(_session(store), include_closed=True)
    assert {v.note.status for v in every} == {NoteStatus.CORRECTED, NoteStatus.DELETED}
    memory.delete(ROOT, "home")  # deleting what is gone changes nothing
    memory.put(ROOT, "home", {"content": "Lives in Porto."})  # the key's next generation
    assert memory.get(ROOT, "home").value["content"] == "Lives in Porto."  # type: ignore[union-attr]
    assert _texts(store) == ["Lives in Porto."]


def test_item4_values_kinds_and_scopes_and_what_is_refused(store: Store) -> None:
    memory = _memory(store)
    memory.put(("memories", "preference"), "tea", {"content": "Likes green tea."})
    memory.put(ROOT, "job", {"content": "Works at a bakery.", "kind": "fact", "scope": "portable"})
    assert memory.get(ROOT, "tea").value["kind"] == "preference"  # type: ignore[union-attr]
    assert memory.get(ROOT, "job").value["scope"] == "portable"  # type: ignore[union-attr]
    refusals = [
        (("memories", "fact"), {"content": "x", "kind": "style"}, "namespace holds fact"),
        (ROOT, {"content": "x", "tags": ["a"]}, "content, kind and scope only"),
        (ROOT, {"content": {"name": "Ana"}}, "words as text"),
        (ROOT, {"content": "x", "scope": "public"}, "not a scope"),
        (("elsewhere",), {"content": "x"}, "nothing was written"),
        (("memories", "ben"), {"content": "x"}, "nothing was written"),
    ]
    for namespace, value, said in refusals:
        with pytest.raises(EngramStoreError, match=said) as refused:
            memory.put(namespace, "other", value)
        assert isinstance(refused.value.error, InvalidInput)
    with pytest.raises(EngramStoreError, match="without a ttl"):
        memory.batch([PutOp(ROOT, "k", {"content": "Has a dog."}, ttl=60.0)])
    with pytest.raises(EngramStoreError, match="keeps its kind"):
        memory.put(ROOT, "tea", {"content": "Likes tea.", "kind": "fact"})
    # A batch with a malformed op runs none of its ops.
    good = PutOp(ROOT, "new", {"content": "Has a dog."})
    with pytest.raises(EngramStoreError):
        memory.batch([good, PutOp(ROOT, "bad", {"content": 3})])
    assert _texts(store) == ["Likes green tea.", "Works at a bakery."]


def test_item4_search_filter_limit_offset_and_namespaces(store: Store) -> None:
    memory = _memory(store)
    for text, kind, scope in [
        ("Likes green tea.", Kind.PREFERENCE, Scope.UNSPECIFIED),
        ("Likes black tea with milk.", Kind.PREFERENCE, Scope.PORTABLE),
        ("Drinks tea at work.", Kind.FACT, Scope.DIRECT),
    ]:
        _add(store, text, kind, scope)
    assert len(memory.search(ROOT, query="tea")) == 3
    best = memory.search(ROOT, query="green tea")[0]
    assert best.value["content"] == "Likes green tea."  # the most words in common first
    prefs = memory.search(("memories", "preference"), query="tea")
    assert {i.value["kind"] for i in prefs} == {"preference"} and len(prefs) == 2
    assert memory.search(("memories",), filter={"scope": "portable"})[0].value["content"] == (
        "Likes black tea with milk."
    )
    assert len(memory.search((), filter={"kind": {"$ne": "fact"}})) == 2
    everything = memory.search(ROOT, limit=10)
    assert [i.score for i in everything] == [None] * 3  # no query: the ranking alone
    assert memory.search(ROOT, limit=1, offset=1) == everything[1:2]
    assert memory.search(("other",), query="tea") == []
    with pytest.raises(EngramStoreError, match="equality"):
        memory.search(ROOT, filter={"kind": {"$gt": "a"}})
    assert memory.list_namespaces() == [("memories", "fact"), ("memories", "preference")]
    assert memory.list_namespaces(suffix=("fact",)) == [("memories", "fact")]
    assert memory.list_namespaces(prefix=("memories", "*"), max_depth=1) == [("memories",)]
    assert memory.list_namespaces(prefix=("other",)) == []


def test_C1_P3_another_persons_notes_are_never_visible_nor_touched(store: Store) -> None:
    """The person is fixed when the store is made; no key, namespace or value reaches
    another person's notes."""
    bens = _add(store, "Plays the cello.", Kind.FACT, Scope.PORTABLE, BEN)
    memory = _memory(store)
    memory.put(ROOT, "shared-key", {"content": "Plays the piano."})
    bens_memory = EngramStore(store, person=BEN, agent="helper")
    bens_memory.put(ROOT, "shared-key", {"content": "Sings in a choir."})

    assert [i.value["content"] for i in memory.search((), limit=100)] == ["Plays the piano."]
    assert memory.search(ROOT, query="cello choir") == []
    assert memory.get(ROOT, key_of(bens)) is None and memory.get(ROOT, bens) is None
    assert memory.get(ROOT, "shared-key").value["content"] == "Plays the piano."  # type: ignore[union-attr]
    memory.delete(ROOT, key_of(bens))
    memory.put(ROOT, key_of(bens), {"content": "Has a cat."})  # a new note of ana's own
    assert _texts(store, BEN) == ["Plays the cello.", "Sings in a choir."]
    assert _texts(store) == ["Has a cat.", "Plays the piano."]
    assert derived_id(ANA, "shared-key", 0) != derived_id(BEN, "shared-key", 0)
    with pytest.raises(EngramStoreError, match="ana's notes"):
        memory.put(("memories", "ben"), "k", {"content": "Is ben."})


def test_S1_S3_a_store_bound_to_a_shared_conversation_hands_out_no_private_note(
    store: Store,
) -> None:
    session = _session(store)
    _add(store, "Has a cello lesson on Friday.", Kind.FACT, Scope.DIRECT)
    _add(store, "Plays the cello.", Kind.FACT, Scope.PORTABLE)
    shared = start_conversation(store, [ANA, BEN], agent="helper")
    memory = _memory(store, conversation=shared.id)
    assert [i.value["content"] for i in memory.search(ROOT, query="cello")] == ["Plays the cello."]
    private_key = key_of(memory_control.list_notes(session)[-1].note.id)
    assert memory_control.list_notes(session)[-1].text == "Has a cello lesson on Friday."
    assert memory.get(ROOT, private_key) is None
    assert memory.list_namespaces() == [("memories", "fact")]
    memory.put(ROOT, "instrument", {"content": "Owns two cellos.", "scope": "portable"})
    (written,) = [v for v in memory_control.list_notes(session) if v.text == "Owns two cellos."]
    assert [s.conversation for s in written.note.sources] == [shared.id]  # the source (C4)
    alone = _memory(store)  # the person alone (the default) sees every scope
    assert len(alone.search(ROOT, query="cello cellos")) == 3


def test_R2_unreadable_notes_are_a_refusal_never_an_empty_answer(
    store: Store, store_path: Path
) -> None:
    memory = _memory(store)
    memory.put(ROOT, "k", {"content": "Plays the cello."})
    with sqlite3.connect(store_path) as raw:  # damage the sealed text behind Engram's back
        for rowid, sealed in raw.execute("select rowid, sealed from journal_payloads").fetchall():
            broken = bytearray(sealed)
            broken[-1] ^= 0xFF
            raw.execute(
                "update journal_payloads set sealed=? where rowid=?", (bytes(broken), rowid)
            )
    with pytest.raises(EngramStoreError, match="could not read the notes"):
        memory.search(ROOT, query="cello")
    with pytest.raises(EngramStoreError):
        memory.get(ROOT, "k")


def test_W7_a_store_bound_to_an_incognito_conversation_writes_nothing(store: Store) -> None:
    hidden = start_conversation(store, [ANA], agent="helper", incognito=True)
    memory = _memory(store, conversation=hidden.id)
    with pytest.raises(EngramStoreError, match="incognito"):
        memory.put(ROOT, "k", {"content": "Plays the cello."})
    assert _texts(store) == []
    with pytest.raises(EngramStoreError, match="not a participant"):
        _memory(store, conversation=start_conversation(store, [BEN]).id)


def test_P2_remember_off_refuses_new_notes_in_one_sentence_and_writes_nothing(
    store: Store,
) -> None:
    memory = _memory(store, READS_ONLY)
    with pytest.raises(EngramStoreError) as refused:
        memory.put(ROOT, "k", {"content": "Plays the cello."})
    sentence = str(refused.value)
    assert sentence == (
        "Agent 'helper' takes no new items: memory.tools.remember is off in its configuration."
    )
    assert isinstance(refused.value.error, NotAllowed)
    assert _texts(store) == [] and memory.search((), limit=10) == []
    # LangMem's tool gives the same sentence to the model as a tool error.
    manage = create_manage_memory_tool(namespace=ROOT, store=memory)
    manage.handle_tool_error = True
    call = {"type": "tool_call", "id": "call_1", "name": "manage_memory", "args": {"content": "x"}}
    answer = manage.invoke(call)
    assert isinstance(answer, ToolMessage)
    assert answer.status == "error" and answer.content == sentence
    # Correcting and deleting what is kept are never switched off (as over HTTP).
    kept = _add(store, "Plays the cello.", Kind.FACT, Scope.DIRECT)
    memory.put(ROOT, key_of(kept), {"content": "Plays the viola."})
    assert _texts(store) == ["Plays the viola."]


def test_P2_an_agent_writes_only_its_kinds(store: Store) -> None:
    narrow = {"memory": {"tools": {**TOOLS, "writableKinds": ["preference"]}}}
    memory = _memory(store, narrow)
    with pytest.raises(EngramStoreError, match="may not write fact notes"):
        memory.put(ROOT, "k", {"content": "Plays the cello."})
    memory.put(ROOT, "k", {"content": "Likes quiet mornings.", "kind": "preference"})
    assert _texts(store) == ["Likes quiet mornings."]


def test_P5_suggest_makes_a_candidate_and_the_approved_note_keeps_the_key(store: Store) -> None:
    memory = _memory(store, SUGGESTS)
    memory.put(ROOT, "k", {"content": "Plays the cello."})
    assert _texts(store) == [] and memory.get(ROOT, "k") is None
    session = _session(store)
    (pending,) = candidates.list_candidates(session, "pending")
    assert pending["text"] == "Plays the cello." and pending["suggested_by"] == "agent:helper"
    candidates.approve(session, pending["id"], 1, apply_now=True)
    assert memory.get(ROOT, "k").value["content"] == "Plays the cello."  # type: ignore[union-attr]
    memory.put(ROOT, "k", {"content": "Plays the viola."})  # a correction waits for review too
    assert _texts(store) == ["Plays the cello."]
    (correction,) = candidates.list_candidates(session, "pending")
    candidates.approve(session, correction["id"], 1, apply_now=True)
    assert memory.get(ROOT, "k").value["content"] == "Plays the viola."  # type: ignore[union-attr]
    assert _texts(store) == ["Plays the viola."]


def test_P5_automatic_mode_leaves_a_sensitive_note_for_review(store: Store) -> None:
    automatic = {"memory": {"tools": TOOLS, "learning": {"mode": "automatic"}}}
    memory = _memory(store, automatic)
    memory.put(ROOT, "a", {"content": "Plays the cello."})
    memory.put(ROOT, "b", {"content": "Her bank account number is 12345678."})
    assert _texts(store) == ["Plays the cello."]
    (pending,) = candidates.list_candidates(_session(store), "pending")
    assert pending["sensitive"] is True


def test_item4_langmem_tools_work_unchanged_and_the_inspector_sees_the_agent(
    store: Store, cli: Any
) -> None:
    memory = _memory(store)
    manage = create_manage_memory_tool(namespace=ROOT, store=memory)
    search = create_search_memory_tool(namespace=ROOT, store=memory)

    created = manage.invoke({"content": "Prefers tea over coffee."})
    made_key = created.removeprefix("created memory ")
    manage.invoke({"content": "Is learning Portuguese."})
    found = json.loads(search.invoke({"query": "tea", "limit": 5}))
    assert [f["value"]["content"] for f in found] == ["Prefers tea over coffee."]
    manage.invoke({"action": "update", "id": found[0]["key"], "content": "Prefers green tea."})
    manage.invoke({"action": "update", "id": made_key, "content": "Prefers green tea, hot."})
    assert _texts(store) == ["Is learning Portuguese.", "Prefers green tea, hot."]
    (portuguese,) = json.loads(search.invoke({"query": "portuguese"}))
    assert manage.invoke({"action": "delete", "id": portuguese["key"]}).startswith("Deleted")
    assert _texts(store) == ["Prefers green tea, hot."]

    assert len(json.loads(search.invoke({"query": "tea"}))) == 1
    session = _session(store)
    (tea,) = memory_control.list_notes(session)
    shown = memory_control.show_note(session, tea.note.id)
    assert [v["actor"] for v in shown["versions"]] == ["agent:helper"] * 3
    assert {u["via"] for u in shown["usage"]} == {"store"}  # handed out: in the ledger
    audit = forensics.audit_log(session)
    writes = [row for row in audit if row["type"] in ("note_added", "corrected", "deleted")]
    assert len(writes) == 5 and {row["actor"] for row in writes} == {"agent:helper"}
    verified = cli("verify", "--json")
    assert verified.code == 0
    assert verified.json()["ok"] is True and verified.json()["problems"] == []


def test_item4_a_graph_given_the_store_hands_it_to_its_nodes_and_to_langmem(
    store: Store,
) -> None:
    """LangMem's tools made without a store use the graph's (get_store), as in LangGraph
    apps: the EngramStore given to `entrypoint(store=…)` is the one they write to."""
    memory = _memory(store)
    manage = create_manage_memory_tool(namespace=ROOT)

    @entrypoint(store=memory)
    def remember_then_look(content: str) -> list[str]:
        manage.invoke({"content": content})
        return [item.value["content"] for item in get_store().search(ROOT, query=content)]

    assert remember_then_look.invoke("Prefers green tea.") == ["Prefers green tea."]
    assert _texts(store) == ["Prefers green tea."]


def test_item4_async_variants_and_langmem_async_tools(store: Store) -> None:
    memory = _memory(store)

    async def story() -> None:
        await memory.aput(ROOT, "k", {"content": "Lives in Grenoble."})
        item = await memory.aget(ROOT, "k")
        assert item is not None and item.value["content"] == "Lives in Grenoble."
        assert [i.key for i in await memory.asearch(ROOT, query="grenoble")] == [
            key_of(memory_control.list_notes(_session(store))[0].note.id)
        ]
        assert await memory.alist_namespaces() == [("memories", "fact")]
        got, _ = await memory.abatch([GetOp(ROOT, "k"), PutOp(ROOT, "k", None)])
        assert got is not None
        assert await memory.aget(ROOT, "k") is None
        manage = create_manage_memory_tool(namespace=ROOT, store=memory)
        search = create_search_memory_tool(namespace=ROOT, store=memory)
        await manage.ainvoke({"content": "Prefers tea."})
        found = json.loads(await search.ainvoke({"query": "tea"}))
        assert [f["value"]["content"] for f in found] == ["Prefers tea."]
        with pytest.raises(EngramStoreError, match="equality"):
            await memory.abatch([SearchOp(ROOT, filter={"kind": {"$lt": "z"}})])

    asyncio.run(story())
    assert _texts(store) == ["Prefers tea."]


def test_item4_without_the_extra_the_import_says_what_to_install() -> None:
    """The adapter needs its extra; without it the import fails with one sentence."""
    probe = (
        "import sys\n"
        "sys.modules['langgraph.store.base'] = None\n"  # as if langgraph were not installed
        "try:\n"
        "    import engram.adapters.langgraph\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    ran = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert ran.stdout.strip() == (
        "Engram's LangGraph store needs the langgraph extra: "
        "pip install 'engram-inspector[langgraph]'."
    )
