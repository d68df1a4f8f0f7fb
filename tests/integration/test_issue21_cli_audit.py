"""Issue 21 item 5: `engram audit --person P --actor … --since … --until … --action …
--note … --search … --json`, streamed a page at a time."""

from __future__ import annotations

from typing import Any

from engram.control import audit_log
from engram.control.audit_log import AuditFilter, AuditPages
from engram.control.session import PersonSession
from engram.store.store import Store
from tests.unit.test_issue21_audit_log import ANA, story  # noqa: F401  (the fixture)


def test_issue21_item5_cli_audit_filters_like_the_workspace(
    cli: Any,
    store: Store,
    story: dict[str, str],  # noqa: F811
) -> None:
    whole = cli("audit", "--person", "ana", "--json").json()
    assert [r["seq"] for r in whole] == list(range(1, len(whole) + 1))
    dana = cli("audit", "--person", "ana", "--actor", "staff:dana", "--json").json()
    assert dana and {r["actor"] for r in dana} == {"staff:dana"}
    decided = cli(
        "audit",
        "--person",
        "ana",
        "--action",
        "candidate_reviewed",
        "--action",
        "deleted",
        "--json",
    ).json()
    assert [(r["type"], r.get("decision"), r.get("reason")) for r in decided] == [
        ("candidate_reviewed", "rejected", "Never said so"),
        ("candidate_reviewed", "approved", None),
        ("deleted", None, "Asked us to forget the cat"),
    ]
    assert decided[0]["candidate"] == story["skiing"]
    day2 = cli(
        "audit", "--person", "ana", "--since", story["day2"], "--until", story["day2"], "--json"
    ).json()
    assert day2 and all(r["at"].startswith(story["day2"]) for r in day2)
    since = cli("audit", "--person", "ana", "--since", story["day3"], "--json").json()
    assert since and all(r["at"] >= story["day3"] for r in since)
    cat = cli("audit", "--person", "ana", "--note", story["cat"], "--json").json()
    assert [r["type"] for r in cat] == ["note_added", "deleted"]
    assert cat[0]["links"][0] == {"kind": "note", "id": story["cat"]}
    found = cli("audit", "--person", "ana", "--search", "miso", "--json").json()
    assert [r["type"] for r in found] == ["note_added", "deleted"]
    session = PersonSession.open(store, ANA)
    expected = list(AuditPages(session, AuditFilter(actors=("staff:dana",))).rows())
    assert [r["seq"] for r in dana] == [r["seq"] for r in expected]
    newest = cli("audit", "--person", "ana", "--actor", "staff:dana", "--limit", "1", "--json")
    assert [r["seq"] for r in newest.json()] == [expected[-1]["seq"]]


def test_issue21_item5_cli_audit_says_plainly_what_it_cannot_filter_by(
    cli: Any,
    story: dict[str, str],  # noqa: F811
) -> None:
    bad = cli("audit", "--person", "ana", "--action", "nonsense", "--json")
    assert bad.code != 0 and "is not an action the journal records" in bad.err
    assert len(bad.err.strip().splitlines()) == 1
    when = cli("audit", "--person", "ana", "--since", "last tuesday")
    assert when.code != 0 and "is not a date or time" in when.err
    text = cli("audit", "--person", "ana", "--action", "deleted")
    assert text.code == 0
    assert text.out.splitlines()[1].split("  ")[2:] == [
        "staff:dana",
        f"deleted note {story['cat']}",
    ]
    assert audit_log.ACTIONS["deleted"] == "a note deleted"
