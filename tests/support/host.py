"""A host for the tests: the ``robota`` sandbox with one real agent against the fake model, a
host running in this trio run or as its own process (``tests/host/host_process.py``), and
``robota task`` run against it; ``short_root``, a fixture, is a sandbox whose path is short
enough for the profile's control socket (a Unix socket address holds about 100 bytes)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio

from robota.core.config import Profile, load_config, resolve_profile
from robota.core.control import ControlClient, NoHostRunning, acquire_host_lock
from robota.host import Host

from .model_server import FakeModel
from .real_agents import TEMPLATE_NAMES, write_real_agents_config
from .robota import ROBOTA, Robota

HOST_PROCESS = Path(__file__).parents[1] / "host" / "host_process.py"

BOUND = 120.0
"""Seconds the whole host test may take: agent start-up included."""


def sandboxed(root: Path, model: FakeModel, agent: str) -> tuple[Robota, Profile]:
    """The ``robota`` sandbox (as tests/cli makes it) and its profile, with one real agent."""
    (root / "bin").mkdir()
    (root / "user").mkdir()
    robota = Robota(
        root,
        {
            "HOME": str(root / "user"),
            "PATH": str(root / "bin"),
            "ROBOTA_HOME": str(root / "home"),
            "LC_ALL": "C.UTF-8",
        },
    )
    write_real_agents_config(robota, [agent], model.url, model_catalog=agent.startswith("codex"))
    return robota, resolve_profile({"ROBOTA_HOME": str(robota.home)})


def call(socket: Path, type_name: str, fields: dict[str, Any] | None = None) -> Any:
    with ControlClient(socket, timeout=BOUND) as client:
        return client.call(type_name, fields)


@asynccontextmanager
async def running_host(
    profile: Profile, prepare: Callable[[Host], None] | None = None
) -> AsyncIterator[tuple[Path, trio.Event]]:
    """A host of ``profile`` running in this trio run, ready (``prepare`` sees it before it
    runs); the event is set once its ``run`` returned. The block must stop it."""
    config = load_config(profile, environ={})
    with acquire_host_lock(profile.host_lock, profile.host_state_file) as lock:
        host = Host(config, profile, lock)
        if prepare is not None:
            prepare(host)
        with trio.fail_after(BOUND):
            async with trio.open_nursery() as nursery:
                stopped = trio.Event()

                async def run() -> None:
                    await host.run()
                    stopped.set()

                nursery.start_soon(run)
                while not host.ready:
                    await trio.sleep(0.01)
                yield profile.control_socket, stopped


async def ask(socket: Path, type_name: str, fields: dict[str, Any] | None = None) -> Any:
    return await trio.to_thread.run_sync(partial(call, socket, type_name, fields))


def wait_for_status(client: ControlClient, host: subprocess.Popen[str]) -> Any:
    """The host's first status, once its endpoint is up (bounded by the client's timeout).

    The socket's file appears when it is bound, a moment before it listens: a connection
    refused then is a host still starting (a loaded machine stretches that moment)."""
    deadline = time.monotonic() + client.timeout
    while True:
        assert host.poll() is None, host.communicate()
        if client.socket_path.is_socket():
            try:
                return client.call("server.status")
            except NoHostRunning:
                pass
        assert time.monotonic() < deadline, "the host never came up"
        time.sleep(0.05)


def agent_name(agent: str) -> str:
    return TEMPLATE_NAMES.get(agent, agent)


def task(
    robota: Robota, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ROBOTA), "task", *args],
        env=robota.environment(env, ()),
        cwd=robota.root,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=BOUND,
        check=False,
    )


def task_json(robota: Robota, *args: str, **kwargs: Any) -> Any:
    done = task(robota, *args, "--json", **kwargs)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@contextmanager
def host_process(
    robota: Robota, profile: Profile, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[str]]:
    """The host as a process of its own, ready; stopped by ``server.stop`` at the end."""
    host = subprocess.Popen(
        [sys.executable, str(HOST_PROCESS)],
        env=robota.environment(env, ()),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        with ControlClient(profile.control_socket, timeout=BOUND) as client:
            assert wait_for_status(client, host)["running"] is True
        yield host
        with ControlClient(profile.control_socket, timeout=BOUND) as client:
            assert client.call("server.stop")["stopping"] is True
        _, err = host.communicate(timeout=BOUND)
        assert host.returncode == 0, err
    finally:
        if host.poll() is None:
            host.kill()
            host.communicate(timeout=BOUND)


@pytest.fixture
def short_root() -> Iterator[Path]:
    """A sandbox with a short path: the profile's control socket lives under it, and a Unix
    socket address holds about 100 bytes."""
    path = Path(tempfile.mkdtemp(prefix="robota-host-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)
