"""A real Secret Service for tests: gnome-keyring-daemon on a private D-Bus session bus.

The fixture starts `dbus-daemon --session` and `gnome-keyring-daemon --unlock` (its login
keyring created and unlocked with a test password) in a temporary home, points this
process at that bus, and makes `keyring` use its real SecretService backend — the code
path a desktop user gets. packaging/bootstrap.sh installs both daemons as test-only
system packages; the tests skip, saying why, only when a daemon cannot start at all.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import keyring
import pytest

TEST_PASSWORD = "keyring test password"
BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir={runtime}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""


@dataclass
class SecretService:
    """The running daemons and what a test needs to lock or stop them."""

    address: str
    environment: dict[str, str]
    keyring_daemon: subprocess.Popen[bytes]

    def lock(self) -> None:
        """Lock the login keyring, as the desktop does after a timeout."""
        import secretstorage

        connection = secretstorage.dbus_init()
        try:
            secretstorage.get_default_collection(connection).lock()
        finally:
            connection.close()


def _wait_for_service(environment: dict[str, str], deadline: float) -> bool:
    import secretstorage

    previous = os.environ.get("DBUS_SESSION_BUS_ADDRESS")
    os.environ["DBUS_SESSION_BUS_ADDRESS"] = environment["DBUS_SESSION_BUS_ADDRESS"]
    try:
        while time.monotonic() < deadline:
            try:
                connection = secretstorage.dbus_init()
                try:
                    if secretstorage.check_service_availability(connection):
                        return True
                finally:
                    connection.close()
            except Exception:
                pass
            time.sleep(0.05)
        return False
    finally:
        if previous is None:
            os.environ.pop("DBUS_SESSION_BUS_ADDRESS", None)
        else:
            os.environ["DBUS_SESSION_BUS_ADDRESS"] = previous


@pytest.fixture
def secret_service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SecretService]:
    """A fresh, unlocked Secret Service; `keyring` uses it for the rest of the test."""
    for program in ("dbus-daemon", "gnome-keyring-daemon"):
        if shutil.which(program) is None:
            pytest.skip(f"{program} is not installed; packaging/bootstrap.sh installs it")
    home = tmp_path / "keyring-home"
    home.mkdir()
    # The bus's socket lives here: a short path of its own, since a socket's path is
    # limited to about 100 bytes and tmp_path under pytest-xdist is longer than that.
    runtime = Path(tempfile.mkdtemp(prefix="engram-bus-"))
    environment = {
        **os.environ,
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_RUNTIME_DIR": str(runtime),
    }
    # A session bus that starts nothing on demand: a stopped keyring daemon stays stopped
    # (the system's session bus would activate a new, locked one).
    config = home / "bus.conf"
    config.write_text(BUS_CONFIG.format(runtime=runtime), encoding="utf-8")
    bus = subprocess.Popen(
        ["dbus-daemon", f"--config-file={config}", "--nofork", "--nopidfile", "--print-address=1"],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    keyring_daemon: subprocess.Popen[bytes] | None = None
    try:
        assert bus.stdout is not None
        address = bus.stdout.readline().decode().strip()
        if not address:
            pytest.skip(f"dbus-daemon could not start: {bus.stderr.read().decode()[:300]}")  # type: ignore[union-attr]
        environment["DBUS_SESSION_BUS_ADDRESS"] = address
        keyring_daemon = subprocess.Popen(
            ["gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets"],
            env=environment,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        assert keyring_daemon.stdin is not None
        keyring_daemon.stdin.write(TEST_PASSWORD.encode())
        keyring_daemon.stdin.close()
        if not _wait_for_service(environment, time.monotonic() + 20):
            keyring_daemon.kill()
            _, err = keyring_daemon.communicate()
            pytest.skip(f"gnome-keyring-daemon could not start: {err.decode()[:300]}")
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
        from keyring.backends import SecretService as backend

        keyring.set_keyring(backend.Keyring())
        yield SecretService(address, environment, keyring_daemon)
    finally:
        for process in (keyring_daemon, bus):
            if process is not None and process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        shutil.rmtree(runtime, ignore_errors=True)
