"""Network namespaces the mesh tests create, and the hosts and programs run inside them.

``namespaces_and_veth``: two namespaces joined by a veth pair. ``bridged``: several on one
bridge (in the first namespace), each other one on a veth whose end ``cut`` takes down and up.
Private test addresses live only inside them; everything is deleted afterwards (the veths and
the bridge go with their namespaces), and the test is skipped, saying why, where namespaces
cannot be created (not root, no ``ip``).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest

from ._profiles import _env
from ._terminal import ROBOTA

SUBNET = "10.231.77"
"""Private addresses that live only inside the test's namespaces."""
PORT = 47390
"""The port a listening host of these tests takes on its namespace's address."""


def _ip_path() -> str:
    return shutil.which("ip") or "/usr/sbin/ip"


def _ip(*args: str) -> None:
    subprocess.run([_ip_path(), *args], check=True, capture_output=True, timeout=30)


@contextmanager
def _fresh(names: list[str]) -> Iterator[None]:
    """Namespaces ``names`` for the block (skipped when none can be made), deleted after."""
    created: list[str] = []
    try:
        try:
            for name in names:
                _ip("netns", "add", name)
                created.append(name)
        except (OSError, subprocess.CalledProcessError) as error:
            why = getattr(error, "stderr", b"") or str(error)
            pytest.skip(f"network namespaces cannot be created here: {why!r}")
        yield
    finally:
        for name in created:
            subprocess.run(
                [_ip_path(), "netns", "del", name], check=False, capture_output=True, timeout=30
            )


@contextmanager
def namespaces_and_veth(tag: str) -> Iterator[tuple[str, str]]:
    """Two fresh namespaces joined by a veth pair (``SUBNET``.1 and .2)."""
    a, b = f"{tag}a", f"{tag}b"
    with _fresh([a, b]):
        _ip("link", "add", f"{tag}va", "netns", a, "type", "veth", "peer", f"{tag}vb", "netns", b)
        for name, end, host in ((a, f"{tag}va", 1), (b, f"{tag}vb", 2)):
            _ip("-n", name, "addr", "add", f"{SUBNET}.{host}/24", "dev", end)
            _ip("-n", name, "link", "set", end, "up")
            _ip("-n", name, "link", "set", "lo", "up")
        yield a, b


@contextmanager
def bridged(tag: str, count: int) -> Iterator[list[str]]:
    """``count`` fresh namespaces on one bridge: the first holds the bridge (``SUBNET``.1 on
    it), namespace ``i`` > 0 reaches it through the veth ``veth(tag, i)`` (``SUBNET``.i+1)."""
    names = [f"{tag}n{i}" for i in range(count)]
    with _fresh(names):
        hub, bridge = names[0], f"{tag}br"
        _ip("-n", hub, "link", "add", bridge, "type", "bridge")
        _ip("-n", hub, "addr", "add", f"{SUBNET}.1/24", "dev", bridge)
        _ip("-n", hub, "link", "set", bridge, "up")
        _ip("-n", hub, "link", "set", "lo", "up")
        for i, name in enumerate(names[1:], start=1):
            end, port = veth(tag, i), f"{tag}p{i}"
            _ip("link", "add", end, "netns", name, "type", "veth", "peer", port, "netns", hub)
            _ip("-n", hub, "link", "set", port, "master", bridge)
            _ip("-n", hub, "link", "set", port, "up")
            _ip("-n", name, "addr", "add", f"{SUBNET}.{i + 1}/24", "dev", end)
            _ip("-n", name, "link", "set", end, "up")
            _ip("-n", name, "link", "set", "lo", "up")
        yield names


def veth(tag: str, index: int) -> str:
    """The name of namespace ``index``'s end of its veth to the bridge (``bridged``)."""
    return f"{tag}v{index}"


def cut(namespace: str, device: str, *, up: bool) -> None:
    """Take ``device`` in ``namespace`` down (the link cut) or up again."""
    _ip("-n", namespace, "link", "set", device, "up" if up else "down")


def start_in(
    namespace: str, home: Path, extra: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``robota server start`` for ``home``'s profile inside ``namespace``."""
    run = subprocess.run(
        [_ip_path(), "netns", "exec", namespace, str(ROBOTA), "server", "start"],
        check=False,
        env={**_env(home), **(extra or {})},
        cwd=home.parent,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        start_new_session=True,
    )
    assert run.returncode == 0, run.stderr
    return run


def spawn_in(namespace: str, argv: list[str]) -> subprocess.Popen[str]:
    """``argv`` inside ``namespace``, in a process group of its own (``end`` ends it)."""
    return subprocess.Popen(
        [_ip_path(), "netns", "exec", namespace, *argv],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def end(process: subprocess.Popen[str]) -> None:
    """End ``process`` and its group (it started them), and reap it."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
    for pipe in (process.stdout, process.stderr):
        if pipe is not None:
            pipe.close()
