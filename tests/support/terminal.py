"""A real terminal for tests: a program in its own tmux server, driven by keys, read as text.

``Tmux(name)`` runs one session on a private socket (``tmux -S``), with no user
configuration, so a test never touches the tmux of whoever runs it; ``close`` kills that
session by name and nothing else. ``ensure_tmux()`` finds tmux, or installs it with apt-get when
the machine allows it (root, or password-less sudo), and fails the test with the command to run
otherwise: the TUI test must not be skipped.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pytest

__all__ = ["Tmux", "ensure_tmux"]

INSTALL = ["apt-get", "install", "-y", "--no-install-recommends", "tmux"]


def ensure_tmux() -> str:
    """The tmux executable, installed on first use where apt-get may be run."""
    found = shutil.which("tmux")
    if found:
        return found
    apt = shutil.which("apt-get")
    if apt is not None:
        prefix: list[str] | None = None
        if os.geteuid() == 0:
            prefix = []
        elif (
            shutil.which("sudo")
            and subprocess.run(
                ["sudo", "-n", "true"], capture_output=True, check=False, timeout=30
            ).returncode
            == 0
        ):
            prefix = ["sudo", "-n"]
        if prefix is not None:
            env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
            for step in ([INSTALL], [["apt-get", "update"], INSTALL]):
                # The second round: a fresh image has no package lists yet.
                done = [
                    subprocess.run(
                        [*prefix, *command], env=env, capture_output=True, check=False, timeout=600
                    ).returncode
                    for command in step
                ]
                if done[-1] == 0:
                    break
    found = shutil.which("tmux")
    if not found:
        pytest.fail(f"the TUI test needs tmux; install it: {shlex.join(INSTALL)}")
    return found


class Tmux:
    """One detached tmux session running ``command`` on a private server."""

    def __init__(self, name: str, *, width: int = 120, height: int = 40) -> None:
        self.tmux = ensure_tmux()
        self.name = name
        # One server per session, on a socket of its own that close() removes.
        self._socket_dir = Path(tempfile.mkdtemp(prefix="robota-tmux-"))
        self.socket = self._socket_dir / "socket"
        self.width = width
        self.height = height
        self.started = False

    def _run(
        self, *args: str, check: bool = True, inside: Sequence[str] = ()
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*inside, self.tmux, "-S", str(self.socket), "-f", os.devnull, *args],
            capture_output=True,
            text=True,
            check=check,
            timeout=30,
        )

    def start(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: Path,
        status: Path,
        hangup_ignored: bool = False,
        inside: Sequence[str] = (),
    ) -> None:
        """Run ``argv`` with exactly ``env`` (plus TERM); its exit status goes to ``status``.

        ``hangup_ignored``: the shell around ``argv`` ignores SIGHUP, so the status is written
        even when the terminal goes away (``argv`` starts with SIGHUP ignored too; a program
        that handles it sets its own handler). ``inside``: a command that the tmux starting the
        server runs under (``ip netns exec NAME``: the server, and so ``argv``, in a network
        namespace; the later tmux commands reach it through its socket from anywhere)."""
        environment = {"TERM": "xterm-256color", **env}
        program = shlex.join(
            ["/usr/bin/env", "-i", *(f"{k}={v}" for k, v in environment.items()), *argv]
        )
        # Written beside and renamed into place: a reader that sees ``status`` sees it whole.
        partial = shlex.quote(f"{status}.partial")
        shell = f"{program}; echo $? > {partial}; mv {partial} {shlex.quote(str(status))}"
        if hangup_ignored:
            shell = f"trap '' HUP; {shell}"
        self._run(
            "new-session",
            "-d",
            "-s",
            self.name,
            "-x",
            str(self.width),
            "-y",
            str(self.height),
            "-c",
            str(cwd),
            shell,
            inside=inside,
        )
        self.started = True

    def screen(self) -> str:
        """The visible screen as text (wrapped lines joined)."""
        done = self._run("capture-pane", "-p", "-J", "-t", self.name, check=False)
        return done.stdout

    def coloured_screen(self) -> str:
        """The visible screen, one line a row, its colours and attributes as SGR escapes
        (``capture-pane -e``, trailing cells kept by ``-N``; what ``tools/screen_png.py`` draws)."""
        return self._run("capture-pane", "-p", "-e", "-N", "-t", self.name, check=False).stdout

    def keys(self, *keys: str) -> None:
        """tmux key names (``Enter``, ``C-c``, ``a``)."""
        self._run("send-keys", "-t", self.name, *keys)

    def type(self, text: str) -> None:
        """Literal text, key by key."""
        self._run("send-keys", "-t", self.name, "-l", text)

    def wait_for(self, check: Callable[[str], bool], what: str, *, timeout: float = 60) -> str:
        """The screen once ``check(screen)`` holds; fails with the screen after ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if check(screen):
                return screen
            if time.monotonic() > deadline:
                pytest.fail(f"timed out after {timeout} s waiting until {what}; screen:\n{screen}")
            time.sleep(0.1)

    def alive(self) -> bool:
        return self._run("has-session", "-t", self.name, check=False).returncode == 0

    def close(self) -> None:
        """Kill this session (by name) if it still runs; its private server exits with it."""
        if self.started and self.alive():
            self._run("kill-session", "-t", self.name, check=False)
        shutil.rmtree(self._socket_dir, ignore_errors=True)
