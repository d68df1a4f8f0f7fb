"""Issue 18 item 11: the store's encryption contexts live in one registry (contexts.py), its
data keys in an object the store owns, and erasure hooks into the write path.

The contexts are part of the on-disk format: each is pinned here byte for byte, as every
store written so far spelled it, so a store made before the registry keeps opening.
"""

from __future__ import annotations

from sqlalchemy import select

from engram.control.persons import ensure_person
from engram.model.ids import PersonId
from engram.runtime.conversations import append_turn, start_conversation
from engram.store import contexts, crypto, schema
from engram.store.conversation_log import excise
from engram.store.data_keys import DataKeys, person_key_ref
from engram.store.store import Store


def test_issue18_item11_the_seal_contexts_are_the_ones_every_store_was_written_with() -> None:
    assert contexts.kek_by_passphrase("s_1") == b"engram-kek|s_1"
    assert contexts.signing_seed("s_1") == b"engram-signing|s_1"
    assert contexts.data_key("s_1", "person:ann") == b"engram-datakey|s_1|person:ann"
    assert contexts.journal_payload("s_1", "ann", 3, "note:ann:c_1") == (
        b"journal|s_1|ann|3|note:ann:c_1"
    )
    assert contexts.person_name("s_1", "ann") == b"person-name|s_1|ann"
    assert contexts.log_payload("s_1", "c_1", 4) == b"log|s_1|c_1|4"
    assert contexts.erasure_probes("s_1", 2) == b"erasure-probes|s_1|2"
    assert contexts.ERASED_CIPHERTEXTS == b"engram-erased-ciphertexts-v2\n"


def test_issue18_item11_the_digest_domains_are_the_ones_every_store_was_written_with() -> None:
    assert (contexts.HIDDEN_NAMES, contexts.LEDGER, contexts.GENESIS) == (
        b"engram-hidden-names",
        b"engram-ledger",
        b"engram-genesis",
    )
    assert (contexts.NOTE_KEY, contexts.CHECKPOINT, contexts.ANCHOR_PATH) == (
        b"engram-note-key",
        b"engram-checkpoint",
        b"engram-anchor-path",
    )
    assert (contexts.PAYLOAD, contexts.STORE_INFO) == (b"payload", b"store-info")
    assert contexts.ACCESS_REPORT == b"engram-access-report"


def test_issue18_item11_the_store_owns_its_data_keys_rather_than_being_them(store: Store) -> None:
    assert not issubclass(Store, DataKeys) and isinstance(store.keys, DataKeys)
    assert not hasattr(store, "data_key") and not hasattr(store, "_kek")
    ensure_person(store, PersonId("ann"))
    with store.read() as conn:
        wrapped = conn.execute(
            select(schema.data_keys.c.wrapped).where(
                schema.data_keys.c.key_ref == person_key_ref("ann")
            )
        ).scalar_one()
    # Wrapped under the store key with the context the registry names, as before.
    key = crypto.unseal(store.keys.kek, wrapped, contexts.data_key(store.info.id, "person:ann"))
    assert len(key) == crypto.KEY_BYTES
    store.close()
    assert store.keys.cached() == {} and store.keys.kek == b""


def test_issue18_item11_an_excision_marks_its_erasure_through_the_write_path(
    store: Store,
) -> None:
    ann = PersonId("ann")
    ensure_person(store, ann)
    conversation = start_conversation(store, [ann])
    append_turn(store, conversation.id, role="user", author=ann, text="words to excise " * 8)
    with store.write() as txn:
        excise(store, txn, conversation.id, [1], "staff:dana", "asked to")
        assert txn.erased and len(txn.before_commit) == 1  # the mark, written at commit
        with store.read() as other:  # not before the body is done
            assert other.execute(select(schema.pending_erasures)).first() is None
    with store.read() as conn:
        marks = conn.execute(select(schema.pending_erasures.c.id)).scalars().all()
    assert marks == [1]
