"""Fakes for the OpenAI Agents SDK adapter's tests: a `Model` (the SDK's own interface) that
answers from a script and keeps what it was given, and an OpenAI-compatible chat endpoint
on loopback for the real `AsyncOpenAI` client. Neither reaches the network."""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agents import set_tracing_disabled
from agents.items import ModelResponse, TResponseInputItem, TResponseStreamEvent
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputItem,
    ResponseOutputMessage,
    ResponseOutputText,
)

# Traces would go to OpenAI's servers: never from a test.
set_tracing_disabled(True)


def reply(text: str, item_id: str = "msg_1") -> ResponseOutputMessage:
    """An assistant message as a Responses model returns it."""
    part = ResponseOutputText(type="output_text", text=text, annotations=[], logprobs=[])
    return ResponseOutputMessage(
        id=item_id, type="message", role="assistant", status="completed", content=[part]
    )


def tool_call(name: str, arguments: dict[str, Any], call_id: str) -> ResponseFunctionToolCall:
    """A function call as a Responses model returns it."""
    return ResponseFunctionToolCall(
        id=f"fc_{call_id}",
        call_id=call_id,
        type="function_call",
        name=name,
        arguments=json.dumps(arguments),
    )


@dataclass
class Seen:
    """What one model call was given."""

    instructions: str | None
    input: list[TResponseInputItem]
    tools: list[str]


Step = list[ResponseOutputItem] | Callable[[Seen], list[ResponseOutputItem]]


@dataclass
class ScriptedModel(Model):
    """Answers each call with the next step of its script; keeps what each call saw."""

    steps: list[Step]
    seen: list[Seen] = field(default_factory=list)

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        model_settings: Any,
        tools: list[Any],
        output_schema: Any,
        handoffs: list[Any],
        tracing: Any,
        **_: Any,
    ) -> ModelResponse:
        given = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        call = Seen(system_instructions, given, [t.name for t in tools])  # type: ignore[arg-type]
        self.seen.append(call)
        step = self.steps.pop(0)
        output = step(call) if callable(step) else step
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[TResponseStreamEvent]:
        raise NotImplementedError("these tests do not stream")


class FakeChatEndpoint:
    """An OpenAI-compatible /v1/chat/completions on loopback; `answer(request)` gives each
    reply's text. Every request is kept."""

    def __init__(self, answer: Callable[[dict[str, Any]], str]) -> None:
        self.requests: list[dict[str, Any]] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                endpoint.requests.append(request)
                message = {"role": "assistant", "content": answer(request)}
                body = json.dumps(
                    {
                        "id": f"chatcmpl-{len(endpoint.requests)}",
                        "object": "chat.completion",
                        "created": 0,
                        "model": request.get("model", "local"),
                        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def system_prompts(self) -> list[str]:
        """The system message of every request, in order."""
        return [
            str(m["content"])
            for r in self.requests
            for m in r["messages"]
            if m.get("role") in ("system", "developer")
        ]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
