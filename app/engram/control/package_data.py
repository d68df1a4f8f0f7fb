"""Where the inspector's resources are: package data under engram/data, read through
importlib.resources, so a wheel, `pip install --target`, an editable install, the PyInstaller
bundle and the .deb all find them the same way (issue 20 item 5).

- theme/palettes.json: the scope badges and the light and dark palettes;
- icons/: the SVG and the freedesktop icon-theme PNGs (hicolor/NxN/apps/APP_ID.png);
- desktop/: the desktop entry, metainfo and MIME type, which `engram desk
  --install-desktop-entry` copies into the user's data folders;
- docs/: the user guide Help › User guide opens.

The copies under resources/ at the top of the source tree are for system packages only;
packaging/sync_package_data.py keeps the package's copies current.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources as importlib_resources
from pathlib import Path

from engram.model.errors import EngramError

APP_ID = "io.github.engram_inspector.Engram"
ICON_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)


class ResourcesMissing(EngramError):
    """The installation lacks its resources (one sentence for the CLI's error boundary)."""


def data_folder() -> Path:
    """engram/data inside the installed package (a real folder: wheels install unpacked)."""
    folder = importlib_resources.files("engram") / "data"
    if not isinstance(folder, Path) or not folder.is_dir():
        raise ResourcesMissing(
            f"Engram's resources are missing (looked in {folder}); reinstall Engram."
        )
    return folder


@dataclass(frozen=True)
class Resources:
    """Paths to what the inspector loads."""

    palettes: Path
    icon_theme: Path  # holds hicolor/NxN/apps/APP_ID.png and engram.svg

    def icon_files(self) -> list[Path]:
        """The application icon's PNGs, smallest first (those that exist)."""
        files = (
            self.icon_theme / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png"
            for size in ICON_SIZES
        )
        return [path for path in files if path.is_file()]

    @property
    def svg(self) -> Path:
        """The scalable icon."""
        return self.icon_theme / "engram.svg"


def find() -> Resources:
    """The package's resources; ResourcesMissing names where it looked."""
    data = data_folder()
    found = Resources(data / "theme" / "palettes.json", data / "icons")
    if not found.palettes.is_file():
        raise ResourcesMissing(
            f"Engram's resources are missing (looked in {data}); reinstall Engram."
        )
    return found


def desktop_file(suffix: str) -> Path:
    """The packaged desktop file APP_ID + suffix (".desktop", ".metainfo.xml", ".mime.xml")."""
    return data_folder() / "desktop" / f"{APP_ID}{suffix}"


def user_guide() -> Path:
    """The user guide shipped inside the package."""
    return data_folder() / "docs" / "user-guide.md"


def third_party_notices() -> Path:
    """The third-party notices: every shipped dependency, its licence and the licence texts
    (written by packaging/third_party_notices.py; a build's copy names exact versions)."""
    return data_folder() / "licences" / "THIRD_PARTY_NOTICES.txt"


def third_party_index() -> list[tuple[str, str]]:
    """(name, with the version when the notices name it; licence) of each component the
    notices list, from their index: the "* name [version] — licence" lines under "Index"."""
    lines = third_party_notices().read_text(encoding="utf-8").splitlines()
    start = next((i + 1 for i, line in enumerate(lines) if line.startswith("Index (")), 0)
    found = []
    for line in lines[start:]:
        if not line.startswith("* "):
            break
        heading, _, licence = line[2:].partition(" — ")
        found.append((heading, licence))
    return found
