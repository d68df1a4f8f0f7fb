"""Write the third-party notices (issue 20 item 3) from the installed distributions' metadata:
every distribution Engram installs beside it (its runtime requirements, followed through
their own, for this Python and platform), each with its version (for a build), its licence
(License-Expression, else License, else the licence classifiers) and the licence files its
metadata carries, plus what a wheel links in without a file of its own (Qt in PySide6,
Abseil in google-re2, OpenSSL in cryptography).

    python packaging/third_party_notices.py                 # the package's copy, no versions
    python packaging/third_party_notices.py --check         # exit 1 if that copy is stale
    python packaging/third_party_notices.py --bundle OUT [--with DIST]...
        # a build's: exact versions, Python and PyInstaller's bootloader too, and each DIST
        # the build adds (psycopg, when the bundle takes it in); with --libraries DIR, also
        # the system libraries PyInstaller copied into DIR, under their Debian copyrights

The package's copy (app/engram/data/licences/THIRD_PARTY_NOTICES.txt, in the wheel and the
sdist) names no versions, so it stays current across machines whose versions differ; the
bundle and the .deb carry a copy written at build time from the very environment PyInstaller
packs, with the exact versions shipped. Run it with the project's environment's Python.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import tomllib
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
PACKAGED = ROOT / "app" / "engram" / "data" / "licences" / "THIRD_PARTY_NOTICES.txt"
TEXTS = Path(__file__).resolve().parent / "licences"  # licence texts no metadata carries
APACHE = ROOT / "LICENSE"  # the Apache License 2.0, word for word
RULE = "=" * 78
THIN = "-" * 78


@dataclass(frozen=True)
class Embedded:
    """What a distribution links in or ships without a licence file of its own."""

    says: str
    texts: tuple[tuple[str, Path], ...] = ()


_LGPL = (("LGPL-3.0", TEXTS / "LGPL-3.0.txt"), ("GPL-3.0", TEXTS / "GPL-3.0.txt"))
EMBEDDED: dict[str, Embedded] = {
    "pyside6-essentials": Embedded(
        "Qt {version} (The Qt Company Ltd. and other contributors), shipped as shared "
        "libraries beside PySide6 and used under the GNU Lesser General Public License 3.0, "
        "whose text, and that of the GNU GPL 3.0 it builds on, follow. The source of Qt and "
        "PySide6 is at https://download.qt.io/official_releases/ and "
        "https://code.qt.io/cgit/pyside/pyside-setup.git/.",
        _LGPL,
    ),
    "shiboken6": Embedded(
        "The Shiboken runtime of Qt for Python, used under the GNU LGPL 3.0 (texts above, "
        "with PySide6-Essentials).",
    ),
    "google-re2": Embedded(
        "RE2 (The RE2 Authors, BSD-3-Clause: the licence below) and Abseil (The Abseil "
        "Authors, Apache-2.0), both linked into its extension module.",
        (("Apache-2.0 (Abseil)", APACHE),),
    ),
    "pynacl": Embedded("libsodium (Frank Denis, ISC), linked into its extension module."),
    "pystemmer": Embedded("The Snowball stemmers (BSD-3-Clause), in its extension module."),
    "cryptography": Embedded(
        "OpenSSL (The OpenSSL Project Authors, Apache-2.0), linked into its extension "
        "module; the Apache License 2.0 text is below.",
    ),
}


@dataclass
class Component:
    name: str
    version: str
    licence: str
    url: str = ""
    embedded: str = ""
    texts: list[tuple[str, str]] = field(default_factory=list)  # (title, text)


def declared() -> list[str]:
    """Engram's runtime requirements, as pyproject.toml declares them (no extras)."""
    with (ROOT / "pyproject.toml").open("rb") as file:
        return list(tomllib.load(file)["project"]["dependencies"])


def shipped(also: tuple[str, ...] = ()) -> list[metadata.Distribution]:
    """The distributions Engram's requirements (and `also`) install here, followed through
    their own requirements."""
    seen: dict[str, metadata.Distribution] = {}
    todo = [Requirement(line).name for line in declared()] + list(also)
    while todo:
        name = canonicalize_name(todo.pop())
        if name in seen:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # an optional one that is not installed
        seen[name] = dist
        for line in dist.requires or []:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    return sorted(seen.values(), key=lambda d: canonicalize_name(d.metadata["Name"]))


def licence_of(dist: metadata.Distribution) -> str:
    meta = dist.metadata
    if meta.get("License-Expression"):
        return str(meta["License-Expression"])
    declared = (meta.get("License") or "").strip()
    if declared and "\n" not in declared and len(declared) <= 80:
        return declared
    classifiers = [
        c.split(" :: ")[-1] for c in meta.get_all("Classifier") or [] if c.startswith("License")
    ]
    return " / ".join(classifiers) or "not stated in its metadata"


def licence_files(dist: metadata.Distribution) -> list[tuple[str, str]]:
    """(file name, text) of each licence file the distribution's metadata holds."""
    found: list[tuple[str, str]] = []
    for name in dist.metadata.get_all("License-File") or []:
        for path in (f"licenses/{name}", name):  # metadata 2.4 puts them under licenses/
            text = dist.read_text(path)
            if text is not None:
                found.append((name, text))
                break
    if found:
        return found
    for file in dist.files or []:
        parts = file.parts
        upper = file.name.upper()
        if parts and parts[0].endswith(".dist-info") and upper.startswith(_LICENCE_NAMES):
            text = dist.read_text("/".join(parts[1:]))
            if text is not None:
                found.append((file.name, text))
    return found


_LICENCE_NAMES = ("LICENSE", "LICENCE", "COPYING", "NOTICE", "COPYRIGHT")


def _url(dist: metadata.Distribution) -> str:
    meta = dist.metadata
    for entry in meta.get_all("Project-URL") or []:
        label, _, url = entry.partition(",")
        if label.strip().lower() in ("source", "source code", "repository", "homepage", "home"):
            return url.strip()
    return str(meta.get("Home-page") or "")


def components(versions: bool, also: tuple[str, ...] = ()) -> list[Component]:
    found = []
    for dist in shipped(also):
        name = canonicalize_name(dist.metadata["Name"])
        component = Component(name, dist.version if versions else "", licence_of(dist), _url(dist))
        component.texts = licence_files(dist)
        extra = EMBEDDED.get(name)
        if extra is not None:
            component.embedded = extra.says.format(version=dist.version if versions else "6")
            component.texts += [(title, path.read_text()) for title, path in extra.texts]
        found.append(component)
    return found


def bundle_components() -> list[Component]:
    """What a PyInstaller bundle holds besides the distributions: Python and the bootloader."""
    python = Component(
        "python", ".".join(map(str, sys.version_info[:3])), "PSF-2.0", "https://www.python.org/"
    )
    here = Path(os.__file__).parent
    own = [p for p in (here / "LICENSE.txt", here.parent / "LICENSE.txt") if p.is_file()]
    if own:
        python.texts.append(("LICENSE.txt", own[0].read_text()))
    else:  # typing-extensions ships the same PSF licence text, history and all
        python.embedded = "Its interpreter and standard library; the PSF licence text follows."
        python.texts += licence_files(metadata.distribution("typing-extensions"))
    installer = metadata.distribution("pyinstaller")
    bootloader = Component(
        "pyinstaller-bootloader",
        installer.version,
        "GPL-2.0-or-later WITH Bootloader-exception",
        _url(installer),
    )
    bootloader.embedded = (
        "The bundle's launcher, which PyInstaller's licence lets any program ship "
        "(the bootloader exception)."
    )
    bootloader.texts = licence_files(installer)
    return [python, bootloader]


def system_libraries(folder: Path) -> list[Component]:
    """The system's shared libraries PyInstaller copied into `folder` (the bundle's
    _internal), each under its Debian package's copyright file; those that came from a
    wheel are covered by that wheel's entry."""
    try:
        listing = subprocess.run(
            ["ldconfig", "-p"], capture_output=True, text=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return []
    system: dict[str, str] = {}
    for line in listing.splitlines():
        name, arrow, path = line.strip().partition(" => ")
        if arrow:
            system.setdefault(name.split(" ")[0], path)
    packages: dict[str, list[str]] = {}
    for copied in sorted(folder.glob("lib*.so*")):
        library = copied.name
        # the same file as the system's (a wheel's copy, or Python's own, is not)
        if library not in system or Path(system[library]).read_bytes() != copied.read_bytes():
            continue
        owner = subprocess.run(
            ["dpkg", "-S", os.path.realpath(system[library])], capture_output=True, text=True
        )
        if owner.returncode != 0:
            owner = subprocess.run(["dpkg", "-S", system[library]], capture_output=True, text=True)
        if owner.returncode == 0:
            package = owner.stdout.split(":")[0].strip()
            packages.setdefault(package, []).append(library)
    found = []
    for package, libraries in sorted(packages.items()):
        version = subprocess.run(
            ["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True
        ).stdout.strip()
        component = Component(f"{package} (Debian)", version, "see its copyright file below")
        component.embedded = "the shared libraries " + ", ".join(libraries) + "."
        copyright_file = Path("/usr/share/doc") / package / "copyright"
        if copyright_file.is_file():
            component.texts.append(
                (str(copyright_file), copyright_file.read_text(errors="replace"))
            )
        found.append(component)
    return found


def _heading(component: Component) -> str:
    return " ".join(p for p in (component.name, component.version) if p)


def render(found: list[Component], versions: bool) -> str:
    sys.path.insert(0, str(ROOT / "app"))
    import engram

    lines = [
        f"Third-party notices for Engram Inspector {engram.__version__}",
        "",
        "Engram Inspector is licensed under the Apache License 2.0 (the LICENSE file beside",
        "this one). It is built on the following software, each under its own licence;",
        "each licence text follows, as that software's metadata carries it.",
        "This file is written by packaging/third_party_notices.py"
        + (" when the program is built." if versions else "; a built program carries one")
        + ("" if versions else "\nthat also names the exact versions it ships."),
        "",
        "Index (name, version, licence):" if versions else "Index (name, licence):",
    ]
    lines += [f"* {_heading(c)} — {c.licence}" for c in found]
    for component in found:
        lines += ["", RULE, _heading(component), f"Licence: {component.licence}"]
        if component.url:
            lines.append(f"Project: {component.url}")
        if component.embedded:
            lines += textwrap.wrap(f"Includes: {component.embedded}", 78, subsequent_indent="  ")
        if not component.texts:
            lines.append("(Its metadata holds no licence file.)")
        for title, text in component.texts:
            lines += [THIN, f"{title}:", "", text.rstrip()]
    return "\n".join(lines) + "\n"


def index(text: str) -> list[str]:
    """The index lines of a notices file ("* name [version] — licence"), up to its first
    blank line."""
    lines = text.splitlines()
    start = next((i + 1 for i, line in enumerate(lines) if line.startswith("Index (")), len(lines))
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start:end]


def main(argv: list[str]) -> int:
    if "--bundle" in argv:
        out = Path(argv[argv.index("--bundle") + 1])
        also = tuple(argv[i + 1] for i, arg in enumerate(argv) if arg == "--with")
        out.parent.mkdir(parents=True, exist_ok=True)
        found = components(True, also) + bundle_components()
        if "--libraries" in argv:
            found += system_libraries(Path(argv[argv.index("--libraries") + 1]))
        out.write_text(render(found, True), encoding="utf-8")
        print(f"wrote {out}")
        return 0
    text = render(components(False), False)
    if "--check" in argv:
        # The index (each distribution and its licence) must match; the texts are those of
        # the versions installed when the file was written (a copyright year may differ on
        # another machine's newer release, and the build's own copy has the exact ones).
        current = PACKAGED.read_text(encoding="utf-8") if PACKAGED.is_file() else ""
        if index(current) != index(text):
            print(f"stale: {PACKAGED.relative_to(ROOT)}")
            print("run: .venv/bin/python packaging/third_party_notices.py")
            return 1
        return 0
    PACKAGED.parent.mkdir(parents=True, exist_ok=True)
    PACKAGED.write_text(text, encoding="utf-8")
    print(f"wrote {PACKAGED.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
