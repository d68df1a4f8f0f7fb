"""The process `test_crash` kills: `python -m tests.reliability.crash_worker STORE SEED`.

It opens the store as Engram does and, until it is killed, makes one random change after
another through the real runtime and control paths — turns, notes, candidate decisions,
erasures, conversation deletions — printing one JSON line per change once the call has
returned (the change is then acknowledged: a crash after this line must not lose it).
With CRASH_POINT and CRASH_AFTER set, it arms that fault point (store/faults.py) after
that many changes, so some trials die exactly between a commit and its checkpoint.
"""

from __future__ import annotations

import json
import os
import random
import sys

from engram.control import candidates
from engram.control.conversations import delete_conversation
from engram.control.erase import erase_person
from engram.control.notes import add_note
from engram.control.session import PersonSession
from engram.model.ids import PersonId
from engram.model.scope import Kind, Scope
from engram.runtime.conversations import append_turn, start_conversation
from engram.runtime.legacy_import import import_legacy
from engram.store.faults import CRASH_ENV
from engram.store.store import Store

STAYING = [PersonId("ana"), PersonId("ben")]


def ack(**fields: object) -> None:
    """Say a change was made (flushed, so the parent has it before anything else)."""
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


def main(store_path: str, seed: int) -> None:
    rng = random.Random(seed)
    store = Store.open(store_path, passphrase=os.environ["ENGRAM_TEST_PASSPHRASE"])
    shared = start_conversation(store, STAYING)
    ack(op="ready")
    arm_after = int(os.environ.get("CRASH_AFTER", "-1"))
    made = 0
    while True:
        if made == arm_after:
            os.environ[CRASH_ENV] = os.environ["CRASH_POINT"]
        made += 1
        step = rng.choice(["turn", "turn", "note", "note", "decision", "erase", "delete"])
        person = rng.choice(STAYING)
        text = f"{step} {made} {rng.getrandbits(48):x}"
        if step == "turn":
            turn = append_turn(store, shared.id, role="user", author=person, text=text)
            ack(op="turn", conversation=shared.id, turn=turn, text=text)
        elif step == "note":
            note = add_note(PersonSession.open(store, person), text, Kind.FACT, Scope.DIRECT)
            ack(op="note", person=person, note=note, text=text)
        elif step == "decision":
            [made_candidate] = import_legacy(store, person, f"- I like {text}")
            session = PersonSession.open(store, person, "staff:review")
            candidate = str(made_candidate["candidate"])
            if rng.random() < 0.5:
                done = candidates.approve(session, candidate, 1, apply_now=True)
            else:
                done = candidates.reject(session, candidate, 1, "not now")
            ack(op="decision", person=person, candidate=candidate, status=done["status"])
        elif step == "erase":
            doomed = PersonId(f"gone-{made}")
            own = start_conversation(store, [doomed])
            append_turn(store, own.id, role="user", author=doomed, text=text)
            together = start_conversation(store, [doomed, person])
            append_turn(store, together.id, role="user", author=doomed, text=text)
            add_note(PersonSession.open(store, doomed), text, Kind.FACT, Scope.DIRECT)
            erase_person(PersonSession.open(store, doomed, "staff:dana"), doomed, wait_s=5)
            ack(op="erase", person=doomed)
        else:
            brief = start_conversation(store, [person])
            append_turn(store, brief.id, role="user", author=person, text=text)
            delete_conversation(PersonSession.open(store, person), brief.id)
            ack(op="delete", conversation=brief.id)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
