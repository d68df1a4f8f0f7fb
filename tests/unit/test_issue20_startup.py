"""Issue 20 item 10: fast to start. `engram --help` and `--version` import none of the
store, SQLAlchemy, Alembic or Qt; a read command on a current store loads no migrations.
The ratios against a bare Python start are measured by tests/perf/bench_startup.py."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

import engram
from engram.cli import main as cli_main
from engram.cli import parser as cli_parser
from engram.cli import quick_help, quick_help_data
from engram.control import report_printing, verify_process
from engram.store import crypto, file_scan, migrate
from engram.store.store import Store

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "packaging"))

import help_layouts  # noqa: E402

HEAVY = ("sqlalchemy", "alembic", "PySide6", "fastapi", "pydantic", "mcp")


def _heavy(loaded: set[str]) -> list[str]:
    """The heavy libraries, and any module of the store, that were loaded."""
    return sorted(m for m in loaded if m in HEAVY or m.startswith("engram.store"))


# What pip's console script for `engram` runs, then the heavy modules that were loaded.
_AS_CONSOLE_SCRIPT = """
import json, sys
sys.argv[0] = "engram"
from engram.cli.main import run
try:
    run()
except SystemExit as done:
    code = done.code
loaded = sorted({m if m.startswith("engram.") else m.split(".")[0] for m in sys.modules})
print(json.dumps({"code": code, "loaded": loaded}))
"""


def _loaded(*argv: str, script: str = _AS_CONSOLE_SCRIPT, **env: str) -> tuple[int, set[str]]:
    ran = subprocess.run(
        [sys.executable, "-c", script, *argv],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, **env},
    )
    done = json.loads(ran.stdout.splitlines()[-1])
    return int(done["code"] or 0), set(done["loaded"])


@pytest.mark.parametrize("option", ["--help", "--version"])
def test_issue20_item10_help_and_version_import_nothing_heavy(option: str) -> None:
    code, loaded = _loaded(option)
    assert code == 0
    assert _heavy(loaded) == []
    assert not [m for m in loaded if m.endswith("_cmds")]  # no command's module either
    if option == "--version":
        assert "argparse" not in loaded  # answered before any parser is built


def test_issue20_item10_a_commands_help_loads_only_its_own_group() -> None:
    # Not the quick form (command names, then --help): the parser answers.
    code, loaded = _loaded("notes", "list", "--json", "--help")
    assert code == 0
    commands = {m for m in loaded if m.endswith("_cmds")}
    assert commands == {"engram.cli.note_cmds"}  # its own group's module, no other group's
    assert "PySide6" not in loaded and "alembic" not in loaded


@pytest.mark.parametrize("argv", [["notes", "--help"], ["notes", "list", "-h"], ["mcp", "-h"]])
def test_issue20_item10_a_commands_help_imports_nothing_heavy(argv: list[str]) -> None:
    code, loaded = _loaded(*argv)
    assert code == 0
    assert _heavy(loaded) == []
    assert not [m for m in loaded if m.endswith("_cmds")]
    assert "argparse" not in loaded


def test_issue20_item10_persons_on_a_current_store_loads_no_migrations(tmp_path: Path) -> None:
    path = tmp_path / "current.engram"
    Store.create(
        str(path), passphrase="pw", use_keyring=False, kdf=crypto.FAST_KDF_FOR_TESTS
    ).close()
    args = ("--store", str(path), "--passphrase-env", "PW", "persons", "--json")
    code, loaded = _loaded(*args, PW="pw")
    assert code == 0
    assert "sqlalchemy" in loaded  # the store was opened and read …
    assert "alembic" not in loaded  # … without Alembic, its scripts or its config
    assert "PySide6" not in loaded


def test_issue20_item10_an_older_store_is_still_upgraded_on_open(tmp_path: Path) -> None:
    path = tmp_path / "older.engram"
    store = Store.create(
        str(path), passphrase="pw", use_keyring=False, kdf=crypto.FAST_KDF_FOR_TESTS
    )
    with store.engine.begin() as connection:  # one revision back, as an older Engram left it
        from alembic import command

        previous = sorted(migrate.known_revisions())[-2]
        command.downgrade(migrate._config(connection), previous)
        assert migrate.current_revision(connection) == previous
    store.close()
    reopened = Store.open(str(path), passphrase="pw")
    try:
        with reopened.engine.connect() as connection:
            assert migrate.current_revision(connection) == migrate.HEAD
    finally:
        reopened.close()


def test_issue20_item10_head_is_the_scripts_own_head() -> None:
    # A new migration must move HEAD too, or a current store would be "upgraded" each open.
    assert migrate.scripts_head() == migrate.HEAD


def _printed(parser: argparse.ArgumentParser, argv: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        parser.parse_args(argv)
    return out.getvalue()


def test_issue20_item10_deferred_commands_show_the_same_help_as_the_whole_tree() -> None:
    whole = cli_parser.build_parser()
    assert cli_parser.build_parser(deferred=True).format_help() == whole.format_help()
    for argv in (["persons"], ["desk"], ["notes", "list"], ["mcp", "config"], ["keys"]):
        assert _printed(cli_parser.build_parser(deferred=True), [*argv, "--help"]) == _printed(
            whole, [*argv, "--help"]
        )


def test_issue20_item10_deferred_commands_parse_as_the_whole_tree_does() -> None:
    argv = ["--store", "a", "notes", "list", "--person", "p", "--store", "b", "--json"]
    deferred = vars(cli_parser.build_parser(deferred=True).parse_args(argv))
    assert deferred == vars(cli_parser.build_parser().parse_args(argv))
    assert deferred["store"] == "b" and deferred["person"] == "p"  # after the command wins


def test_issue20_item10_every_command_is_in_one_group() -> None:
    whole = cli_parser.build_parser()
    (commands,) = [a for a in whole._actions if a.dest == "command"]
    named = [name for _, _, helps in cli_parser.GROUPS for name in helps]
    assert named == list(commands.choices)  # type: ignore[attr-defined]


def test_issue20_item10_the_bundles_entry_loads_no_child_for_an_ordinary_start() -> None:
    entry = (ROOT / "packaging" / "engram_entry.py").read_text()
    script = (
        "import json, sys\nsys.argv[0] = 'engram'\ntry:\n"
        + "".join(f"    {line}\n" for line in entry.splitlines())
        + "except SystemExit as done:\n    code = done.code\n"
        + "print(json.dumps({'code': code, 'loaded': sorted(sys.modules)}))\n"
    )
    code, loaded = _loaded("--version", script=script)
    assert code == 0
    assert not {verify_process.__name__, file_scan.__name__, "engram.gui.report_printer"} & loaded
    assert "sqlalchemy" not in loaded
    # The children are told apart by the flag's prefix alone.
    for flag in (verify_process.CHILD_FLAG, report_printing.CHILD_FLAG, file_scan.CHILD_FLAG):
        assert flag.startswith("--engram-")


def test_issue20_item10_version_says_what_the_parsers_version_says(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli_main.main(["--version"]) == 0
    quick = capsys.readouterr().out
    with pytest.raises(SystemExit):
        cli_parser.build_parser().parse_args(["--version"])
    assert quick == capsys.readouterr().out == f"engram {engram.__version__}\n"


def test_issue20_item10_quick_help_is_the_parsers_help_at_every_width(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for width in range(1, 301):
        monkeypatch.setenv("COLUMNS", str(width))
        expected = cli_parser.build_parser(deferred=True).format_help()
        assert quick_help.text() == expected, f"at {width} columns"


def test_issue20_item10_quick_help_is_every_commands_help(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    commands = [path for path, _ in help_layouts.commands(cli_parser.build_parser())]
    assert len(commands) > 50 and set(commands) == set(quick_help_data.PARSERS)  # none left out
    for width in (1, 12, 33, 50, 64, 79, 80, 81, 97, 120, 160, 250):
        monkeypatch.setenv("COLUMNS", str(width))
        for command in commands:
            expected = _printed(cli_parser.build_parser(deferred=True), [*command, "--help"])
            assert quick_help.text(command) == expected, f"{command} at {width} columns"


def test_issue20_item10_quick_help_leaves_the_rest_to_the_parser() -> None:
    assert quick_help.text(["notes", "--json"]) is None  # not command names alone
    assert quick_help.text(["no-such-command"]) is None


@pytest.mark.parametrize("option", ["--help", "-h"])
def test_issue20_item10_help_says_what_the_parser_says_and_exits_0(
    option: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "97")
    with pytest.raises(SystemExit) as parsed:
        cli_parser.build_parser().parse_args([option])
    assert parsed.value.code == 0
    said = capsys.readouterr().out
    assert cli_main.main([option]) == 0
    assert capsys.readouterr().out == said
    ran = subprocess.run(
        [sys.executable, "-c", _CONSOLE_SCRIPT, option],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "COLUMNS": "97"},
    )
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, said, "")


# What pip's console script for `engram` runs, and nothing more (tests/perf/bench_startup.py).
_CONSOLE_SCRIPT = "import sys\nfrom engram.cli.main import run\nsys.argv[0] = 'engram'\nrun()\n"


def _wall(argv: list[str], env: dict[str, str]) -> float:
    began = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, check=True, timeout=60)
    return time.perf_counter() - began


@pytest.mark.parametrize("argv", [["--help"], ["notes", "list", "--help"]])
def test_issue20_item10_help_starts_within_twice_a_bare_python(
    argv: list[str], tmp_path: Path
) -> None:
    # Compiled once, as pip compiles an installed wheel: into a folder of the test's own.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "pycache")
    bare = [sys.executable, "-c", "pass"]
    helped = [sys.executable, "-c", _CONSOLE_SCRIPT, *argv]
    ratios = []
    for round_ in range(3 + 15):  # in turn, so a busy moment slows both alike
        pair = _wall(helped, env), _wall(bare, env)
        if round_ >= 3:  # the first rounds only warm up (and write the bytecode)
            ratios.append(pair[0] / pair[1])
    assert statistics.median(ratios) <= 2.0, sorted(round(r, 2) for r in ratios)
