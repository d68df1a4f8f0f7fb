"""Issue 12 items 1 and 2: desktop integration files validate, and (with ENGRAM_BUNDLE=1)
the PyInstaller bundle builds and passes its smoke test. Issue 20 item 5: a wheel installed
with `pip install --target` or a prefix finds its resources as package data, and from
those, as from the editable install, the inspector unlocks a store (the .deb's own test is
tests/integration/test_deb.py, the bundle's the one below).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

from engram.gui.resources import APP_ID, ICON_SIZES

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


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, built once from a copy (so the build leaves nothing in the source tree)."""
    tmp_path = tmp_path_factory.mktemp("wheel")
    source = tmp_path / "source"
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info")
    shutil.copytree(ROOT / "app", source / "app", ignore=skip)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    for name in SHARED.values():  # the manual page and completion, the wheel's data-files
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, source / name)
    wheels = tmp_path / "wheels"
    subprocess.run(
        [*PIP, "wheel", "--no-deps", "-w", str(wheels), str(source)],
        check=True,
        capture_output=True,
        cwd=tmp_path,
    )
    (built,) = wheels.glob("engram_inspector-*.whl")
    return built


PIP = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
# Where the wheel puts each generated file under its prefix, and the file in the tree.
SHARED = {
    "share/man/man1/engram.1": "packaging/man/engram.1",
    "share/bash-completion/completions/engram": "packaging/completions/engram",
    "share/zsh/site-functions/_engram": "packaging/completions/_engram",
}
NOTICES = "engram/data/licences/THIRD_PARTY_NOTICES.txt"


def _holds_the_notices(text: str) -> None:
    """A notices file as packaging/third_party_notices.py writes it: Qt's LGPL, libsodium,
    RE2 and Abseil, and every dependency the package's own copy lists."""
    assert text.startswith("Third-party notices for Engram Inspector")
    for needle in ("GNU LESSER GENERAL PUBLIC LICENSE", "libsodium", "The RE2 Authors", "Abseil"):
        assert needle in text, needle
    packaged = (ROOT / "app" / NOTICES).read_text(encoding="utf-8")
    names = [line[2:].split(" ")[0] for line in packaged.splitlines() if line.startswith("* ")]
    assert names and all(f"\n* {name} " in text for name in names)


def test_issue20_item3_the_wheel_holds_the_licence_and_the_notices(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (licence,) = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
        assert "Apache License" in archive.read(licence).decode()
        _holds_the_notices(archive.read(NOTICES).decode("utf-8"))


def test_issue20_the_wheel_holds_the_manual_page_and_shell_completion(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        (data,) = {n.split("/")[0] for n in archive.namelist() if n.split("/")[0].endswith(".data")}
        for installed, name in SHARED.items():
            assert archive.read(f"{data}/data/{installed}") == (ROOT / name).read_bytes()


def test_issue20_item3_the_sdist_holds_the_licence_and_the_notices(
    wheel: Path, tmp_path: Path
) -> None:
    source = wheel.parent.parent / "source"  # the wheel's copy of the tree
    out = tmp_path / "sdist"
    subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--outdir", str(out), str(source)],
        check=True,
        capture_output=True,
    )
    (sdist,) = out.glob("engram_inspector-*.tar.gz")
    with tarfile.open(sdist) as archive:
        top = archive.getnames()[0].split("/")[0]

        def read(name: str) -> str:
            member = archive.extractfile(f"{top}/{name}")
            assert member is not None, name
            return member.read().decode("utf-8")

        assert "Apache License" in read("LICENSE")
        _holds_the_notices(read(f"app/{NOTICES}"))


# Loads what the inspector reads at start: the palettes, the icon (every PNG size), the
# sensitive-topic data, and the packaged desktop files and user guide.
PROBE = """
import engram, engram.gui.resources as r, engram.gui.theme as t, engram.gui.about as a
from engram.runtime.sensitive_lexicon import sensitive_category
from PySide6.QtGui import QGuiApplication
app = QGuiApplication([])
print(engram.__file__)
print(r.find().palettes)
print(t.theme_data().scope_badges["light"][t.Scope.DIRECT])
print(sorted(s.width() for s in a.app_icon().availableSizes()))
print(sensitive_category("Has diabetes."))
print(r.desktop_file(".mime.xml").is_file(), r.user_guide().is_file())
"""


def _install_target(wheel: Path, tmp_path: Path) -> Path:
    """The wheel installed with `pip install --target`: the folder."""
    target = tmp_path / "target"
    subprocess.run(
        [*PIP, "install", "--no-deps", "--no-index", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
    )
    return target


def _install_prefix(wheel: Path, tmp_path: Path) -> tuple[Path, Path]:
    """The wheel installed into a prefix (as into a venv or by pipx): it and its site."""
    prefix = tmp_path / "prefix"
    subprocess.run(
        [*PIP, "install", "--no-deps", "--no-index", "--ignore-installed"]
        + ["--prefix", str(prefix), str(wheel)],
        check=True,
        capture_output=True,
    )
    (site,) = prefix.glob("lib/python3*/site-packages")
    return prefix, site


def _probe(path: list[str], cwd: Path) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-S", "-c", PROBE],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(path), "QT_QPA_PLATFORM": "offscreen"},
        cwd=cwd,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_issue20_item5_pip_install_target_finds_its_resources(wheel: Path, tmp_path: Path) -> None:
    """`pip install --target DIR`: the package data serves, not PREFIX/share (the old
    PREFIX/share lookup found nothing here)."""
    target = _install_target(wheel, tmp_path)
    # the wheel first; its dependencies (PySide6, PyStemmer) from this environment
    lines = _probe([str(target), sysconfig.get_path("purelib")], tmp_path)
    module, palettes, badge, sizes, category, packaged = lines
    assert Path(module).is_relative_to(target)
    assert Path(palettes) == target / "engram" / "data" / "theme" / "palettes.json"
    assert badge.startswith("#")
    assert json.loads(sizes) == list(ICON_SIZES)
    assert category == "health" and packaged == "True True"
    # nothing the package reads lands outside it: share/ holds the manual page and completion
    assert _shared(target) == set(SHARED)


def _shared(prefix: Path) -> set[str]:
    return {str(p.relative_to(prefix)) for p in (prefix / "share").rglob("*") if p.is_file()}


def test_issue20_item5_an_installed_wheel_finds_its_resources(wheel: Path, tmp_path: Path) -> None:
    """Installed with a prefix (as into a venv or by pipx): the same package data serves,
    and the wheel puts no desktop files inside the environment, where no desktop looks
    (`engram desk --install-desktop-entry` puts them where it does)."""
    prefix, site = _install_prefix(wheel, tmp_path)
    lines = _probe([str(site), sysconfig.get_path("purelib")], tmp_path)
    assert Path(lines[1]).is_relative_to(site / "engram" / "data")
    assert json.loads(lines[3]) == list(ICON_SIZES)
    assert lines[4] == "health"
    # Under share/ only the manual page and completion, where man and bash-completion look
    # beside the prefix's bin/; no desktop files, which no desktop would look for there.
    assert _shared(prefix) == set(SHARED)


def _launcher(tmp_path: Path, path: list[str]) -> Path:
    """An `engram` command for a package on `path` alone (no site: nothing of this
    environment's own engram, the editable checkout, can be picked up instead)."""
    launcher = tmp_path / "bin" / "engram"
    launcher.parent.mkdir()
    launcher.write_text(
        "#!/bin/sh\n"
        f"PYTHONPATH='{os.pathsep.join(path)}' exec '{sys.executable}' -S -m engram \"$@\"\n"
    )
    launcher.chmod(0o755)
    return launcher


def _unlocks_the_demo(engram: Path, tmp_path: Path) -> None:
    """The smoke test up to the window: --version, `demo`, and `desk` offscreen until it
    says it unlocked the store (packaging/smoke_bundle.sh, a positive signal)."""
    env = {**os.environ, "ENGRAM_SMOKE_UNTIL": "desk", "TMPDIR": str(tmp_path)}
    done = subprocess.run(
        ["bash", str(ROOT / "packaging" / "smoke_bundle.sh"), str(engram)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "ok  desk: the inspector unlocked the store offscreen" in done.stdout


def test_issue20_item5_the_inspector_unlocks_a_store_from_pip_install_target(
    wheel: Path, tmp_path: Path
) -> None:
    target = _install_target(wheel, tmp_path)
    _unlocks_the_demo(_launcher(tmp_path, [str(target), sysconfig.get_path("purelib")]), tmp_path)


def test_issue20_item5_the_inspector_unlocks_a_store_from_an_installed_wheel(
    wheel: Path, tmp_path: Path
) -> None:
    _, site = _install_prefix(wheel, tmp_path)
    _unlocks_the_demo(_launcher(tmp_path, [str(site), sysconfig.get_path("purelib")]), tmp_path)


def test_issue20_item5_the_inspector_unlocks_a_store_from_the_editable_install(
    tmp_path: Path,
) -> None:
    """packaging/bootstrap.sh installs the checkout editable (`pip install -e`): its
    console script runs this tree's code."""
    purelib = Path(sysconfig.get_path("purelib"))
    (record,) = purelib.glob("engram_inspector-*.dist-info/direct_url.json")
    direct = json.loads(record.read_text())
    assert direct["dir_info"].get("editable") is True, direct
    import engram

    assert Path(engram.__file__).is_relative_to(ROOT / "app")
    _unlocks_the_demo(Path(sys.executable).parent / "engram", tmp_path)


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
    bundle = tmp_path / "dist" / "engram"
    assert (bundle / "engram").is_file()
    # Issue 20 item 3: the licences beside the program and inside it (Help > About reads
    # that copy), written at build time with the exact versions shipped.
    assert "Apache License" in (bundle / "LICENSE").read_text()
    notices = (bundle / "THIRD_PARTY_NOTICES.txt").read_text(encoding="utf-8")
    assert (bundle / "_internal" / NOTICES).read_text(encoding="utf-8") == notices
    _holds_the_notices(notices)
    from importlib import metadata

    assert f"\n* pyside6-essentials {metadata.version('PySide6-Essentials')} — " in notices
    assert "\n* python 3." in notices and "\n* pyinstaller-bootloader " in notices
    assert "(Debian)" in notices  # the system libraries PyInstaller copied in
