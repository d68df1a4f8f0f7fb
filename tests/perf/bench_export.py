"""Peak memory of `engram export` as the store grows (issue 15 item 7).

Before the export streamed, a 1 GB store took 5.9 GB to export (43.6x the RSS of a store
100 times smaller) and died with a MemoryError under a 3 GB cap. This builds one person's
stores at 1x, 10x and 100x (conversations of 30 turns of 8,000 characters; 1x is about
10 MB of text, 100x about 1 GB) and runs the real command in a child process, to standard
output (/dev/null) and with `--output FILE`, reading the child's peak RSS from
getrusage(RUSAGE_CHILDREN) in a parent that has no other child.

Target: peak RSS at 100x <= 1.1x the peak at 1x (the baseline, same run), both ways.
Informational: export throughput (MB of JSON per second) at 100x.
Run: .venv/bin/python tests/perf/bench_export.py [--quick] [--dir DIR] [--strict]
(~19 min full on 2 busy cores, 15 of them building the 1 GB store — every write rewrites
the checkpoint, issue 15 item 12; `--dir` keeps the stores and a second run reuses them;
`--quick` ~10 s).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from _bench import (
    PASSPHRASE,
    Verdict,
    finish,
    header,
    new_store,
    parser,
    print_verdicts,
    table,
    workdir,
)

from engram.model.conversation import EntryKind
from engram.model.ids import PersonId, new_turn_id
from engram.runtime.conversations import start_conversation
from engram.store import conversation_log

PERSON = PersonId("ana")
TURNS = 30
TURN_CHARS = 8_000
SCALES = (1, 10, 100)
TARGET = 1.1

_PEAK = (
    "import resource, subprocess, sys\n"
    "out = open(sys.argv[1], 'wb')\n"
    "done = subprocess.run(sys.argv[2:], stdout=out)\n"
    "assert done.returncode == 0, done.returncode\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


def build(path: Path, conversations: int) -> None:
    """One person, `conversations` conversations of TURNS turns (one write each)."""
    done = path.with_name(path.name + ".built")
    if done.exists():
        return
    for stale in path.parent.glob(path.name + "*"):
        stale.unlink()
    store = new_store(path)
    words = ("the allotment needs water before the heat of the afternoon " * 200)[:TURN_CHARS]
    try:
        for c in range(conversations):
            info = start_conversation(store, [PERSON])
            with store.write() as txn:
                for t in range(TURNS):
                    conversation_log.append_entry(
                        store,
                        txn,
                        info.id,
                        EntryKind.USER if t % 2 == 0 else EntryKind.ASSISTANT,
                        ref=new_turn_id(),
                        author=PERSON if t % 2 == 0 else "assistant",
                        status="committed",
                        text=f"{c}.{t} {words}"[:TURN_CHARS],
                    )
    finally:
        store.close()
    done.touch()


def peak_mib(store: Path, out: Path, *extra: str) -> tuple[float, float]:
    """The export's peak RSS in MiB and its wall time in seconds."""
    env = {**os.environ, "BENCH_PASSPHRASE": PASSPHRASE}
    command = [sys.executable, "-m", "engram", "--store", str(store)]
    command += ["--passphrase-env", "BENCH_PASSPHRASE", "export", "--person", PERSON, *extra]
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, str(out), *command],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return int(done.stdout) / 1024, time.perf_counter() - start


def main() -> None:
    args = parser(__doc__ or "").parse_args()
    header("engram export: peak memory by store size", args)
    started = time.perf_counter()
    base = 4 if args.quick else 40  # conversations at 1x
    rows, peaks = [], {}
    with workdir(args) as folder:
        for scale in SCALES[:2] if args.quick else SCALES:
            path = folder / f"export-{scale}x.engram"
            with_build = time.perf_counter()
            build(path, base * scale)
            built = time.perf_counter() - with_build
            stdout_peak, stdout_s = peak_mib(path, Path(os.devnull))
            written = folder / f"export-{scale}x.json"
            file_peak, file_s = peak_mib(path, Path(os.devnull), "--output", str(written))
            size = written.stat().st_size
            written.unlink()
            peaks[scale] = (stdout_peak, file_peak)
            rows.append(
                [
                    f"{scale}x",
                    f"{base * scale:,}",
                    f"{path.stat().st_size / 1e6:,.0f} MB",
                    f"{size / 1e6:,.0f} MB",
                    f"{stdout_peak:.1f} MiB",
                    f"{file_peak:.1f} MiB",
                    f"{size / 1e6 / file_s:.1f} MB/s",
                    f"{built:.0f} s",
                ]
            )
            print(f"   {scale}x done (stdout {stdout_s:.1f} s, --output {file_s:.1f} s)")
    print()
    headers = ["scale", "conversations", "store", "JSON", "peak, stdout", "peak, --output"]
    print(table([*headers, "throughput", "build"], rows))
    top = max(peaks)
    verdicts = [
        Verdict(
            f"export peak RSS {top}x / 1x, {way}",
            peaks[top][index],
            peaks[1][index],
            TARGET,
            f"the real `engram export` in a child process, {top}x the store of 1x",
            unit="MiB",
        )
        for index, way in enumerate(("stdout", "--output"))
    ]
    print_verdicts("engram export: peak memory", verdicts)
    finish(verdicts, args, started)


if __name__ == "__main__":
    main()
