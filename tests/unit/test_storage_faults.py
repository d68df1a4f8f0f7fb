"""Issue 15, item 5: database errors are told apart by their codes, and only damage invites
a restore. Each SQLite case is a real error from SQLite; the PostgreSQL ones are psycopg's
own error classes, as the driver raises them, with their SQLSTATEs."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg.errors
import pytest
from sqlalchemy import exc

from engram.model.errors import CorruptStore, DiskFull, ServerUnreachable, StorageFault
from engram.store.storage_faults import Fault, classify, escaped_fault, fault_error, from_database


def _sqlite_error(action: str, path: Path) -> exc.DBAPIError:
    """Provoke one real SQLite failure and wrap it as SQLAlchemy does."""
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE t (x BLOB)")
    connection.commit()
    try:
        if action == "full":
            pages = connection.execute("PRAGMA page_count").fetchone()[0]
            connection.execute(f"PRAGMA max_page_count = {pages}")  # SQLite's own limit
            connection.execute("INSERT INTO t VALUES (zeroblob(100000))")
        elif action == "corrupt":
            connection.close()
            data = bytearray(path.read_bytes())
            data[4096 : 4096 + 64] = b"\xff" * 64  # the table's page
            path.write_bytes(bytes(data))
            connection = sqlite3.connect(path)
            connection.execute("SELECT * FROM t").fetchall()
        elif action == "notadb":
            connection.close()
            path.write_bytes(b"not a database at all" * 300)
            connection = sqlite3.connect(path)
            connection.execute("SELECT * FROM t").fetchall()
        elif action == "readonly":
            connection.close()
            connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            connection.execute("INSERT INTO t VALUES (1)")
        elif action == "not utf-8":
            connection.execute("INSERT INTO t VALUES (CAST(x'ff' AS TEXT))")
            connection.execute("SELECT CAST(x AS TEXT) FROM t").fetchall()
    except sqlite3.Error as error:
        return exc.OperationalError("statement", {}, error)
    finally:
        connection.close()
    raise AssertionError(f"{action} did not fail")


@pytest.mark.parametrize(
    ("action", "fault"),
    [
        ("full", Fault.FULL),
        ("corrupt", Fault.DAMAGED),
        ("notadb", Fault.DAMAGED),
        ("readonly", Fault.READ_ONLY),
        ("not utf-8", Fault.DAMAGED),
    ],
)
def test_issue15_item5_sqlite_errors_are_classified_by_their_result_code(
    tmp_path: Path, action: str, fault: Fault
) -> None:
    assert classify(_sqlite_error(action, tmp_path / "t.db")) is fault


def test_issue15_item5_only_damage_invites_a_restore(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 't.db'}"
    full = from_database(_sqlite_error("full", tmp_path / "t.db"), url, "write")
    assert isinstance(full, DiskFull) and not isinstance(full, CorruptStore)
    assert "is full; nothing was written" in str(full) and "restore" not in str(full)
    (tmp_path / "t.db").unlink()
    damaged = from_database(_sqlite_error("corrupt", tmp_path / "t.db"), url, "read")
    assert isinstance(damaged, CorruptStore) and "restore it from a backup" in str(damaged)


@pytest.mark.parametrize(
    ("orig", "fault"),
    [
        (psycopg.errors.DiskFull("no space"), Fault.FULL),
        (psycopg.errors.DataCorrupted("bad page"), Fault.DAMAGED),
        (psycopg.errors.IndexCorrupted("bad index"), Fault.DAMAGED),
        (psycopg.errors.AdminShutdown("terminating connection"), Fault.UNREACHABLE),
        (psycopg.errors.CrashShutdown("crash"), Fault.UNREACHABLE),
        (psycopg.errors.ConnectionFailure("gone"), Fault.UNREACHABLE),
        (psycopg.errors.ReadOnlySqlTransaction("standby"), Fault.READ_ONLY),
        (psycopg.errors.IoError("eio"), Fault.IO),
        # psycopg gives no SQLSTATE when the server was never reached
        (psycopg.OperationalError("connection failed: Connection refused"), Fault.UNREACHABLE),
        (psycopg.errors.UniqueViolation("duplicate"), None),  # a bug, not a fault
    ],
)
def test_issue15_item5_postgresql_errors_are_classified_by_their_sqlstate(
    orig: Exception, fault: Fault | None
) -> None:
    wrapper = exc.OperationalError if isinstance(orig, psycopg.OperationalError) else exc.DBAPIError
    assert classify(wrapper("statement", {}, orig)) is fault


def test_issue15_item5_a_server_that_does_not_answer_is_named_by_host_and_port() -> None:
    error = exc.OperationalError(
        None,
        None,
        psycopg.OperationalError(
            'connection failed: connection to server at "10.0.0.5", port 5433 failed: '
            "Connection refused\n\tIs the server running on that host?"
        ),
    )
    said = from_database(error, "postgresql+psycopg://me:secret@10.0.0.5:5433/engram", "read")
    assert isinstance(said, ServerUnreachable) and isinstance(said, StorageFault)
    assert str(said) == (
        "The database server at 10.0.0.5:5433 does not answer (Connection refused); nothing "
        "was changed — start it or check the address, then try again."
    )
    assert "secret" not in str(said)


def test_issue15_item5_every_fault_is_one_sentence_without_damage() -> None:
    for fault in Fault:
        for doing in ("open", "read", "write"):
            said = str(fault_error(fault, "/s.engram", "detail", doing))  # type: ignore[arg-type]
            assert said.endswith(".") and ". " not in said and "\n" not in said
            assert ("damaged" in said) is (fault is Fault.DAMAGED)


def test_issue15_item5_a_full_disk_met_outside_the_database_is_still_that_sentence(
    tmp_path: Path,
) -> None:
    try:  # /dev/full: every write fails with ENOSPC, as on a full disk
        with open("/dev/full", "w") as full:
            full.write("x")
            full.flush()
    except OSError as error:
        met = error
    said = escaped_fault(met, f"sqlite:///{tmp_path / 's.engram'}")
    assert isinstance(said, DiskFull), said
    assert "is full" in str(said) and "verify the store to see what was kept" in str(said)
    assert "damaged" not in str(said) and "restore" not in str(said)
    assert escaped_fault(KeyError("a bug"), "sqlite:///x") is None  # a bug stays a bug
