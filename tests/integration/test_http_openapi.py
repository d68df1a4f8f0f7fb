"""schemathesis drives the memory API from its own OpenAPI document against a real uvicorn
server (issue 10 item 3; issue 16 item 1 for the conversation routes): no input it
generates gets a 500, every status it meets is documented, and every answer matches its
declared schema. Bounded: a few examples per operation. Half the examples of a route with
a conversation in its path name a real one (with a real turn and tool call), so the
generated bodies reach the routes' own rules, not only the 404 of an unknown id."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from engram.api.app import build_app
from engram.model.ids import PersonId
from engram.runtime import api_keys
from engram.runtime.agents import set_agent
from engram.runtime.conversations import append_turn, record_tool_call, start_conversation
from engram.store.store import Store
from tests.integration.test_http_api import running


@pytest.fixture
def served(store: Store) -> Iterator[tuple[str, str, dict[str, Any]]]:
    set_agent(store, "helper", {"memory": {"learning": {"mode": "suggest"}}}, "ops")
    _, key = api_keys.create_key(store, "schemathesis", "ops")
    app = build_app(store)
    with running(app) as base:
        yield base, key, app.openapi()


def _real_ids(store: Store) -> dict[str, str]:
    """A conversation of ana's with the agent, holding a turn and a tool call."""
    conversation = start_conversation(store, [PersonId("ana")], agent="helper").id
    turn = append_turn(store, conversation, role="user", author="ana", text="I live in Porto.")
    call = record_tool_call(store, conversation, name="weather", arguments="{}", result="Sunny.")
    return {"conversation": conversation, "turn_id": turn, "call_id": call}


CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


def test_issue10_item3_the_api_keeps_its_openapi_promises(
    served: tuple[str, str, dict[str, Any]], store: Store
) -> None:
    base, key, document = served
    headers = {"Authorization": f"Bearer {key}", "X-Engram-External-User-Id": "ana"}
    schema = schemathesis.openapi.from_dict(document)
    operations = [result.ok() for result in schema.get_all_operations()]
    # Every route is documented and exercised: items, search, candidates, item 4's assemble
    # and recall (13), and issue 16's conversations, turns, tool calls and history tools.
    assert len(operations) == 13 + 12
    shared = _real_ids(store)

    for operation in operations:

        @given(case=operation.as_strategy(), real=st.booleans())
        @settings(
            max_examples=6,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            database=None,
        )
        def exercise(case: Any, real: bool) -> None:
            path = case.path_parameters or {}
            if "agent" in path:
                path["agent"] = "helper"  # configured, so routes are reached
            if real and "conversation" in path:
                # a DELETE gets a conversation of its own, so the others stay reachable
                ids = _real_ids(store) if case.method.upper() == "DELETE" else shared
                path.update({name: ids[name] for name in path if name in ids})
            response = case.call(base_url=base, headers={**(case.headers or {}), **headers})
            case.validate_response(response, checks=CHECKS)

        exercise()
