"""`engram` entry point: the error boundary around one command.

Starting is cheap (issue 20 item 10): `--version` is answered before anything else is
imported; `--help`, and a command's, from the help's data, without argparse or the command's
module (cli/quick_help.py); and the parser (cli/parser.py) imports a command's module only
when the command line names it. The store, SQLAlchemy and the rest are imported only when a
command runs.
"""

from __future__ import annotations

import os
import sys

from engram import __version__

TYPE_CHECKING = False  # typing and collections.abc cost `engram --help` about 2 ms
if TYPE_CHECKING:
    from collections.abc import Sequence

EXIT_ERROR = 1
BUSY_MESSAGE = (
    "The store is busy: another program kept writing to it for longer than Engram waits, "
    "so nothing was written; try again once it is done."
)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the process exit code."""
    given = list(sys.argv[1:] if argv is None else argv)
    if given == ["--version"]:
        # The one answer that needs no parser: said as argparse's --version says it.
        sys.stdout.write(f"engram {__version__}\n")
        return 0
    if given[-1:] in (["--help"], ["-h"]):  # `engram [COMMAND ...] --help`
        from engram.cli import quick_help

        text = quick_help.text(given[:-1])
        if text is not None:  # None: not a command's name alone, or another Python's argparse
            try:  # noqa: SIM105 (contextlib would cost `--help` about 2 ms)
                sys.stdout.write(text)
            except (AttributeError, OSError):
                pass  # as argparse's print_help lets a closed or missing stdout be
            return 0
    from engram.cli.parser import build_parser

    parser = build_parser(deferred=True)
    args = parser.parse_args(argv)
    import logging  # after parsing: `--help` and `--version` need none of it

    logging.basicConfig(level=logging.ERROR, format="%(message)s")
    # Only now, with a command to run: these bring in the store and what it stands on.
    from engram.cli.context import CommandContext
    from engram.cli.output import emit_error, emit_warning
    from engram.model.errors import EngramError

    context = CommandContext(args)
    try:
        return int(args.handler(context) or 0)
    except EngramError as error:
        emit_error(error.for_command_line(), context.as_json)
        return EXIT_ERROR
    except BrokenPipeError:
        # Output piped into `head` and the like: stop quietly, like other Unix tools.
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        return 0
    except (OSError, _database_error()) as error:
        from engram.store.errors import OperationalError, is_busy
        from engram.store.location import store_url
        from engram.store.storage_faults import escaped_fault

        if isinstance(error, OperationalError) and is_busy(error):
            # Another program held the write lock past the busy timeout; the write rolled back.
            emit_error(BUSY_MESSAGE, context.as_json)
            return EXIT_ERROR
        # A full disk or a server gone that no layer below named: still one true sentence.
        fault = escaped_fault(error, store_url(args.store))
        if fault is None:
            raise
        emit_error(fault.for_command_line(), context.as_json)
        return EXIT_ERROR
    except KeyboardInterrupt:
        emit_error("Interrupted; nothing half-written was kept.", context.as_json)
        return 130
    finally:
        for warning in context.warnings():
            emit_warning(f"warning: {warning.rstrip('.')}.")
        context.close()


def _database_error() -> type[Exception]:
    """The store's database error, imported only once a command has raised something."""
    from engram.store.errors import DatabaseError

    return DatabaseError


def run() -> None:
    """Console-script wrapper."""
    sys.exit(main())


if __name__ == "__main__":
    run()
