"""HTTP face under load — `engram serve` (FastAPI on uvicorn) in its own process, against a
plain FastAPI + uvicorn app (tests/perf/plain_fastapi.py) started by this benchmark in its
own process on the same machine, both driven by httpx clients on loopback (issues 10, 19).

Part 1 — 10 keep-alive clients (each an httpx.Client), a fixed number of requests per
  client, the endpoints timed in turn, round after round:
    plain:  GET /hello (the outside floor), GET /page?limit=20, POST /echo
    ours:   GET /v1/health (no key, no store), GET …/items?limit=20 (key check, person, one
            keyset page of 20 decrypted notes of 200), POST …/search (key check, scoped read,
            BM25 over the person's notes)
  Targets (issue 19 item 3), as time per request against plain /hello's:
    health <= 1.25x (>= 0.8x its throughput); items and search <= 2x (>= 0.5x).

Part 2 — a realistic mix at 10, 50 and 200 keep-alive clients: 35 % GET items, 20 %
  search, 15 % recall for a conversation, 10 % POST items, 10 % POST turns, 10 % health;
  requests per second with p50 and p99, beside plain /hello at the same concurrency.

Part 3 — 200 concurrent mixed requests released together by a barrier, each on its own
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
from collections.abc import Callable
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
RECALL = "/v1/memory/agents/helper/memory/recall"
CONVERSATIONS = "/v1/memory/agents/helper/memory/conversations"
CLIENTS = 10
MIX_CLIENTS = (10, 50, 200)
QUERIES = ("tea garden music", "garden", "music lessons", "coffee", "weekend trip")


def _started(
    command: list[str], env: dict[str, str], pattern: str
) -> tuple[subprocess.Popen[str], str]:
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    assert server.stdout is not None
    found = re.search(pattern, server.stdout.readline())
    assert found, "the server did not say where it listens"
    return server, found.group(0)


def start_server(store_path: Path) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "BENCH_PASSPHRASE": PASSPHRASE}
    env.pop("PYTHONUNBUFFERED", None)
    command = [sys.executable, "-m", "engram", "serve", "--store", str(store_path)]
    command += ["--passphrase-env", "BENCH_PASSPHRASE", "--port", "0"]
    return _started(command, env, r"http://[^ ]+(?=/v1)")


def start_plain() -> tuple[subprocess.Popen[str], str]:
    """The plain FastAPI app, the outside floor (nothing of Engram in it)."""
    command = [sys.executable, str(Path(__file__).with_name("plain_fastapi.py"))]
    return _started(command, dict(os.environ), r"http://\S+")


Request = tuple[str, str, Any]  # method, path, JSON body


def load(
    base: str,
    headers: dict[str, str],
    choose: Callable[[random.Random], Request],
    per_client: int,
    clients: int = CLIENTS,
) -> tuple[float, list[float], int]:
    """Elapsed seconds, every latency, and failures for clients x per_client requests, each
    client on one keep-alive connection, each request chosen by `choose`."""
    latencies: list[float] = []
    failures = [0]
    lock = threading.Lock()
    start = threading.Barrier(clients + 1)

    def client(seed: int) -> None:
        mine: list[float] = []
        rng = random.Random(seed)
        limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        with httpx.Client(base_url=base, headers=headers, timeout=60, limits=limits) as http:
            http.get("/")  # open the connection before the clock starts (any answer will do)
            start.wait()
            for _ in range(per_client):
                method, path, body = choose(rng)
                began = time.perf_counter()
                answer = http.request(method, path, json=body)
                mine.append(time.perf_counter() - began)
                if answer.status_code >= 300:
                    with lock:
                        failures[0] += 1
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    start.wait()
    began = time.perf_counter()
    for thread in threads:
        thread.join()
    return time.perf_counter() - began, latencies, failures[0]


def always(method: str, path: str, body: Any = None) -> Callable[[random.Random], Request]:
    return lambda _rng: (method, path, body)


def realistic(conversation: str) -> Callable[[random.Random], Request]:
    """The mix a chat application sends: mostly reads, some writes."""
    turns = f"{CONVERSATIONS}/{conversation}/turns"

    def choose(rng: random.Random) -> Request:
        roll = rng.random()
        if roll < 0.35:
            return ("GET", f"{ITEMS}?limit=20", None)
        if roll < 0.55:
            return ("POST", SEARCH, {"query": rng.choice(QUERIES)})
        if roll < 0.70:
            return ("POST", RECALL, {"conversation": conversation})
        if roll < 0.80:
            return ("POST", ITEMS, {"text": f"Mixed note {rng.random():.9f}.", "kind": "fact"})
        if roll < 0.90:
            return ("POST", turns, {"role": "user", "text": f"Hello {rng.random():.6f}"})
        return ("GET", "/v1/health", None)

    return choose


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
        plain, plain_base = start_plain()
        headers = {"Authorization": f"Bearer {key}", "X-Engram-External-User-Id": "ana"}
        try:
            with httpx.Client(base_url=base, headers=headers, timeout=30) as http:
                made = http.post(CONVERSATIONS, json={})
                assert made.status_code == 201, made.text
                conversation = str(made.json()["id"])
            shapes: dict[str, tuple[str, Callable[[random.Random], Request]]] = {
                "plain /hello": (plain_base, always("GET", "/hello")),
                "plain /page": (plain_base, always("GET", "/page?limit=20")),
                "plain /echo": (plain_base, always("POST", "/echo", {"query": "tea garden"})),
                "health": (base, always("GET", "/v1/health")),
                "items": (base, always("GET", f"{ITEMS}?limit=20")),
                "search": (base, always("POST", SEARCH, {"query": "tea garden music"})),
            }
            runs: dict[str, list[tuple[float, list[float], int]]] = {n: [] for n in shapes}
            for _ in range(repeat):  # in turn, round after round
                for name, (where, choose) in shapes.items():
                    runs[name].append(load(where, headers, choose, per_client))
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
            for name, target in (("health", 1.25), ("items", 2.0), ("search", 2.0)):
                verdicts.append(
                    Verdict(
                        f"{name} vs plain FastAPI /hello, time per request",
                        best[name],
                        best["plain /hello"],
                        target,
                        f"{CLIENTS} keep-alive clients; <= {target}x its time = "
                        f">= {1 / target:.1f}x its throughput",
                    )
                )

            mix_rows = []
            for clients in MIX_CLIENTS if not args.quick else (10, 50):
                each = max(5, (per_client * CLIENTS) // (clients * 2))
                ours = load(base, headers, realistic(conversation), each, clients)
                floor = load(plain_base, headers, always("GET", "/hello"), each, clients)
                n = clients * each
                mix_rows.append(
                    [
                        str(clients),
                        f"{n / ours[0]:,.0f}/s",
                        fmt_time(statistics.median(ours[1])),
                        fmt_time(p(ours[1], 0.99)),
                        str(ours[2]),
                        f"{n / floor[0]:,.0f}/s",
                        f"{(n / ours[0]) / (n / floor[0]):.2f}x",
                    ]
                )
            print("\n== Part 2: a realistic mix on keep-alive connections")
            print(
                table(
                    ["clients", "ours", "p50", "p99", "failures", "plain /hello", "ratio"],
                    mix_rows,
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
            print(f"\n== Part 3: {size} concurrent mixed requests on fresh connections")
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
            for process in (server, plain):
                process.terminate()
                process.wait(timeout=30)
    print_verdicts("HTTP face under load", verdicts)
    finish(verdicts, args, started)


if __name__ == "__main__":
    main()
