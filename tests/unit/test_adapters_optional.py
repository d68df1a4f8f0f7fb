"""Issue 16 item 4: the Agents SDK adapter is an optional extra — Engram starts without it,
and importing the adapter without it says, in one sentence, what to install."""

from __future__ import annotations

import subprocess
import sys

WITHOUT_SDK = "import sys; sys.modules['agents'] = None\n"  # as if it were not installed


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )


def test_the_adapter_without_the_extra_says_what_to_install() -> None:
    ran = _python(
        WITHOUT_SDK
        + "try:\n    import engram.adapters.openai_agents\n"
        + "except ImportError as e:\n    print(e)\n"
    )
    assert ran.stdout.strip() == (
        "The OpenAI Agents SDK adapter needs the 'agents' extra: "
        "pip install 'engram-inspector[agents]'."
    ), ran.stderr


def test_engrams_faces_start_without_the_sdk() -> None:
    ran = _python(
        WITHOUT_SDK
        + "import engram.adapters, engram.cli.main, engram.api.app, engram.mcp.server\n"
        + "print('agents loaded' if sys.modules.get('agents') else 'fine')\n"
    )
    assert ran.stdout.strip() == "fine", ran.stderr
