"""Issue 20 item 7: the strength floor on `init`, `passphrase change`, `keyring forget`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import keyring
import pytest

from engram.control import passphrase
from engram.model.errors import KeyUnavailable, WrongPassphrase
from engram.store import faults
from engram.store.store import Store
from tests.conftest import PASSPHRASE, MemoryKeyring

NEW = "quiet lantern orbit mosaic"
REPO = Path(__file__).resolve().parents[2]


def test_issue20_item7_init_refuses_a_weak_passphrase_in_one_sentence(
    cli: Any, store_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WEAK", "a")
    refused = cli("--passphrase-env", "WEAK", "init", passphrase=False)
    assert refused.code == 1 and not store_path.exists()
    line = refused.err.strip()
    assert "\n" not in line and line.count(". ") == 0  # one sentence
    assert "too easy to guess" in line and "score of 3 of 4" in line
    assert "--weak-passphrase" in line
    # zxcvbn's advice is folded into the sentence: no capital after a semicolon.
    assert "; " in line and not [w for w in line.split("; ")[1:] if w[:1].isupper()], line
    made = cli("--passphrase-env", "WEAK", "init", "--weak-passphrase", passphrase=False)
    assert made.code == 0, made.err
    assert cli("--passphrase-env", "WEAK", "persons", passphrase=False).code == 0


def test_issue20_item7_the_window_and_the_command_line_share_one_floor() -> None:
    from engram.gui import new_store_dialog

    assert new_store_dialog.passphrase_strength is passphrase.passphrase_strength
    assert not passphrase.passphrase_strength("a").enough
    assert passphrase.passphrase_strength(PASSPHRASE).enough


def test_issue20_item7_change_rewraps_the_key_old_stops_new_opens_data_intact(
    cli: Any, store_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cli("init", "--no-keyring").code == 0
    added = cli(
        "notes",
        "add",
        "--person",
        "maya",
        "--text",
        "Maya likes tea",
        "--kind",
        "fact",
        "--scope",
        "direct",
    )
    assert added.code == 0, added.err
    before = cli("notes", "list", "--person", "maya", "--json").json()
    monkeypatch.setenv("NEW", NEW)
    changed = cli("passphrase", "change", "--new-passphrase-env", "NEW")
    assert changed.code == 0, changed.err
    assert "old one no longer opens it" in changed.out
    old = cli("persons")
    assert old.code == 1 and "does not open" in old.err
    assert (
        cli(
            "--passphrase-env",
            "NEW",
            "notes",
            "list",
            "--person",
            "maya",
            "--json",
            passphrase=False,
        ).json()
        == before
    )
    verified = cli("--passphrase-env", "NEW", "verify", passphrase=False)
    assert verified.code == 0, verified.out  # the signed ledger recorded the new row
    monkeypatch.setenv("WEAK", "a")
    weak = cli(
        "--passphrase-env",
        "NEW",
        "passphrase",
        "change",
        "--new-passphrase-env",
        "WEAK",
        passphrase=False,
    )
    assert weak.code == 1 and "--weak-passphrase" in weak.err


def test_issue20_item7_change_without_a_new_passphrase_or_terminal_is_one_sentence(
    cli: Any,
) -> None:
    assert cli("init").code == 0
    result = cli("passphrase", "change")
    assert result.code == 1
    assert result.err.count("\n") == 1
    assert "No new passphrase was given and there is no terminal to ask on" in result.err


def test_issue20_item7_a_keyring_held_store_changes_its_passphrase_and_keeps_opening(
    store_path: Path, test_keyring: MemoryKeyring
) -> None:
    store = Store.create(str(store_path), passphrase=PASSPHRASE)
    store.change_passphrase(NEW)
    store.close()
    again = Store.open(str(store_path))  # from the keyring: the same key
    again.close()
    with pytest.raises(WrongPassphrase):
        Store.open(str(store_path), passphrase=PASSPHRASE)
    Store.open(str(store_path), passphrase=NEW).close()


def test_issue20_item7_a_keyring_only_store_gets_a_passphrase(store_path: Path) -> None:
    store = Store.create(str(store_path))
    assert store.info.kek_by_passphrase is None
    with pytest.raises(KeyUnavailable, match="no passphrase"):
        store.forget_key(NEW)  # nothing else would open it
    said = passphrase.change_passphrase(store, NEW)
    assert "now has a passphrase" in said
    store.close()
    Store.open(str(store_path), passphrase=NEW).close()


def test_issue20_item7_keyring_forget_removes_the_key_after_the_passphrase_is_proven(
    cli: Any, store_path: Path, test_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cli("init").code == 0
    assert cli("persons", passphrase=False).code == 0  # opens from the keyring
    monkeypatch.setenv("WRONG", "not the passphrase")
    wrong = cli("--passphrase-env", "WRONG", "keyring", "forget", passphrase=False)
    assert wrong.code == 1
    assert cli("persons", passphrase=False).code == 0  # the key is still there
    no_source = cli("keyring", "forget", passphrase=False)
    assert no_source.code == 1 and "--passphrase-file" in no_source.err
    forgot = cli("keyring", "forget")
    assert forgot.code == 0, forgot.err
    assert "only its passphrase opens it" in forgot.out
    assert (
        keyring.get_password("engram", Store.open(str(store_path), passphrase=PASSPHRASE).info.id)
        is None
    )
    gone = cli("persons", passphrase=False)
    assert gone.code == 1 and "holds no key" in gone.err
    assert cli("persons").code == 0  # the passphrase still opens it


@pytest.mark.parametrize(
    ("crash_at", "opens_with"),
    [(faults.PASSPHRASE_REWRAPPED, PASSPHRASE), (faults.AFTER_COMMIT, NEW)],
)
def test_issue20_item7_a_change_killed_midway_leaves_one_passphrase_that_works(
    store_path: Path, tmp_path: Path, crash_at: str, opens_with: str
) -> None:
    """SIGKILL inside the change's transaction keeps the old passphrase; after its commit,
    the new one: never neither (one transaction)."""
    Store.create(str(store_path), passphrase=PASSPHRASE, use_keyring=False).close()
    env = {
        **os.environ,
        "PYTHONPATH": f"{REPO / 'app'}{os.pathsep}{REPO}",
        faults.CRASH_ENV: crash_at,
        "OLD": PASSPHRASE,
        "NEW": NEW,
        "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",
    }
    script = (
        "from engram.store import crypto\n"
        "crypto.DEFAULT_KDF = crypto.FAST_KDF_FOR_TESTS\n"
        "from engram.cli.main import main\n"
        f"main(['--store', {str(store_path)!r}, '--passphrase-env', 'OLD', 'passphrase', "
        "'change', '--new-passphrase-env', 'NEW'])\n"
    )
    done = subprocess.run([sys.executable, "-c", script], env=env, timeout=60, check=False)
    assert done.returncode == -9  # killed where asked
    other = NEW if opens_with == PASSPHRASE else PASSPHRASE
    with pytest.raises(WrongPassphrase):
        Store.open(str(store_path), passphrase=other)
    store = Store.open(str(store_path), passphrase=opens_with)
    store.close()


def test_issue20_item7_keyring_forget_reads_a_passphrase_fd_once(
    cli: Any, test_keyring: MemoryKeyring
) -> None:
    """The store is opened, then the key forgotten, with the one line a pipe gives."""
    assert cli("init").code == 0
    read_end, write_end = os.pipe()
    os.write(write_end, (PASSPHRASE + "\n").encode())
    os.close(write_end)
    try:
        forgot = cli("--passphrase-fd", str(read_end), "keyring", "forget", passphrase=False)
    finally:
        os.close(read_end)
    assert forgot.code == 0, forgot.err
    assert not any(user.startswith("s_") and "/" not in user for _, user in test_keyring.items)
