"""Peak memory of the commands that read a whole person (issue 19 item 2): `verify`,
`export --person` and `notes list --all --json`, each the real `engram` in a child process
(peak RSS from getrusage(RUSAGE_CHILDREN) in a parent with no other child), on one
person's journal of 5,000 events (1x), 50,000 (10x) and 500,000 (100x; --quick: 1x and
10x only, with 1,000 events at 1x), mixed as `_bench.Mix` makes them (added, restated,
scope changes, deletions), learned across 20 conversations of 10 turns.

Baseline: the same command on the 1x store, in the same run. Target: peak(10x) / peak(1x)
and peak(100x) / peak(1x) <= 1.1 for each command — nothing loads a whole journal into
memory at once.

Run: .venv/bin/python tests/perf/bench_memory.py [--quick] [--dir DIR] [--json FILE]
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from _bench import (
    PASSPHRASE,
    JournalMaker,
    Verdict,
    append_events,
    finish,
    header,
    new_store,
    parser,
    print_verdicts,
    table,
    workdir,
)

from engram.control import persons
from engram.model.conversation import EntryKind
from engram.model.ids import PersonId, new_turn_id
from engram.runtime.conversations import start_conversation
from engram.store import conversation_log

PERSON = PersonId("ana")
SCALES = (1, 10, 100)
TARGET = 1.1
COMMANDS: dict[str, tuple[str, ...]] = {
    "verify": ("verify",),
    "export": ("export", "--person", PERSON),
    "notes list --all": ("notes", "list", "--person", PERSON, "--all", "--json"),
}
_PEAK = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
    "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


def build(path: Path, events: int) -> None:
    done = path.with_name(path.name + ".built")
    if done.exists():
        return
    for stale in path.parent.glob(path.name + "*"):
        stale.unlink()
    store = new_store(path)
    try:
        persons.ensure_person(store, PERSON)
        conversations = []
        for c in range(20):
            info = start_conversation(store, [PERSON])
            with store.write() as txn:
                for t in range(10):
                    conversation_log.append_entry(
                        store,
                        txn,
                        info.id,
                        EntryKind.USER if t % 2 == 0 else EntryKind.ASSISTANT,
                        ref=new_turn_id(),
                        author=PERSON if t % 2 == 0 else "assistant",
                        status="committed",
                        text=f"Turn {c}.{t}: the allotment needs water before the heat.",
                    )
            conversations.append(info.id)
        maker = JournalMaker(conversations[0], seed=3)
        append_events(store, PERSON, maker, events, progress=True, label=path.name)
    finally:
        store.close()
    done.touch()


def peak_mib(store: Path, command: tuple[str, ...]) -> tuple[float, float]:
    """The command's peak RSS in MiB and its wall time in seconds (it must succeed)."""
    env = {**os.environ, "BENCH_PASSPHRASE": PASSPHRASE}
    engram = [sys.executable, "-m", "engram", "--store", str(store)]
    engram += ["--passphrase-env", "BENCH_PASSPHRASE", *command]
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, *engram], capture_output=True, text=True, env=env
    )
    code, peak = (int(part) for part in done.stdout.split())
    assert code == 0, (command, code, done.stderr[-500:])
    return peak / 1024, time.perf_counter() - start


def main() -> None:
    args = parser(__doc__ or "").parse_args()
    header("peak memory of verify, export and notes list --all by journal size", args)
    started = time.perf_counter()
    base = 1_000 if args.quick else 5_000
    scales = SCALES[:2] if args.quick else SCALES
    peaks: dict[tuple[str, int], float] = {}
    rows = []
    with workdir(args) as folder:
        for scale in scales:
            path = folder / f"memory-{scale}x.engram"
            began = time.perf_counter()
            build(path, base * scale)
            built = time.perf_counter() - began
            cells = [f"{scale}x", f"{base * scale:,}", f"{path.stat().st_size / 1e6:,.0f} MB"]
            for name, command in COMMANDS.items():
                peak, seconds = peak_mib(path, command)
                peaks[(name, scale)] = peak
                cells.append(f"{peak:.1f} MiB ({seconds:.1f} s)")
            rows.append([*cells, f"{built:.0f} s"])
    print()
    print(table(["scale", "events", "store", *COMMANDS, "build"], rows))
    verdicts = [
        Verdict(
            f"{name}: peak RSS {scale}x / 1x",
            peaks[(name, scale)],
            peaks[(name, 1)],
            TARGET,
            f"`engram {' '.join(COMMANDS[name])}` in a child process; {base * scale:,} events",
            unit="MiB",
        )
        for name in COMMANDS
        for scale in scales[1:]
    ]
    print_verdicts("peak memory", verdicts)
    finish(verdicts, args, started)


if __name__ == "__main__":
    main()
