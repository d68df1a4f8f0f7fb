"""How long work reports how far it got: a plain callback, so the core knows no terminal or
widget. The CLI adapts it to a progress bar, the GUI to a signal."""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[int, int], None]
"""Called with (done, total) as work advances; total is the number of steps there will be."""
