"""Issue 16's HTTP evidence: a host that speaks only HTTP drives a whole exchange through
httpx against a real `engram serve` process — start → user turn → assistant turn → tool
call → learning in the server's background → assemble → history find — and a server
stopped with learning left undone picks it up when it starts again (W2)."""

from __future__ import annotations

import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import PASSPHRASE

BASE = "/v1/memory/agents/helper/memory"


@contextmanager
def serving(store_path: Path, *extra: str) -> Iterator[str]:
    """`engram serve` in its own process on a free port; yields the base URL. Stopped with
    SIGTERM, as a service manager stops it, and it must exit cleanly."""
    env = {**os.environ, "TEST_PASSPHRASE": PASSPHRASE}
    env.pop("PYTHONUNBUFFERED", None)  # the port line must arrive without it
    command = [sys.executable, "-m", "engram", "--store", str(store_path)]
    command += ["--passphrase-env", "TEST_PASSPHRASE", "serve", "--port", "0", *extra]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        url = re.search(r"(http://[^ ]+)/v1", line)
        assert url, line
        yield url.group(1)
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=20) == 0


def _until(ask: Any, seconds: float = 15) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if found := ask():
            return found
        time.sleep(0.05)
    raise AssertionError("learning never finished")


def _setup(cli: Any, tmp_path: Path) -> str:
    assert cli("init").code == 0
    config = tmp_path / "helper.json"
    config.write_text(json.dumps({"memory": {"learning": {"mode": "automatic"}}}))
    assert cli("agents", "set", "helper", "--config", str(config)).code == 0
    return str(cli("keys", "create", "--label", "host", "--json").json()["key"])


def test_issue16_evidence_a_whole_exchange_over_http_against_engram_serve(
    cli: Any, store_path: Path, tmp_path: Path
) -> None:
    key = _setup(cli, tmp_path)
    headers = {"Authorization": f"Bearer {key}", "X-Engram-External-User-Id": "ana"}
    with serving(store_path) as url, httpx.Client(base_url=url, headers=headers) as http:
        started = http.post(f"{BASE}/conversations", json={})
        assert started.status_code == 201, started.text
        conversation = started.json()["id"]
        at = f"{BASE}/conversations/{conversation}"

        user = http.post(
            f"{at}/turns",
            json={"role": "user", "text": "I really like green tea."},
            headers={"Idempotency-Key": "turn-1"},
        )
        assert user.status_code == 201 and user.json()["author"] == "ana"
        retried = http.post(
            f"{at}/turns",
            json={"role": "user", "text": "I really like green tea."},
            headers={"Idempotency-Key": "turn-1"},
        )
        assert retried.json() == user.json() and retried.headers["idempotent-replayed"] == "true"
        reply = http.post(f"{at}/turns", json={"role": "assistant", "text": "Green tea it is."})
        assert reply.status_code == 201 and reply.json()["learning"] == "queued"
        call = http.post(
            f"{at}/tool-calls",
            json={"name": "shop", "arguments": {"item": "tea"}, "result": "Sencha tea, in stock."},
        )
        assert call.status_code == 201

        # Learning ran in the server's background after the committed exchange.
        items = _until(lambda: http.get(f"{BASE}/items").json()["items"])
        assert [i["text"] for i in items] == ["Likes green tea."]
        assert items[0]["sources"][0]["turn"] == user.json()["turn_id"]

        block = http.post(f"{BASE}/assemble", json={"conversation": conversation}).json()
        assert "Likes green tea." in block["block"]
        assert [n["id"] for n in block["notes"]] == [items[0]["id"]]

        found = http.post(f"{at}/find", json={"query": "tea"}).json()
        kinds = {(m["kind"], m.get("turn_id") or m.get("call_id")) for m in found["matches"]}
        assert ("turn", user.json()["turn_id"]) in kinds
        assert ("tool_result", call.json()["call_id"]) in kinds
        transcript = http.get(at).json()["entries"]
        assert [e["kind"] for e in transcript] == ["user", "assistant", "tool_call", "tool_result"]

        # A rough latency figure for the reply path (printed with -s): appending a turn.
        times = []
        for i in range(20):
            sent = time.perf_counter()
            http.post(f"{at}/turns", json={"role": "user", "text": f"Message {i}."})
            times.append(time.perf_counter() - sent)
        print(f"\nPOST turns: median {statistics.median(times) * 1000:.1f} ms over 20")


@pytest.mark.slow  # two server processes, each unlocking the store
def test_issue16_W2_a_restarted_server_learns_what_the_last_run_left(
    cli: Any, store_path: Path, tmp_path: Path
) -> None:
    key = _setup(cli, tmp_path)
    headers = {"Authorization": f"Bearer {key}", "X-Engram-External-User-Id": "ana"}
    with (
        serving(store_path, "--no-learning") as url,
        httpx.Client(base_url=url, headers=headers) as http,
    ):
        conversation = http.post(f"{BASE}/conversations", json={}).json()["id"]
        at = f"{BASE}/conversations/{conversation}/turns"
        http.post(at, json={"role": "user", "text": "I live in Porto."})
        reply = http.post(at, json={"role": "assistant", "text": "Porto it is."}).json()
        assert reply["learning"] == "the host has turned learning off"
        assert http.get(f"{BASE}/items").json()["items"] == []
    with serving(store_path) as url, httpx.Client(base_url=url, headers=headers) as http:
        items = _until(lambda: http.get(f"{BASE}/items").json()["items"])
        assert [i["text"] for i in items] == ["Lives in Porto."]
    assert cli("verify", "--json").json()["ok"] is True
