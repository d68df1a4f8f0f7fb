"""How fast `engram` starts (issue 20 item 10), as ratios against a bare Python start.

Measured: `engram --help`, `engram --version`, `engram notes list --help` (a command's help)
and `engram persons` on a current store, each a new process started the way pip's console
script starts it (the child's CPU time, and the wall clock beside it); and whether `persons`
loaded Alembic (the migrations) at all.
Baseline in the same run, interleaved: `python -c pass` with the same interpreter.
Targets: `--help`, `--version` and a command's help <= 2x the baseline; `persons` loads no
Alembic (0 modules); the ratio of `persons` (an Argon2 unlock at the test limits, then a
read) is informational.
Run: .venv/bin/python tests/perf/bench_startup.py
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from _bench import (
    PASSPHRASE,
    Timing,
    Verdict,
    finish,
    header,
    new_store,
    parser,
    print_verdicts,
    workdir,
)

# The body of the console script pip writes for `engram` (project.scripts).
CONSOLE_SCRIPT = "import sys\nfrom engram.cli.main import run\nsys.argv[0] = 'engram'\nrun()\n"
COUNT_ALEMBIC = (
    "import sys\nfrom engram.cli.main import main\nsys.argv[0] = 'engram'\ncode = main()\n"
    "print(sum(m.split('.')[0] == 'alembic' for m in sys.modules), file=sys.stderr)\n"
)


@dataclass
class Started:
    """One command's starts: wall-clock seconds, and the child's own CPU seconds (user +
    system, from wait4), which a busy machine inflates far less than the wall clock."""

    wall: Timing = field(default_factory=Timing)
    cpu: Timing = field(default_factory=Timing)


def _start(argv: list[str], env: dict[str, str], into: Started | None) -> None:
    began = time.perf_counter()
    child = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{argv[-1]} exited {child.returncode}")
    if into is not None:
        into.wall.add(time.perf_counter() - began)
        into.cpu.add(usage.ru_utime + usage.ru_stime)


def main() -> None:
    args = parser(__doc__.split("\n", 1)[0]).parse_args()
    began = time.perf_counter()
    header("engram's start", args)
    repeat = args.repeat or (5 if args.quick else 30)
    # Bytecode as an installed wheel has it (pip compiles on install): written on warm-up.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["ENGRAM_BENCH_PASSPHRASE"] = PASSPHRASE
    python = sys.executable
    with workdir(args) as folder:
        store = Path(folder) / "current.engram"
        if not store.exists():
            new_store(store).close()
        persons = ["--store", str(store), "--passphrase-env", "ENGRAM_BENCH_PASSPHRASE"]
        commands = {
            "python -c pass": [python, "-c", "pass"],
            "engram --help": [python, "-c", CONSOLE_SCRIPT, "--help"],
            "engram --version": [python, "-c", CONSOLE_SCRIPT, "--version"],
            "engram notes list --help": [python, "-c", CONSOLE_SCRIPT, "notes", "list", "--help"],
            "engram persons": [python, "-c", CONSOLE_SCRIPT, *persons, "persons"],
        }
        started = {name: Started() for name in commands}
        for round_ in range(2 + repeat):  # interleaved: a busy moment hits each alike
            for name, argv in commands.items():
                gc.collect()
                _start(argv, env, started[name] if round_ >= 2 else None)
        counted = subprocess.run(
            [python, "-c", COUNT_ALEMBIC, *persons, "persons"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            check=True,
        )
        alembic_modules = int(counted.stderr.strip().splitlines()[-1])
    base = started["python -c pass"]
    verdicts: list[Verdict] = []
    for option in ("--help", "--version", "notes list --help"):
        mine = started[f"engram {option}"]
        verdicts.append(
            Verdict(
                option,
                mine.cpu.median,
                base.cpu.median,
                2.0,
                f"engram {option} vs python -c pass: the new process's CPU time (medians)",
            )
        )
        verdicts.append(
            Verdict(
                f"{option} (wall)",
                mine.wall.median,
                base.wall.median,
                2.0,
                f"engram {option} vs python -c pass: wall clock (medians; noisy on a busy machine)",
                informational=True,
            )
        )
    verdicts.append(
        Verdict(
            "persons",
            started["engram persons"].cpu.median,
            base.cpu.median,
            float("inf"),
            "engram persons on a current store (unlock at the test Argon2 limits + read) "
            "vs python -c pass, CPU time",
            informational=True,
        )
    )
    verdicts.append(
        Verdict(
            "persons loads no Alembic",
            float(alembic_modules),
            1.0,
            0.0,
            "Alembic modules in sys.modules after engram persons on a current store "
            "(ratio = the count; target 0)",
            unit="modules",
        )
    )
    for name, timing in started.items():
        print(
            f"   {name:<24} CPU best {timing.cpu.best * 1e3:6.1f} ms, median "
            f"{timing.cpu.median * 1e3:6.1f} ms; wall median {timing.wall.median * 1e3:6.1f} ms"
        )
    print_verdicts("engram's start", verdicts)
    finish(verdicts, args, began)


if __name__ == "__main__":
    main()
