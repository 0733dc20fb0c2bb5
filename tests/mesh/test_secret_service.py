"""The credential store on a real Secret Service (gnome-keyring on a private D-Bus that the test
starts and ends): chosen when it answers, and failing closed, never the file, once it is gone."""

from __future__ import annotations

import gc
import os
import shutil
import signal
import subprocess
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from robota.mesh import CredentialStoreError, check_store, open_store, read_store_record
from robota.mesh._credentials import discover_keychain, probe_keychain

SECRET = b"a device key, 32 bytes long....."

# The private bus starts nothing on demand. With the session bus's usual service directories, a
# probe that reached the bus before our daemon had taken its name made the bus start a keyring of
# its own, locked, which asked a prompter that cannot run here: the fixture then waited in vain.
BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir={run}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""

pytestmark = [
    pytest.mark.skipif(
        not (shutil.which("dbus-daemon") and shutil.which("gnome-keyring-daemon")),
        reason="needs dbus-daemon and gnome-keyring-daemon (apt: dbus, gnome-keyring)",
    ),
    # keyring's Secret Service backend opens a D-Bus connection per call and leaves closing it
    # to the garbage collector: its sockets' ResourceWarnings are the library's, not ours.
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]


def _end(process: subprocess.Popen[bytes]) -> None:
    """End a process this test started, with its group, and reap it."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


class PrivateBus:
    """A private session bus, and the gnome-keyring this test starts on it."""

    def __init__(self, env: dict[str, str], started: list[subprocess.Popen[bytes]]) -> None:
        self.env = env
        self._started = started

    def start_keyring(self) -> subprocess.Popen[bytes]:
        """Start gnome-keyring, its login keyring unlocked, and wait until it answers."""
        keyring = subprocess.Popen(
            ["gnome-keyring-daemon", "--unlock", "--components=secrets", "--foreground"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=self.env,
            start_new_session=True,
        )
        self._started.append(keyring)
        assert keyring.stdin is not None
        keyring.stdin.write(b"test-password")
        keyring.stdin.close()
        deadline = time.monotonic() + 20
        while probe_keychain(discover_keychain(), "wait", timeout=2) != "ok":
            if time.monotonic() > deadline:
                pytest.fail("the private Secret Service did not come up")
            time.sleep(0.2)
        return keyring


@pytest.fixture
def private_bus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PrivateBus]:
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    env = {"HOME": str(tmp_path), "XDG_RUNTIME_DIR": str(run), "PATH": os.environ["PATH"]}
    config = tmp_path / "bus.conf"
    config.write_text(BUS_CONFIG.format(run=run), encoding="utf-8")
    bus = subprocess.Popen(
        ["dbus-daemon", f"--config-file={config}", "--nofork", "--print-address=1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,  # as root it says it cannot raise its fd limit: not ours
        env=env,
        start_new_session=True,
    )
    started: list[subprocess.Popen[bytes]] = [bus]
    try:
        assert bus.stdout is not None
        address = bus.stdout.readline().decode().strip()
        bus.stdout.close()
        assert address.startswith("unix:"), address
        env["DBUS_SESSION_BUS_ADDRESS"] = address
        for name in ("DBUS_SESSION_BUS_ADDRESS", "HOME", "XDG_RUNTIME_DIR"):
            monkeypatch.setenv(name, env[name])
        yield PrivateBus(env, started)
    finally:
        for process in reversed(started):
            _end(process)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            gc.collect()  # the backend's leaked connections, finalized here and not later


def test_a_real_secret_service_is_chosen_and_fails_closed_once_gone(
    tmp_path: Path, private_bus: PrivateBus
) -> None:
    secret_service = private_bus.start_keyring()
    mesh = tmp_path / "mesh"
    opened = open_store(mesh)
    assert (opened.store.kind, opened.notices) == ("keychain", ())
    opened.store.put("device-key", SECRET)
    assert open_store(mesh, first_use=False).store.get("device-key") == SECRET
    assert check_store(mesh) is None
    _end(secret_service)
    with pytest.raises(CredentialStoreError) as caught:
        open_store(mesh, first_use=False, timeout=3)
    assert caught.value.key == "device-key" and SECRET.decode() not in str(caught.value)
    assert not (mesh / "credentials").exists(), "never degraded to the file"
    assert read_store_record(mesh)[0] == "keychain"
    problem = check_store(mesh, timeout=3)
    assert problem is not None and "does not open" in problem


def test_a_secret_service_is_found_when_it_comes_and_not_once_it_is_gone(
    private_bus: PrivateBus,
) -> None:
    """The host asks again later: what keyring found at its first look is not kept."""
    assert discover_keychain() is None, "nothing answers on the bus yet"
    secret_service = private_bus.start_keyring()  # waits until discovery finds it
    assert discover_keychain() is not None
    _end(secret_service)
    assert discover_keychain() is None
