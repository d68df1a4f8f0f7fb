"""Build engram-inspector-headless: the same program without Qt, for hosts that run only
`engram serve` and `engram mcp` and the command line (issue 20 item 11).

    .venv/bin/python packaging/headless_wheel.py [OUT_DIR]     # default: dist/

The default distribution, engram-inspector, stays the whole application with the desktop
inspector. The headless one is built from the same tree, as opencv-python-headless is
beside opencv-python: the same `engram` package and `engram` command, the same version, a
metadata copy of pyproject.toml that differs only in its name, its summary and in leaving
out PySide6 (and the Qt classifier). The two are alternatives: install one of them.
Without Qt, `engram desk` says in one sentence that the window needs engram-inspector.

tests/integration/test_issue20_headless.py builds it, installs it into a new venv that has
no Qt at all and runs `serve`, `mcp` and `desk` there (ENGRAM_HEADLESS=1: it installs the
dependencies from the package index).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME = "engram-inspector-headless"
SUMMARY_TAIL = " Without the desktop inspector (no Qt): for servers."
LEFT_OUT = ("PySide6",)  # every requirement whose name starts so (PySide6-Essentials)
QT_CLASSIFIER = "Environment :: X11 Applications :: Qt"


def headless_pyproject(text: str) -> str:
    """pyproject.toml for the headless distribution, from the default one's text (so its
    comments, bounds and everything else stay as they are)."""
    project = tomllib.loads(text)["project"]
    out = re.sub(
        r'^name = "engram-inspector"$', f'name = "{NAME}"', text, count=1, flags=re.MULTILINE
    )
    summary = project["description"]
    out = out.replace(
        f"description = {_quoted(summary)}",
        f"description = {_quoted(summary + SUMMARY_TAIL)}",
        1,
    )
    for requirement in project["dependencies"]:
        if requirement.startswith(LEFT_OUT):
            out = out.replace(f"    {_quoted(requirement)},\n", "", 1)
    out = out.replace(f"    {_quoted(QT_CLASSIFIER)},\n", "", 1)
    made = tomllib.loads(out)["project"]
    # Every change must have been made, and nothing else: a pyproject.toml laid out
    # differently than this expects fails here, not in a venv.
    assert made["name"] == NAME, "pyproject.toml's name line was not found"
    assert made["description"] == summary + SUMMARY_TAIL, "its description was not found"
    assert made["dependencies"] == [
        r for r in project["dependencies"] if not r.startswith(LEFT_OUT)
    ], "a Qt requirement is not on a line of its own"
    assert QT_CLASSIFIER not in made.get("classifiers", [])
    return out


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def build(out: Path) -> Path:
    """Build the headless wheel into `out`; returns its path."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    project = tomllib.loads(text)["project"]
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="engram-headless-") as scratch:
        tree = Path(scratch)
        (tree / "pyproject.toml").write_text(headless_pyproject(text), encoding="utf-8")
        for name in [project["readme"], *project.get("license-files", []), *_data_files(text)]:
            for path in ROOT.glob(name):
                (tree / path.relative_to(ROOT)).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, tree / path.relative_to(ROOT))
        shutil.copytree(
            ROOT / "app",
            tree / "app",
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"),
        )
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(out), "."],
            cwd=tree,
            check=True,
            stdout=subprocess.DEVNULL,
        )
    wheel = out / f"engram_inspector_headless-{_version()}-py3-none-any.whl"
    assert wheel.is_file(), f"pip wrote no {wheel.name}"
    return wheel


def _data_files(text: str) -> list[str]:
    """The files pyproject.toml installs under the wheel's prefix (the manual page and shell
    completion): setuptools refuses to build a wheel that lacks one."""
    tables = tomllib.loads(text).get("tool", {}).get("setuptools", {}).get("data-files", {})
    return [name for names in tables.values() for name in names]


def _version() -> str:
    """The version, from its one place (engram/__init__.py; pyproject reads it there)."""
    for line in (ROOT / "app/engram/__init__.py").read_text("utf-8").splitlines():
        if line.startswith("__version__"):
            return line.split("=", 1)[1].strip().strip('"')
    raise SystemExit("engram/__init__.py names no __version__")


if __name__ == "__main__":
    print(build(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "dist"))
