"""Opening and creating stores: keyring, passphrase, wrong keys, damage, missing backends."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import keyring
import pytest

from engram.model.errors import (
    CorruptStore,
    KeyUnavailable,
    NotAStore,
    StoreExists,
    StoreMissing,
    WrongPassphrase,
)
from engram.store import crypto
from engram.store.keyring_access import KeyringAccess
from engram.store.store import Store
from tests.conftest import PASSPHRASE, MemoryKeyring, NoKeyring


def _digest_files(path: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(path.parent.iterdir())
        if p.name.startswith(path.name)
    }


def test_keyring_store_opens_without_passphrase(store_path: Path) -> None:
    Store.create(str(store_path)).close()
    reopened = Store.open(str(store_path))
    assert reopened.info.kek_by_passphrase is None
    reopened.close()


def test_passphrase_store_opens_on_a_machine_without_the_key(store_path: Path) -> None:
    created = Store.create(str(store_path), passphrase=PASSPHRASE, use_keyring=False)
    created.close()
    assert created.info.kdf == crypto.FAST_KDF_FOR_TESTS  # limits are recorded
    Store.open(str(store_path), passphrase=PASSPHRASE).close()
    with pytest.raises(KeyUnavailable, match="holds no key"):
        Store.open(str(store_path))


def test_wrong_passphrase_is_its_own_error_and_writes_nothing(store_path: Path) -> None:
    Store.create(str(store_path), passphrase=PASSPHRASE, use_keyring=False).close()
    before = _digest_files(store_path)
    with pytest.raises(WrongPassphrase, match="nothing was changed"):
        Store.open(str(store_path), passphrase="not the passphrase")
    assert _digest_files(store_path) == before


def test_corrupt_store_differs_from_wrong_passphrase(store_path: Path) -> None:
    store_path.write_bytes(b"this is not a database" * 100)
    before = _digest_files(store_path)
    with pytest.raises(NotAStore, match="not an Engram store"):
        Store.open(str(store_path), passphrase=PASSPHRASE)
    assert _digest_files(store_path) == before


def test_damaged_key_row_is_corruption_not_a_wrong_passphrase(store_path: Path) -> None:
    import sqlite3

    Store.create(str(store_path), passphrase=PASSPHRASE, use_keyring=False).close()
    with sqlite3.connect(store_path) as raw:
        blob = bytearray(raw.execute("select kek_by_passphrase from store_info").fetchone()[0])
        blob[5] ^= 0x01
        raw.execute("update store_info set kek_by_passphrase = ?", (bytes(blob),))
    with pytest.raises(CorruptStore):
        Store.open(str(store_path), passphrase=PASSPHRASE)


def test_missing_store_and_existing_store(store_path: Path) -> None:
    with pytest.raises(StoreMissing) as missing:
        Store.open(str(store_path), passphrase=PASSPHRASE)
    assert "engram init" in missing.value.for_command_line()  # the window's words: item 12
    assert "'engram " not in str(missing.value) and "--" not in str(missing.value)
    Store.create(str(store_path), passphrase=PASSPHRASE).close()
    with pytest.raises(StoreExists):
        Store.create(str(store_path), passphrase=PASSPHRASE)


def test_no_keyring_and_no_passphrase_is_one_clear_sentence(store_path: Path) -> None:
    keyring.set_keyring(NoKeyring())
    with pytest.raises(KeyUnavailable) as raised:
        Store.create(str(store_path))
    message = raised.value.for_command_line()
    assert "no usable OS keyring" in message and "--passphrase-env" in message
    assert "--" not in str(raised.value)  # what the window shows (issue 8 item 12)
    assert message.count(".") == 1 and message.endswith(".")
    assert not store_path.exists()  # and never a plaintext key somewhere


def test_headless_machine_opens_with_passphrase(store_path: Path) -> None:
    Store.create(str(store_path), passphrase=PASSPHRASE).close()
    keyring.set_keyring(NoKeyring())
    with pytest.raises(KeyUnavailable, match="no usable OS keyring"):
        Store.open(str(store_path))
    Store.open(str(store_path), passphrase=PASSPHRASE).close()


def test_changed_keyring_backend_refuses_rather_than_starting_empty(store_path: Path) -> None:
    Store.create(str(store_path)).close()
    before = _digest_files(store_path)

    class OtherKeyring(MemoryKeyring):
        pass

    keyring.set_keyring(OtherKeyring())
    with pytest.raises(KeyUnavailable, match="keyring changed"):
        Store.open(str(store_path))
    assert _digest_files(store_path) == before


def test_a_hanging_keyring_times_out_instead_of_freezing() -> None:
    release = threading.Event()

    class HangingKeyring(MemoryKeyring):
        def get_password(self, service: str, username: str) -> str | None:
            release.wait(5)
            return None

    keyring.set_keyring(HangingKeyring())
    try:
        with pytest.raises(KeyUnavailable, match="did not answer"):
            KeyringAccess(timeout_s=0.2).get("s_x")
    finally:
        release.set()


def test_remember_key_puts_a_passphrase_store_in_the_keyring(
    store_path: Path, test_keyring: MemoryKeyring
) -> None:
    created = Store.create(str(store_path), passphrase=PASSPHRASE, use_keyring=False)
    created.remember_key()
    created.close()
    Store.open(str(store_path)).close()
    assert ("engram", created.info.id) in test_keyring.items


def test_default_kdf_limits_are_explicit_and_moderate() -> None:
    # The real default (the suite swaps in a fast one): explicit, far below PyNaCl's 1 GiB.
    assert crypto.CALIBRATED_KDF.memlimit == 256 * 1024 * 1024
    assert crypto.CALIBRATED_KDF.opslimit == 3


def test_blake2b_from_hashlib_equals_libsodium() -> None:
    import nacl.hash
    from nacl.encoding import RawEncoder

    person_key, conversation_key = b"p" * 32, b"c" * 32
    sodium = nacl.hash.blake2b(
        conversation_key,
        digest_size=32,
        key=person_key,
        person=b"engram-note-key",
        encoder=RawEncoder,
    )
    assert crypto.note_key(person_key, conversation_key) == bytes(sodium)
