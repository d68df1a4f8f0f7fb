"""Issue 20 item 3: the third-party notices, written from the installed distributions'
metadata by packaging/third_party_notices.py, cover every shipped dependency with its
licence and licence texts (Qt's LGPL, libsodium, RE2 and Abseil among them)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from packaging.utils import canonicalize_name

from engram.control import package_data

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "packaging" / "third_party_notices.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("third_party_notices", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_issue20_item3_the_packaged_notices_are_current() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_issue20_item3_every_shipped_distribution_is_listed_with_its_licence() -> None:
    notices = _script()
    listed = dict(package_data.third_party_index())
    # every runtime requirement, followed through its own requirements, and nothing else
    shipped = {canonicalize_name(d.metadata["Name"]): d for d in notices.shipped()}
    assert set(listed) == set(shipped)
    for name in ("pyside6-essentials", "shiboken6", "pynacl", "google-re2", "pystemmer"):
        assert name in listed
    for name, dist in shipped.items():
        assert listed[name] == notices.licence_of(dist), name
    assert listed["pyside6-essentials"].startswith("LGPL-3.0")


def test_issue20_item3_the_licence_texts_are_there() -> None:
    text = package_data.third_party_notices().read_text(encoding="utf-8")
    sections = text.split("=" * 78)[1:]
    by_name = {section.strip().splitlines()[0]: section for section in sections}
    qt = by_name["pyside6-essentials"]
    assert "GNU LESSER GENERAL PUBLIC LICENSE" in qt and "GNU GENERAL PUBLIC LICENSE" in qt
    assert "Qt 6" in qt
    assert "libsodium" in by_name["pynacl"] and "ISC" in by_name["pynacl"]
    re2 = by_name["google-re2"]
    assert "The RE2 Authors" in re2 and "Abseil" in re2 and "Apache License" in re2
    assert "Snowball" in by_name["pystemmer"]
    # each distribution's own licence files, as its metadata carries them (shiboken6's is
    # PySide6's LGPL, given once)
    for name, section in by_name.items():
        assert "-" * 78 in section or "texts above" in section, f"{name}: no licence text"
