"""Issue 9 item 6: damage gives reports, not tracebacks — text that is not UTF-8, a changed
or missing schema version, a malformed page — and verify runs SQLite's own integrity
check and reports what it finds."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from engram.control.demo import build_demo
from engram.store import crypto
from engram.store.store import Store
from engram.store.verify import verify
from tests.conftest import PASSPHRASE


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("damage") / "demo.engram"
    build_demo(str(path), passphrase=PASSPHRASE, kdf=crypto.FAST_KDF_FOR_TESTS)
    return path


@pytest.fixture
def demo(pristine: Path, store_path: Path) -> Path:
    """A fresh copy of the demo store (with its checkpoint) at the CLI fixture's path."""
    shutil.copy(pristine, store_path)
    shutil.copy(
        pristine.with_name(pristine.name + ".checkpoint"),
        store_path.with_name(store_path.name + ".checkpoint"),
    )
    return store_path


def _raw(path: Path, sql: str) -> None:
    with sqlite3.connect(path) as raw:
        raw.execute(sql)
    raw.close()


def _api_problems(path: Path) -> list[str]:
    store = Store.open(str(path), passphrase=PASSPHRASE)
    try:
        report = verify(store)
    finally:
        store.close()
    assert not report.ok
    return report.problems


def _no_traceback(result: Any) -> None:
    assert "Traceback" not in result.err and "Traceback" not in result.out


@pytest.mark.parametrize(
    ("table", "column", "where", "named"),
    [
        ("journal", "actor", "person = 'maya' and seq = 3", "journal:maya: cannot be read"),
        ("conversation_log", "body", "seq = 2", ": cannot be read (Could not decode to UTF-8"),
        ("agents", "config", "1 = 1", "ledger: cannot be read (Could not decode to UTF-8"),
        ("note_state", "data", "rowid = 1", ": cannot be read (Could not decode to UTF-8"),
    ],
)
def test_issue9_item6_text_that_is_not_utf8_is_a_report(
    demo: Path, cli: Any, table: str, column: str, where: str, named: str
) -> None:
    _raw(demo, f"update {table} set {column} = cast(x'41ff42' as text) where {where}")
    result = cli("verify", "--json")
    _no_traceback(result)
    assert result.code == 3
    assert any(named in p for p in result.json()["problems"]), result.json()["problems"]
    assert any(named in p for p in _api_problems(demo))


def test_issue9_item6_a_person_id_that_is_not_utf8_is_one_sentence_elsewhere(
    demo: Path, cli: Any
) -> None:
    _raw(demo, "update persons set id = cast(x'73616dff' as text) where id = 'sam'")
    result = cli("persons", "--json")
    _no_traceback(result)
    assert result.code == 1
    error = result.json()["error"]
    assert error.startswith(f"The store at {demo} is damaged (Could not decode to UTF-8")
    assert error.endswith("run 'engram verify' to see where, and restore it from a backup.")
    assert cli("verify").code == 3


@pytest.mark.parametrize(
    ("sql", "sentence"),
    [
        (
            "delete from alembic_version",
            "the record of its schema version (alembic_version) is missing",
        ),
        (
            "update alembic_version set version_num = '0003'",
            "says it has schema version 0003, but upgrading it",
        ),
        (
            "insert into alembic_version values ('0004')",
            "the record of its schema version (alembic_version) cannot be read",
        ),
        (
            "update alembic_version set version_num = '9999'",
            "records a schema version (9999) this Engram does not know",
        ),
    ],
)
def test_issue9_item6_a_missing_or_changed_schema_version_is_one_sentence(
    demo: Path, cli: Any, sql: str, sentence: str
) -> None:
    _raw(demo, sql)
    before = demo.read_bytes()
    for command in (("verify", "--json"), ("persons", "--json")):
        result = cli(*command)
        _no_traceback(result)
        assert result.code == 1
        assert sentence in result.json()["error"]
    assert demo.read_bytes() == before  # a failed upgrade changed nothing


def _smash_page(path: Path, page: int) -> None:
    with sqlite3.connect(path) as raw:
        (size,) = raw.execute("pragma page_size").fetchone()
    raw.close()
    data = bytearray(path.read_bytes())
    start = (page - 1) * size
    data[start + 8 : start + 200] = bytes(192)  # the cell pointers and first cells
    path.write_bytes(bytes(data))


def test_issue9_item6_a_malformed_page_is_a_report(demo: Path, cli: Any) -> None:
    with sqlite3.connect(demo) as raw:
        (root,) = raw.execute(
            "select rootpage from sqlite_master where name = 'journal'"
        ).fetchone()
    raw.close()
    _smash_page(demo, int(root))
    result = cli("verify", "--json")
    _no_traceback(result)
    assert result.code == 3
    problems = result.json()["problems"]
    assert problems[0].startswith("storage: SQLite's integrity check")
    assert any(
        p.startswith("journal:maya: cannot be read (database disk image is malformed")
        for p in problems
    )
    assert problems == _api_problems(demo)
    read = cli("notes", "list", "--person", "maya", "--json")
    _no_traceback(read)
    assert (
        read.code == 1 and "is damaged (database disk image is malformed)" in read.json()["error"]
    )


def test_issue9_item6_damage_only_the_integrity_check_sees_is_reported(
    demo: Path, cli: Any
) -> None:
    """An index no verify query reads: only SQLite's own check can see it is damaged."""
    with sqlite3.connect(demo) as raw:
        (root,) = raw.execute(
            "select rootpage from sqlite_master where name = 'ix_log_ref'"
        ).fetchone()
    raw.close()
    _smash_page(demo, int(root))
    problems = _api_problems(demo)
    assert problems and all(p.startswith("storage: SQLite's integrity check: ") for p in problems)
    result = cli("verify", "--json")
    _no_traceback(result)
    assert result.code == 3 and result.json()["problems"] == problems


def test_issue9_item6_an_intact_store_passes_the_integrity_check(demo: Path, cli: Any) -> None:
    result = cli("verify", "--json")
    assert result.code == 0 and result.json()["ok"], result.out
    assert result.json()["warnings"] == []  # SQLite's check ran; nothing to say it did not


def test_issue9_item6_a_time_out_of_range_is_a_report(demo: Path, cli: Any) -> None:
    """A microsecond count no date can hold (found by the tamper harness: a bit flip in
    `usage.at`) is a problem of that person's journal, not an OverflowError."""
    _raw(demo, "update usage set at = 9000000000000000000 where rowid = 1")
    result = cli("verify", "--json")
    _no_traceback(result)
    assert result.code == 3
    assert any(
        p.endswith("the stored notes differ from a replay of the journal")
        for p in result.json()["problems"]
    )
    assert result.json()["problems"] == _api_problems(demo)


def test_issue15_item11_an_erasure_record_that_is_not_utf8_is_a_problem_of_that_chain(
    demo: Path, cli: Any
) -> None:
    erased = cli("person", "erase", "sam", "--confirm", "sam", "--json")
    assert erased.code == 0, erased.err
    _raw(demo, "update erasures set body = cast(x'7bff' as text) || substr(body, 2)")
    result = cli("verify", "--json")
    _no_traceback(result)
    assert result.code == 3 and "error" not in result.json(), result.out + result.err
    problems = result.json()["problems"]
    assert any(p.startswith("erasures: cannot be read (Could not decode") for p in problems)
    assert not any("run 'engram verify'" in p for p in problems)  # it is verify
