"""Copy what the installed program reads into the package (app/engram/data/), where
importlib.resources finds it from a wheel, `pip install --target`, an editable install, the
bundle or the .deb alike:

    .venv/bin/python packaging/sync_package_data.py          # copy
    .venv/bin/python packaging/sync_package_data.py --check  # exit 1 if a copy is stale

The sources stay where the desktop and the docs want them: resources/desktop (desktop entry,
metainfo, MIME type) and resources/icons (the freedesktop icon-theme tree) for system
packages, docs/user-guide.md and the screenshots it shows for the repository. The palettes
and the sensitive-topic data live only in the package. tests/unit/test_package_data.py runs
the check, so a stale copy fails the suite.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "app" / "engram" / "data"
GUIDE = ROOT / "docs" / "user-guide.md"


def pairs() -> list[tuple[Path, Path]]:
    """(source, packaged copy) for every file the package carries a copy of."""
    found = [
        (p, DATA / "desktop" / p.name) for p in sorted((ROOT / "resources" / "desktop").glob("*"))
    ]
    icons = ROOT / "resources" / "icons"
    found += [
        (p, DATA / "icons" / p.relative_to(icons)) for p in sorted(icons.rglob("*")) if p.is_file()
    ]
    found.append((GUIDE, DATA / "docs" / GUIDE.name))
    for image in sorted(set(re.findall(r"\]\((screenshots/[^)\s]+)\)", GUIDE.read_text()))):
        found.append((GUIDE.parent / image, DATA / "docs" / image))
    return found


def stale() -> list[Path]:
    """The packaged copies that differ from their sources, and copies with no source left."""
    wanted = pairs()
    bad = [
        copy
        for source, copy in wanted
        if not copy.is_file() or copy.read_bytes() != source.read_bytes()
    ]
    kept = {copy for _, copy in wanted}
    for folder in ("desktop", "icons", "docs"):
        bad += [p for p in sorted((DATA / folder).rglob("*")) if p.is_file() and p not in kept]
    return bad


def main(argv: list[str]) -> int:
    if "--check" in argv:
        bad = stale()
        for path in bad:
            print(f"stale: {path.relative_to(ROOT)}")
        if bad:
            print("run: .venv/bin/python packaging/sync_package_data.py")
        return 1 if bad else 0
    for path in stale():
        if not any(path == copy for _, copy in pairs()):
            path.unlink()  # its source is gone
    for source, copy in pairs():
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, copy)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
