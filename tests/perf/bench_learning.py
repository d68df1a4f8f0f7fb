"""Learning never slows the reply (W2), and finding what to learn stays cheap.

One person with 20 conversations of 250 committed turns each (--quick: 20 x 25), every
turn already analysed, on an agent whose learning suggests. Then, per round, one new turn.

Measured:
  1. LearningWorker.after_turn(conversation) — what a host adds to its reply path after a
     turn commits. Baseline: append_turn itself (the write every reply already makes).
     Target: after_turn <= 0.1x append_turn (medians).
  2. extraction.pending(store, person, conversation=C) — finding the new turn in the
     notified conversation. Baseline: append_turn. Informational.
  3. extraction.pending(store, person) over all 20 conversations, against reading every
     entry of those conversations and filtering in Python (the first implementation).
     Target: <= 1.0x (medians).
  Reported too: the first pass over all 5,000 turns (rule extractor).

Run: .venv/bin/python tests/perf/bench_learning.py [--quick] [--repeat N]
"""

from __future__ import annotations

import time

from _bench import (
    Task,
    Verdict,
    finish,
    fmt_time,
    header,
    interleaved,
    new_store,
    parser,
    print_verdicts,
    table,
    workdir,
)

from engram.engine.rule_extractor import RuleExtractor
from engram.model.conversation import ConversationInfo, EntryKind, TurnStatus
from engram.model.ids import PersonId
from engram.runtime import extraction, learning_worker
from engram.runtime.agents import set_agent
from engram.runtime.conversations import append_turn, start_conversation
from engram.store import conversation_log, projection_state
from engram.store.store import Store

ANA = PersonId("ana")
CONVERSATIONS = 20


def read_everything(store: Store) -> int:
    """The first implementation of `pending`: every entry read, filtered in Python."""
    found = 0
    with store.read() as conn:
        for info in conversation_log.for_person(conn, ANA):
            done = projection_state.processed_turns(conn, ANA, info.id)
            found += sum(
                1
                for e in conversation_log.entries(conn, info.id)
                if e.kind in (EntryKind.USER, EntryKind.ASSISTANT)
                and e.status == TurnStatus.COMMITTED.value
                and e.ref not in done
            )
    return found


def main() -> None:
    started = time.perf_counter()
    args = parser(__doc__ or "").parse_args()
    per_conversation = 25 if args.quick else 250
    header(f"bench_learning: {CONVERSATIONS} conversations x {per_conversation} turns", args)
    with workdir(args) as folder:
        store = new_store(folder / "learning.engram")
        set_agent(store, "helper", {"memory": {"learning": {"mode": "suggest"}}}, "ops")
        conversations: list[ConversationInfo] = []
        for c in range(CONVERSATIONS):
            info = start_conversation(store, [ANA], agent="helper")
            conversations.append(info)
            for t in range(per_conversation):
                text = f"hello, this is message {t} of conversation {c}"
                append_turn(store, info.id, role="user", author=ANA, text=text)
        first = time.perf_counter()
        extraction.learn_all(store, RuleExtractor())
        first_pass = time.perf_counter() - first
        target = conversations[0]
        worker = learning_worker.LearningWorker(store, RuleExtractor())

        def new_turn() -> None:
            append_turn(store, target.id, role="user", author=ANA, text="I live in Porto.")

        def notify() -> None:
            worker.after_turn(target)

        rounds = args.repeat or 20
        timings = interleaved(
            {
                # every task waits for the worker first, so its pass never runs beside one
                "append": Task(new_turn, setup=worker.drain),
                "after_turn": Task(notify, setup=worker.drain),
                "pending_one": Task(
                    lambda: extraction.pending(store, ANA, conversation=target.id),
                    setup=worker.drain,
                ),
                "pending_all": Task(lambda: extraction.pending(store, ANA), setup=worker.drain),
                "read_everything": Task(lambda: read_everything(store), setup=worker.drain),
            },
            repeat=rounds,
        )
        worker.close()
        store.close()
    rows = [[name, fmt_time(t.median), fmt_time(t.best)] for name, t in timings.items()]
    print(table(["measure", "median", "best"], rows))
    print(f"   first pass over {CONVERSATIONS * per_conversation:,} turns: {first_pass:.2f} s")
    verdicts = [
        Verdict(
            "after_turn / append_turn",
            timings["after_turn"].median,
            timings["append"].median,
            0.1,
            "what learning adds to the reply path vs the turn's own write (W2)",
        ),
        Verdict(
            "pending(one conversation) / append_turn",
            timings["pending_one"].median,
            timings["append"].median,
            1.0,
            "finding the new turn in the notified conversation",
            informational=True,
        ),
        Verdict(
            "pending(all) / read everything",
            timings["pending_all"].median,
            timings["read_everything"].median,
            1.0,
            "the database skips handled turns instead of Python reading every entry",
        ),
    ]
    print_verdicts("bench_learning", verdicts)
    finish(verdicts, args, started)


if __name__ == "__main__":
    main()
