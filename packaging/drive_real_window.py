"""Drive the real inspector window the way a person does: under Xvfb with a window manager
(openbox), real dialogs and message boxes, keys sent by the X server (xdotool), and what
happened read back from the store through the CLI — no test stand-ins anywhere.

Each check prints PASS or FAIL with what was seen; a screenshot of every step goes to the
output folder. Exit 0 only when every check passed.

Needs Debian's xvfb, openbox, xdotool and imagemagick (`import`):
    sudo apt-get install -y xvfb openbox xdotool imagemagick
Run: .venv/bin/python packaging/drive_real_window.py [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENGRAM = str(Path(sys.executable).with_name("engram"))
PASSPHRASE = "demo"
SCREEN = "1600x1000x24"
# Where things are inside the main window at its default size (window coordinates).
FIRST_NOTE_ROW = (320, 145)
PEOPLE_LIST = (60, 60)


class Desk:
    """One X server, openbox, and the inspector on a demo store."""

    def __init__(self, work: Path, out: Path) -> None:
        self.work, self.out = work, out
        self.store = work / "demo.engram"
        self.display = f":{90 + os.getpid() % 100}"
        self.env = {
            **os.environ,
            "DISPLAY": self.display,
            "HOME": str(work / "home"),
            "XDG_CONFIG_HOME": str(work / "home/.config"),
            "XDG_DATA_HOME": str(work / "home/.local/share"),
            "ENGRAM_DEMO_PASSPHRASE": PASSPHRASE,
        }
        self.env.pop("QT_QPA_PLATFORM", None)
        (work / "home").mkdir()
        self.procs: list[subprocess.Popen[bytes]] = []
        self.shots = 0

    def start(self) -> None:
        self.cli("demo")
        self.procs.append(
            subprocess.Popen(["Xvfb", self.display, "-screen", "0", SCREEN], env=self.env)
        )
        time.sleep(1.5)
        self.procs.append(subprocess.Popen(["openbox"], env=self.env, stderr=subprocess.DEVNULL))
        time.sleep(1.0)
        log = (self.work / "desk.log").open("wb")
        self.procs.append(
            subprocess.Popen(
                [
                    ENGRAM,
                    "--store",
                    str(self.store),
                    "--actor",
                    "staff:drive",
                    "desk",
                    str(self.store),
                    "--person",
                    "maya",
                ],
                env={k: v for k, v in self.env.items() if k != "ENGRAM_DEMO_PASSPHRASE"},
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        )
        self.wait_for(lambda: "Engram Inspector" in self.titles(), "the window to appear")

    def stop(self) -> None:
        for proc in reversed(self.procs):
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()

    def cli(self, *args: str) -> str:
        return subprocess.run(
            [
                ENGRAM,
                "--store",
                str(self.store),
                "--passphrase-env",
                "ENGRAM_DEMO_PASSPHRASE",
                *args,
            ],
            env=self.env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout

    def xdo(self, *args: str) -> str:
        return subprocess.run(
            ["xdotool", *args], env=self.env, capture_output=True, text=True
        ).stdout.strip()

    def titles(self) -> list[str]:
        ids = self.xdo("search", "--onlyvisible", "--name", ".").split()
        return [self.xdo("getwindowname", i) for i in ids]

    def active_title(self) -> str:
        return self.xdo("getactivewindow", "getwindowname")

    def click(self, x: int, y: int) -> None:
        """Click at (x, y) inside the main window (openbox may place it anywhere)."""
        window = self.xdo("search", "--onlyvisible", "--name", "Engram Inspector$").split()[0]
        self.xdo("mousemove", "--window", window, str(x), str(y), "click", "1")

    def keys(self, *keys: str) -> None:
        self.xdo("key", "--delay", "0", *keys)  # back to back, as a quick typist presses them

    def type(self, text: str) -> None:
        self.xdo("type", "--delay", "40", text)

    def shot(self, name: str) -> None:
        self.shots += 1
        subprocess.run(
            ["import", "-window", "root", str(self.out / f"{self.shots:02d}-{name}.png")],
            env=self.env,
            check=False,
        )

    def wait_for(self, ok: Callable[[], bool], what: str, timeout: float = 30.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ok():
                return True
            time.sleep(0.2)
        print(f"  (gave up waiting for {what})")
        return False

    def notes(self, person: str = "maya") -> list[dict[str, object]]:
        listed = json.loads(self.cli("notes", "list", "--person", person, "--all", "--json"))
        return list(listed["notes"] if isinstance(listed, dict) else listed)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("drive-real-window"))
    args = parser.parse_args()
    missing = [t for t in ("Xvfb", "openbox", "xdotool", "import") if shutil.which(t) is None]
    if missing:
        print(
            f"missing: {', '.join(missing)}; sudo apt-get install -y xvfb openbox xdotool "
            "imagemagick"
        )
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    results: list[tuple[str, bool, str]] = []

    def check(name: str, ok: bool, seen: str) -> None:
        results.append((name, ok, seen))
        print(f"{'PASS' if ok else 'FAIL'}  {name}: {seen}")

    with tempfile.TemporaryDirectory(prefix="engram-drive-") as tmp:
        desk = Desk(Path(tmp), args.out)
        try:
            desk.start()
            _drive(desk, check)
        finally:
            desk.stop()
    failed = [name for name, ok, _ in results if not ok]
    print(
        f"\n{len(results) - len(failed)} of {len(results)} checks passed; screenshots in {args.out}"
    )
    return 1 if failed else 0


def _drive(desk: Desk, check: Callable[[str, bool, str], None]) -> None:
    time.sleep(2)
    desk.shot("unlock")
    # 17.11: focus is in the passphrase field; typing it then Return opens the store.
    desk.type(PASSPHRASE)
    desk.keys("Return")
    opened = desk.wait_for(lambda: desk.active_title().startswith("maya"), "maya to open")
    desk.shot("opened")
    check("passphrase typed at launch opens the store", opened, desk.active_title())

    # 17.1: Up from maya reaches ines, then Down Down back to back lands on sam.
    desk.keys("Up")
    desk.wait_for(lambda: desk.active_title().startswith("ines"), "ines")
    desk.keys("Down", "Down")
    desk.wait_for(lambda: desk.active_title().startswith("sam"), "sam")
    time.sleep(1.5)
    desk.shot("down-down")
    check(
        "Down twice shows the last person chosen",
        desk.active_title().startswith("sam"),
        desk.active_title(),
    )

    # 17.2 and 17.6: to maya's notes; Down then Delete back to back never deletes the row
    # left; the dialog names the note; Tab to "Delete note" and Return deletes that note.
    desk.keys("Up")
    desk.wait_for(lambda: desk.active_title().startswith("maya"), "maya")
    time.sleep(1.5)
    before = {n["id"]: n for n in desk.notes()}
    desk.click(*FIRST_NOTE_ROW)
    time.sleep(1.0)
    desk.keys("Down", "Delete")
    time.sleep(1.5)
    desk.shot("down-delete")
    dialog = desk.active_title()
    if dialog == "Delete note":
        desk.type("asked by maya")
        desk.keys("Tab")
        desk.keys("Return")
        time.sleep(2)
    else:  # the key came before the detail: nothing acted; press Delete again
        desk.keys("Delete")
        time.sleep(1.5)
        dialog = desk.active_title()
        desk.type("asked by maya")
        desk.keys("Tab", "Return")
        time.sleep(2)
    desk.shot("deleted")
    after = {n["id"]: n for n in desk.notes()}
    closed = [n for i, n in after.items() if before[i].get("valid_to") != n.get("valid_to")]
    check(
        "Tab to Delete then Return deletes exactly one note, the one named",
        dialog == "Delete note" and len(closed) == 1,
        f"dialog {dialog!r}, closed {[n.get('text') for n in closed]}",
    )

    # 17.4: Ctrl+Z reopens the same note (same id, nothing new).
    desk.keys("ctrl+z")
    time.sleep(2.5)
    desk.shot("undone")
    undone = {n["id"]: n for n in desk.notes()}
    check(
        "Undo reopens the same note",
        set(undone) == set(before)
        and all(undone[i].get("valid_to") == before[i].get("valid_to") for i in before),
        f"{len(undone)} notes, {len(before)} before",
    )

    # 17.3: time travel (Ctrl+T) turns every store-changing action off: Delete does
    # nothing, and the window says why in the status bar. Ctrl+T again returns to now.
    desk.click(*FIRST_NOTE_ROW)
    time.sleep(1.0)
    desk.keys("ctrl+t")
    time.sleep(2.5)
    desk.click(*FIRST_NOTE_ROW)
    time.sleep(1.5)
    desk.keys("Delete")
    time.sleep(1.5)
    desk.shot("as-of-delete")
    in_the_past = desk.active_title()
    check("in the past, Delete opens nothing", in_the_past.startswith("maya"), in_the_past)
    if not in_the_past.startswith("maya"):
        desk.keys("Escape")
    desk.keys("ctrl+t")
    time.sleep(2)

    # 21.7: Shift+Down twice selects three rows; Delete lists all three in the real
    # preview dialog; its mnemonic (Alt+D, "Delete 3 notes") deletes them in one change.
    before = {n["id"]: n for n in desk.notes()}
    desk.click(*FIRST_NOTE_ROW)
    time.sleep(1.0)
    desk.keys("shift+Down", "shift+Down", "Delete")
    desk.wait_for(lambda: desk.active_title() == "Delete notes", "the bulk preview")
    desk.shot("bulk-preview")
    bulk_dialog = desk.active_title()
    desk.keys("alt+d")
    time.sleep(2.5)
    desk.shot("bulk-deleted")
    after = {n["id"]: n for n in desk.notes()}
    # Deleting a note that contradicted another brings that one back (F1): count deletions.
    closed = [
        n
        for i, n in after.items()
        if n.get("status") == "deleted" and before[i].get("status") != "deleted"
    ]
    check(
        "three rows selected with Shift+Down, previewed, deleted together",
        bulk_dialog == "Delete notes" and len(closed) == 3,
        f"dialog {bulk_dialog!r}, closed {[n.get('text') for n in closed]}",
    )

    # 21.7: Ctrl+Z takes the whole bulk deletion back, not only its last note.
    desk.click(*FIRST_NOTE_ROW)
    time.sleep(1.0)
    desk.keys("ctrl+z")
    time.sleep(2.5)
    desk.shot("bulk-undone")
    back = {n["id"]: n for n in desk.notes()}
    reopened = [n for n in closed if back[n["id"]].get("status") == "active"]
    check(
        "Ctrl+Z after the bulk deletion gives back all three notes",
        len(closed) == 3 and len(reopened) == 3,
        f"{len(reopened)} of {len(closed)} active again",
    )

    # 17.14: Save access report… through the real file dialog, written in the background
    # (the jobs strip), then checked by `engram verify-report` on the file.
    report = desk.work / "home" / "maya-report.pdf"
    desk.keys("ctrl+shift+r")
    desk.wait_for(lambda: any("access report" in t for t in desk.titles()), "the save dialog")
    desk.shot("report-save-dialog")
    desk.keys("ctrl+a")
    desk.type(str(report))
    desk.keys("Return")
    desk.wait_for(lambda: "Access report saved" in desk.titles(), "the report", 180)
    desk.shot("report-saved")
    saved = "Access report saved" in desk.titles()
    desk.keys("Return")
    time.sleep(1)
    verdict = subprocess.run(
        [
            ENGRAM,
            "--store",
            str(desk.store),
            "--passphrase-env",
            "ENGRAM_DEMO_PASSPHRASE",
            "verify-report",
            str(report),
        ],
        env=desk.env,
        capture_output=True,
        text=True,
    )
    check(
        "the access report is saved and verifies against this store",
        saved and verdict.returncode == 0,
        f"saved: {saved}; verify-report exit {verdict.returncode}: "
        f"{(verdict.stdout or verdict.stderr).strip()}",
    )

    # 21.9: File › Agent settings… by its keys; the demo's coach is shown; Alt+M to its
    # learning mode, Up from Suggest to Off, Alt+S saves through the signed ledger: the CLI
    # reads the new mode back, and the history names this window's actor. After the
    # report's file dialog on purpose: that dialog read the store's file to tell its type,
    # which dropped the window's locks, and the CLI's `verify-report` then deleted the WAL
    # the window went on writing through, so this save was lost (store/lock_guard.py).
    desk.keys("alt+f")
    time.sleep(0.8)
    desk.keys("g")
    desk.wait_for(lambda: desk.active_title() == "Agent settings", "the agent settings")
    time.sleep(2)
    desk.shot("agent-settings")
    desk.keys("alt+m")
    time.sleep(0.5)
    desk.keys("Up")
    time.sleep(0.8)
    desk.keys("alt+s")
    time.sleep(2.5)
    desk.shot("agent-settings-saved")
    shown = json.loads(desk.cli("agents", "show", "coach", "--json"))
    history = json.loads(desk.cli("agents", "history", "coach", "--json"))
    mode = shown.get("memory", {}).get("learning", {}).get("mode")
    check(
        "Agent settings: the mode chosen by keys is saved, seen by another process, and "
        "the history says who",
        mode == "off" and history[-1].get("by") == "staff:drive",
        f"mode {mode!r}; last change by {history[-1].get('by')!r}",
    )
    desk.keys("Escape")
    time.sleep(1)

    # 17.5: erase sam, open the report's real Save… file dialog, Ctrl+L there: every dialog
    # closes and the window locks.
    desk.click(*PEOPLE_LIST)
    desk.keys("End")
    desk.wait_for(lambda: desk.active_title().startswith("sam"), "sam")
    time.sleep(1.5)
    desk.keys("ctrl+shift+Delete")
    desk.wait_for(lambda: desk.active_title() == "Erase person", "the erase dialog")
    desk.type("sam")
    desk.keys("Return")
    desk.wait_for(lambda: "sam was erased" in desk.titles(), "the erasure report", 60)
    desk.shot("erased")
    desk.keys("alt+s")
    desk.wait_for(lambda: "Save report" in desk.titles(), "the Save dialog")
    desk.shot("save-dialog")
    had_save = "Save report" in desk.titles()
    desk.keys("ctrl+l")
    time.sleep(2)
    desk.shot("locked")
    titles = desk.titles()
    left = {"Save report", "sam was erased", "Erase person"} & set(titles)
    check(
        "Ctrl+L in the real Save dialog closes every dialog and locks",
        had_save and not left and desk.active_title() == "Engram Inspector",
        f"save dialog seen: {had_save}; windows after: {titles}",
    )
    persons = desk.cli("persons")
    check("the erasure held", "sam" not in persons.split(), persons.strip().replace("\n", "; "))


if __name__ == "__main__":
    raise SystemExit(main())
