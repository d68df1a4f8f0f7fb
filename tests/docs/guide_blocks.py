"""The integration guide's runnable blocks, found by the marker above each one:
`<!-- run: NAME -->` followed by a ```python block. A test runs a block exactly as printed."""

from __future__ import annotations

import re
from pathlib import Path

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "integration-guide.md"


def block(name: str) -> str:
    """The python block marked `name` (exactly one)."""
    text = GUIDE.read_text("utf-8")
    found = re.findall(rf"<!-- run: {re.escape(name)} -->\n```python\n(.*?)```", text, flags=re.S)
    assert len(found) == 1, f"the guide has {len(found)} blocks marked {name!r}"
    return found[0]


def marked() -> list[str]:
    """Every marker in the guide, and every python block must carry one."""
    text = GUIDE.read_text("utf-8")
    assert text.count("```python") == len(re.findall(r"<!-- run: [\w-]+ -->\n```python", text))
    return re.findall(r"<!-- run: ([\w-]+) -->", text)
