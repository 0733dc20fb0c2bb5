"""Network namespaces the mesh tests create, and the hosts and programs run inside them.

``namespaces_and_veth``: two namespaces joined by a veth pair. ``bridged``: several on one
bridge (in the first namespace), each other one on a veth whose end ``cut`` takes down and up.
Private test addresses live only inside them; everything is deleted afterwards (the veths and
the bridge go with their namespaces), and the test is skipped, saying why, where namespaces
cannot be created (not root, no ``ip``). ``pair_and_join_in``: ``mesh pair`` and ``mesh join``
each on a terminal of its own (tmux, its server inside the device's namespace), the code shown
on one typed on the other as a person would.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from ..support.terminal import Tmux
from ._hosts import CODE
from ._profiles import _env
from ._terminal import ROBOTA, Run

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
    run = robota_in(namespace, home, "server", "start", extra=extra)
    assert run.returncode == 0, run.stderr
    return run


def robota_in(
    namespace: str,
    home: Path,
    *args: str,
    extra: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """``robota ARGS`` for ``home``'s profile inside ``namespace``, without a terminal: what
    it starts (a background session, an agent) reaches that namespace's addresses."""
    return subprocess.run(
        [_ip_path(), "netns", "exec", namespace, str(ROBOTA), *args],
        check=False,
        env={**_env(home), **(extra or {})},
        cwd=cwd or home.parent,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        start_new_session=True,
    )


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


class _Pane:
    """One ``robota`` command on a tmux terminal inside a namespace: what it shows there (the
    screen, kept as last seen: the session ends with the command), its standard output and
    error apart in files, its exit status."""

    def __init__(self, stack: ExitStack, namespace: str, home: Path, args: list[str]) -> None:
        self.tmux = Tmux(args[1], width=160, height=50)
        stack.callback(self.tmux.close)
        folder = self.tmux.socket.parent
        self.out, self.err, self.status = (folder / n for n in ("out", "err", "status"))
        self.seen = ""
        command = shlex.join([str(ROBOTA), *args])
        redirected = f"exec {command} >{shlex.quote(str(self.out))} 2>{shlex.quote(str(self.err))}"
        self.tmux.start(
            ["/bin/sh", "-c", redirected],
            env=_env(home),
            cwd=home.parent,
            status=self.status,
            inside=[_ip_path(), "netns", "exec", namespace],
        )

    def look(self) -> str:
        screen = self.tmux.screen() if not self.status.exists() else ""
        if screen.strip():
            self.seen = screen
        return self.seen

    def until(self, check: Callable[[str], bool], what: str, within: float = 120.0) -> str:
        """The screen once ``check`` holds of it; ``""`` when the command ended first."""
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            screen = self.look()
            if check(screen):
                return screen
            if self.status.exists():
                return ""
            time.sleep(0.1)
        raise AssertionError(f"not within {within:g} s: {what}; the screen:\n{self.seen}")

    def ended(self, within: float = 120.0) -> Run:
        self.until(lambda _screen: False, "the command ends", within)
        code = int(self.status.read_text().strip() or "-1")
        return Run(code, self.out.read_text(), self.err.read_text(), self.seen)


def pair_and_join_in(
    pairing: tuple[Path, str],
    joining: tuple[Path, str],
    address: str,
    answer: str = "y",
    typed: Callable[[str], str] = lambda shown: shown,
) -> tuple[Run, Run, str]:
    """``mesh pair`` on a terminal in the pairing device's namespace (its home and namespace)
    and ``mesh join address`` on one in the joining device's: the code shown on the first is
    typed on the second (``typed`` of it), the pairing operator answers ``answer`` if asked."""
    with ExitStack() as stack:
        pair = _Pane(stack, pairing[1], pairing[0], ["mesh", "pair"])
        screen = pair.until(lambda s: "the code there." in s, "the pairing device shows a code")
        shown = CODE.findall(screen)
        assert shown, (screen, pair.ended().stderr)
        join = _typed_join(stack, joining, address, typed(shown[0]))
        if pair.until(lambda s: "[y/N]" in s, "the operator is asked or the pairing ends"):
            pair.tmux.type(answer)
            pair.tmux.keys("Enter")
        return pair.ended(), join.ended(), shown[0]


def _typed_join(stack: ExitStack, joining: tuple[Path, str], address: str, code: str) -> _Pane:
    join = _Pane(stack, joining[1], joining[0], ["mesh", "join", address])
    assert join.until(lambda s: "Type the pairing code" in s, "the code is asked"), join.seen
    join.tmux.type(code)
    join.tmux.keys("Enter")
    return join


def join_in(joining: tuple[Path, str], address: str, code: str) -> Run:
    """``mesh join address`` on a terminal in the joining device's namespace (its home and
    namespace), ``code`` typed when it asks."""
    with ExitStack() as stack:
        return _typed_join(stack, joining, address, code).ended()
