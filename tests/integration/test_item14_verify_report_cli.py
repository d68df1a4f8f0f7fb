"""Issue 17 item 14: `engram report PERSON --output FILE` writes the signed access report
(no display needed), and `engram verify-report FILE` says in one sentence whether the file
came from this store unaltered: exit 0 only when it verifies; 3, with a plain sentence,
when it was altered, is unsigned or came from another store. Checking needs no Qt."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engram.control import notes as memory_control
from engram.control.session import PersonSession
from engram.model.ids import PersonId
from engram.model.scope import Kind, Scope
from engram.store import crypto
from engram.store.store import Store
from tests.conftest import PASSPHRASE

ANA = PersonId("ana")


def _store(path: Path) -> Path:
    """A store (passphrase only, so a child process opens it) where ana has one note."""
    store = Store.create(
        str(path), passphrase=PASSPHRASE, use_keyring=False, kdf=crypto.FAST_KDF_FOR_TESTS
    )
    try:
        session = PersonSession(store, ANA, "ana")
        memory_control.add_note(
            session, "Grows tomatoes on the balcony.", Kind.FACT, Scope.DIRECT, create_person=True
        )
    finally:
        store.close()
    return path


def _engram(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TEST_PASSPHRASE": PASSPHRASE}
    for variable in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        env.pop(variable, None)  # no display at all: the report prints offscreen
    return subprocess.run(
        [sys.executable, "-m", "engram", "--store", str(store), "--passphrase-env"]
        + ["TEST_PASSPHRASE", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A store and the access report it wrote."""
    folder = tmp_path_factory.mktemp("report")
    store = _store(folder / "mine.engram")
    target = folder / "ana-report.pdf"
    done = _engram(store, "report", "ana", "--output", str(target))
    assert done.returncode == 0, done.stderr
    assert f"'engram verify-report {target}' checks it" in done.stderr
    return store, target


def test_item14_report_writes_a_signed_owner_only_pdf_that_verifies(
    signed: tuple[Path, Path],
) -> None:
    store, target = signed
    assert target.read_bytes().startswith(b"%PDF")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    done = _engram(store, "verify-report", str(target))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "This report came from this store and is unaltered since it was signed."
    )
    as_json = json.loads(_engram(store, "verify-report", str(target), "--json").stdout)
    assert as_json == {
        "ok": True,
        "verdict": "verified",
        "message": "This report came from this store and is unaltered since it was signed.",
    }


@pytest.mark.parametrize("where", [0.01, 0.5, 0.95])
def test_item14_a_flipped_byte_fails_with_one_sentence(
    signed: tuple[Path, Path], tmp_path: Path, where: float
) -> None:
    store, target = signed
    data = bytearray(target.read_bytes())
    data[int(len(data) * where)] ^= 0x20
    altered = tmp_path / "altered.pdf"
    altered.write_bytes(bytes(data))
    done = _engram(store, "verify-report", str(altered))
    assert done.returncode == 3
    assert done.stdout.strip() == (
        "This report was changed after it was signed: it is not what the store wrote."
    )


def test_item14_another_stores_report_fails(signed: tuple[Path, Path], tmp_path: Path) -> None:
    _, target = signed
    other = _store(tmp_path / "other.engram")
    done = _engram(other, "verify-report", str(target), "--json")
    assert done.returncode == 3
    assert json.loads(done.stdout)["verdict"] == "other_store"
    assert "signed by another Engram store" in json.loads(done.stdout)["message"]


def test_item14_an_unsigned_file_and_a_missing_one_fail(
    signed: tuple[Path, Path], tmp_path: Path
) -> None:
    store, target = signed
    data = target.read_bytes()
    plain = tmp_path / "plain.pdf"
    plain.write_bytes(data[: data.rfind(b"\n%ENGRAM-REPORT-SIGNATURE")])
    done = _engram(store, "verify-report", str(plain))
    assert done.returncode == 3 and "carries no Engram signature" in done.stdout
    missing = _engram(store, "verify-report", str(tmp_path / "nowhere.pdf"))
    assert missing.returncode == 1 and "Traceback" not in missing.stderr
    assert missing.stderr.strip().endswith(
        "cannot be read (No such file or directory); check its name."
    )


def test_item14_verify_report_needs_no_qt(signed: tuple[Path, Path]) -> None:
    store, target = signed
    probe = (
        "import sys\n"
        "from engram.cli.main import main\n"
        "code = main(sys.argv[1:])\n"
        "assert not [m for m in sys.modules if m.startswith('PySide6')], 'Qt was imported'\n"
        "sys.exit(code)\n"
    )
    env: dict[str, Any] = {**os.environ, "TEST_PASSPHRASE": PASSPHRASE}
    done = subprocess.run(
        [sys.executable, "-c", probe, "--store", str(store), "--passphrase-env"]
        + ["TEST_PASSPHRASE", "verify-report", str(target)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
