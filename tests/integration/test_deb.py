"""Issue 20 item 2: the .deb built from the PyInstaller bundle by packaging/deb.sh.

The layout test packages a small stand-in for the bundle (an `engram` that prints its
version, and the licence files a real bundle carries), so it runs in seconds; with
ENGRAM_DEB=1 (and root, and apt) the real bundle is built, packaged, checked by lintian,
installed with apt-get, run (--version, demo, the inspector offscreen) and removed again.
"""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

import engram
from engram.control.package_data import APP_ID, ICON_SIZES

ROOT = Path(__file__).resolve().parents[2]
DEB_SH = ROOT / "packaging" / "deb.sh"
NOTICES = "_internal/engram/data/licences/THIRD_PARTY_NOTICES.txt"


def _need(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        pytest.skip(f"{tool} is not installed (a Debian or Ubuntu machine has it)")
    return path


def _build_deb(bundle: Path, out: Path, timeout: float = 1800) -> Path:
    done = subprocess.run(
        ["bash", str(DEB_SH)],
        capture_output=True,
        text=True,
        env={**os.environ, "ENGRAM_DEB_BUNDLE": str(bundle), "ENGRAM_DEB_OUT": str(out)},
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    deb = Path(done.stdout.strip().splitlines()[-1])
    assert deb.is_file() and deb.parent == out
    return deb


def _contents(deb: Path) -> dict[str, str]:
    """Each path in the package and what `dpkg-deb -c` says of it (its link target too)."""
    listing = subprocess.run(
        ["dpkg-deb", "-c", str(deb)], capture_output=True, text=True, check=True
    ).stdout
    found = {}
    for line in listing.splitlines():
        mode, *_, path = line.split(None, 5)
        name, _, target = path.partition(" -> ")
        found[name.removeprefix(".")] = f"{mode} {target}".strip()
    return found


def test_issue20_item2_the_deb_layout(tmp_path: Path) -> None:
    _need("dpkg-deb")
    bundle = tmp_path / "engram"
    (bundle / NOTICES).parent.mkdir(parents=True)
    (bundle / "engram").write_text(f'#!/bin/sh\necho "engram {engram.__version__}"\n')
    (bundle / "engram").chmod(0o755)
    notices = "Third-party notices for Engram Inspector\n\nIndex (name, version, licence):\n"
    notices += "* pyside6-essentials 6.7.0 — LGPL-3.0-only\n"
    (bundle / NOTICES).write_text(notices)
    (bundle / "THIRD_PARTY_NOTICES.txt").write_text(notices)
    shutil.copy(ROOT / "LICENSE", bundle / "LICENSE")
    deb = _build_deb(bundle, tmp_path / "out")
    assert deb.name == f"engram_{engram.__version__}_{_arch()}.deb"
    files = _contents(deb)
    # the program under /opt, the command on PATH
    assert files["/opt/engram/engram"].startswith("-rwxr-xr-x")
    assert files["/usr/bin/engram"] == "lrwxrwxrwx /opt/engram/engram"
    for name in ("LICENSE", "THIRD_PARTY_NOTICES.txt", NOTICES):
        assert f"/opt/engram/{name}" in files
    # the desktop's files in /usr/share, the SVG in hicolor/scalable/apps
    share = "/usr/share"
    assert f"{share}/applications/{APP_ID}.desktop" in files
    assert f"{share}/metainfo/{APP_ID}.metainfo.xml" in files
    assert f"{share}/mime/packages/{APP_ID}.xml" in files
    assert f"{share}/icons/hicolor/scalable/apps/{APP_ID}.svg" in files
    for size in ICON_SIZES:
        assert f"{share}/icons/hicolor/{size}x{size}/apps/{APP_ID}.png" in files
    assert f"{share}/doc/engram/copyright" in files and f"{share}/doc/engram/changelog.gz" in files
    # the manual page and shell completion, where man, bash-completion and zsh look
    for path in (
        "man/man1/engram.1.gz",
        "bash-completion/completions/engram",
        "zsh/vendor-completions/_engram",
    ):
        assert files[f"{share}/{path}"].startswith("-rw-r--r--"), path
    # the licences, where Debian looks: Engram's and every third-party notice
    unpacked = tmp_path / "unpacked"
    subprocess.run(["dpkg-deb", "-x", str(deb), str(unpacked)], check=True)
    copyright_text = (unpacked / "usr/share/doc/engram/copyright").read_text()
    assert "License: Apache-2.0" in copyright_text
    assert "  pyside6-essentials 6.7.0 — LGPL-3.0-only\n" in copyright_text  # every component
    man = gzip.decompress((unpacked / "usr/share/man/man1/engram.1.gz").read_bytes())
    assert man == (ROOT / "packaging/man/engram.1").read_bytes()
    for path, name in (
        ("bash-completion/completions/engram", "engram"),
        ("zsh/vendor-completions/_engram", "_engram"),
    ):
        shipped = (unpacked / "usr/share" / path).read_bytes()
        assert shipped == (ROOT / "packaging/completions" / name).read_bytes()
    assert files[f"{share}/doc/engram/THIRD_PARTY_NOTICES.txt"].endswith(
        " /opt/engram/THIRD_PARTY_NOTICES.txt"
    )  # and their full texts, the bundle's own
    # control: what apt needs to install it
    fields = subprocess.run(
        ["dpkg-deb", "-f", str(deb)], capture_output=True, text=True, check=True
    ).stdout
    control = dict(line.split(": ", 1) for line in fields.splitlines() if ": " in line[:40])
    assert control["Package"] == "engram" and control["Version"] == engram.__version__
    assert control["Architecture"] == _arch()
    assert "libc6" in control["Depends"].split(", ")
    assert int(control["Installed-Size"]) > 0


def _arch() -> str:
    return subprocess.run(
        ["dpkg", "--print-architecture"], capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.mark.skipif(
    os.environ.get("ENGRAM_DEB") != "1",
    reason="builds the bundle and installs the .deb system-wide only with ENGRAM_DEB=1",
)
def test_issue20_item2_the_deb_installs_runs_and_removes_cleanly(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("installing a .deb needs root")
    _need("apt-get")
    lintian = _need("lintian")
    bundle = os.environ.get("ENGRAM_DEB_BUNDLE")
    if bundle is None:  # build it (and smoke-test it) now
        env = {**os.environ, "ENGRAM_BUNDLE_DIST": str(tmp_path / "dist")}
        env["ENGRAM_BUNDLE_WORK"] = str(tmp_path / "work")
        env.pop("QT_QPA_PLATFORM", None)
        built = subprocess.run(
            ["bash", str(ROOT / "packaging" / "bundle.sh")],
            capture_output=True,
            text=True,
            env=env,
            timeout=1800,
        )
        assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
        bundle = str(tmp_path / "dist" / "engram")
    deb = _build_deb(Path(bundle), tmp_path / "out")
    checked = subprocess.run(
        [lintian, "--tag-display-limit", "0", str(deb)],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    errors = [line for line in checked.stdout.splitlines() if line.startswith("E:")]
    assert errors == [], checked.stdout[-4000:]

    apt = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    installed = subprocess.run(
        ["apt-get", "install", "-y", "--no-install-recommends", str(deb)],
        capture_output=True,
        text=True,
        env=apt,
        timeout=900,
    )
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    try:
        home = tmp_path / "home"
        runtime = Path(f"/tmp/rt-deb-{os.getpid()}")
        runtime.mkdir(mode=0o700, exist_ok=True)
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / "config"),
            "XDG_DATA_HOME": str(home / "data"),
            "XDG_RUNTIME_DIR": str(runtime),
            "DEB_PASSPHRASE": "demo",
        }
        home.mkdir()
        assert shutil.which("engram", path=env["PATH"]) == "/usr/bin/engram"
        version = subprocess.run(
            ["engram", "--version"], capture_output=True, text=True, env=env, timeout=120
        )
        assert version.stdout.strip() == f"engram {engram.__version__}", version.stderr
        store = tmp_path / "demo.engram"
        with_store = ["engram", "--store", str(store), "--passphrase-env", "DEB_PASSPHRASE"]
        demo = subprocess.run(
            [*with_store, "demo"], capture_output=True, text=True, env=env, timeout=300
        )
        assert demo.returncode == 0 and "maya" in demo.stdout, demo.stderr
        desk = subprocess.Popen(
            [*with_store, "--actor", "staff:deb", "desk", str(store), "--person", "maya"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**env, "QT_QPA_PLATFORM": "offscreen"},
        )
        try:
            assert desk.stdout is not None
            deadline = time.monotonic() + 180
            line = ""
            while time.monotonic() < deadline and desk.poll() is None:
                line = desk.stdout.readline()
                if line.startswith("Engram Inspector unlocked"):
                    break
            assert line.strip() == f"Engram Inspector unlocked {store}.", line
            assert desk.poll() is None
        finally:
            desk.terminate()
            desk.wait(60)
        shutil.rmtree(runtime, ignore_errors=True)
    finally:
        removed = subprocess.run(
            ["apt-get", "purge", "-y", "engram"],
            capture_output=True,
            text=True,
            env=apt,
            timeout=600,
        )
    assert removed.returncode == 0, removed.stderr
    assert not Path("/opt/engram").exists() and not Path("/usr/bin/engram").exists()
    assert not Path(f"/usr/share/applications/{APP_ID}.desktop").exists()
    left = subprocess.run(["dpkg", "-s", "engram"], capture_output=True, text=True)
    assert left.returncode != 0  # nothing of it left in dpkg's database
