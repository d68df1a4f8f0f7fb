"""Issue 15 item 2 (reliability suite): page-level erasure forensics.

`secure_delete` zeroes a deleted cell where it lies, but when the b-tree rebalances a page
it keeps, in its free gap, stale copies of cells that moved to a sibling; an erase that
only deleted rows left such a copy of an erased person's turn in a live page of a shared
conversation (a nonce and a prefix of a stream cipher's output: decryptable with the
surviving conversation key), while its scan, which probed only each ciphertext's last 24
bytes, said `found: 0`. Here every window of every captured ciphertext is looked for in the
database file, its WAL and its shared memory after an exit-0 erase, over realistic mixes
of people, shared conversations, turn sizes and earlier deletions.
"""

from __future__ import annotations

import json
import random
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from engram.control.conversations import delete_conversation
from engram.control.erase import erase_person
from engram.control.session import PersonSession
from engram.model.ids import PersonId
from engram.runtime.conversations import append_turn, start_conversation
from engram.store.store import Store
from tests.conftest import PASSPHRASE
from tests.forensics import fragment_in, raw_bytes
from tests.reliability.conftest import FULL, size

PEOPLE = [PersonId(p) for p in ("canary", "other", "third")]
ERASED = PEOPLE[0]
# Seed 4 is one whose rebalancing left a stale copy of an erased turn on the old code.
SEEDS = range(3, 3 + size(2, 60))


def _mixed_store(path: Path, seed: int) -> list[bytes]:
    """A store of three people's conversations (own and shared, turns of 20 to 700
    characters, interleaved), a few deleted; returns the erased person's turn ciphertexts."""
    rnd = random.Random(seed)
    store = Store.create(str(path), passphrase=PASSPHRASE, use_keyring=False)
    try:
        conversations = []
        for _ in range(12):
            members = rnd.sample(PEOPLE, rnd.choice([1, 2, 3]))
            conversations.append((start_conversation(store, members).id, members))
        for i in range(300):
            conversation, members = rnd.choice(conversations)
            author = rnd.choice(members)
            text = f"w{i} " * rnd.randint(5, 120)
            append_turn(store, conversation, role="user", author=author, text=text)
        with sqlite3.connect(path) as raw:
            captured = [
                bytes(sealed)
                for (sealed,) in raw.execute(
                    "SELECT p.sealed FROM log_payloads p JOIN conversation_log l "
                    "ON l.conversation = p.conversation AND l.seq = p.seq WHERE l.author = ?",
                    (ERASED,),
                )
            ]
        raw.close()
        for conversation, members in conversations[:4]:
            if ERASED not in members:
                delete_conversation(PersonSession.open(store, members[0]), conversation)
        report = erase_person(PersonSession.open(store, ERASED, "staff:dana"), ERASED).to_json()
        assert report["raw_file_scan"]["found"] == 0
    finally:
        store.close()
    return captured


@pytest.mark.slow
def test_issue15_item2_no_window_of_an_erased_ciphertext_stays_in_any_page(
    tmp_path: Path,
) -> None:
    counts: Counter[str] = Counter()
    for seed in SEEDS:
        path = tmp_path / f"mix-{seed}.engram"
        captured = _mixed_store(path, seed)
        blob = raw_bytes(path)
        counts["erases"] += 1
        counts["ciphertexts captured"] += len(captured)
        counts["ciphertexts with a fragment left"] += sum(fragment_in(c, blob) for c in captured)
    print(f"\npage forensics ({'full' if FULL else 'reduced'}): {json.dumps(counts)}")
    assert counts["ciphertexts captured"] > 100
    assert counts["ciphertexts with a fragment left"] == 0
