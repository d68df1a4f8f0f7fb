"""`engram demo` builds a store that shows every feature and verifies clean."""

from __future__ import annotations

from typing import Any


def test_demo_store_has_everything_the_inspector_shows(cli: Any) -> None:
    summary = cli("demo", "--json").json()
    assert set(summary["persons"]) == {"maya", "sam", "ines"}
    assert cli("verify", "--json").json()["ok"] is True
    notes = cli("notes", "list", "--person", "maya", "--all", "--json").json()
    statuses = {n["status"] for n in notes}
    assert {"active", "contradicted", "corrected", "deleted", "retired"} <= statuses
    assert {n["kind"] for n in notes} == {"fact", "preference", "open_thread", "style"}
    assert {n["scope"] for n in notes} == {"direct", "unspecified", "portable"}
    assert any(n["durability"] == "transient" for n in notes)
    assert any(n["corroborators"] for n in notes)
    conversations = cli("conversations", "list", "--person", "maya", "--json").json()
    assert any(c["incognito"] for c in conversations)
    assert any(c["audience"] == "shared" for c in conversations)
    sam = cli("notes", "list", "--person", "sam", "--all", "--json").json()
    assert any(n["status"] == "deleted" and n["text"] is None for n in sam)  # its conversation went
    audit = cli("audit", "--person", "maya", "--json").json()
    assert any(row["actor"] == "staff:dana" for row in audit)
    reviewed = cli("candidates", "list", "--person", "maya", "--json").json()
    assert {c["status"] for c in reviewed} == {"pending", "applied", "rejected"}
    assert any(c["sensitive"] for c in reviewed if c["status"] == "pending")
    assert cli("demo").code == 1  # never over an existing store
