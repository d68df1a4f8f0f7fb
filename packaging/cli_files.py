"""Shell completion and the manual page, generated from the argparse parsers (issue 20
item 13), as docs/cli.md is, so none of them can drift from the command line; and the
top-level help's data, which `engram --help` lays out without argparse (issue 20 item 10):

    .venv/bin/python packaging/cli_files.py          # write them
    .venv/bin/python packaging/cli_files.py --check  # exit 1 if one is stale

bash and zsh completion come from shtab, the manual page engram(1) from argparse-manpage
(both in the `test` extra). System packages install them as
/usr/share/bash-completion/completions/engram, /usr/share/zsh/vendor-completions/_engram and
/usr/share/man/man1/engram.1; tests/unit/test_issue20_cli_files.py runs the check.
app/engram/cli/quick_help_data.py (packaging/help_layouts.py writes it) is left out of
ruff (pyproject.toml).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

import help_layouts
import shtab
from argparse_manpage.manpage import Manpage

from engram import __version__
from engram.cli.parser import build_parser

ROOT = Path(__file__).resolve().parent.parent
COMPLETIONS = ROOT / "packaging" / "completions"
MAN = ROOT / "packaging" / "man"
QUICK_HELP = ROOT / "app" / "engram" / "cli" / "quick_help_data.py"
WIDTH = "80"  # argparse wraps help to the terminal; the files must not depend on one

SUMMARY = "see and control what an AI agent remembers about a person"
# Sections argparse cannot know, in roff (what docs/cli.md says in its header).
SECTIONS = (
    (
        "exit status",
        ".TP\n.B 0\nthe command did what it says\n"
        ".TP\n.B 1\nan error, said in one sentence on standard error "
        '(with {"error": ...} on standard output under \\-\\-json)\n'
        ".TP\n.B 2\na usage mistake: an unknown command or option, or a value missing\n"
        ".TP\n.B 3\n\\fBverify\\fR found the store not intact, or an erasure did not "
        "fully hold\n.TP\n.B 130\ninterrupted; nothing half-written was kept",
    ),
    (
        "environment",
        ".TP\n.B ENGRAM_STORE\nthe store every command reads when \\-\\-store is not given "
        "(a path or an SQLAlchemy URL); without either, the default store in the user data "
        "folder\n"
        ".TP\n.B ENGRAM_PERSON, ENGRAM_CONVERSATION\nwhom \\fBengram mcp\\fR answers, and "
        "in which conversation, when its host sets no \\-\\-person or \\-\\-conversation",
    ),
    (
        "see also",
        "docs/cli.md in Engram's source: every command and option; the user guide, "
        "docs/user-guide.md, which the inspector also opens from Help.",
    ),
)


def _parser() -> argparse.ArgumentParser:
    os.environ["COLUMNS"] = WIDTH
    for name in ("ENGRAM_STORE", "ENGRAM_PERSON", "ENGRAM_CONVERSATION"):
        os.environ.pop(name, None)  # a host's variables must not become defaults
    return build_parser()


def completion(shell: str) -> str:
    """The completion script for bash or zsh."""
    return shtab.complete(_parser(), shell=shell)


# roff is read as bytes in one 8-bit encoding: groff warns on UTF-8 ("invalid input
# character") and man pages are expected to be ASCII. Each non-ASCII character the help
# holds becomes a groff escape; one not in this table becomes groff's \[uXXXX].
ROFF_ESCAPES = {
    "…": "\\&.\\|.\\|.",  # an ellipsis, as roff sets one; safe at a line's start too
    "—": "\\(em",
    "–": "\\(en",
    "×": "\\(mu",
    "→": "\\(->",
    "←": "\\(<-",
    "≥": "\\(>=",
    "≤": "\\(<=",
    "‘": "\\(oq",
    "’": "\\(cq",
    "“": "\\(lq",
    "”": "\\(rq",
    "›": "\\[fc]",
    "‹": "\\[fo]",
    "·": "\\(pc",
}


def roff_ascii(text: str) -> str:
    """text with every non-ASCII character written as a groff escape."""
    return "".join(
        ch if ord(ch) < 128 else ROFF_ESCAPES.get(ch, f"\\[u{ord(ch):04X}]") for ch in text
    )


def man_page() -> str:
    """engram(1) in roff, ASCII only."""
    page = Manpage(_parser())
    page.source = f"engram {__version__}"
    page.manual = "Engram manual"
    page.date = ""  # the version says when; a build date would make every build differ
    page.description = SUMMARY
    for heading, content in SECTIONS:
        page.add_section(heading, "=", content)
    return roff_ascii(str(page))


FILES: dict[Path, Callable[[], str]] = {
    COMPLETIONS / "engram": lambda: completion("bash"),
    COMPLETIONS / "_engram": lambda: completion("zsh"),
    MAN / "engram.1": man_page,
    QUICK_HELP: lambda: help_layouts.source(_parser()),
}


def stale() -> list[Path]:
    """The committed files that differ from what the parsers generate now."""
    return [
        path
        for path, make in FILES.items()
        if not path.exists() or path.read_text(encoding="utf-8") != make()
    ]


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        out_of_date = stale()
        for path in out_of_date:
            print(
                f"{path.relative_to(ROOT)} is out of date: run "
                "'.venv/bin/python packaging/cli_files.py' and commit it.",
                file=sys.stderr,
            )
        return 1 if out_of_date else 0
    for path, make in FILES.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(make(), encoding="utf-8")
        print(path.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
