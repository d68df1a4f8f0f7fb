"""HTTP face under load — `engram serve` (FastAPI on uvicorn) in its own process, driven
by httpx clients on loopback (issue 10).

Part 1 — throughput with 10 concurrent clients, each an httpx.Client keeping its
  connection alive. Three endpoints of the same server process, timed in turn for a fixed
  number of requests per client: GET /v1/health (the trivial baseline: no key, no store),
  GET …/items?limit=20 (key check, person, one keyset page of 20 decrypted notes of 200),
  POST …/search {"query": …} (key check, scoped read, word match).
  Reported: requests per second and p50/p99 latency of each.
  Target: items and search each reach >= 0.5x the health throughput, i.e. their time per
  request <= 2x health's.

Part 2 — 200 concurrent mixed requests released together by a barrier, each on its own
  fresh connection: 50 GET items, 50 POST items (a new note each), 50 POST search,
  50 GET health. Target: 0 connection errors and resets, every answer 2xx, and every
  note created is listed afterwards (nothing lost).

Run: .venv/bin/python tests/perf/bench_http.py [--quick] [--repeat N] [--strict]
"""

from __future__ import annotations

import os
import random
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.perf._bench import (
    PASSPHRASE,
    Verdict,
    finish,
    fmt_time,
    header,
    new_store,
    note_text,
    parser,
    print_verdicts,
    table,
    workdir,
)

from engram.control import persons
from engram.control.notes import add_note
from engram.control.session import PersonSession
from engram.model.ids import PersonId
from engram.model.scope import Kind, Scope
from engram.runtime import api_keys
from engram.runtime.agents import set_agent

ITEMS = "/v1/memory/agents/helper/memory/items"
SEARCH = "/v1/memory/agents/helper/memory/search"
CLIENTS = 10


def start_server(store_path: Path) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "BENCH_PASSPHRASE": PASSPHRASE}
    command = [sys.executable, "-m", "engram", "serve", "--store", str(store_path)]
    command += ["--passphrase-env", "BENCH_PASSPHRASE", "--port", "0"]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    assert server.stdout is not None
    found = re.search(r"http://[^ ]+(?=/v1)", server.stdout.readline())
    assert found, "the server did not say where it listens"
    return server, found.group(0)


def load(
    base: str, headers: dict[str, str], method: str, path: str, body: Any, per_client: int
) -> tuple[float, list[float], int]:
    """Elapsed seconds, every latency, and failures for CLIENTS x per_client requests."""
    latencies: list[float] = []
    failures = [0]
    lock = threading.Lock()
    start = threading.Barrier(CLIENTS + 1)

    def client() -> None:
        mine: list[float] = []
        with httpx.Client(base_url=base, headers=headers, timeout=30) as http:
            http.get("/v1/health")  # open the connection before the clock starts
            start.wait()
            for _ in range(per_client):
                began = time.perf_counter()
                answer = http.request(method, path, json=body)
                mine.append(time.perf_counter() - began)
                if answer.status_code >= 300:
                    with lock:
                        failures[0] += 1
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
    for thread in threads:
        thread.start()
    start.wait()
    began = time.perf_counter()
    for thread in threads:
        thread.join()
    return time.perf_counter() - began, latencies, failures[0]


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def burst(base: str, headers: dict[str, str], size: int) -> tuple[int, int, list[str]]:
    """`size` mixed requests at once, each on a fresh connection: (connection errors,
    non-2xx answers, texts of the notes created)."""
    errors, bad, made = [0], [0], []
    lock = threading.Lock()
    gate = threading.Barrier(size)

    def one(i: int) -> None:
        kind = i % 4
        text = f"Burst note {i}."
        try:
            with httpx.Client(base_url=base, headers=headers, timeout=60) as http:
                gate.wait()
                if kind == 0:
                    answer = http.get(ITEMS, params={"limit": 20})
                elif kind == 1:
                    answer = http.post(ITEMS, json={"text": text, "kind": "fact"})
                elif kind == 2:
                    answer = http.post(SEARCH, json={"query": "tea garden"})
                else:
                    answer = http.get("/v1/health")
        except httpx.TransportError:
            with lock:
                errors[0] += 1
            return
        with lock:
            if not 200 <= answer.status_code < 300:
                bad[0] += 1
            elif kind == 1:
                made.append(text)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(size)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors[0], bad[0], made


def main() -> None:
    args = parser(__doc__ or "").parse_args()
    started = time.perf_counter()
    header("HTTP face under load (engram serve: FastAPI + uvicorn)", args)
    per_client = 30 if args.quick else 200
    repeat = args.repeat or (1 if args.quick else 3)
    verdicts: list[Verdict] = []
    with workdir(args) as folder:
        store_path = folder / "http.engram"
        store = new_store(store_path)
        set_agent(
            store,
            "helper",
            {"memory": {"tools": {"remember": True}, "learning": {"mode": "suggest"}}},
            "ops",
        )
        _, key = api_keys.create_key(store, "bench", "ops")
        rng = random.Random(7)
        persons.ensure_person(store, "ana")
        session = PersonSession(store, PersonId("ana"), "ana")
        for _ in range(200):
            add_note(session, note_text(rng), Kind.PREFERENCE, Scope.DIRECT)
        store.close()
        server, base = start_server(store_path)
        headers = {"Authorization": f"Bearer {key}", "X-Engram-External-User-Id": "ana"}
        try:
            runs: dict[str, list[tuple[float, list[float], int]]] = {
                "health": [],
                "items": [],
                "search": [],
            }
            shapes = {
                "health": ("GET", "/v1/health", None),
                "items": ("GET", f"{ITEMS}?limit=20", None),
                "search": ("POST", SEARCH, {"query": "tea garden music"}),
            }
            for _ in range(repeat):  # in turn, round after round
                for name, (method, path, body) in shapes.items():
                    runs[name].append(load(base, headers, method, path, body, per_client))
            rows = []
            best: dict[str, float] = {}
            total = CLIENTS * per_client
            for name, results in runs.items():
                elapsed = min(r[0] for r in results)
                latencies = [lat for r in results for lat in r[1]]
                failures = sum(r[2] for r in results)
                best[name] = elapsed / total
                rows.append(
                    [
                        name,
                        f"{total / elapsed:,.0f}/s",
                        fmt_time(statistics.median(latencies)),
                        fmt_time(p(latencies, 0.99)),
                        str(failures),
                    ]
                )
            print(f"\n== Part 1: {CLIENTS} clients x {per_client} requests, best of {repeat}")
            print(table(["endpoint", "throughput", "p50", "p99", "failures"], rows))
            for name in ("items", "search"):
                verdicts.append(
                    Verdict(
                        f"{name} vs health, time per request",
                        best[name],
                        best["health"],
                        2.0,
                        f"{CLIENTS} keep-alive clients; <= 2x health's time = >= 0.5x its "
                        "throughput",
                    )
                )

            size = 40 if args.quick else 200
            errors, bad, made = burst(base, headers, size)
            with httpx.Client(base_url=base, headers=headers, timeout=30) as http:
                listed: list[str] = []
                cursor = None
                while True:
                    query: dict[str, Any] = {"limit": 100}
                    if cursor:
                        query["cursor"] = cursor
                    page = http.get(ITEMS, params=query).json()
                    listed += [i["text"] for i in page["items"]]
                    cursor = page["next_cursor"]
                    if not cursor:
                        break
            lost = len(set(made) - set(listed))
            print(f"\n== Part 2: {size} concurrent mixed requests on fresh connections")
            print(
                table(
                    ["connection errors", "non-2xx", "notes created", "lost"],
                    [[str(errors), str(bad), str(len(made)), str(lost)]],
                )
            )
            # As a verdict: problems + 1 against 1 must stay <= 1x (i.e. zero problems).
            verdicts.append(
                Verdict(
                    "burst: errors, non-2xx and lost notes",
                    float(errors + bad + lost + 1),
                    1.0,
                    1.0,
                    f"{size} requests at once; any error, refusal or lost note misses",
                )
            )
        finally:
            server.terminate()
            server.wait(timeout=10)
    print_verdicts("HTTP face under load", verdicts)
    finish(verdicts, args, started)


if __name__ == "__main__":
    main()
