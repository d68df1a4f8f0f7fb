"""Issue 21 items 2-4: a review copy of one person that comes back, through the real CLI.

Export a review copy of one person (nothing of anyone else in it), open it as a review copy,
decide on it (approvals, a rejection, a correction, a deletion), change one of the same
candidates and one of the same notes on the live store meanwhile, import: the preview names
the two conflicts, the rest is applied, the audit shows the reviewer, a second import
applies nothing, and a tampered copy is refused in one sentence.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from engram.control.review_copy import review_copy_info
from engram.model.event_bodies import ReviewCopyMade
from engram.model.events import EventType, NewEvent
from engram.model.ids import PersonId
from engram.store import conversation_log, crypto, journal, people
from engram.store.store import Store

REVIEW_PASS = "a reviewer's own passphrase"
ANA, OTHER = "ana", "zebulon"  # the other person's id is long enough to scan bytes for
OTHER_WORDS = ("Trondheimsvegen", "ZEBSECRET", "Plays the theremin")


@pytest.fixture
def review(cli: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    """`engram` run against the review copy, with the reviewer's passphrase."""
    monkeypatch.setenv("REVIEW_PASS", REVIEW_PASS)
    copy = tmp_path / "review.engram"

    def run(*args: str, store: Path = copy) -> Any:
        return cli("--passphrase-env", "REVIEW_PASS", *args, store=store, passphrase=False)

    run.path = copy  # type: ignore[attr-defined]
    return run


def _live_store(cli: Any, tmp_path: Path) -> dict[str, str]:
    """Two people sharing a conversation, candidates for ana, and two of ana's own notes."""
    assert cli("init").code == 0
    config = tmp_path / "agent.json"
    config.write_text(json.dumps({"memory": {"learning": {"mode": "suggest"}}}))
    assert cli("agents", "set", "helper", "--config", str(config)).code == 0
    shared = cli(
        "conversation", "start", "--participants", f"{ANA},{OTHER}", "--agent", "helper"
    ).out.strip()
    for author, text in (
        (ANA, "I moved to Oslo."),
        (OTHER, f"I live in {OTHER_WORDS[0]} and my code word is {OTHER_WORDS[1]}."),
        (ANA, "I'm allergic to peanuts."),
    ):
        args = ["--role", "user", "--author", author, "--text", text]
        assert cli("conversation", "append", shared, *args).code == 0
    reply = ["--role", "assistant", "--author", "helper", "--text", "Noted."]
    assert cli("conversation", "append", shared, *reply).code == 0
    own = cli("conversation", "start", "--participants", ANA, "--agent", "helper").out.strip()
    for text in ("I like green tea.", "I prefer trains."):
        args = ["--role", "user", "--author", ANA, "--text", text]
        assert cli("conversation", "append", own, *args).code == 0
    assert cli("conversation", "append", own, *reply).code == 0
    assert cli("learn", "--json").code == 0
    ids = {}
    for text, key in (("Works as a nurse.", "nurse"), ("Has a cat called Tom.", "cat")):
        added = cli(
            "notes", "add", "--person", ANA, "--text", text, "--kind", "fact", "--scope", "direct"
        )
        assert added.code == 0, added.err
        ids[key] = added.out.strip()
    other = ["--text", OTHER_WORDS[2], "--kind", "fact", "--scope", "direct"]
    assert cli("notes", "add", "--person", OTHER, *other).code == 0
    pending = cli("candidates", "list", "--person", ANA, "--json").json()
    for c in pending:
        ids[c["text"]] = c["id"]
    assert {"Lives in Oslo.", "Likes green tea.", "Prefers trains."} <= set(ids)
    return ids


def _export(cli: Any, review: Any) -> Any:
    return cli(
        "--actor",
        "staff:dana",
        "review",
        "export",
        "--person",
        ANA,
        "--to",
        str(review.path),
        "--review-passphrase-env",
        "REVIEW_PASS",
        "--json",
    )


def _everything_readable(path: Path) -> list[str]:
    """Every text and clear column the copy holds, decrypted."""
    store = Store.open(str(path), passphrase=REVIEW_PASS)
    found: list[str] = []
    try:
        with store.read() as conn:
            persons = people.all_ids(conn)
            found += persons
            for person in persons:
                events = list(journal.events(conn, person))
                found += [repr(e) for e in events]
                texts = journal.texts(store, conn, person, [e.seq for e in events])
                found += [t for t in texts.values() if t]
                for info in conversation_log.for_person(conn, PersonId(person)):
                    found.append(repr(info))
                    entries = conversation_log.entries(conn, info.id)
                    found += [repr(e) for e in entries]
                    said = conversation_log.entry_texts(
                        store, conn, info.id, [e.seq for e in entries]
                    )
                    found += [t for t in said.values() if t]
    finally:
        store.close()
    return found


def test_issue21_item2_review_copy_holds_one_person_and_nothing_of_anyone_else(
    cli: Any, review: Any, tmp_path: Path, store_path: Path
) -> None:
    _live_store(cli, tmp_path)
    written = _export(cli, review)
    assert written.code == 0, written.err
    made = written.json()
    assert made["person"] == ANA and made["turns_left_out"] == 1 and made["conversations"] == 2

    # The file (and everything beside it) holds no byte of the other person.
    for file in review.path.parent.glob(review.path.name + "*"):
        raw = file.read_bytes()
        for needle in (OTHER, *OTHER_WORDS):
            assert needle.encode() not in raw, (file, needle)
    readable = "\n".join(_everything_readable(review.path))
    for needle in (OTHER, *OTHER_WORDS):
        assert needle not in readable, needle
    # ... while ana's own words, from both conversations, are there.
    assert "I moved to Oslo." in readable and "I like green tea." in readable
    assert "Works as a nurse." in readable and "Lives in Oslo." in readable

    # The shared conversation keeps its shape: the other's turn is there, excised and marked.
    copy = Store.open(str(review.path), passphrase=REVIEW_PASS)
    try:
        with copy.read() as conn:
            shared = [
                c
                for c in conversation_log.for_person(conn, PersonId(ANA))
                if any(e.author is None for e in conversation_log.entries(conn, c.id))
            ]
            entries = conversation_log.entries(conn, shared[0].id)
    finally:
        copy.close()
    users = [e for e in entries if e.kind.value == "user"]
    marks = [e for e in entries if e.kind.value == "excision"]
    assert [e.author for e in users] == [ANA, None, ANA] and not users[1].has_payload
    assert marks[-1].body == {"excised": [users[1].seq], "review_copy": True}
    copy_notes = review("notes", "list", "--person", ANA, "--all", "--json").json()
    live_notes = cli("notes", "list", "--person", ANA, "--all", "--json").json()
    assert copy_notes == live_notes  # the same fold at the same positions

    # The copy is sealed under the reviewer's passphrase, not the store's, and says where
    # it came from: the source store and the journal position it was taken through.
    assert cli("persons", store=review.path).code == 1
    info = review("review", "info", "--json").json()
    assert info["source"] == made["source"] and info["through"] == made["through"]
    assert review("verify", "--json").json()["ok"] is True
    # The live store records the copy in the person's audit log.
    audit = cli("audit", "--person", ANA, "--json").json()
    assert audit[-1]["type"] == "exported" and audit[-1]["actor"] == "staff:dana"
    assert "review copy" in audit[-1]["action"]
    assert store_path.exists()


def test_issue21_item3_a_review_copy_says_whose_it_is_and_decisions_carry_the_reviewer(
    cli: Any, review: Any, tmp_path: Path
) -> None:
    ids = _live_store(cli, tmp_path)
    made = _export(cli, review).json()
    said = review("review", "info")
    assert said.code == 0
    assert said.out.startswith(f"This is a review copy of {ANA}'s memory, taken from store ")
    assert made["source"] in said.out and made["taken_at"][:10] in said.out
    assert cli("review", "info").out.strip() == "This store is not a review copy."
    # Where a store is looked over, a review copy says so too; any other store does not.
    for command in ("verify", "persons"):
        assert f"review copy: This is a review copy of {ANA}'s" in review(command).out
        assert "review copy" not in cli(command).out
    # The window's banner reads the same record through control (no CLI words in it).
    copy = Store.open(str(review.path), passphrase=REVIEW_PASS)
    try:
        info = review_copy_info(copy)
    finally:
        copy.close()
    assert info is not None and info.person == ANA and "--" not in info.sentence()

    oslo = ids["Lives in Oslo."]
    decided = review(
        "--actor", "staff:rita", "candidates", "approve", oslo, "--person", ANA, "--revision", "1"
    )
    assert decided.code == 0, decided.err
    edited = review(
        "--actor",
        "staff:rita",
        "notes",
        "edit",
        ids["nurse"],
        "--person",
        ANA,
        "--text",
        "Works as a midwife.",
    )
    assert edited.code == 0, edited.err
    rows = review("audit", "--person", ANA, "--json").json()
    tail = rows[-2:]
    assert [r["type"] for r in tail] == ["candidate_reviewed", "corrected"]
    assert {r["actor"] for r in tail} == {"staff:rita"}
    assert rows[-3]["type"] == "review_copy_made"
    assert rows[-3]["seq"] == made["through"] + 1  # the decisions come after the live positions
    trail = review("candidates", "audit", oslo, "--person", ANA, "--json").json()
    assert trail[-1]["revision"] == 1 and trail[-1]["actor"] == "staff:rita"


def _decide_on_the_copy(review: Any, ids: dict[str, str]) -> None:
    rita = ["--actor", "staff:rita"]
    for args in (
        ["candidates", "approve", ids["Lives in Oslo."], "--revision", "1"],
        ["candidates", "approve", ids["Likes green tea."], "--revision", "1", "--apply"],
        ["candidates", "approve", ids["Prefers trains."], "--revision", "1"],
        [
            "candidates",
            "reject",
            ids["Is allergic to peanuts."],
            "--revision",
            "1",
            "--reason",
            "Health data is not kept",
        ],
        ["notes", "edit", ids["nurse"], "--text", "Works as a midwife."],
        ["notes", "delete", ids["cat"], "--reason", "Not something to keep"],
    ):
        done = review(*rita, *args, "--person", ANA)
        assert done.code == 0, (args, done.err)


def _import(cli: Any, review: Any, *more: str, copy: Path | None = None) -> Any:
    path = str(copy or review.path)
    return cli(
        "--actor",
        "staff:dana",
        "review",
        "import",
        path,
        "--review-passphrase-env",
        "REVIEW_PASS",
        *more,
    )


def test_issue21_item4_the_review_comes_back_conflicts_named_twice_is_nothing_tampering_refused(
    cli: Any, review: Any, tmp_path: Path
) -> None:
    ids = _live_store(cli, tmp_path)
    assert _export(cli, review).code == 0
    _decide_on_the_copy(review, ids)
    # Meanwhile, on the live store: the trains suggestion is decided, the cat note corrected.
    lee = ["--actor", "staff:lee"]
    reject = ["--person", ANA, "--revision", "1", "--reason", "Asked by ana"]
    assert cli(*lee, "candidates", "reject", ids["Prefers trains."], *reject).code == 0
    cat = ["--person", ANA, "--text", "Has a cat called Tim."]
    assert cli(*lee, "notes", "edit", ids["cat"], *cat).code == 0
    before = cli("audit", "--person", ANA, "--json").json()

    preview = _import(cli, review, "--json")
    assert preview.code == 0, preview.err
    planned = preview.json()
    outcomes = {(d["decision"], d["about"]): d["outcome"] for d in planned["decisions"]}
    conflicts = [d for d in planned["decisions"] if d["outcome"] == "conflict"]
    assert sorted(d["about"] for d in conflicts) == ["“Has a cat called Tom.”", "“Prefers trains.”"]
    assert planned["applies"] == 5 and planned["conflicts"] == 2 and not planned["applied"]
    assert outcomes[("applied", "“Likes green tea.”")] == "applies"
    assert all(d["reviewer"] == "staff:rita" for d in planned["decisions"])
    assert cli("audit", "--person", ANA, "--json").json() == before  # a preview writes nothing
    said = _import(cli, review)  # the same in words
    assert "“Prefers trains.”" in said.out and "“Has a cat called Tom.”" in said.out
    assert "Preview: 5 would apply, 2 conflict" in said.out

    applied = _import(cli, review, "--apply", "--json")
    assert applied.code == 0, applied.err
    result = applied.json()
    assert result["applies"] == 5 and result["conflicts"] == 2 and result["applied"]
    notes = {n["text"]: n for n in cli("notes", "list", "--person", ANA, "--json").json()}
    assert {"Works as a midwife.", "Likes green tea.", "Has a cat called Tim."} <= set(notes)
    assert "Works as a nurse." not in notes
    candidates = {
        c["text"]: c["status"] for c in cli("candidates", "list", "--person", ANA, "--json").json()
    }
    assert candidates["Lives in Oslo."] == "approved"
    assert candidates["Likes green tea."] == "applied"
    assert candidates["Is allergic to peanuts."] == "rejected"
    assert candidates["Prefers trains."] == "rejected"  # lee's decision stands
    trail = cli("candidates", "audit", ids["Is allergic to peanuts."], "--person", ANA, "--json")
    reviewed, came_back = trail.json()[-2:]
    assert reviewed["reason"] == "Health data is not kept" and reviewed["actor"] == "staff:rita"
    assert came_back["event"] == "review_imported" and came_back["outcome"] == "applied"

    audit = cli("audit", "--person", ANA, "--json").json()
    new = audit[len(before) :]
    offline = [r for r in new if r["type"] == "review_imported"]
    assert len(offline) == 7 and {r["actor"] for r in offline} == {"staff:rita"}
    day = result["decisions"][0]["decided_at"][:10]
    assert all(f"reviewed offline, {day}" in r["action"] for r in offline)
    assert sum("not applied" in r["action"] for r in offline) == 2
    assert any("the suggestion “Prefers trains.”" in r["said"] for r in offline)
    assert cli("verify", "--json").json()["ok"] is True
    changes = [r for r in new if r["type"] != "review_imported"]
    assert changes and {r["actor"] for r in changes} == {"staff:rita"}

    again = _import(cli, review, "--apply", "--json").json()
    assert again["already_imported"] == 7 and again["applies"] == 0 and again["conflicts"] == 0
    assert cli("audit", "--person", ANA, "--json").json() == audit  # nothing written

    # A changed decision: the rejection's row turned into an approval, behind Engram's back.
    changed = tmp_path / "changed.engram"
    shutil.copy(review.path, changed)
    db = sqlite3.connect(changed)
    db.execute(
        "UPDATE journal SET body = replace(body, '\"rejected\"', '\"approved\"') "
        "WHERE type = 'candidate_reviewed' AND body LIKE '%rejected%'"
    )
    db.commit()
    db.close()
    refused = _import(cli, review, "--apply", copy=changed)
    assert refused.code == 1 and refused.out == ""
    assert refused.err.count("\n") == 1 and "was changed after it was made" in refused.err

    # A foreign signing key: the copy's record, carried into a store with another key.
    foreign = tmp_path / "foreign.engram"
    copy = Store.open(str(review.path), passphrase=REVIEW_PASS)
    try:
        info = review_copy_info(copy)
    finally:
        copy.close()
    assert info is not None
    forged = Store.create(str(foreign), passphrase=REVIEW_PASS, use_keyring=False)
    try:
        with forged.write() as txn:
            journal.ensure_person(forged, txn, PersonId(ANA))
            body = ReviewCopyMade(**info.made.to_json())  # validly signed, naming another key
            event = NewEvent(EventType.REVIEW_COPY_MADE, "staff:dana", body)
            journal.append(forged, txn, PersonId(ANA), [event])
    finally:
        forged.close()
    refused = _import(cli, review, "--apply", copy=foreign)
    assert refused.code == 1 and refused.err.count("\n") == 1
    assert "not signed as this store's own copy" in refused.err
    assert cli("audit", "--person", ANA, "--json").json() == audit
    assert crypto.signature_ok  # the refusal above is the signature check's
