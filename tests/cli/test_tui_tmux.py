"""``robota`` on a real terminal: the TUI under tmux, the real engine, Codex and the fake model.

Keys go in with ``tmux send-keys`` and the screen comes back with ``tmux capture-pane``, so this
covers what the headless pilot cannot: the terminal driver, the engine thread beside Textual's
loop, a real agent's approval answered by a key, and a clean exit that leaves no agent behind.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from ..support.model_server import FakeModel
from ..support.processes import live_processes, processes_with_home_under
from ..support.real_agents import write_real_agents_config
from ..support.robota import ROBOTA, Robota
from ..support.terminal import Tmux
from ..support.tui import flat, model, terminal, wait_for_exit

__all__ = ["model", "terminal"]  # the fixtures, from tests/support/tui.py


def test_the_tui_answers_asks_for_approval_interrupts_and_exits_in_a_real_terminal(
    robota: Robota, model: FakeModel, terminal: Tmux
) -> None:
    write_real_agents_config(robota, ["codex"], model.url, model_catalog=True)
    status = robota.root / "exit-status"
    terminal.start([str(ROBOTA)], env=robota.env, cwd=robota.root, status=status)
    terminal.wait_for(lambda s: "idle" in s and "Ctrl-C" in s, "the TUI is ready")

    # An answer streams in and stays on the screen.
    terminal.type("hello from tmux")
    terminal.keys("Enter")
    screen = terminal.wait_for(lambda s: "ECHO: hello from tmux" in s, "the answer shows")
    assert screen.index("opened · codex") < screen.index("> hello from tmux")
    assert screen.index("> hello from tmux") < screen.index("ECHO: hello from tmux")
    terminal.wait_for(lambda s: "· idle" in s, "the turn ends")

    # The default permission mode asks before a command: the choice is a key away.
    terminal.type("SHELL: echo approved-by-key")
    terminal.keys("Enter")
    screen = terminal.wait_for(lambda s: "[a] allow once" in s, "the approval shows")
    assert "Approval needed" in screen
    assert "echo approved-by-key" in screen
    terminal.keys("a")
    screen = terminal.wait_for(
        lambda s: "RESULT:" in s and "· idle" in s, "the approved command's answer"
    )
    assert "approval: allowed once" in screen
    assert "Output: approved-by-key" in flat(screen)  # the answer wraps at the screen's edge

    # The prompt stays usable during a turn: what is typed steers it (Codex steers: the model
    # is asked again within the same turn, and answers the steer).
    terminal.type("SLOW")
    terminal.keys("Enter")
    terminal.wait_for(lambda s: "slow-01" in s, "the slow answer streams")
    terminal.type("and mind the tests")
    terminal.keys("Enter")
    screen = terminal.wait_for(
        lambda s: "ECHO: and mind the tests" in s and "· idle" in s, "the steered turn's answer"
    )
    assert screen.index("> SLOW") < screen.index("> you: and mind the tests")
    assert screen.count("> SLOW") == 1 and "> and mind the tests" not in screen  # no new turn

    # Ctrl-C interrupts a running turn; the TUI stays.
    terminal.type("SLOW again")
    terminal.keys("Enter")
    terminal.wait_for(
        lambda s: "> SLOW again" in s and "slow-01" in s.split("> SLOW again")[-1],
        "the next one streams",
    )
    terminal.keys("C-c")
    screen = terminal.wait_for(
        lambda s: "codex · interrupted" in s and "· idle" in s, "the turn is interrupted"
    )
    assert "slow-39" not in screen, "the answer ran to its end: the interrupt did not stop it"
    assert terminal.alive()

    # Ctrl-C while idle leaves, and the agent goes with robota.
    terminal.keys("C-c")
    assert wait_for_exit(status) == 0
    deadline = time.monotonic() + 10
    while processes_with_home_under(robota.root / "agents"):
        assert time.monotonic() < deadline, "an agent outlived robota"
        time.sleep(0.1)
    prompts = [r.prompt for r in model.model_requests()]
    assert "hello from tmux" in prompts
    assert "SHELL: echo approved-by-key" in prompts


@pytest.mark.parametrize("how", ["terminal closed", "SIGTERM"])
def test_robota_ends_with_its_agent_when_the_terminal_closes_or_on_sigterm(
    robota: Robota, model: FakeModel, terminal: Tmux, how: str
) -> None:
    write_real_agents_config(robota, ["codex"], model.url, model_catalog=True)
    status = robota.root / "exit-status"
    # The shell around robota ignores SIGHUP so it can record robota's status; robota then
    # learns of the hangup from the terminal itself.
    terminal.start(
        [str(ROBOTA)], env=robota.env, cwd=robota.root, status=status, hangup_ignored=True
    )
    terminal.wait_for(lambda s: "· idle" in s, "the TUI is ready")
    terminal.type("SLOW")
    terminal.keys("Enter")
    terminal.wait_for(lambda s: "slow-01" in s, "a turn runs at the agent")
    assert processes_with_home_under(robota.root / "agents"), "the agent should be running"
    [pid] = [p for p in processes_in(robota.home) if str(ROBOTA).encode() in cmdline(p)]

    if how == "SIGTERM":
        os.kill(pid, signal.SIGTERM)
        assert wait_for_exit(status) == 128 + signal.SIGTERM
    else:
        terminal.close()
        assert wait_for_exit(status) == 128 + signal.SIGHUP
    deadline = time.monotonic() + 30
    while processes_in(robota.home) or processes_with_home_under(robota.root / "agents"):
        assert time.monotonic() < deadline, "robota or its agent outlived the run"
        time.sleep(0.1)


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def processes_in(robota_home: Path) -> list[int]:
    """Live processes whose environment names this ROBOTA_HOME: robota itself, and whatever
    it started with its environment."""
    marker = f"ROBOTA_HOME={robota_home}".encode()
    return live_processes(lambda environ: marker in environ)
