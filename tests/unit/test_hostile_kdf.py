"""Issue 15, item 8: a hostile store cannot hang or crash its opener.

The Argon2id limits live in the store's info row, whose checksum is unkeyed: whoever hands
over a store (one received for offline review) chooses them. Limits outside the bounds
crypto.kdf_problem sets are refused in one sentence before any derivation, leaving the
files as they were; a derivation that fails within the bounds (no memory for it) is one
sentence too.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import nacl.pwhash
import pytest

from engram.model.errors import CorruptStore, InvalidInput
from engram.store import crypto
from engram.store.crypto import KdfParams
from engram.store.store import Store
from tests.conftest import PASSPHRASE
from tests.hostile_store import set_kdf_limits

GIB = 1 << 30


def _files(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in path.parent.iterdir() if p.name.startswith(path.name)}


@pytest.fixture
def passphrase_store(store_path: Path) -> Path:
    Store.create(str(store_path), passphrase=PASSPHRASE, use_keyring=False).close()
    return store_path


def _open_in_a_child(path: Path, timeout: float = 20) -> subprocess.CompletedProcess[str]:
    """`engram persons` on the store in a child process, so a hang fails the test (the
    child is killed at `timeout`) instead of hanging the suite."""
    return subprocess.run(
        [sys.executable, "-m", "engram", "--store", str(path), "--passphrase-env", "P"]
        + ["persons"],
        capture_output=True,
        text=True,
        env={**os.environ, "P": PASSPHRASE},
        timeout=timeout,
    )


@pytest.mark.parametrize(
    ("params", "said"),
    [
        (KdfParams(2**32 - 1, 8 << 20), "1 to 10 passes"),  # the hang past 60 s
        (KdfParams(1, 64 * GIB), "to 1024 MiB"),  # the 64 GiB traceback
        (KdfParams(5, GIB), "more work than Engram takes"),  # each bound alone is fine
        (KdfParams(0, 8 << 20), "1 to 10 passes"),
    ],
)
def test_issue15_item8_limits_out_of_bounds_are_refused_before_deriving(
    passphrase_store: Path, params: KdfParams, said: str
) -> None:
    set_kdf_limits(passphrase_store, params)
    before = _files(passphrase_store)
    started = time.monotonic()
    done = _open_in_a_child(passphrase_store)
    assert time.monotonic() - started < 10
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert said in done.stderr and "nothing was derived" in done.stderr
    # The refused open left the store's files exactly as they were: no -wal, no -shm.
    assert _files(passphrase_store) == before


def test_issue15_item8_the_refusal_comes_before_any_work_in_process(
    passphrase_store: Path,
) -> None:
    set_kdf_limits(passphrase_store, KdfParams(1, 64 * GIB))
    before = _files(passphrase_store)
    with pytest.raises(CorruptStore, match="not opened and nothing was derived"):
        Store.open(str(passphrase_store), passphrase=PASSPHRASE)
    assert _files(passphrase_store) == before


def test_issue15_item8_the_bounds_accept_every_limit_engram_writes() -> None:
    for params in (
        crypto.CALIBRATED_KDF,
        crypto.FAST_KDF_FOR_TESTS,
        KdfParams(nacl.pwhash.argon2id.OPSLIMIT_SENSITIVE, nacl.pwhash.argon2id.MEMLIMIT_SENSITIVE),
        KdfParams(
            nacl.pwhash.argon2id.OPSLIMIT_INTERACTIVE, nacl.pwhash.argon2id.MEMLIMIT_INTERACTIVE
        ),
    ):
        assert crypto.kdf_problem(params) is None, params


def test_issue15_item8_a_new_store_is_not_made_with_limits_out_of_bounds(
    store_path: Path,
) -> None:
    with pytest.raises(InvalidInput, match="nothing was created"):
        Store.create(str(store_path), passphrase=PASSPHRASE, kdf=KdfParams(1, 64 * GIB))
    assert not store_path.exists()


CAPPED_OPEN = """
import resource, sys
size = next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmSize'))
cap = size * 1024 + (400 << 20)  # room to run, none for 1 GiB of Argon2 memory
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
from engram.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def test_issue15_item8_a_derivation_that_runs_out_of_memory_is_one_sentence(
    passphrase_store: Path,
) -> None:
    set_kdf_limits(passphrase_store, KdfParams(1, GIB))  # within the bounds, but over the cap
    # Import everything the open needs before the cap, so only Argon2 can meet it.
    preload = "import engram.cli.main, engram.store.store, nacl.pwhash;"
    done = subprocess.run(
        [sys.executable, "-c", preload + CAPPED_OPEN]
        + ["--store", str(passphrase_store), "--passphrase-env", "P", "persons"],
        capture_output=True,
        text=True,
        env={**os.environ, "P": PASSPHRASE},
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert "Deriving the store's key from the passphrase failed" in done.stderr
