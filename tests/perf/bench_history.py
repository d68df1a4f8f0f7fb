"""History search speed — conversation_find and person-wide search, against SQLite FTS5.

Texts and queries come from LoCoMo (../shared/data/locomo10.json relative to the project
root, read-only; --data):
its 5,882 turn texts, shuffled and cycled to the size wanted, and its questions as queries.

Part 1 — conversation_find (relevance) over one 10,000-turn conversation (--quick: 1,000).
  Measured: the whole tool call runtime.history.find(store, conversation, question, limit 5)
  on a real encrypted store built with start_conversation/append_turn, as a running agent
  makes it: the decrypted log and its term index are held by the open store (built on the
  first call, caught up with new entries on later ones), so each call checks the log for
  new entries, then counts postings.
  Baseline: the same plaintext in an in-memory FTS5 table (tokenize='porter unicode61'),
  the question's tokens quoted and OR-ed, `ORDER BY bm25() LIMIT 5`.
  Each of 50 questions is timed on both, in turn, round after round; a question's time is
  its best round; the verdict compares medians over the questions.
  Target: history.find <= 1.0x FTS5.
  Reported beside it: the search step alone (MessageIndex.find_relevant), the first call
  after opening (reads, decrypts and indexes the whole log), appending one turn
  followed by a find (reads, decrypts and indexes just that turn), and pattern mode (H2,
  RE2 on a worker thread under its time budget): the question's longest word as literal
  text, and as a case-insensitive regular expression.

Part 2 — person-wide search over 500,000 messages (--quick: 50,000). The messages are the
  LoCoMo texts cycled, each with a counter word appended ("n123456") so no two are equal,
  spread over conversations of 500 messages. Not through the encrypted store: the
  PersonIndex is built directly with .add() (PersonIndex.build would add one decryption
  pass per unlock on top).
  Build — measured: PersonIndex(person) + .add() of every message; baseline: an in-memory
  FTS5 table (text, conversation UNINDEXED, turn UNINDEXED): insert every row in one
  transaction + 'optimize'. Target <= 2x.
  Query — measured: PersonIndex.search(question) (relevance, limit 25); baseline: FTS5
  MATCH of the OR-ed quoted tokens, `ORDER BY bm25() LIMIT 25`, returning conversation,
  turn and text. 20 questions; medians over them. Target <= 1.0x.
  Memory: the resident-set growth while building the PersonIndex (the texts themselves are
  shared with the corpus list and not counted), the peak RSS (resource.getrusage), and the
  size of the FTS5 database for comparison (it holds its own copy of the texts).

Run: .venv/bin/python tests/perf/bench_history.py [--quick] [--repeat N] [--dir DIR]
     [--profile] [--data PATH] [--part 1|2] [--postgres]
     (--postgres: part 1's store is a database in a throwaway PostgreSQL cluster, issue 19
     item 8; part 2 does not go through the store)
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import re
import resource
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TypeVar

from _bench import (
    LOCOMO,
    Backend,
    Timing,
    Verdict,
    backend,
    finish,
    fmt_time,
    header,
    measure,
    new_store,
    open_store,
    parser,
    print_verdicts,
    profile,
    table,
    workdir,
)

from engram.engine.history_search import Message, MessageIndex
from engram.model.ids import ConversationId, PersonId
from engram.runtime import history
from engram.runtime.conversations import append_turn, conversations_of, start_conversation, turns
from engram.runtime.person_search import PersonIndex
from engram.store.store import Store

ALICE = PersonId("alice")
FIND_TARGET = 1.0
BUILD_TARGET = 2.0
QUERY_TARGET = 1.0
FIND_LIMIT = 5
PERSON_LIMIT = 25
PER_CONVERSATION = 500
_SESSION = re.compile(r"session_(\d+)")
_TOKEN = re.compile(r"\w+", re.UNICODE)
T = TypeVar("T")


# ---- data -----------------------------------------------------------------------------


def locomo(path: Path) -> tuple[list[str], list[str]]:
    """Every turn text (in order) and every question of the LoCoMo file."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    texts: list[str] = []
    questions: list[str] = []
    for item in raw:
        conversation = item["conversation"]
        sessions = sorted(
            (int(found.group(1)), session)
            for key, session in conversation.items()
            if (found := _SESSION.fullmatch(key))
        )
        texts += [turn["text"] for _, session in sessions for turn in session]
        questions += [qa["question"] for qa in item["qa"]]
    return texts, questions


def cycled(texts: Sequence[str], total: int, rng: random.Random) -> list[str]:
    """`total` texts: the corpus shuffled, again and again."""
    out: list[str] = []
    while len(out) < total:
        batch = list(texts)
        rng.shuffle(batch)
        out += batch[: total - len(out)]
    return out


def fts_query(text: str) -> str:
    """The question's tokens, each a quoted FTS5 string, OR-ed ("" escapes a quote)."""
    tokens = dict.fromkeys(t.casefold() for t in _TOKEN.findall(text))
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in tokens)


# ---- memory ---------------------------------------------------------------------------


def current_rss() -> int | None:
    """Resident set size in bytes now (Linux /proc), or None."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def peak_rss() -> int:
    """Peak resident set size in bytes (getrusage: KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def mib(size: int | None) -> str:
    return "n/a" if size is None else f"{size / 2**20:,.0f} MiB"


# ---- part 1: one conversation ---------------------------------------------------------


def fts_conversation(texts: Sequence[str]) -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE turns USING fts5(text, tokenize='porter unicode61')")
    db.executemany("INSERT INTO turns(rowid, text) VALUES (?, ?)", enumerate(texts))
    db.commit()
    return db


def fts_find(db: sqlite3.Connection, query: str) -> list[tuple[int, str]]:
    return db.execute(
        "SELECT rowid, text FROM turns WHERE turns MATCH ? ORDER BY bm25(turns) LIMIT ?",
        (fts_query(query), FIND_LIMIT),
    ).fetchall()


def conversation_store(where: Backend, texts: Sequence[str]) -> tuple[Store, ConversationId]:
    """A store with one conversation of len(texts) turns (user and assistant in turn);
    under --dir an earlier build of the same size is reused (SQLite only)."""
    path = where.location(f"history-{len(texts)}")
    if not where.postgres and Path(path).exists():
        store = open_store(path)
        conversation = conversations_of(store, ALICE)[0].id
        have = len(turns(store, conversation))
        if have == len(texts):
            print(f"   reusing {path} ({have:,} turns)", flush=True)
            return store, conversation
        store.close()
        raise SystemExit(f"{path} holds {have:,} turns, not {len(texts):,}; remove it")
    store = new_store(path)
    conversation = start_conversation(store, [ALICE]).id
    start = last = time.perf_counter()
    for index, text in enumerate(texts, start=1):
        user = index % 2 == 1
        append_turn(
            store,
            conversation,
            role="user" if user else "assistant",
            author="alice" if user else "assistant",
            text=text,
        )
        now = time.perf_counter()
        if now - last > 30 or index == len(texts):
            last = now
            print(
                f"   building the store: {index:,}/{len(texts):,} turns with append_turn, "
                f"{index / (now - start):,.0f} turns/s, {now - start:.0f} s",
                flush=True,
            )
    return store, conversation


@dataclass
class PerQuery:
    """Per-question samples of several timed things (a question's time is its best)."""

    samples: dict[str, list[list[float]]] = field(default_factory=dict)

    def add(self, name: str, query: int, seconds: float) -> None:
        rows = self.samples.setdefault(name, [])
        while len(rows) <= query:
            rows.append([])
        rows[query].append(seconds)

    def best(self, name: str) -> list[float]:
        return [min(s) for s in self.samples[name]]

    def median(self, name: str) -> float:
        return statistics.median(self.best(name))

    def row(self, name: str, label: str) -> list[str]:
        best = sorted(self.best(name))
        p90 = best[min(len(best) - 1, int(0.9 * len(best)))]
        return [
            label,
            str(len(best)),
            fmt_time(self.median(name)),
            fmt_time(statistics.fmean(best)),
            fmt_time(p90),
            fmt_time(best[-1]),
        ]


def time_once(fn: Callable[[], object]) -> float:
    return measure(fn, repeat=1, warmup=0).best


def timed_build(fn: Callable[[], T]) -> tuple[T, float]:
    """Build something once; its value and the seconds it took (after a gc.collect())."""
    gc.collect()
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def interleave_queries(
    systems: dict[str, Callable[[str], object]], queries: Sequence[str], rounds: int
) -> PerQuery:
    """Each query on each system in turn, round after round (one warm-up call first)."""
    out = PerQuery()
    for fn in systems.values():
        fn(queries[0])
    for _ in range(rounds):
        for index, query in enumerate(queries):
            for name, fn in systems.items():
                out.add(name, index, time_once(partial(fn, query)))
    return out


def part_conversation(
    where: Backend,
    args: argparse.Namespace,
    corpus: Sequence[str],
    queries: Sequence[str],
) -> list[Verdict]:
    size = len(corpus)
    print(f"\n-- part 1: conversation_find (relevance) over one {size:,}-turn conversation")
    index = MessageIndex(Message(f"t{i}", i, text) for i, text in enumerate(corpus))
    db = fts_conversation(corpus)
    rounds = args.repeat or 3
    store, conversation = conversation_store(where, corpus)
    cold = measure(partial(cold_find, store, conversation, queries[0]), repeat=3)
    timed = interleave_queries(
        {
            "tool": lambda q: history.find(store, conversation, q, "relevance", FIND_LIMIT),
            "step": lambda q: index.find_relevant(q, FIND_LIMIT),
            "fts5": lambda q: fts_find(db, q),
            "literal": lambda q: history.find(store, conversation, longest_word(q), "pattern"),
            "regex": lambda q: history.find(
                store, conversation, rf"(?i)\b{longest_word(q)}\w*", "pattern"
            ),
        },
        queries,
        rounds,
    )
    catch_up = measure(partial(append_then_find, store, conversation, queries[1]), repeat=5)
    rows = [
        timed.row("tool", "history.find (whole tool call, warm)"),
        timed.row("step", "MessageIndex.find_relevant (search step)"),
        timed.row("fts5", "FTS5 bm25, LIMIT 5"),
        timed.row("literal", "history.find pattern: the longest word (literal)"),
        timed.row("regex", r"history.find pattern: (?i)\bWORD\w* (RE2)"),
    ]
    print(table(["per question", "questions", "median", "mean", "p90", "max"], rows))
    print(
        f"   {rounds} round(s) per question, interleaved, best round per question. "
        f"First call after opening (read + decrypt + index {size:,} log entries): "
        f"{fmt_time(cold.median)}; append one turn + the next find (catch-up): "
        f"{fmt_time(catch_up.median)} (medians)"
    )
    if args.profile:
        print(f"\n-- profile: history.find over {size:,} turns, one question, warm")
        profile(partial(history.find, store, conversation, queries[0]), top=15)
    store.close()
    db.close()
    return [
        Verdict(
            f"history.find / FTS5, {size:,} turns (median)",
            timed.median("tool"),
            timed.median("fts5"),
            FIND_TARGET,
            f"the whole conversation_find tool call vs FTS5 bm25, median over {len(queries)} "
            "LoCoMo questions",
        ),
    ]


def longest_word(question: str) -> str:
    """The question's longest word: a pattern-mode query that is plain text."""
    return max(_TOKEN.findall(question), key=len)


def cold_find(store: Store, conversation: ConversationId, query: str) -> None:
    """The first call after opening: the decrypted log is not held yet."""
    store.plaintext_caches.clear()
    history.find(store, conversation, query, "relevance", FIND_LIMIT)


def append_then_find(store: Store, conversation: ConversationId, query: str) -> None:
    """A new turn arrives; the next find reads, decrypts and indexes only that turn."""
    append_turn(store, conversation, role="assistant", author="agent", text=query)
    history.find(store, conversation, query, "relevance", FIND_LIMIT)


# ---- part 2: person-wide --------------------------------------------------------------


def person_messages(corpus: Sequence[str]) -> list[tuple[ConversationId, str, str]]:
    return [
        (ConversationId(f"c{i // PER_CONVERSATION}"), f"t{i}", f"{text} n{i}")
        for i, text in enumerate(corpus)
    ]


def build_index(rows: Sequence[tuple[ConversationId, str, str]]) -> PersonIndex:
    index = PersonIndex(ALICE)
    for conversation, ref, text in rows:
        index.add(conversation, ref, text)
    return index


def build_fts(rows: Sequence[tuple[ConversationId, str, str]]) -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    db.execute(
        "CREATE VIRTUAL TABLE msgs USING fts5("
        "text, conversation UNINDEXED, turn UNINDEXED, tokenize='porter unicode61')"
    )
    with db:
        db.executemany(
            "INSERT INTO msgs(text, conversation, turn) VALUES (?, ?, ?)",
            ((text, conversation, ref) for conversation, ref, text in rows),
        )
        db.execute("INSERT INTO msgs(msgs) VALUES ('optimize')")
    return db


def fts_person(db: sqlite3.Connection, query: str) -> list[tuple[str, str, str]]:
    return db.execute(
        "SELECT conversation, turn, text FROM msgs WHERE msgs MATCH ? ORDER BY bm25(msgs) LIMIT ?",
        (fts_query(query), PERSON_LIMIT),
    ).fetchall()


def part_person(
    args: argparse.Namespace, corpus: Sequence[str], queries: Sequence[str]
) -> list[Verdict]:
    size = len(corpus)
    print(f"\n-- part 2: person-wide search over {size:,} messages (built with .add(), no store)")
    rows = person_messages(corpus)
    chars = sum(len(text) for _, _, text in rows)
    builds = args.repeat or 1
    index_build, fts_build = Timing(), Timing()
    index: PersonIndex | None = None
    db: sqlite3.Connection | None = None
    rss_growth: int | None = None
    for round_ in range(builds):
        index = db = None
        before = current_rss()
        index, seconds = timed_build(partial(build_index, rows))
        index_build.add(seconds)
        after = current_rss()
        if round_ == 0 and before is not None and after is not None:
            rss_growth = after - before
        db, seconds = timed_build(partial(build_fts, rows))
        fts_build.add(seconds)
        print(
            f"   build round {round_ + 1}/{builds}: PersonIndex {fmt_time(index_build.samples[-1])}"
            f", FTS5 {fmt_time(fts_build.samples[-1])}",
            flush=True,
        )
    assert index is not None and db is not None
    page_count = db.execute("PRAGMA page_count").fetchone()[0]
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    fts_size = page_count * page_size

    candidates = [
        len(set().union(*(index.index.holders(t) for t in index.index.counted_terms(q))))
        for q in queries
    ]
    rounds = args.repeat or 1
    searched = interleave_queries(
        {
            "engram": partial(index.search, limit=PERSON_LIMIT),
            "fts5": partial(fts_person, db),
        },
        queries,
        rounds,
    )
    print(
        table(
            ["build", "rounds", "median", "best"],
            [
                ["PersonIndex (.add each)", str(builds), *_pair(index_build)],
                ["FTS5 insert + optimize", str(builds), *_pair(fts_build)],
            ],
        )
    )
    print()
    print(
        table(
            ["per question", "questions", "median", "mean", "p90", "max"],
            [
                searched.row("engram", "PersonIndex.search"),
                searched.row("fts5", "FTS5 bm25, LIMIT 25"),
            ],
        )
    )
    print(
        f"   {rounds} round(s) per question, interleaved; PersonIndex scores a median of "
        f"{statistics.median(candidates):,.0f} candidate messages per question "
        f"({statistics.median(candidates) / size:.0%}; max {max(candidates):,})"
    )
    print(
        f"   memory: PersonIndex RSS growth {mib(rss_growth)} (texts not counted: "
        f"{chars / 2**20:,.0f} MiB of characters, shared with the corpus); "
        f"FTS5 database {mib(fts_size)} (with its own copy of the texts); "
        f"peak RSS of the process {mib(peak_rss())}"
    )
    if args.profile:
        print(f"\n-- profile: PersonIndex.search over {size:,} messages, one question")
        profile(partial(index.search, queries[0], limit=PERSON_LIMIT), top=15)
        print(f"\n-- profile: PersonIndex .add() of {min(size, 50_000):,} messages")
        profile(partial(build_index, rows[:50_000]), top=15)
    db.close()
    return [
        Verdict(
            f"PersonIndex build / FTS5 build, {size:,} msgs",
            index_build.median,
            fts_build.median,
            BUILD_TARGET,
            "PersonIndex + .add() per message vs FTS5 insert of every row + optimize",
        ),
        Verdict(
            f"PersonIndex.search / FTS5, {size:,} msgs (median)",
            searched.median("engram"),
            searched.median("fts5"),
            QUERY_TARGET,
            f"relevance, limit 25, median over {len(queries)} LoCoMo questions",
        ),
    ]


def _pair(timing: Timing) -> list[str]:
    return [fmt_time(timing.median), fmt_time(timing.best)]


# ---- main -----------------------------------------------------------------------------


def main() -> None:
    started = time.perf_counter()
    p = parser(__doc__ or "")
    p.add_argument("--data", type=Path, default=LOCOMO, help="LoCoMo json (locomo10.json)")
    p.add_argument("--part", choices=["1", "2"], help="run only part 1 or part 2")
    args = p.parse_args()
    scale = 10 if args.quick else 1
    turns_n, messages_n = 10_000 // scale, 500_000 // scale
    header(
        f"bench_history: conversation_find over {turns_n:,} turns, "
        f"person search over {messages_n:,} messages, vs SQLite FTS5 {sqlite3.sqlite_version}",
        args,
    )
    texts, questions = locomo(args.data)
    rng = random.Random(1)
    queries = rng.sample(questions, 50)
    print(
        f"   LoCoMo: {len(texts):,} turn texts (mean {statistics.fmean(map(len, texts)):.0f} "
        f"chars), {len(questions):,} questions; 50 sampled as queries"
    )
    verdicts: list[Verdict] = []
    if args.part != "2":
        with workdir(args) as folder, backend(args, folder) as where:
            verdicts += part_conversation(where, args, cycled(texts, turns_n, rng), queries)
    if args.part != "1":
        verdicts += part_person(args, cycled(texts, messages_n, rng), queries[:20])
    print_verdicts("bench_history", verdicts)
    finish(verdicts, args, started)


if __name__ == "__main__":
    main()
