"""The learning commands of the CLI contract: agents set, learn, candidates (P2, P5, P6)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def _setup(cli: Any, tmp_path: Path, mode: str) -> str:
    assert cli("init").code == 0
    config = tmp_path / "agent.json"
    config.write_text(json.dumps({"memory": {"learning": {"mode": mode}}}))
    assert cli("agents", "set", "helper", "--config", str(config)).code == 0
    conversation = cli(
        "conversation", "start", "--participants", "ana", "--agent", "helper"
    ).out.strip()
    for text in ("I moved to Oslo.", "I'm allergic to peanuts."):
        args = ["--role", "user", "--author", "ana", "--text", text]
        assert cli("conversation", "append", conversation, *args).code == 0
    reply = ["--role", "assistant", "--author", "helper", "--text", "Noted."]
    assert cli("conversation", "append", conversation, *reply).code == 0  # P4: a whole exchange
    return conversation


def test_P5_P6_learn_then_review_candidates_from_the_command_line(cli: Any, tmp_path: Path) -> None:
    conversation = _setup(cli, tmp_path, "suggest")
    listed = cli("agents", "list", "--json").json()
    assert listed[0]["name"] == "helper" and listed[0]["memory"]["learning"]["mode"] == "suggest"
    config = tmp_path / "agent.json"
    config.write_text(json.dumps({"memory": {"learning": {"mode": "automatic"}}}))
    assert cli("--actor", "staff:lee", "agents", "set", "helper", "--config", str(config)).code == 0
    config.write_text(json.dumps({"memory": {"learning": {"mode": "suggest"}}}))
    assert cli("agents", "set", "helper", "--config", str(config)).code == 0
    history = cli("agents", "history", "helper", "--json").json()
    assert [(h["by"], h["memory"]["learning"]["mode"]) for h in history] == [
        ("operator", "suggest"),
        ("staff:lee", "automatic"),
        ("operator", "suggest"),
    ]
    assert cli("agents", "history", "nobody").code == 1
    passes = cli("learn", "--json").json()["passes"]
    assert passes[0]["conversation"] == conversation and len(passes[0]["suggested"]) == 2
    again = cli("learn", "--json").json()  # W2: nothing twice
    assert again["passes"] == [] and again["not_learned"] == []
    assert again["message"] == "Nothing to learn: every committed turn has been analysed already."

    pending = cli("candidates", "list", "--person", "ana", "--status", "pending", "--json").json()
    by_text = {c["text"]: c for c in pending}
    oslo, peanuts = by_text["Lives in Oslo."], by_text["Is allergic to peanuts."]
    assert peanuts["sensitive"] is True and oslo["revision"] == 1

    approve = ["--person", "ana", "--revision", "1", "--apply", "--json"]
    done = cli("candidates", "approve", oslo["id"], *approve)
    assert done.code == 0 and done.json()["status"] == "applied"
    notes = cli("notes", "list", "--person", "ana", "--json").json()
    assert [n["text"] for n in notes] == ["Lives in Oslo."]

    stale = cli("candidates", "reject", oslo["id"], *approve[:4], "--reason", "no", "--json")
    assert stale.code == 1 and "revision" in stale.json()["error"]
    reject = ["--person", "ana", "--revision", "1", "--reason", "Not for keeping"]
    assert cli("--actor", "staff:lee", "candidates", "reject", peanuts["id"], *reject).code == 0
    trail = cli("candidates", "audit", peanuts["id"], "--person", "ana", "--json").json()
    assert trail[-1]["actor"] == "staff:lee" and trail[-1]["reason"] == "Not for keeping"
    got = cli("candidates", "get", peanuts["id"], "--person", "ana", "--json").json()
    assert got["status"] == "rejected"


def test_bad_agent_configurations_and_unknown_candidates_are_one_sentence(
    cli: Any, tmp_path: Path
) -> None:
    assert cli("init").code == 0
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    result = cli("agents", "set", "helper", "--config", str(broken))
    assert result.code == 1 and "not valid JSON" in result.err
    wide = tmp_path / "wide.json"
    wide.write_text(json.dumps({"memory": {"learning": {"surfaces": ["schedule"]}}}))
    result = cli("agents", "set", "helper", "--config", str(wide))
    assert result.code == 1 and "chat and channel only" in result.err
    assert cli("agents", "set", "bad name!", "--config", str(wide)).code == 1
    conversation = cli("conversation", "start", "--participants", "ana").out.strip()
    assert conversation
    needs = cli("learn", "--extractor", "openai", "--json")
    assert needs.code == 1 and "--endpoint" in needs.json()["error"]
    missing = cli("candidates", "get", "m_nope", "--person", "ana", "--json")
    assert missing.code == 1 and "no candidate" in missing.json()["error"]


def test_M3_maintain_now_retires_what_has_expired(cli: Any) -> None:
    assert cli("init").code == 0
    assert cli("conversation", "start", "--participants", "ana").code == 0
    add = ["--person", "ana", "--kind", "fact", "--scope", "direct"]
    assert cli("notes", "add", "--text", "At the airport.", "--transient", *add).code == 0
    assert cli("notes", "add", "--text", "At the airport.", "--transient", *add).code == 0
    soon = cli("maintain", "--json").json()["persons"]
    assert soon[0]["retired"] == [] and len(soon[0]["duplicates_removed"]) == 1
    later = cli("maintain", "--now", "2999-01-01T00:00:00Z", "--json").json()["persons"]
    assert len(later[0]["retired"]) == 1
    notes = cli("notes", "list", "--person", "ana", "--all", "--json").json()
    assert sorted(n["status"] for n in notes) == ["removed", "retired"]
    assert cli("verify", "--json").json()["ok"] is True


def test_P7_import_legacy_from_the_command_line(cli: Any, tmp_path: Path) -> None:
    assert cli("init").code == 0
    assert cli("conversation", "start", "--participants", "ana").code == 0
    legacy = tmp_path / "memory.md"
    legacy.write_text("# Memory\n- Likes tea\n- Lives in Oslo\n")
    made = cli("candidates", "import-legacy", str(legacy), "--person", "ana", "--json")
    assert [c["text"] for c in made.json()["candidates"]] == ["Likes tea", "Lives in Oslo"]
    listed = cli("candidates", "list", "--person", "ana", "--json").json()
    assert {c["status"] for c in listed} == {"pending"}


def test_M3_maintain_now_never_moves_the_journal_clock(cli: Any) -> None:
    assert cli("init").code == 0
    assert cli("conversation", "start", "--participants", "ana").code == 0
    assert cli("maintain", "--now", "2999-01-01T00:00:00Z").code == 0
    add = ["--person", "ana", "--kind", "fact", "--scope", "direct", "--text", "Later."]
    assert cli("notes", "add", *add).code == 0
    (note,) = cli("notes", "list", "--person", "ana", "--json").json()
    assert note["valid_from"] < "2100"


def test_P4_learn_with_no_agent_configured_says_why_nothing_was_learned(
    cli: Any, tmp_path: Path
) -> None:
    """Issue 11 item 6: `engram learn` used to answer {"passes": []} with no reason when no
    agent was configured. It now names each conversation it left alone, and why."""
    assert cli("init").code == 0
    bare = cli("conversation", "start", "--participants", "ana").out.strip()
    unknown = cli("conversation", "start", "--participants", "ana", "--agent", "ghost").out.strip()
    hidden = cli("conversation", "start", "--participants", "ana", "--incognito").out.strip()
    for conversation in (bare, unknown, hidden):
        said = ["--role", "user", "--author", "ana", "--text", "I moved to Oslo."]
        assert cli("conversation", "append", conversation, *said).code == 0
    out = cli("learn", "--json")
    assert out.code == 0
    answer = out.json()
    assert answer["passes"] == []
    assert "learning leaves each of them alone" in answer["message"]
    why = {a["conversation"]: a for a in answer["not_learned"]}
    assert set(why) == {bare, unknown, hidden}
    assert all(a["person"] == "ana" and a["turns"] == 1 for a in why.values())
    assert why[bare]["reason"].startswith("it has no agent, so learning is off (the default)")
    assert why[unknown]["reason"].startswith("its agent 'ghost' is not configured")
    assert why[hidden]["reason"] == "the conversation is incognito"
    config = tmp_path / "off.json"
    config.write_text(json.dumps({"memory": {"learning": {"mode": "off"}}}))
    assert cli("agents", "set", "ghost", "--config", str(config)).code == 0
    text = cli("learn", "--person", "ana")
    assert text.code == 0 and "learning is off for agent 'ghost'" in text.out
    assert f"ana in {unknown}: 1 turn left alone" in text.out


def test_issue18_item1_P5_agents_show_says_which_sensitive_facts_apply_unreviewed(
    cli: Any, tmp_path: Path
) -> None:
    assert cli("init").code == 0
    config = tmp_path / "agent.json"
    settings = {"mode": "automatic", "autoApplyCategories": ["location"]}
    config.write_text(json.dumps({"memory": {"learning": settings}}))
    assert cli("agents", "set", "helper", "--config", str(config)).code == 0
    shown = cli("agents", "show", "helper")
    assert shown.code == 0
    assert "except these, which are applied automatically: precise location." in shown.out
    as_json = cli("agents", "show", "helper", "--json").json()
    assert as_json["memory"]["learning"]["autoApplyCategories"] == ["location"]
    config.write_text(json.dumps({"memory": {"learning": {"autoApplyCategories": ["pets"]}}}))
    refused = cli("agents", "set", "helper", "--config", str(config))
    assert refused.code != 0 and "autoApplyCategories" in refused.err
