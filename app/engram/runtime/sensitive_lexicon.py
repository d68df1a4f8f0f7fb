"""The sensitive-topic detector's data (P5): engram/data/sensitive/categories.json, loaded
once, and the one function every write path asks: which sensitive category a text touches.

The file is package data, read through importlib.resources however Engram was installed
(issue 20 item 5). A missing or broken file is an error, not an empty lexicon: a detector
that silently knows nothing would let sensitive facts through.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from pathlib import Path

from engram.engine.sensitivity import Lexicon
from engram.model.errors import EngramError
from engram.model.sensitivity import SensitiveCategory

_FILE = Path("sensitive") / "categories.json"


class LexiconMissing(EngramError):
    """The installation lacks the sensitive-topic data."""


def _places() -> list[Path]:
    return [Path(str(resources.files("engram") / "data" / _FILE))]


@functools.cache
def lexicon() -> Lexicon:
    """The shipped lexicon (read once per process)."""
    places = _places()
    for place in places:
        if place.is_file():
            try:
                return Lexicon.from_data(json.loads(place.read_text(encoding="utf-8")))
            except (ValueError, KeyError, TypeError) as error:
                raise LexiconMissing(
                    f"Engram's sensitive-topic data at {place} is damaged ({error}); "
                    "reinstall Engram."
                ) from None
    looked = ", ".join(str(p) for p in places)
    raise LexiconMissing(
        f"Engram's sensitive-topic data is missing (looked in {looked}); reinstall Engram."
    )


def sensitive_category(text: str) -> SensitiveCategory | None:
    """The sensitive category a text touches by the shipped lexicon, or None (P5)."""
    return lexicon().category(text)
