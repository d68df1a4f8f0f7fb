"""Turn block and recall over HTTP (issue 10 item 4), driven by httpx against a real
uvicorn server: a host that does not speak MCP gets the same block and recall as the agent
runtime, for the audience of the conversation it names (S1-S3), and the usage is recorded
as a real turn's is."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from engram.api.app import build_app
from engram.control.views import recall_json
from engram.model.ids import PersonId
from engram.runtime import api_keys
from engram.runtime.agents import set_agent
from engram.runtime.context import Attribution, assemble_turn, recall_turn
from engram.runtime.conversations import start_conversation
from engram.store.store import Store
from tests.integration.test_http_api import Client, running

BASE = "/v1/memory/agents/helper/memory"
ANA, BEN = PersonId("ana"), PersonId("ben")
PORTABLE = "Lives in Porto."
PRIVATE = "Has a sister called Rita who is ill."


@pytest.fixture
def api(store: Store) -> Iterator[Client]:
    config = {"memory": {"tools": {"remember": True}, "learning": {"mode": "suggest"}}}
    set_agent(store, "helper", config, "ops")
    _, key = api_keys.create_key(store, "backend", "ops")
    with running(build_app(store)) as base:
        client = Client(base, key)
        yield client
        client.http.close()


def _notes(api: Client) -> tuple[str, str]:
    status, portable = api(
        "POST", f"{BASE}/items", {"text": PORTABLE, "kind": "fact", "scope": "portable"}
    )
    assert status == 201
    status, private = api(
        "POST", f"{BASE}/items", {"text": PRIVATE, "kind": "fact", "scope": "direct"}
    )
    assert status == 201
    return portable["id"], private["id"]


def _vias(api: Client, note: str) -> list[tuple[str, str | None]]:
    status, usage = api("GET", f"{BASE}/items/{note}/usage")
    assert status == 200
    return [(u["via"], u["conversation"]) for u in usage["usage"]]


def test_issue10_item4_S2_a_private_note_never_reaches_a_shared_conversation(
    api: Client, store: Store
) -> None:
    portable, private = _notes(api)
    shared = start_conversation(store, [ANA, BEN], agent="helper").id

    status, block = api("POST", f"{BASE}/assemble", {"conversation": shared})
    assert status == 200
    assert PORTABLE in block["block"] and "Rita" not in json.dumps(block)
    assert [n["id"] for n in block["notes"]] == [portable]
    # The same block the agent runtime builds for that turn (a preview records nothing).
    assert block["block"] == assemble_turn(store, Attribution(ANA, shared)).block

    status, recalled = api("POST", f"{BASE}/recall", {"conversation": shared, "limit": 25})
    assert status == 200 and "Rita" not in json.dumps(recalled)
    assert [n["id"] for n in recalled["notes"]] == [portable]
    assert recalled == recall_json(recall_turn(store, Attribution(ANA, shared), limit=25))

    # Used like a real turn's notes: assembly then recall, in the shared conversation.
    assert _vias(api, portable) == [("assembly", shared), ("recall", shared)]
    assert _vias(api, private) == []


def test_issue10_item4_S1_the_person_alone_gets_their_private_notes(
    api: Client, store: Store
) -> None:
    portable, private = _notes(api)
    alone = start_conversation(store, [ANA], agent="helper").id
    status, block = api("POST", f"{BASE}/assemble", {"conversation": alone})
    assert status == 200 and PORTABLE in block["block"] and PRIVATE in block["block"]
    status, recalled = api("POST", f"{BASE}/recall", {"conversation": alone})
    assert status == 200 and recalled["status"] == "ok"
    assert {n["id"] for n in recalled["notes"]} == {portable, private}
    assert _vias(api, private) == [("assembly", alone), ("recall", alone)]


def test_issue10_item4_C1_the_person_comes_from_the_header_and_must_take_part(
    api: Client, store: Store
) -> None:
    portable, _ = _notes(api)
    api("POST", f"{BASE}/items", {"text": "Lives in Faro.", "kind": "fact"}, person="ben")
    api("POST", f"{BASE}/items", {"text": "Lives in Braga.", "kind": "fact"}, person="carl")
    shared = start_conversation(store, [ANA, BEN], agent="helper").id

    # Ben in the same conversation gets Ben's memory, never Ana's.
    status, block = api("POST", f"{BASE}/assemble", {"conversation": shared}, person="ben")
    assert status == 200 and "Porto" not in block["block"] and "Rita" not in block["block"]

    for path in ("assemble", "recall"):
        status, refused = api("POST", f"{BASE}/{path}", {"conversation": shared}, person="carl")
        assert status == 403 and "not a participant" in refused["error"]
        assert refused["error"].count(". ") == 0  # one sentence
        status, missing = api("POST", f"{BASE}/{path}", {"conversation": "c_nosuchthing"})
        assert status == 404 and "c_nosuchthing" in missing["error"]
        status, named = api("POST", f"{BASE}/{path}", {"conversation": shared, "person": "ben"})
        assert status == 400 and "never from the body" in named["error"]
        assert api("POST", f"{BASE}/{path}", {})[0] == 400
    assert api("POST", f"{BASE}/recall", {"conversation": shared, "limit": 0})[0] == 400
    assert api("POST", f"{BASE}/recall", {"conversation": shared, "limit": "3"})[0] == 400
    bens_own = start_conversation(store, [BEN], agent="helper").id
    status, refused = api("POST", f"{BASE}/recall", {"conversation": bens_own})
    assert status == 403 and "ana is not a participant" in refused["error"]
    assert _vias(api, portable) == []  # nothing refused was recorded as used
