"""Where the inspector's resources are: the icon and the colour data (resources/ at the top
of the source tree).

Three ways Engram runs, three places, tried in this order:
- a PyInstaller bundle: the spec copies resources/ to `resources` inside the bundle;
- a source tree (a checkout, or an editable install of one): `resources/` beside `app/`;
- an installed wheel: the wheel's data files land in PREFIX/share (the venv, `--user` base
  or `--prefix` the package was installed into): the freedesktop icon theme under
  share/icons and the rest under share/engram-inspector.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import engram
from engram.model.errors import EngramError

APP_ID = "io.github.engram_inspector.Engram"
ICON_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)
_PALETTES = Path("theme") / "palettes.json"


class ResourcesMissing(EngramError):
    """The installation lacks its resources (one sentence for the CLI's error boundary)."""


@dataclass(frozen=True)
class Resources:
    """Paths to what the inspector loads."""

    palettes: Path
    icon_theme: Path  # holds hicolor/NxN/apps/APP_ID.png

    def icon_files(self) -> list[Path]:
        """The application icon's PNGs, smallest first (those that exist)."""
        files = (
            self.icon_theme / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png"
            for size in ICON_SIZES
        )
        return [path for path in files if path.is_file()]


def _candidates() -> list[Resources]:
    package = Path(engram.__file__).resolve().parent
    found = []
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle is not None:
        root = Path(bundle) / "resources"
        found.append(Resources(root / _PALETTES, root / "icons"))
    source = package.parent.parent / "resources"
    found.append(Resources(source / _PALETTES, source / "icons"))
    # PREFIX/lib/pythonX.Y/site-packages/engram -> PREFIX/share
    share = package.parents[3] / "share" if len(package.parents) > 3 else None
    if share is not None:
        found.append(Resources(share / "engram-inspector" / _PALETTES, share / "icons"))
    return found


def find() -> Resources:
    """The first place that holds the palettes; ResourcesMissing names where it looked."""
    candidates = _candidates()
    for candidate in candidates:
        if candidate.palettes.is_file():
            return candidate
    looked = ", ".join(str(c.palettes.parent.parent) for c in candidates)
    raise ResourcesMissing(
        f"Engram's resources are missing (looked in {looked}); reinstall Engram."
    )
