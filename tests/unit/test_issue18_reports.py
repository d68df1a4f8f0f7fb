"""Issue 18 item 9, "Reports are typed; faces print verdicts, they do not make them": the
erasure report and the verify report are values the engine makes, with a verdict, its
sentence and advice; the CLI prints those, and an erasure on a store made by the previous
release (rows signed with the person's id in clear) says it did NOT fully hold."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from engram.control import forensics
from engram.control.erase import erase_person
from engram.control.erasure_report import ErasureVerdict
from engram.control.session import PersonSession
from engram.control.verify_report import VerifyVerdict
from engram.runtime.conversations import (
    append_turn,
    start_conversation,
)
from engram.store import pseudonyms
from engram.store.store import Store
from tests.forensics import ERASED, OTHER, fill, previous_release_store, raw_bytes


def test_issue18_item9_an_erasure_on_a_previous_release_store_did_not_hold(
    store: Store, store_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    previous_release_store(store, monkeypatch)
    report = erase_person(PersonSession.open(store, ERASED, "staff:dana"), ERASED)
    assert ERASED.encode() in raw_bytes(store_path)  # the file still holds the id in clear
    assert report.clear_ids_in_old_rows > 0
    assert report.verdict is ErasureVerdict.DID_NOT_HOLD and not report.held
    sentence = report.sentence()
    assert sentence.startswith("The erasure did NOT fully hold")
    assert f"“{ERASED}” in clear" in sentence and "Nothing readable" not in sentence
    assert "signed with the id" in report.advice and "shared conversations" in report.advice
    shown = report.to_json()
    assert shown["readable_remains"] is True and shown["verdict"] == "did not hold"
    assert shown["sentence"] == sentence and shown["advice"] == report.advice
    assert shown["clear_ids_in_rows_older_than_pseudonyms"] == report.clear_ids_in_old_rows


def test_issue18_item9_an_erasure_that_held_says_so_with_no_advice(store: Store) -> None:
    fill(store, ERASED, OTHER)
    report = erase_person(PersonSession.open(store, ERASED, "staff:dana"), ERASED)
    assert report.verdict is ErasureVerdict.HELD and report.advice == ""
    assert report.sentence().startswith(f"The erasure held: nothing readable about {ERASED}")
    shown = report.to_json()
    assert shown["readable_remains"] is False and shown["verdict"] == "held"
    assert shown["how_checked"] == report.how_checked()


def _cli_json(result: Any) -> dict[str, Any]:
    parsed: dict[str, Any] = json.loads(result.out)
    return parsed


def test_issue18_item9_the_cli_prints_the_engines_erasure_verdict_and_does_not_exit_0(
    store: Store, monkeypatch: pytest.MonkeyPatch, cli: Any
) -> None:
    previous_release_store(store, monkeypatch)
    store.close()  # the CLI opens the store itself
    done = cli("person", "erase", ERASED, "--confirm", ERASED)
    assert done.code == 3, done.out + done.err  # committed, but the promise did not hold
    lines = done.out.splitlines()
    verdict = next(line for line in lines if line.startswith("The erasure"))
    assert verdict.startswith("The erasure did NOT fully hold: nothing") and "in clear" in verdict
    assert lines[lines.index(verdict) + 1].startswith("Those rows are signed with the id")


def test_issue18_item9_the_cli_json_carries_verdict_sentence_and_advice(
    store: Store, monkeypatch: pytest.MonkeyPatch, cli: Any
) -> None:
    previous_release_store(store, monkeypatch)
    store.close()
    done = cli("person", "erase", ERASED, "--confirm", ERASED, "--json")
    assert done.code == 3, done.err
    shown = _cli_json(done)
    assert shown["verdict"] == "did not hold" and shown["readable_remains"] is True
    assert shown["sentence"].startswith("The erasure did NOT fully hold")
    assert shown["advice"].startswith("Those rows are signed with the id")
    for key in ("person", "keys_destroyed", "rows_deleted", "raw_file_scan", "erasure_record"):
        assert key in shown  # the contract's keys stay


def test_issue18_item9_the_cli_prints_the_engines_verify_sentence(store: Store, cli: Any) -> None:
    fill(store, ERASED, OTHER)
    report = forensics.verify_store(store)
    assert report.verdict is VerifyVerdict.INTACT and report.advice == ""
    store.close()
    done = cli("verify")
    assert done.code == 0 and done.out.splitlines()[0] == report.sentence()
    shown = _cli_json(cli("verify", "--json"))
    assert shown["verdict"] == "intact" and shown["sentence"] == report.sentence()
    assert shown["ok"] is True and shown["problems"] == []


def test_issue18_item9_a_store_not_intact_is_said_with_the_engines_advice(
    store: Store, store_path: Path, cli: Any
) -> None:
    conversation = start_conversation(store, [OTHER])
    append_turn(store, conversation.id, role="user", author=OTHER, text="mine")
    alias = pseudonyms.pseudonym(store, OTHER)
    with sqlite3.connect(store_path) as raw:  # a pseudonym put in by hand, behind Engram
        raw.execute("update conversation_log set author=? where author=?", (alias, OTHER))
    raw.close()
    report = forensics.verify_store(store)
    assert report.verdict is VerifyVerdict.NOT_INTACT
    assert report.sentence().startswith("Store NOT intact: 1 problem found")
    assert report.advice.startswith("Each problem names the first bad entry")
    store.close()
    done = cli("verify")
    assert done.code == 3
    lines = done.out.splitlines()
    assert lines[0] == report.sentence() and lines[-1] == report.advice
