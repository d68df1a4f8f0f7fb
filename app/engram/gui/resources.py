"""The inspector's package data (palettes, icons, desktop files, the guide): it lives in
`engram.control.package_data`, where the command line's desktop-entry installer reads it
too without reaching up into the window's layer."""

from engram.control.package_data import *  # noqa: F403
from engram.control.package_data import APP_ID, desktop_file, find  # noqa: F401
