"""Issue 9 items 2 and 6, the reliability suite's tamper row: every change to a real demo
store is detected or proven harmless, nothing raises a traceback, and an untouched copy
verifies clean.

At the default size it runs a seeded sample that still touches every table with every
kind of mutation (about 100, under a minute); ENGRAM_RELIABILITY_FULL=1 runs all of them
(figures in docs/reliability.md).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.reliability import tamper

FULL = os.environ.get("ENGRAM_RELIABILITY_FULL") == "1"


@pytest.mark.slow
def test_issue9_tamper_every_change_is_detected_or_harmless(tmp_path: Path) -> None:
    report = tamper.run(full=FULL, sample=100, cli_every=1 if FULL else 2, folder=tmp_path)
    assert report.baseline_ok, report.baseline_problems  # no false positive
    assert [o.to_json() for o in report.failures()] == []
    tables = {o.mutation.table for o in report.outcomes}
    kinds = {o.mutation.kind for o in report.outcomes}
    with_rows = {
        t for t, (_, rows) in tamper._catalogue(tmp_path / "pristine.engram").items() if rows
    }
    assert with_rows <= tables  # every table with rows was mutated
    assert kinds == {"bitflip", "delete", "swap", "page", "truncate"}
    assert report.counts().get("detected", 0) > 0.6 * len(report.outcomes)
