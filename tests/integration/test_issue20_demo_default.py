"""Issue 20 item 8: `engram demo` never fills the default store, and the CLI prints
confidence as a percent (JSON keeps basis points, labelled `confidence_bp`)."""

from __future__ import annotations

import io
import re
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from engram.cli.main import main as cli_main
from engram.store.location import default_store_path


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli_main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_issue20_item8_demo_defaults_to_demo_engram_in_the_data_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tmp_path / "real-data.engram"
    monkeypatch.setenv("ENGRAM_STORE", str(real))  # where real data goes: untouched
    code, out, err = _run("demo")
    assert code == 0, err
    demo = tmp_path / "xdg" / "engram" / "demo.engram"
    assert demo.is_file()
    assert not real.exists() and not default_store_path().exists()
    assert f"Built the demo store at {demo} (its passphrase is 'demo')" in out
    assert f"engram desk {demo}" in out
    # Each person's counts in words that agree with them (ines has 1 conversation).
    assert re.search(r"^  ines: \d+ notes, 1 conversation$", out, re.MULTILINE), out
    assert not re.search(r"\b1 (notes|conversations)\b", out), out
    # It opens with the public passphrase, from any face.
    monkeypatch.setenv("DEMO", "demo")
    code, out, err = _run("--store", str(demo), "--passphrase-env", "DEMO", "persons")
    assert code == 0 and "maya" in out, err
    code, _, err = _run("demo")
    assert code == 1 and "already exists" in err  # never over the existing demo


def test_issue20_item8_the_cli_prints_confidence_as_a_percent(cli: Any) -> None:
    assert cli("demo", "--json").code == 0
    listed = cli("notes", "list", "--person", "maya", "--json").json()
    corroborated = next(n for n in listed if n["corroborators"])
    assert isinstance(corroborated["confidence_bp"], int)  # JSON: basis points, labelled
    bp = corroborated["confidence_bp"]
    table = cli("notes", "list", "--person", "maya").out
    header, *rows = table.splitlines()
    assert "confidence" in header
    row = next(r for r in rows if r.startswith(corroborated["id"]))
    assert f" {bp // 100}% " in row and f" {bp} " not in row
    shown = cli("notes", "show", corroborated["id"], "--person", "maya").out
    line = next(line for line in shown.splitlines() if "confidence" in line)
    assert re.fullmatch(r"  confidence \d+% \(\d+% \+ 5% × \d+ = \d+%(, capped at 100%)?\)", line)
    assert str(bp) not in line
