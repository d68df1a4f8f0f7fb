"""Issue 12 items 1 and 2: desktop integration files validate, an installed wheel finds its
resources, and (with ENGRAM_BUNDLE=1) the PyInstaller bundle builds and passes its smoke test.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from engram.gui.resources import APP_ID

ROOT = Path(__file__).resolve().parents[2]
DESKTOP = ROOT / "resources" / "desktop" / f"{APP_ID}.desktop"
METAINFO = ROOT / "resources" / "desktop" / f"{APP_ID}.metainfo.xml"


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (packaging/bootstrap.sh --for test installs it)")
    return path


def test_issue12_item1_desktop_entry_validates() -> None:
    done = subprocess.run(
        [_tool("desktop-file-validate"), str(DESKTOP)], capture_output=True, text=True
    )
    # Hints are suggestions; errors and warnings fail.
    problems = [line for line in done.stdout.splitlines() if ": hint:" not in line]
    assert done.returncode == 0 and problems == [], done.stdout + done.stderr


def test_issue12_item1_metainfo_validates() -> None:
    done = subprocess.run(
        [_tool("appstreamcli"), "validate", "--no-net", "--pedantic", str(METAINFO)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_issue12_item1_metainfo_and_desktop_entry_agree_and_show_real_screenshots() -> None:
    component = ET.parse(METAINFO).getroot()
    assert component.findtext("id") == APP_ID
    assert component.findtext("launchable") == DESKTOP.name
    assert component.find("content_rating[@type='oars-1.1']") is not None
    assert component.find("releases/release[@version]") is not None
    entry = dict(line.split("=", 1) for line in DESKTOP.read_text().splitlines() if "=" in line)
    assert entry["Icon"] == APP_ID and entry["Exec"].startswith("engram desk")
    images = [image.text or "" for image in component.iter("image")]
    assert images
    for url in images:
        name = url.rsplit("/docs/screenshots/", 1)[1]
        assert (ROOT / "docs" / "screenshots" / name).is_file(), url
    release = component.find("releases/release")
    assert release is not None
    import engram

    assert release.get("version") == engram.__version__


def test_issue12_item1_an_installed_wheel_finds_its_resources(tmp_path: Path) -> None:
    """No source tree beside it: the wheel's data files under PREFIX/share serve."""
    # Built from a copy, so the build leaves nothing in the source tree.
    source = tmp_path / "source"
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for part in ("app", "resources"):
        shutil.copytree(ROOT / part, source / part, ignore=skip)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    wheels = tmp_path / "wheels"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", "-w", str(wheels), str(source)],
        check=True,
        capture_output=True,
        cwd=tmp_path,
    )
    prefix = tmp_path / "prefix"
    (wheel,) = wheels.glob("engram_inspector-*.whl")
    subprocess.run(
        [
            *pip,
            "install",
            "--no-deps",
            "--no-index",
            "--ignore-installed",
            "--prefix",
            str(prefix),
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    (site,) = prefix.glob("lib/python3*/site-packages")
    probe = (
        "import engram.gui.resources as r; f = r.find(); "
        "print(f.palettes); print(len(f.icon_files()))"
    )
    done = subprocess.run(
        [sys.executable, "-S", "-c", probe],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(site)},
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    palettes, icons = done.stdout.split()
    assert Path(palettes).is_relative_to(prefix / "share" / "engram-inspector")
    assert int(icons) == 9
    assert (prefix / "share" / "applications" / DESKTOP.name).is_file()
    assert (prefix / "share" / "metainfo" / METAINFO.name).is_file()
    # Issue 18 item 1 (P5): the sensitive-topic data ships with the wheel and is found
    lexicon = (
        "import engram.runtime.sensitive_lexicon as s; print(s.sensitive_category('Has diabetes.'))"
    )
    found = subprocess.run(
        [sys.executable, "-S", "-c", lexicon],
        capture_output=True,
        text=True,
        # the wheel first; its dependencies (PyStemmer) from this environment
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(site), sysconfig.get_path("purelib")]),
        },
        cwd=tmp_path,
    )
    assert found.returncode == 0 and found.stdout.strip() == "health", found.stderr
    assert (prefix / "share" / "engram-inspector" / "sensitive" / "categories.json").is_file()


@pytest.mark.skipif(
    os.environ.get("ENGRAM_BUNDLE") != "1", reason="builds the bundle only with ENGRAM_BUNDLE=1"
)
def test_issue12_item2_bundle_builds_and_passes_its_smoke_test(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "ENGRAM_BUNDLE_DIST": str(tmp_path / "dist"),
        "ENGRAM_BUNDLE_WORK": str(tmp_path / "work"),
    }
    env.pop("QT_QPA_PLATFORM", None)
    done = subprocess.run(
        ["bash", str(ROOT / "packaging" / "bundle.sh")],
        capture_output=True,
        text=True,
        env=env,
        timeout=1200,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert "smoke test passed" in done.stdout
    assert (tmp_path / "dist" / "engram" / "engram").is_file()
