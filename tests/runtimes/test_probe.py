"""The runtime plugins shake hands with every real agent and leave nothing running."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from robota.core import AgentLaunch, runtime_plugins

from ..support.agents import AgentSetup, isolated
from ..support.real_agents import PINNED


def isolated_launch(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[AgentSetup, AgentLaunch]:
    """The isolated setup of ``name`` and its launch; the probe inherits the process
    environment, so the test's environment becomes exactly the isolated one."""
    setup = isolated(name, tmp_path)
    for key in list(os.environ):
        monkeypatch.delenv(key)
    for key, value in setup.env.items():
        monkeypatch.setenv(key, value)
    launch = AgentLaunch(
        name=name,
        kind=setup.kind,
        command=setup.command,
        args=setup.args,
        home=tmp_path,
        config_path=tmp_path / "config.yaml",
        cwd=setup.cwd,
    )
    return setup, launch


def test_both_protocols_are_registered_as_entry_points() -> None:
    assert set(runtime_plugins()) == {"app-server", "acp"}


@pytest.mark.parametrize("name", sorted(PINNED))
async def test_probe_real_agent(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    setup, launch = isolated_launch(name, tmp_path, monkeypatch)
    report = await runtime_plugins()[setup.kind].probe(launch, timeout=30)
    assert report.ok, report.detail
    assert report.version == PINNED[name]
    assert report.kind == setup.kind


async def test_probe_reports_a_missing_executable(tmp_path: Path) -> None:
    launch = AgentLaunch(name="ghost", kind="acp", command=str(tmp_path / "no-such-agent"))
    report = await runtime_plugins()["acp"].probe(launch, timeout=5)
    assert not report.ok
    assert "cannot start" in report.detail


async def test_probe_reports_an_agent_that_is_not_an_agent(tmp_path: Path) -> None:
    launch = AgentLaunch(name="echo", kind="app-server", command="/bin/true")
    report = await runtime_plugins()["app-server"].probe(launch, timeout=5)
    assert not report.ok
    assert "the agent exited early (exit code 0)" in report.detail


@pytest.mark.parametrize("name", ["codex", "codex-acp", "claude-agent-acp"])
async def test_probe_with_a_session_reports_timings_and_capabilities(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    setup, launch = isolated_launch(name, tmp_path, monkeypatch)
    report = await runtime_plugins()[setup.kind].probe(launch, timeout=60, session=True)
    assert report.ok, report.detail
    assert set(report.timings) == {"initialize", "session", "stop"}
    assert all(0 < seconds < 60 for seconds in report.timings.values())
    assert report.capabilities["steer"] is (setup.kind == "app-server")
    if name == "claude-agent-acp":
        assert "acceptEdits" in report.capabilities["modes"]  # type: ignore[operator]


async def test_probe_times_out_on_an_agent_that_never_answers(tmp_path: Path) -> None:
    launch = AgentLaunch(name="mute", kind="acp", command="sleep", args=("30",))  # never answers
    report = await runtime_plugins()["acp"].probe(launch, timeout=0.5)
    assert not report.ok
    assert report.detail == "no answer within 0.5 s"
