"""The mesh's host tests' helpers: profiles whose hosts run (``hosts``), what ``mesh status``
says of a link, waiting for it, a restart then a revocation, and pairing two profiles through
two pseudo-terminals (``pair_and_join``: the code shown on one typed on the other)."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from robota.mesh._link import PING_EVERY, REDIAL_MAX

from ._profiles import CONFIG, _env, _init, _robota
from ._terminal import Run, Step, run_on_terminal

LINKED = 60.0
"""Seconds two hosts may take to link (a redial backs off up to a few seconds under load)."""
COME_BACK = PING_EVERY + REDIAL_MAX + 30.0
"""Seconds a dropped link may take to come back: the dialler looks again every ping interval,
and its redials of a host that was down have backed off towards their 60 s cap."""


CODE = re.compile(r"\b([0-9A-Z]{5}-[0-9A-Z]{5}-[0-9A-Z])\b")
COMMENT = "# my own note about this device\n"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _status(home: Path) -> dict[str, Any]:
    done = _robota(home, "mesh", "status", "--json")
    assert done.returncode == 0, done.stderr
    view: dict[str, Any] = json.loads(done.stdout)
    return view


def _link_state(home: Path, device: str) -> str | None:
    for link in _status(home)["links"]:
        if link["device"] == device:
            state: str = link["state"]
            return state
    return None


def _until(check: Callable[[], bool], what: str, within: float = LINKED) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.5)
    raise AssertionError(f"not within {within:g} s: {what}")


def restart_then_revoke(
    laptop: Path,
    desk: Path,
    laptop_id: str,
    desk_id: str,
    start: Callable[[], subprocess.CompletedProcess[str]],
) -> None:
    """The laptop's host stops and ``start`` brings it back: the desk dials again; then the
    laptop revokes the desk: the link closes and stays closed."""
    assert _robota(laptop, "server", "stop").returncode == 0
    _until(lambda: _link_state(desk, laptop_id) != "connected", "the desk sees the link go")
    started = start()
    assert started.returncode == 0, started.stderr
    _until(lambda: _link_state(desk, laptop_id) == "connected", "the link comes back", COME_BACK)
    done = _robota(laptop, "mesh", "revoke", "desk", "--yes")
    assert done.returncode == 0, done.stderr
    _until(lambda: _link_state(laptop, desk_id) != "connected", "the revoked link closes", 15)
    time.sleep(3)
    assert _link_state(laptop, desk_id) != "connected"


@contextmanager
def hosts(*homes: Path) -> Iterator[None]:
    """Each profile's host running (``server start``) for the block, stopped after it."""
    started: list[Path] = []
    try:
        for home in homes:
            run = _robota(home, "server", "start")
            assert run.returncode == 0, run.stderr
            started.append(home)
        yield
    finally:
        for home in started:
            _robota(home, "server", "stop")


def signing_device(tmp_path: Path, settings: str) -> Path:
    """A first device (``mesh init`` on its terminal) whose ``mesh`` section also has
    ``settings``; its profile's home."""
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (tmp_path / "user").mkdir()
    (home / "config.yaml").write_text(CONFIG + settings)
    assert _init(home)[0].code == 0
    return home


def signing_laptop_and_new_desk(tmp_path: Path, address: str) -> tuple[Path, Path]:
    """A signing laptop listening on ``address`` and a desk with no identity, both with the
    mesh on (their hosts not started)."""
    laptop, desk = tmp_path / "laptop", tmp_path / "desk"
    for home in (laptop, desk):
        home.mkdir(mode=0o700)
    (tmp_path / "user").mkdir()
    (laptop / "config.yaml").write_text(CONFIG)
    assert _init(laptop)[0].code == 0
    (laptop / "config.yaml").write_text(
        COMMENT + CONFIG + f"  enabled: true\n  listen: ['{address}']\n"
    )
    (desk / "config.yaml").write_text(
        COMMENT + CONFIG.replace("laptop", "desk") + "  enabled: true\n"
    )
    return laptop, desk


def pair_and_join(
    laptop: Path,
    desk: Path,
    address: str,
    answer: str,
    typed: Callable[[str], str] = lambda shown: shown,
) -> tuple[Run, Run, str]:
    """``mesh pair`` on ``laptop``'s terminal and ``mesh join address`` on ``desk``'s, at once:
    the code shown on one typed on the other (``typed`` of it); the pairing operator answers
    ``answer``."""
    shown: list[str] = []
    ready = threading.Event()

    def take_code(screen: str) -> str:
        shown.extend(CODE.findall(screen))
        ready.set()
        return ""

    def type_code(_screen: str) -> str:
        assert ready.wait(60), "the pairing device showed no code"
        return typed(shown[0]) + "\n"

    runs: dict[str, Run] = {}

    def pair() -> None:
        runs["pair"] = run_on_terminal(
            ["mesh", "pair"],
            _env(laptop),
            laptop.parent,
            [Step("the code there.", take_code), Step("fingerprint", lambda _s: answer)],
            timeout=120,
        )

    pairing = threading.Thread(target=pair)
    pairing.start()
    try:
        runs["join"] = run_on_terminal(
            ["mesh", "join", address],
            _env(desk),
            desk.parent,
            [Step("Type the pairing code", type_code)],
            timeout=120,
        )
    finally:
        pairing.join(150)
    return runs["pair"], runs["join"], shown[0] if shown else ""
