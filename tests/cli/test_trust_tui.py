"""The TUI in an untrusted workspace, under tmux with a real agent: it asks on its terminal
before composing a session (trust / continue Restricted / quit), and a Restricted turn says so
on its card."""

from __future__ import annotations

from pathlib import Path

from ..support.model_server import FakeModel
from ..support.processes import processes_with_home_under
from ..support.real_agents import write_real_agents_config
from ..support.robota import ROBOTA, Robota
from ..support.terminal import Tmux
from ..support.trust import trust_store_of
from ..support.tui import flat, model, terminal, wait_for_exit

__all__ = ["model", "terminal"]  # the fixtures, shared with the TUI's own tmux tests

QUESTION = "[t] trust it [r] continue Restricted [q] quit"


def answer(terminal: Tmux, robota: Robota, project: Path, key: str, status: Path) -> None:
    """Start the TUI in ``project``, see the question, answer ``key``."""
    terminal.start([str(ROBOTA), "--cwd", str(project)], env=robota.env, cwd=project, status=status)
    screen = terminal.wait_for(lambda s: QUESTION in flat(s), "the question")
    assert f"{project} is not trusted" in flat(screen)
    terminal.type(key)
    terminal.keys("Enter")


def turn(terminal: Tmux, prompt: str) -> str:
    """Once the TUI is ready, ``prompt`` answered: the screen."""
    terminal.wait_for(lambda s: "idle" in s and "Ctrl-C" in s, "the TUI is ready")
    terminal.type(prompt)
    terminal.keys("Enter")
    return terminal.wait_for(lambda s: f"ECHO: {prompt}" in s and "· idle" in s, "the answer")


def untrusted(robota: Robota) -> Path:
    path = robota.root / "project"
    (path / ".git").mkdir(parents=True)
    (path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return path


def test_the_tui_asks_then_quits_runs_restricted_or_trusts(
    robota: Robota, model: FakeModel, terminal: Tmux
) -> None:
    write_real_agents_config(robota, ["codex"], model.url, model_catalog=True)
    project = untrusted(robota)
    store = trust_store_of(robota.home)
    quit_status = robota.root / "quit-status"
    answer(terminal, robota, project, "q", quit_status)
    assert wait_for_exit(quit_status) == 1
    assert store.state(project) == "untrusted"

    restricted_status = robota.root / "restricted-status"
    answer(terminal, robota, project, "r", restricted_status)
    screen = turn(terminal, "hello restricted")
    assert "Restricted" in screen, "the turn's card says it runs Restricted"
    terminal.keys("C-c")
    assert wait_for_exit(restricted_status) == 0
    assert store.state(project) == "untrusted"

    trust_status = robota.root / "trust-status"
    answer(terminal, robota, project, "t", trust_status)
    screen = turn(terminal, "hello trusted")
    assert store.state(project) == "trusted"
    assert "Restricted" not in screen
    terminal.keys("C-c")
    assert wait_for_exit(trust_status) == 0
    assert processes_with_home_under(robota.root / "agents") == []
