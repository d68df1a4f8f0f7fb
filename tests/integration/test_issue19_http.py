"""Issue 19 item 3, the HTTP face keeps up with its framework: a 405 says which methods the
path does answer (RFC 9110 §15.5.6: the Allow header is required)."""

from __future__ import annotations

from fastapi.testclient import TestClient

from engram.api.app import build_app
from engram.runtime import api_keys
from engram.store.store import Store


def test_issue19_item3_a_405_carries_allow(store: Store) -> None:
    _, key = api_keys.create_key(store, "backend", "ops")
    with TestClient(build_app(store)) as client:
        answer = client.put(
            "/v1/memory/agents/helper/memory/items",
            headers={"Authorization": f"Bearer {key}", "X-Engram-External-User-Id": "ana"},
        )
    assert answer.status_code == 405
    allowed = {m.strip() for m in answer.headers["allow"].split(",")}
    assert {"GET", "POST"} <= allowed and "PUT" not in allowed
    assert answer.json()["error"].endswith("does not answer PUT.")
