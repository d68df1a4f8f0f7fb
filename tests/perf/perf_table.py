"""docs/perf.json as a Markdown table (the README's "The latest full run").

Run: .venv/bin/python tests/perf/perf_table.py [FILE]   (default docs/perf.json)
Rows keep run_all's order; informational rows are marked "(info)"; a row whose benchmark
did not finish shows its exit status in place of figures.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def _figure(row: dict[str, Any], key: str) -> str:
    value = row.get(key)
    if value is None:
        return "—"
    unit = row.get("unit", "s")
    if unit != "s":
        return f"{value:,.1f} {unit}"
    if value >= 1:
        return f"{value:.2f} s"
    if value >= 1e-3:
        return f"{value * 1e3:.2f} ms"
    return f"{value * 1e6:.1f} µs"


def markdown(rows: list[dict[str, Any]]) -> str:
    """One line per row: benchmark, path, ours, baseline, ratio, target, verdict."""
    out = [
        "| benchmark | path | ours | baseline (same run) | ratio | target | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        ratio = "—" if row.get("ratio") is None else f"{row['ratio']:.2f}×"
        target = "—" if row.get("target") is None else f"≤ {row['target']:g}×"
        verdict = "pass" if row.get("pass") else "**miss**"
        if row.get("informational"):
            verdict += " (info)"
        path = str(row["name"]).replace("|", "/")
        if row.get("how", "").startswith(("exit", "did not")) and row.get("ratio") is None:
            path += f" ({row['how']})"
        figures = f"{_figure(row, 'measured')} | {_figure(row, 'baseline')}"
        out.append(f"| {row['bench']} | {path} | {figures} | {ratio} | {target} | {verdict} |")
    return "\n".join(out)


def main() -> int:
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "perf.json"
    rows = json.loads(source.read_text(encoding="utf-8"))
    print(markdown(rows))
    scored = [r for r in rows if not r.get("informational")]
    missed = [r for r in scored if not r.get("pass")]
    made = sorted({str(r.get("made", "")) for r in rows})
    print(
        f"\n{len(scored) - len(missed)} of {len(scored)} targets pass "
        f"(runs made {made[0]} to {made[-1]}, {rows[0].get('machine', '')})."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
