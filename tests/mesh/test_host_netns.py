"""Two devices in two network namespaces the test creates: each profile's host runs inside its
own namespace (``ip netns exec``), joined by a veth pair with private test addresses; they pair
through their terminals (the commands reach their hosts over the profiles' Unix sockets), link
across the veth, survive the listening host's restart and a revocation closes the link.

Everything the test creates (namespaces, the veth pair, the hosts) is removed in a ``finally``;
the test is skipped, saying why, where namespaces cannot be created (not root, no ``ip``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from ._hosts import (
    _link_state,
    _until,
    pair_and_join,
    restart_then_revoke,
    signing_laptop_and_new_desk,
)
from ._profiles import _env, _robota
from ._terminal import ROBOTA

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


def test_two_devices_in_two_namespaces_pair_link_and_a_revocation_closes_the_link(
    tmp_path: Path,
) -> None:
    address = f"{SUBNET}.1:{PORT}"
    laptop, desk = signing_laptop_and_new_desk(tmp_path, address)
    tag = f"rm{os.getpid() % 100000}"
    with namespaces_and_veth(tag) as (laptop_ns, desk_ns):
        started: list[Path] = []
        try:
            for home, namespace in ((laptop, laptop_ns), (desk, desk_ns)):
                _start_in(namespace, home)
                started.append(home)
            paired, joined, _code = pair_and_join(laptop, desk, address, "y\n")
            assert paired.code == 0, (paired.stderr, paired.screen)
            assert joined.code == 0, (joined.stderr, joined.screen)
            laptop_id = json.loads(_robota(laptop, "mesh", "status", "--json").stdout)
            desk_id = json.loads(_robota(desk, "mesh", "status", "--json").stdout)
            lid, did = laptop_id["device"]["id"], desk_id["device"]["id"]
            assert address in desk.joinpath("config.yaml").read_text()
            _until(lambda: _link_state(desk, lid) == "connected", "the desk links across")
            _until(lambda: _link_state(laptop, did) == "connected", "the laptop sees the desk")

            restart_then_revoke(laptop, desk, lid, did, lambda: _start_in(laptop_ns, laptop))
        finally:
            for home in started:
                _robota(home, "server", "stop")
