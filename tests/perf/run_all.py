"""Every benchmark in one run: one table, and docs/perf.json (issue 19 item 6).

Runs each benchmark below as its own process, one after another (so no two compete for
the machine), with `--json` to collect its verdicts; prints one table — benchmark, path,
ours, the baseline measured in the same run, ratio, target, pass — and writes the rows to
docs/perf.json (a list of rows with at least `name`, `ratio`, `target`, `pass`, each
saying when and on what machine the run was made). A benchmark that fails or times out is a row
that does not pass, with its exit status, so a missing figure is never read as a pass.

Run: .venv/bin/python tests/perf/run_all.py [--quick] [--only a,b] [--out FILE]
     (--quick is a smoke run of the scripts: its ratios are not the targets, and it writes
     docs/perf-quick.json unless --out says otherwise)
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

# (script, extra arguments, time limit in seconds for a full run)
BENCHMARKS: tuple[tuple[str, tuple[str, ...], int], ...] = (
    ("bench_append.py", (), 900),
    ("bench_verify.py", (), 1200),
    ("bench_open_page.py", (), 2400),
    ("bench_assembly.py", (), 1200),
    ("bench_history.py", (), 1800),
    ("bench_learning.py", (), 900),
    ("bench_checkpoint.py", (), 900),
    ("bench_http.py", (), 1200),
    ("bench_export.py", (), 3600),
    ("eval_locomo.py", (), 900),
    ("bench_startup.py", (), 600),
    ("bench_kdf.py", (), 300),
    ("bench_erase.py", (), 1200),
    ("bench_memory.py", (), 1800),
    ("bench_inspector.py", ("--rounds", "2"), 2400),
    # The same append, verify and find rows with the store in PostgreSQL (issue 19 item 8)
    ("bench_append.py", ("--postgres",), 900),
    ("bench_verify.py", ("--postgres",), 1200),
    ("bench_history.py", ("--part", "1", "--postgres"), 1800),
)


def run_one(script: str, extra: tuple[str, ...], limit: int, quick: bool) -> list[dict[str, Any]]:
    """The benchmark's verdict rows; one failing row when it did not finish."""
    with tempfile.TemporaryDirectory(prefix="engram-perf-") as scratch:
        out = Path(scratch) / "verdicts.json"
        command = [sys.executable, str(HERE / script), *extra, "--json", str(out)]
        if quick:
            command.append("--quick")
        print(f"\n#### {script} {' '.join(extra)}{' --quick' if quick else ''}", flush=True)
        began = time.perf_counter()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "app"), str(ROOT)])}
        try:
            done = subprocess.run(command, cwd=ROOT, env=env, timeout=limit, check=False)
            status = f"exit {done.returncode}"
        except subprocess.TimeoutExpired:
            status = f"did not finish in {limit} s"
            done = None
        seconds = time.perf_counter() - began
        rows: list[dict[str, Any]] = []
        if out.exists():
            rows = json.loads(out.read_text())
        if done is None or (done.returncode != 0 and not rows) or not rows:
            rows.append(
                {
                    "name": f"{script} ran to the end",
                    "bench": Path(script).stem + (" (PostgreSQL)" if "--postgres" in extra else ""),
                    "ratio": None,
                    "target": None,
                    "pass": False,
                    "how": status,
                }
            )
        for row in rows:
            row["seconds"] = round(seconds, 1)
        return rows


def shown(row: dict[str, Any], key: str) -> str:
    """A row's figure in its unit (seconds as s, ms or µs)."""
    value = row.get(key)
    if value is None:
        return "—"
    if row.get("unit", "s") != "s":
        return f"{value:,.1f} {row['unit']}"
    if value >= 1:
        return f"{value:.2f} s"
    if value >= 1e-3:
        return f"{value * 1e3:.2f} ms"
    return f"{value * 1e6:.1f} µs"


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        [
            row["bench"],
            row["name"],
            shown(row, "measured"),
            shown(row, "baseline"),
            "—" if row["ratio"] is None else f"{row['ratio']:.2f}x",
            "—" if row["target"] is None else f"<= {row['target']:g}x",
            ("PASS" if row["pass"] else "MISS") + (" (info)" if row.get("informational") else ""),
        ]
        for row in rows
    ]
    headers = ["benchmark", "path", "ours", "baseline", "ratio", "target", "verdict"]
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(headers)]
    out = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))]
    out.append("  ".join("-" * w for w in widths))
    out += ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) for line in lines]
    return "\n".join(out)


def main() -> int:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--quick", action="store_true", help="a smoke run (sizes / 10)")
    options.add_argument(
        "--only",
        default="",
        help="comma-separated script names to run ('postgres': the PostgreSQL rows)",
    )
    options.add_argument("--out", type=Path, default=None, help="where to write the rows")
    args = options.parse_args()
    chosen = {name.strip() for name in args.only.split(",") if name.strip()}
    started = time.perf_counter()
    rows: list[dict[str, Any]] = []
    for script, extra, limit in BENCHMARKS:
        named = script in chosen or Path(script).stem in chosen
        if chosen and not named and not ("postgres" in chosen and "--postgres" in extra):
            continue
        rows += run_one(script, extra, limit // (5 if args.quick else 1), args.quick)
    print("\n== Every benchmark: result\n")
    print(table(rows))
    missed = [r for r in rows if not r["pass"] and not r.get("informational")]
    print(f"\n   {len(rows) - len(missed)} of {len(rows)} rows pass; ", end="")
    print(f"total {time.perf_counter() - started:.0f} s")
    out = args.out or ROOT / "docs" / ("perf-quick.json" if args.quick else "perf.json")
    run = {
        "made": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cpu(s), {platform.system()}",
        "python": platform.python_version(),
    }
    document = [{**row, **run} for row in rows]
    if chosen and out.exists():  # a partial run replaces its own benchmarks' rows only
        ran = {row["bench"] for row in rows}
        kept = [row for row in json.loads(out.read_text()) if row.get("bench") not in ran]
        document = kept + document
    out.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    print(f"   written to {out}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
