"""Network namespaces for the mesh's tests: two fresh namespaces joined by a veth pair with
private test addresses (``namespaces_and_veth``: removed afterwards, the test skipped saying
why where they cannot be made), and a profile's host started inside one (``_start_in``)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from ._profiles import _env
from ._terminal import ROBOTA

__all__ = ["PORT", "SUBNET", "_ip", "_start_in", "namespaces_and_veth"]

SUBNET = "10.231.77"
"""Private addresses that live only inside the test's namespaces."""
PORT = 47390


def _ip(*args: str) -> None:
    ip = shutil.which("ip") or "/usr/sbin/ip"
    subprocess.run([ip, *args], check=True, capture_output=True, timeout=30)


@contextmanager
def namespaces_and_veth(tag: str) -> Iterator[tuple[str, str]]:
    """Two fresh namespaces joined by a veth pair (``SUBNET``.1 and .2); the namespaces, and
    the veth's ends with them, are deleted afterwards."""
    a, b = f"{tag}a", f"{tag}b"
    created: list[str] = []
    ip = shutil.which("ip") or "/usr/sbin/ip"
    try:
        try:
            for name in (a, b):
                _ip("netns", "add", name)
                created.append(name)
        except (OSError, subprocess.CalledProcessError) as error:
            why = getattr(error, "stderr", b"") or str(error)
            pytest.skip(f"network namespaces cannot be created here: {why!r}")
        _ip("link", "add", f"{tag}va", "netns", a, "type", "veth", "peer", f"{tag}vb", "netns", b)
        for name, end, host in ((a, f"{tag}va", 1), (b, f"{tag}vb", 2)):
            _ip("-n", name, "addr", "add", f"{SUBNET}.{host}/24", "dev", end)
            _ip("-n", name, "link", "set", end, "up")
            _ip("-n", name, "link", "set", "lo", "up")
        yield a, b
    finally:
        for name in created:
            subprocess.run([ip, "netns", "del", name], check=False, capture_output=True, timeout=30)


def _start_in(namespace: str, home: Path) -> subprocess.CompletedProcess[str]:
    ip = shutil.which("ip") or "/usr/sbin/ip"
    run = subprocess.run(
        [ip, "netns", "exec", namespace, str(ROBOTA), "server", "start"],
        check=False,
        env=_env(home),
        cwd=home.parent,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        start_new_session=True,
    )
    assert run.returncode == 0, run.stderr
    return run
