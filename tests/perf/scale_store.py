"""The scale generator (issue 19 item 5): the store a heavy user reaches, from a seed.

One heavy person ("heavy") with 1,000,000 journal events leaving ~100,000 open notes,
5,000 conversations and 500,000 messages, plus 50 light people (one conversation of 20
messages and 200 journal events each). Messages are LoCoMo turns (../shared/data/
locomo10.json), varied: shuffled, sometimes joined with a second turn, each conversation
with its own topic word, so no two conversations hold the same text. Everything goes
through the store's own write path (journal.append, conversation_log.append_entry), in
batches, so the store is exactly what Engram itself would have written; the same seed
gives the same store contents (ids and times aside).

It reports how fast each part builds. `--fraction F` builds F of every size (0.01 for a
smoke run). Other benchmarks can call `build(path, seed, fraction)`; a finished build is
marked by PATH.built and reused.

Run: .venv/bin/python tests/perf/scale_store.py --out DIR/scale.engram [--seed 7]
       [--fraction 1.0] [--data ../shared/data/locomo10.json]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from _bench import LOCOMO, JournalMaker, Mix, new_store, table
from bench_history import locomo

from engram.control import persons
from engram.model.conversation import EntryKind
from engram.model.ids import ConversationId, PersonId, new_turn_id
from engram.runtime.conversations import start_conversation
from engram.store import conversation_log, journal
from engram.store.store import Store

HEAVY = PersonId("heavy")
EVENTS = 1_000_000
CONVERSATIONS = 5_000
MESSAGES = 500_000
LIGHT_PEOPLE = 50
LIGHT_MESSAGES = 20
LIGHT_EVENTS = 200
# 3 added : 12 restated : 4 scope changes : 1 deleted in 20 — 150k notes added, 50k
# deleted: ~100k open at 1M events.
HEAVY_MIX = Mix(added=3, restated=12, scope_changed=4, deleted=1)
BATCH_EVENTS = 5_000
BATCH_MESSAGES = 2_000
TOPICS = (
    "allotment",
    "pottery",
    "marathon",
    "adoption",
    "guitar",
    "camping",
    "painting",
    "volunteering",
    "hiking",
    "cooking",
)


@dataclass
class Part:
    """One part of a build: what, how many, how long."""

    what: str
    count: int
    seconds: float

    @property
    def rate(self) -> float:
        return self.count / self.seconds if self.seconds else 0.0


def _messages(rng: random.Random, corpus: list[str], topic: str, count: int) -> list[str]:
    out = []
    for _ in range(count):
        text = rng.choice(corpus)
        if rng.random() < 0.3:  # varied: two turns joined
            text = f"{text} {rng.choice(corpus).split('.')[0]}."
        if rng.random() < 0.2:
            text = f"{text} (about the {topic})"
        out.append(text)
    return out


def _conversation(
    store: Store,
    person: PersonId,
    texts: list[str],
    agent_name: str = "assistant",
) -> ConversationId:
    info = start_conversation(store, [person])
    for start in range(0, len(texts), BATCH_MESSAGES):
        with store.write() as txn:
            for index, text in enumerate(texts[start : start + BATCH_MESSAGES], start=start):
                user = index % 2 == 0
                conversation_log.append_entry(
                    store,
                    txn,
                    info.id,
                    EntryKind.USER if user else EntryKind.ASSISTANT,
                    ref=new_turn_id(),
                    author=person if user else agent_name,
                    status="committed",
                    text=text,
                )
    return info.id


def _journal(
    store: Store, person: PersonId, conversations: list[ConversationId], total: int, seed: int
) -> None:
    rng = random.Random(seed)
    maker = JournalMaker(conversations[0], seed=seed, mix=HEAVY_MIX, portable_share=0.1)
    done = 0
    while done < total:
        size = min(BATCH_EVENTS, total - done)
        maker.conversation = rng.choice(conversations)  # learned across the conversations
        events = maker.batch(size)
        with store.write() as txn:
            journal.append(store, txn, person, events)
        done += size


def build(path: Path, seed: int = 7, fraction: float = 1.0, data: Path = LOCOMO) -> list[Part]:
    """Build the scale store at `path` (reused when PATH.built exists); the parts' timings."""
    done = path.with_name(path.name + ".built")
    if done.exists():
        return []
    for stale in path.parent.glob(path.name + "*"):
        stale.unlink()
    corpus, _ = locomo(data)
    rng = random.Random(seed)
    conversations_n = max(1, int(CONVERSATIONS * fraction))
    per_conversation = max(2, MESSAGES // CONVERSATIONS)
    events_n = max(BATCH_EVENTS // 10, int(EVENTS * fraction))
    light_n = max(1, int(LIGHT_PEOPLE * min(1.0, fraction * 10)))
    store = new_store(path)
    parts: list[Part] = []
    try:
        persons.ensure_person(store, HEAVY)
        began = time.perf_counter()
        conversations = []
        for c in range(conversations_n):
            topic = TOPICS[c % len(TOPICS)]
            texts = _messages(rng, corpus, topic, per_conversation)
            conversations.append(_conversation(store, HEAVY, texts))
        messages = conversations_n * per_conversation
        parts.append(
            Part(f"{conversations_n:,} conversations, heavy", messages, time.perf_counter() - began)
        )
        began = time.perf_counter()
        _journal(store, HEAVY, conversations, events_n, seed)
        parts.append(Part("journal events, heavy", events_n, time.perf_counter() - began))
        began = time.perf_counter()
        for n in range(light_n):
            light = persons.ensure_person(store, f"light{n:02d}")
            texts = _messages(rng, corpus, TOPICS[n % len(TOPICS)], LIGHT_MESSAGES)
            mine = _conversation(store, light, texts)
            _journal(store, light, [mine], LIGHT_EVENTS, seed + n + 1)
        parts.append(
            Part(
                f"{light_n} light people (messages + events)",
                light_n * (LIGHT_MESSAGES + LIGHT_EVENTS),
                time.perf_counter() - began,
            )
        )
    finally:
        store.close()
    done.touch()
    return parts


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--out", type=Path, required=True, help="the store file to build")
    options.add_argument("--seed", type=int, default=7)
    options.add_argument("--fraction", type=float, default=1.0, help="share of every size")
    options.add_argument("--data", type=Path, default=LOCOMO, help="LoCoMo json")
    args = options.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    parts = build(args.out, args.seed, args.fraction, args.data)
    if not parts:
        print(f"{args.out} was built already ({args.out}.built); remove it to build again")
        return
    rows = [[p.what, f"{p.count:,}", f"{p.seconds:.1f} s", f"{p.rate:,.0f}/s"] for p in parts]
    print(table(["part", "count", "time", "rate"], rows))
    size = args.out.stat().st_size / 1e6
    print(f"\n   {args.out}: {size:,.0f} MB in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
