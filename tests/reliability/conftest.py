"""Reliability suite: reduced size by default, full size with ENGRAM_RELIABILITY_FULL=1."""

from __future__ import annotations

import os

FULL = os.environ.get("ENGRAM_RELIABILITY_FULL") == "1"


def size(reduced: int, full: int) -> int:
    """How many trials a test runs at this size."""
    return full if FULL else reduced
