"""Issue 16 item 3: the typed Python client (engram.client) against a real `engram serve`
process — one server for the module. Sync and async clients drive a whole exchange; a
retried write records once; refusals arrive as EngramHTTPError with the server's
sentence."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import httpx
import pytest

from engram.client import AsyncEngramClient, EngramClient, EngramHTTPError
from engram.client.models import Turn
from tests.serve_process import Served, served_store

T = TypeVar("T")
UNKNOWN = "c_0000000000000000"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One `engram serve` for every test here; agent helper learns automatically."""
    folder = tmp_path_factory.mktemp("client")
    agents = {"helper": {"memory": {"learning": {"mode": "automatic"}}}}
    with served_store(folder, agents) as served:
        yield served


def _client(
    server: Served, person: str, transport: httpx.BaseTransport | None = None
) -> EngramClient:
    return EngramClient(
        server.url, key=server.key, agent="helper", person=person, transport=transport
    )


def _until(ask: Callable[[], T], seconds: float = 15) -> T:
    """Poll the server until learning (its background worker) has written something."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if found := ask():
            return found
        time.sleep(0.05)
    raise AssertionError("learning never finished")


def test_issue16_3_the_sync_client_drives_a_whole_exchange(server: Served) -> None:
    with _client(server, "ana") as memory:
        assert memory.health() is True
        chat = memory.start_conversation()
        assert chat.participants == ["ana"] and chat.surface == "chat"
        user = memory.append_turn(chat.id, "user", "I really like green tea.")
        assert (user.role, user.author) == ("user", "ana")
        reply = memory.append_turn(chat.id, "assistant", "Green tea it is.")
        assert reply.learning == "queued"
        call = memory.record_tool_call(chat.id, "shop", {"item": "tea"}, "Sencha tea, in stock.")

        items = _until(lambda: memory.items().items)
        assert [i.text for i in items] == ["Likes green tea."]
        assert items[0].sources[0].turn == user.turn_id

        block = memory.assemble(chat.id)
        assert "Likes green tea." in block.block
        assert [n.id for n in block.notes] == [items[0].id]
        recalled = memory.recall(chat.id)
        assert [n.text for n in recalled.notes] == ["Likes green tea."]

        found = memory.find(chat.id, "tea")
        assert ("turn", user.turn_id) in {(m.kind, m.turn_id) for m in found.matches}
        assert ("tool_result", call.call_id) in {(m.kind, m.call_id) for m in found.matches}
        assert memory.read_turn(chat.id, user.turn_id).text == "I really like green tea."
        assert memory.read_tool_result(chat.id, call.call_id).result == "Sencha tea, in stock."
        recent = memory.recent_turns(chat.id)
        assert [t.turn_id for t in recent.turns] == [user.turn_id, reply.turn_id]
        assert [c.call_id for c in memory.list_tool_calls(chat.id).calls] == [call.call_id]
        transcript = memory.conversation(chat.id)
        assert [e.kind for e in transcript.entries] == [
            "user",
            "assistant",
            "tool_call",
            "tool_result",
        ]
        assert [c.id for c in memory.conversations()] == [chat.id]
        assert memory.search("tea").items[0].item_id == items[0].id


def test_issue16_3_the_async_client_drives_the_same_exchange(server: Served) -> None:
    async def exchange() -> None:
        async with AsyncEngramClient(
            server.url, key=server.key, agent="helper", person="ben"
        ) as memory:
            chat = await memory.start_conversation()
            user = await memory.append_turn(chat.id, "user", "I really like black coffee.")
            await memory.append_turn(chat.id, "assistant", "Coffee it is.")
            call = await memory.record_tool_call(chat.id, "shop", {}, "Coffee, in stock.")
            deadline = time.monotonic() + 15
            while not (await memory.items()).items and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            block = await memory.assemble(chat.id)
            assert "Likes black coffee." in block.block
            recalled = await memory.recall(chat.id)
            assert [n.text for n in recalled.notes] == ["Likes black coffee."]
            found = await memory.find(chat.id, "coffee")
            assert {m.turn_id for m in found.matches} >= {user.turn_id}
            assert (await memory.read_turn(chat.id, user.turn_id)).author == "ben"
            assert (await memory.list_tool_calls(chat.id)).calls[0].call_id == call.call_id

    asyncio.run(exchange())


def test_issue16_3_the_same_idempotency_key_twice_records_one_turn(server: Served) -> None:
    with _client(server, "cleo") as memory:
        chat = memory.start_conversation()
        first = memory.append_turn(chat.id, "user", "Hello there.", idempotency_key="k-1")
        again = memory.append_turn(chat.id, "user", "Hello there.", idempotency_key="k-1")
        assert again == first
        assert [t.turn_id for t in memory.recent_turns(chat.id).turns] == [first.turn_id]
        with pytest.raises(EngramHTTPError) as other_body:
            memory.append_turn(chat.id, "user", "Something else.", idempotency_key="k-1")
        assert other_body.value.status == 422


class LosesFirstAnswer(httpx.HTTPTransport):
    """The network between host and server: the first turn POST reaches the server and is
    recorded, but its answer is lost on the way back (the connection drops)."""

    def __init__(self) -> None:
        super().__init__()
        self.keys: list[str | None] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        if request.method == "POST" and request.url.path.endswith("/turns"):
            self.keys.append(request.headers.get("Idempotency-Key"))
            if len(self.keys) == 1:
                response.read()
                response.close()
                raise httpx.ReadError("the connection dropped", request=request)
        return response


def test_issue16_3_a_retry_after_a_lost_answer_reuses_the_key_and_records_once(
    server: Served,
) -> None:
    network = LosesFirstAnswer()
    with _client(server, "dora", transport=network) as memory:
        chat = memory.start_conversation()
        turn = memory.append_turn(chat.id, "user", "Just once, please.")
        assert isinstance(turn, Turn)
        assert len(network.keys) == 2 and network.keys[0] == network.keys[1] is not None
        assert [t.turn_id for t in memory.recent_turns(chat.id).turns] == [turn.turn_id]


def test_issue16_3_an_unknown_or_foreign_conversation_is_a_404_with_the_sentence(
    server: Served,
) -> None:
    with _client(server, "ana") as ana, _client(server, "eve") as eve:
        hers = ana.start_conversation()
        eve.start_conversation()  # eve is a person of this store, just not in ana's chat
        with pytest.raises(EngramHTTPError) as unknown:
            eve.conversation(UNKNOWN)
        with pytest.raises(EngramHTTPError) as foreign:
            eve.append_turn(hers.id, "user", "Let me in.")
    assert unknown.value.status == foreign.value.status == 404
    sentence = unknown.value.message
    assert sentence.endswith(".") and "\n" not in sentence and UNKNOWN in sentence
    assert foreign.value.message == sentence.replace(UNKNOWN, hers.id)  # ids reveal nothing
    assert str(foreign.value) == foreign.value.message


def test_issue16_3_a_bad_key_is_a_401_with_the_sentence(server: Served) -> None:
    with (
        EngramClient(server.url, key="not-a-key", agent="helper", person="ana") as memory,
        pytest.raises(EngramHTTPError) as refused,
    ):
        memory.conversations()
    assert refused.value.status == 401
    assert "API key" in refused.value.message


def test_issue16_3_an_unreachable_server_is_retried_a_bounded_number_of_times(
    tmp_path: Path,
) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.monotonic()
    nowhere = f"http://127.0.0.1:{port}"
    with (
        EngramClient(nowhere, key="k", agent="helper", person="ana", retries=2) as memory,
        pytest.raises(httpx.ConnectError),
    ):
        memory.start_conversation()
    assert time.monotonic() - started < 3  # 0.2 + 0.4 s of backoff, then it gives up


def test_issue18_item5_C4_the_client_deletes_a_shared_conversation_for_the_person(
    server: Served,
) -> None:
    """Issue 18 item 5, C4: the typed client reads a for-oneself deletion — who keeps the
    conversation, and that it was not for everyone."""
    with _client(server, "cleo") as cleo, _client(server, "dan") as dan:
        chat = cleo.start_conversation(participants=["dan"])
        cleo.append_turn(chat.id, "user", "I'm Cleo.")
        dan.append_turn(chat.id, "user", "I'm Dan.")
        done = cleo.delete_conversation(chat.id)
        assert done.deleted and done.for_everyone is False and done.kept_by == ["dan"]
        assert chat.id not in [c.id for c in cleo.conversations()]  # cleo has others
        assert [c.id for c in dan.conversations()] == [chat.id]
