"""Issue 20 item 16: the project files (CHANGELOG with the migration notes, CONTRIBUTING,
SECURITY, docs/architecture.md, docs/rules.md), the version in one place, no project URL
that does not exist, and a source distribution that holds the tests and the docs."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
from email.parser import Parser
from pathlib import Path

import pytest

import engram

ROOT = Path(__file__).resolve().parents[2]
PROJECT_FILES = (
    "CHANGELOG.md",
    "CONTRIBUTING.md",
    "SECURITY.md",
    "docs/architecture.md",
    "docs/rules.md",
)
# Never part of a source tree's copy: environments, builds, caches.
NOT_SOURCE = shutil.ignore_patterns(
    ".git", ".venv", "dist", "build", "*.egg-info", "__pycache__", ".mypy_cache", ".ruff_cache"
)


def _read(name: str) -> str:
    return (ROOT / name).read_text(encoding="utf-8")


def test_issue20_item16_the_project_files_exist_and_the_readme_links_them() -> None:
    readme = _read("README.md")
    for name in PROJECT_FILES:
        assert (ROOT / name).is_file(), name
        assert f"]({name})" in readme, f"the README does not link {name}"
    assert "](docs/security-model.md)" in _read("SECURITY.md")
    contributing = _read("CONTRIBUTING.md")
    assert "tests/perf/run_all.py" in contributing and "packaging/test.sh" in contributing
    for rule_area in ("store/", "engine/", "control/", "gui/", "store.journal.append"):
        assert rule_area in _read("docs/architecture.md")


def test_issue20_item16_the_migration_notes_live_in_the_changelog() -> None:
    readme, changelog = _read("README.md"), _read("CHANGELOG.md")
    assert "*Migration note:*" not in readme
    assert "(migration notes)" not in readme
    assert "### Migration notes: the command line's contract" in changelog
    assert "### Migration notes: the HTTP API" in changelog
    # What the README said is there, word for word where it was a note.
    assert "`conversation find --json` and the `conversation_find` tool" in changelog
    assert "Deleting an already-closed note now answers 409 (was 403)." in changelog
    assert f"## [{engram.__version__}]" in changelog


def test_issue20_item16_the_version_is_written_in_one_place() -> None:
    project = tomllib.loads(_read("pyproject.toml"))
    assert "version" not in project["project"]
    assert "version" in project["project"]["dynamic"]
    attr = project["tool"]["setuptools"]["dynamic"]["version"]["attr"]
    assert attr == "engram.__version__"
    version = re.escape(engram.__version__)
    # Only __init__.py says what this version is; the AppStream release list records when
    # it was released (a test checks that it names the same one), and the changelog and
    # the integration guide's measurements are history.
    history = {
        "app/engram/__init__.py",
        "app/engram/data/desktop/io.github.engram_inspector.Engram.metainfo.xml",
        "resources/desktop/io.github.engram_inspector.Engram.metainfo.xml",
        "CHANGELOG.md",
        "docs/integration-guide.md",
    }
    written = re.compile(rf"(?<![\d.]){version}(?![\d.])")
    kinds = {".py", ".md", ".xml", ".sh", ".spec", ".toml"}
    paths = [ROOT / "README.md", ROOT / "pyproject.toml", ROOT / "CHANGELOG.md"]
    for folder in ("app", "packaging", "resources", "docs"):
        paths += [p for p in (ROOT / folder).rglob("*") if p.is_file() and p.suffix in kinds]
    found = {
        str(path.relative_to(ROOT))
        for path in paths
        if written.search(path.read_text("utf-8", "replace"))
    }
    assert found <= history, f"the version is written out in {sorted(found - history)}"


@pytest.fixture(scope="module")
def sdist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The source distribution, built as a release would be, from a copy of the tree."""
    tmp = tmp_path_factory.mktemp("sdist")
    source = tmp / "source"
    shutil.copytree(ROOT, source, ignore=NOT_SOURCE, symlinks=True)
    done = subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--outdir", str(tmp / "dist"), str(source)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (built,) = (tmp / "dist").glob("engram_inspector-*.tar.gz")
    return built


def test_issue20_item16_the_sdist_holds_the_tests_docs_and_project_files(sdist: Path) -> None:
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
        top = names[0].split("/")[0]
        info = archive.extractfile(f"{top}/PKG-INFO")
        assert info is not None
        metadata = Parser().parsestr(info.read().decode("utf-8"))
    held = {name.removeprefix(top + "/") for name in names}
    assert top == f"engram_inspector-{engram.__version__}"
    for name in (
        *PROJECT_FILES,
        "LICENSE",
        "README.md",
        "pyproject.toml",
        ".ci/run",
        "docs/cli.md",
        "docs/security-model.md",
        "docs/user-guide.md",
        "tests/conftest.py",
        "tests/docs/test_rules_doc.py",
        "tests/gui/conftest.py",
        "tests/unit/test_fold.py",
        "tests/perf/run_all.py",
        "packaging/bootstrap.sh",
        "packaging/run.sh",
        "resources/icons/engram.svg",
        "app/engram/__init__.py",
        "app/engram/data/theme/palettes.json",
    ):
        assert name in held, f"the sdist lacks {name}"
    tests = [n for n in held if n.startswith("tests/") and n.endswith(".py")]
    assert len(tests) == len(list((ROOT / "tests").rglob("*.py")))  # every one of them
    assert not [n for n in held if "__pycache__" in n or n.endswith(".pyc")]
    assert metadata["Version"] == engram.__version__
    # No project URL is published until one exists (there is no public repository yet).
    assert metadata.get_all("Project-URL") is None
    assert "Development Status :: 3 - Alpha" in (metadata.get_all("Classifier") or [])


def test_issue20_item16_the_metainfo_names_no_project_site_that_does_not_exist() -> None:
    """No homepage or bug tracker until the project has one: the package metadata names none
    (above), and neither does the AppStream metainfo a software centre shows. (Its screenshot
    images are remote by AppStream's rule; they stay, issue 12 item 1.)"""
    import xml.etree.ElementTree as ET

    for tree in ("resources/desktop", "app/engram/data/desktop"):
        component = ET.parse(ROOT / tree / "io.github.engram_inspector.Engram.metainfo.xml")
        urls = [(u.get("type"), u.text) for u in component.getroot().iter("url")]
        assert urls == [], f"{tree}: {urls}"
