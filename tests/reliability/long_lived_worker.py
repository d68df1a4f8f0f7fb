"""A long-lived Engram process, as `engram serve`, `engram mcp` and the inspector are: one
`Store` held open while it is told, line by line on stdin, what to do.

    note TEXT            add a note for `host`; prints its id once committed (acknowledged)
    erase PERSON         erase a person (staff:dana)
    excise CONV CALL     remove a tool result's content
    delete CONV PERSON   delete a conversation for that person
    locks                print how many POSIX locks this process holds on the store file
    quit                 close the store and exit

Run: python -m tests.reliability.long_lived_worker STORE (passphrase: ENGRAM_TEST_PASSPHRASE).
Prints "ready" once open; every answer is one line ("ok …" or "error …").
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from engram.control.conversations import delete_conversation
from engram.control.erase import erase_person
from engram.control.notes import add_note
from engram.control.session import PersonSession
from engram.model.errors import EngramError
from engram.model.ids import ConversationId, PersonId
from engram.model.scope import Kind, Scope
from engram.runtime.conversations import excise_tool_result
from engram.store.store import Store

HOST = PersonId("host")


def posix_locks(path: Path) -> int:
    """POSIX (fcntl) locks this process holds on `path`, from /proc/locks (Linux)."""
    inode = os.stat(path).st_ino
    count = 0
    with open("/proc/locks", encoding="ascii") as locks:
        for line in locks:
            fields = line.split()
            # "1: POSIX  ADVISORY  WRITE 1234 08:01:5678 0 EOF" (a "->" marks a waiter)
            if "->" in fields or "POSIX" not in fields:
                continue
            at = fields.index("POSIX")
            pid, where = int(fields[at + 3]), fields[at + 4]
            if pid == os.getpid() and int(where.rsplit(":", 1)[1]) == inode:
                count += 1
    return count


def main(store_path: str) -> int:
    path = Path(store_path)
    store = Store.open(store_path, passphrase=os.environ["ENGRAM_TEST_PASSPHRASE"])
    print("ready", flush=True)
    for line in sys.stdin:
        command, _, rest = line.strip().partition(" ")
        try:
            if command == "quit":
                break
            if command == "note":
                note = add_note(PersonSession.open(store, HOST), rest, Kind.FACT, Scope.PORTABLE)
                answer = f"ok {note}"
            elif command == "erase":
                erase_person(PersonSession.open(store, rest, "staff:dana"), rest)
                answer = "ok erased"
            elif command == "excise":
                conversation, call = rest.split()
                excise_tool_result(
                    store, ConversationId(conversation), call, actor="staff:dana", reason="test"
                )
                answer = "ok excised"
            elif command == "delete":
                conversation, person = rest.split()
                delete_conversation(PersonSession.open(store, person), ConversationId(conversation))
                answer = "ok deleted"
            elif command == "locks":
                answer = f"ok {posix_locks(path)}"
            else:
                answer = f"error unknown command {command}"
        except EngramError as error:
            answer = f"error {error}"
        print(answer.replace("\n", " "), flush=True)
    store.close()
    print("closed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
