"""The integration guide's HTTP client block (section 6) runs exactly as printed against a
real `engram serve` process (issue 16 items 3 and 5), with the agent configured as
section 3 prints it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from engram.client import EngramClient
from tests.docs.guide_blocks import GUIDE, block
from tests.serve_process import served_store

PRINTED_URL = "http://127.0.0.1:8765"
KINDS = ["fact", "preference", "open_thread", "style"]
SECTION_3 = {
    "memory": {
        "tools": {"search": True, "remember": True, "writeScope": "invocation-user"},
        "learning": {"mode": "suggest", "surfaces": ["chat", "channel"], "kinds": KINDS},
    }
}


def test_issue16_3_the_guide_http_client_block_runs_as_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = block("http-client")
    assert PRINTED_URL in code
    with served_store(tmp_path, {"helper": SECTION_3}) as served:
        # The server listens on a free port, not the default one the guide prints.
        printed = code.replace(PRINTED_URL, served.url)
        exec(compile(printed, str(GUIDE), "exec"), {"api_key": served.key})
        assert capsys.readouterr().out == "True True\n"
        with EngramClient(served.url, key=served.key, agent="helper", person="maya") as memory:
            (chat,) = memory.conversations()
            turns = memory.recent_turns(chat.id).turns
            deadline = time.monotonic() + 15  # learning runs in the server's background
            while not (suggested := memory.candidates()) and time.monotonic() < deadline:
                time.sleep(0.05)
    assert [(t.role, t.author) for t in turns] == [("user", "maya"), ("assistant", "helper")]
    assert [c.text for c in suggested] == ["Lives in Grenoble."]
