"""The OpenAI-compatible extractor against a fake server on loopback (W3, W8)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from engram.control.notes import list_notes
from engram.control.session import PersonSession
from engram.engine.extraction import bounded
from engram.model.ids import PersonId
from engram.model.scope import Kind
from engram.runtime.agents import set_agent
from engram.runtime.conversations import append_turn, record_tool_call, start_conversation
from engram.runtime.extraction import learn_person, pending
from engram.runtime.openai_extractor import ExtractorFailed, OpenAIExtractor
from engram.store.store import Store

ANA = PersonId("ana")


class FakeServer:
    """Answers /v1/chat/completions with whatever `reply` builds from the request."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.status = 200
        self.content: Any = {"notes": []}
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                server.requests.append(json.loads(body))
                server.headers.append(dict(self.headers))
                content = (
                    server.content(server.requests[-1])
                    if callable(server.content)
                    else server.content
                )
                raw = content if isinstance(content, str) else json.dumps(content)
                answer = json.dumps({"choices": [{"message": {"content": raw}}]}).encode()
                self.send_response(server.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


@pytest.fixture
def server() -> Iterator[FakeServer]:
    fake = FakeServer()
    yield fake
    fake.httpd.shutdown()


def _conversation(store: Store) -> list[str]:
    set_agent(store, "helper", {"memory": {"learning": {"mode": "automatic"}}}, "staff:ops")
    info = start_conversation(store, [ANA], agent="helper")
    turns = [
        append_turn(store, info.id, role="user", author=ANA, text="I moved to Porto last week."),
        append_turn(store, info.id, role="assistant", author="helper", text="You love Rome."),
    ]
    record_tool_call(store, info.id, name="crm", arguments="{}", result="TOKEN-SECRET-42")
    return turns


def test_W8_the_model_sees_only_visible_turns_and_its_claims_are_checked(
    store: Store, server: FakeServer
) -> None:
    mine, assistants = _conversation(store)

    def reply(request: dict[str, Any]) -> Any:
        return {
            "notes": [
                {"kind": "fact", "text": "Lives in Porto.", "turn": mine, "confidence_bp": 7000},
                {"kind": "preference", "text": "Loves Rome.", "turn": assistants},
            ]
        }

    server.content = reply
    extractor = OpenAIExtractor(server.url, "tiny-model", api_key="k-123")
    reports = learn_person(store, ANA, extractor)
    sent = server.requests[0]
    shown = json.loads(sent["messages"][1]["content"])
    assert [t["turn"] for t in shown["turns"]] == [mine, assistants]
    assert [t["by_subject"] for t in shown["turns"]] == [True, False]
    assert "TOKEN-SECRET" not in json.dumps(sent)  # tool results are not visible content
    assert sent["model"] == "tiny-model" and server.headers[0]["Authorization"] == "Bearer k-123"
    texts = [v.text for v in list_notes(PersonSession(store, ANA, ANA))]
    assert texts == ["Lives in Porto."]
    assert reports[0].dropped[0]["reason"] == "not from one of the person's own turns (W8)"


@pytest.mark.parametrize(
    ("status", "content", "message"),
    [
        (200, "this is not json", "unexpected shape"),
        (200, {"answer": "no notes key"}, "unexpected shape"),
        (200, {"notes": "not a list"}, "unexpected shape"),
        (500, {"notes": []}, "HTTP 500"),
    ],
)
def test_a_bad_answer_is_one_sentence_and_the_turns_stay_pending(
    store: Store, server: FakeServer, status: int, content: Any, message: str
) -> None:
    _conversation(store)
    server.status, server.content = status, content
    (report,) = learn_person(store, ANA, OpenAIExtractor(server.url, "m"))
    assert report.error is not None and message in report.error
    assert len(pending(store, ANA)) == 1  # nothing was marked handled


def test_one_malformed_note_costs_only_itself(store: Store, server: FakeServer) -> None:
    mine, _ = _conversation(store)
    server.content = {
        "notes": [
            {"kind": "mood", "text": "Is happy.", "turn": mine},
            {"kind": "fact", "text": "Lives in Porto.", "turn": mine, "confidence_bp": "high"},
            {"kind": "fact", "text": "Moved to Porto.", "turn": mine},
        ]
    }
    learn_person(store, ANA, OpenAIExtractor(server.url, "m"))
    assert [v.text for v in list_notes(PersonSession(store, ANA, ANA))] == ["Moved to Porto."]


def test_an_unreachable_endpoint_is_one_sentence(store: Store) -> None:
    _conversation(store)
    extractor = OpenAIExtractor("http://127.0.0.1:9/v1", "m", timeout_s=2)
    with pytest.raises(ExtractorFailed, match="Cannot reach"):
        extractor.extract(bounded([], [], set(Kind)))
    (report,) = learn_person(store, ANA, extractor)
    assert report.error and "Cannot reach" in report.error
