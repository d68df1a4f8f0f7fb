"""Issue 20 item 7: on a terminal, `engram` asks for the passphrase (getpass); without one
it says, in one line, how to give it. Driven on a real pseudo-terminal with pexpect.

The child is `engram`'s own entry point with the tests' fast key derivation (Argon2id's
real limits take seconds per derivation on a loaded test machine); the key sources, the
prompts and the terminal are the real ones.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pexpect

from tests.conftest import PASSPHRASE

REPO = Path(__file__).resolve().parents[2]
ENGRAM = (
    "import sys\n"
    "from engram.store import crypto\n"
    "crypto.DEFAULT_KDF = crypto.FAST_KDF_FOR_TESTS\n"
    "from engram.cli.main import run\n"
    "sys.argv[0] = 'engram'\n"
    "run()\n"
)
TIMEOUT = 60


def _env(tmp_path: Path) -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")},
        "PYTHONPATH": f"{REPO / 'app'}{os.pathsep}{REPO}",
        "HOME": str(tmp_path / "home"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        # No keyring on this computer: the passphrase is the only key.
        "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",
    }


def _spawn(tmp_path: Path, *args: str) -> pexpect.spawn:
    return pexpect.spawn(
        sys.executable,
        ["-c", ENGRAM, *args],
        env=_env(tmp_path),
        encoding="utf-8",
        timeout=TIMEOUT,
    )


def _finish(child: pexpect.spawn) -> tuple[int, str]:
    rest = child.read()
    child.close()
    return int(child.exitstatus if child.exitstatus is not None else -1), rest


def test_issue20_item7_init_asks_twice_on_a_terminal_then_persons_asks_once(
    tmp_path: Path,
) -> None:
    store = str(tmp_path / "s.engram")
    child = _spawn(tmp_path, "--store", store, "init")
    child.expect("New passphrase: ")
    child.sendline(PASSPHRASE)
    child.expect("The same passphrase again: ")
    child.sendline(PASSPHRASE)
    code, said = _finish(child)
    assert code == 0, said
    assert PASSPHRASE not in said  # getpass does not echo it
    assert "key kept in a passphrase" in said

    child = _spawn(tmp_path, "--store", store, "persons")
    child.expect(f"Passphrase for {store}: ")
    child.sendline("not it")
    child.expect("does not open the store; try again")
    child.expect(f"Passphrase for {store}: ")
    child.sendline(PASSPHRASE)
    code, said = _finish(child)
    assert code == 0, said
    assert "person" in said  # the table's header: the store opened


def test_issue20_item7_init_on_a_terminal_refuses_differing_and_weak_passphrases(
    tmp_path: Path,
) -> None:
    store = tmp_path / "s.engram"
    child = _spawn(tmp_path, "--store", str(store), "init")
    child.expect("New passphrase: ")
    child.sendline(PASSPHRASE)
    child.expect("again: ")
    child.sendline(PASSPHRASE + " typo")
    code, said = _finish(child)
    assert code == 1 and "The two passphrases differ; nothing was created." in said
    assert not store.exists()

    child = _spawn(tmp_path, "--store", str(store), "init")
    child.expect("New passphrase: ")
    child.sendline("password1")
    code, said = _finish(child)  # refused before it is asked again
    assert code == 1 and "too easy to guess" in said and "--weak-passphrase" in said
    assert not store.exists()


def test_issue20_item7_without_a_terminal_or_source_one_line_names_the_options(
    tmp_path: Path,
) -> None:
    store = str(tmp_path / "s.engram")
    env = {**_env(tmp_path), "P": PASSPHRASE}
    made = subprocess.run(
        [sys.executable, "-c", ENGRAM, "--store", store, "--passphrase-env", "P", "init"],
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    done = subprocess.run(
        [sys.executable, "-c", ENGRAM, "--store", store, "persons"],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1, done.stderr
    for option in ("--passphrase-env", "--passphrase-file", "--passphrase-fd", "terminal"):
        assert option in done.stderr


def test_issue20_item7_passphrase_change_on_a_terminal(tmp_path: Path) -> None:
    store = str(tmp_path / "s.engram")
    env = {**_env(tmp_path), "P": PASSPHRASE}
    subprocess.run(
        [sys.executable, "-c", ENGRAM, "--store", store, "--passphrase-env", "P", "init"],
        env=env,
        capture_output=True,
        timeout=TIMEOUT,
        check=True,
    )
    new = "quiet lantern orbit mosaic"
    child = _spawn(tmp_path, "--store", store, "passphrase", "change")
    child.expect("Passphrase for ")
    child.sendline(PASSPHRASE)
    child.expect("New passphrase: ")
    child.sendline(new)
    child.expect("again: ")
    child.sendline(new)
    code, said = _finish(child)
    assert code == 0 and "was changed" in said, said
    child = _spawn(tmp_path, "--store", store, "persons")
    child.expect("Passphrase for ")
    child.sendline(new)
    code, said = _finish(child)
    assert code == 0, said
