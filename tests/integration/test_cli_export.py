"""Issue 15 item 7: `engram export` streams (flat memory in store size), `--output FILE` is
owner-only, whole or nothing and says it is not encrypted, and every export is recorded in
the person's audit log."""

from __future__ import annotations

import json
import os
import resource
import signal
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engram.control.private_file import NOT_ENCRYPTED
from engram.model.conversation import EntryKind
from engram.model.events import EventType
from engram.model.ids import PersonId, new_turn_id
from engram.runtime.conversations import start_conversation
from engram.store import conversation_log, crypto, journal
from engram.store.store import Store
from tests.conftest import PASSPHRASE
from tests.integration.test_cli_progress import _on_terminal

ANA = PersonId("ana")
TURN_CHARS = 40_000


def _store_with(path: Path, conversations: int, turns: int) -> int:
    """A store (passphrase only, so a child process opens it) whose ana has `conversations`
    conversations of `turns` turns of 40,000 characters; returns the characters of text."""
    store = Store.create(
        str(path), passphrase=PASSPHRASE, use_keyring=False, kdf=crypto.FAST_KDF_FOR_TESTS
    )
    words = "the allotment needs water before the heat of the afternoon " * 700
    try:
        for c in range(conversations):
            info = start_conversation(store, [ANA])
            # One write per conversation, not per turn: the export reads it all the same,
            # and the test builds 20 MB in about a second.
            with store.write() as txn:
                for t in range(turns):
                    conversation_log.append_entry(
                        store,
                        txn,
                        info.id,
                        EntryKind.USER if t % 2 == 0 else EntryKind.ASSISTANT,
                        ref=new_turn_id(),
                        author="ana" if t % 2 == 0 else "assistant",
                        status="committed",
                        text=f"{c}.{t} {words}"[:TURN_CHARS],
                    )
    finally:
        store.close()
    return conversations * turns * TURN_CHARS


def _engram(store: Path, *args: str, **options: Any) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TEST_PASSPHRASE": PASSPHRASE}
    return subprocess.run(
        [sys.executable, "-m", "engram", "--store", str(store), "--passphrase-env"]
        + ["TEST_PASSPHRASE", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        **options,
    )


# The child's peak resident memory, measured by a parent that has no other child.
_PEAK = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
    "assert done.returncode == 0, done.returncode\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


def _peak_mib(store: Path, *args: str) -> float:
    env = {**os.environ, "TEST_PASSPHRASE": PASSPHRASE}
    command = [sys.executable, "-m", "engram", "--store", str(store), "--passphrase-env"]
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, *command, "TEST_PASSPHRASE", "export", "--person", "ana"]
        + list(args),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return int(done.stdout) / 1024  # Linux reports KiB


@pytest.mark.slow
def test_issue15_item7_export_memory_stays_flat_in_store_size(tmp_path: Path) -> None:
    """A store with 25× the conversations (10 MB of text) exports in the same memory as a
    small one, to standard output and to a file: the export holds a page, not the store.
    Before it streamed, the big export took 33 MB more than the small one."""
    small, big = tmp_path / "small.engram", tmp_path / "big.engram"
    _store_with(small, 1, 10)
    text = _store_with(big, 25, 10)
    few = _peak_mib(small)
    many = _peak_mib(big)
    growth_allowed = text / 2**20 / 4  # a quarter of the text: the old export held it ~6 times
    assert many - few < growth_allowed, f"peak RSS {few:.1f} MiB, then {many:.1f} MiB"
    to_file = _peak_mib(big, "--output", str(tmp_path / "big.json"))
    assert (tmp_path / "big.json").stat().st_size > text
    assert to_file - few < growth_allowed, f"peak RSS {few:.1f} MiB, then {to_file:.1f} MiB"


def _exported(store: Store) -> list[tuple[str, dict[str, Any]]]:
    """Who exported, and the whole of what the record says (no path, no content)."""
    with store.read() as conn:
        events = journal.events_of_types(conn, ANA, [EventType.EXPORTED])
        return [(e.actor, e.body.to_json()) for e in events]


def _exported_from(store_path: Path) -> list[tuple[str, dict[str, Any]]]:
    store = Store.open(str(store_path), passphrase=PASSPHRASE)
    try:
        return _exported(store)
    finally:
        store.close()


def test_issue15_item7_export_output_is_owner_only_whole_and_says_not_encrypted(
    cli: Any, store: Store, store_path: Path, tmp_path: Path
) -> None:
    start_conversation(store, [ANA])
    streamed = cli("--actor", "staff:dana", "export", "--person", "ana")
    assert streamed.code == 0 and streamed.err == ""
    target = tmp_path / "ana.json"
    target.write_text("old")
    target.chmod(0o644)  # an existing, more readable file is replaced, not reused
    old_umask = os.umask(0o022)
    try:
        written = cli("--actor", "staff:dana", "export", "--person", "ana", "--output", str(target))
    finally:
        os.umask(old_umask)
    assert written.code == 0 and written.out == ""
    assert written.err == f"Everything kept about ana was written to {target}. {NOT_ENCRYPTED}\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    data, before = json.loads(target.read_text()), json.loads(streamed.out)
    data.pop("exported_at"), before.pop("exported_at")
    assert data["audit"][:-1] == before["audit"]  # the first export is in the second's log
    data.pop("audit"), before.pop("audit")
    assert data == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
    assert _exported(store) == [
        ("staff:dana", {"what": "export", "to": "stdout"}),
        ("staff:dana", {"what": "export", "to": "file"}),
    ]
    audit = cli("audit", "--person", "ana", "--json").json()
    assert [r["action"] for r in audit[-2:]] == [
        "exported everything kept, as JSON, to standard output",
        "exported everything kept, as JSON, to a file",
    ]


def _no_bigger_than(limit: int) -> Any:
    def limit_file_size() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past it fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return limit_file_size


def test_issue15_item7_an_export_that_fails_part_way_leaves_no_file_and_no_record(
    tmp_path: Path,
) -> None:
    """The file system refuses the export's bytes half way (a file size limit, as a full
    disk would): one sentence, exit 1, no file, no temporary, and no audit record."""
    store_path = tmp_path / "store.engram"
    _store_with(store_path, 3, 2)
    out = tmp_path / "out"
    out.mkdir()
    target = out / "ana.json"
    failed = _engram(
        store_path, "export", "--person", "ana", "--output", str(target),
        preexec_fn=_no_bigger_than(100_000),
    )  # fmt: skip
    assert failed.returncode == 1, failed.stderr
    assert failed.stderr.startswith(f"The export could not be written to {target} (File too")
    assert failed.stderr.endswith("Nothing was written.\n") and "Traceback" not in failed.stderr
    assert list(out.iterdir()) == []
    assert _exported_from(store_path) == []
    missing = _engram(store_path, "export", "--person", "ana", "--output", str(out / "x" / "a"))
    assert missing.returncode == 1 and "does not exist" in missing.stderr
    assert _exported_from(store_path) == []


def test_issue15_item7_export_to_a_file_shows_progress_on_a_terminal(
    store: Store, store_path: Path, tmp_path: Path
) -> None:
    start_conversation(store, [ANA])
    env = {**os.environ, "TEST_PASSPHRASE": PASSPHRASE, "TERM": "xterm-256color"}
    target = tmp_path / "ana.json"
    command = [sys.executable, "-m", "engram", "--store", str(store_path), "--passphrase-env"]
    command += ["TEST_PASSPHRASE", "export", "--person", "ana", "--output", str(target)]
    code, screen = _on_terminal(command, env)
    assert code == 0, screen
    assert "Exporting conversations" in screen and "not encrypted" in screen
    assert json.loads(target.read_text())["person"] == "ana"
