"""Progress bars for long commands, drawn with rich on stderr.

The core reports progress through a plain callback (engram.model.progress); this adapts it
to a bar. A bar is drawn only when both stdout and stderr are terminals and --json was not
given, so piped, redirected and automated output stay exactly as they are.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from engram.cli.context import CommandContext
from engram.model.progress import Progress


def wanted(ctx: CommandContext) -> bool:
    """Whether a bar may be drawn: a person at a terminal, not --json."""
    return not ctx.as_json and sys.stdout.isatty() and sys.stderr.isatty()


@contextmanager
def progress_bar(ctx: CommandContext, label: str) -> Iterator[Progress | None]:
    """A callback that moves a bar labelled `label`, or None when no bar is wanted."""
    if not wanted(ctx):
        yield None
        return
    # Imported here: a command that draws no bar does not pay for rich's import.
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as Bar

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Bar(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=None)

        def advance(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield advance
