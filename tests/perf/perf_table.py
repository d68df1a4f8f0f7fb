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

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

from run_all import shown  # noqa: E402  (one way to show a figure)


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
        figures = f"{shown(row, 'measured')} | {shown(row, 'baseline')}"
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
