"""An agent that dies says why on stderr; robota shows it, cleaned and with secrets masked.

Real processes throughout: the fault agent told to write on stderr and exit at start or
mid-turn, and the real Codex given a config it refuses to start with.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path

import pytest

from robota.core import AgentLaunch, ChildSpec, runtime_plugins
from robota.core.agents import AgentFailure, SessionOpened
from robota.core.events import TurnError
from robota.core.testing import supervised

from ..support.agent_actor import Chat, agent, fault_launch
from ..support.agents import isolated

KNOWN = "known-secret-value-42"
"""A secret the configuration names (``AgentLaunch.secrets``)."""
SCRUBBED = "slack-signing-secret-17"
"""The value of a variable robota keeps from agents; the agent learnt it some other way."""
SHAPED = "sk-proj-abcdefghijklmnopqrstuvwx"
"""Nobody told robota of this one: its shape gives it away."""

SAYING = (
    "\x1b[1;31mError:\x1b[0m config is broken\n"
    f"  using {KNOWN} and {SCRUBBED}\n"
    f"  OPENAI_API_KEY={SHAPED}\n"
    "bye"
)


def dying_launch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **env: str) -> AgentLaunch:
    monkeypatch.setenv("SLACK_SIGNING_SECRET", SCRUBBED)
    return replace(fault_launch(tmp_path, **env), secrets=frozenset({KNOWN}))


def assert_last_words(text: str) -> None:
    assert "its stderr ended with:\n  Error: config is broken\n" in text
    assert "\n    using *** and ***\n    OPENAI_API_KEY=***\n  bye" in text
    for leak in (KNOWN, SCRUBBED, SHAPED, "\x1b"):
        assert leak not in text


async def failed_open(launch: AgentLaunch, tmp_path: Path, **options: float) -> AgentFailure:
    """Open a session with an agent that never gets as far; the failure the route hears."""
    async with agent(launch, **options) as host:
        chat = Chat(host, "route", tmp_path)
        chat.open()
        return await chat.next(AgentFailure)


async def failed_turn(launch: AgentLaunch, tmp_path: Path, prompt: str) -> TurnError:
    """Open a session, run ``prompt``, which must fail; the turn's error."""
    async with agent(launch) as host:
        chat = Chat(host, "route", tmp_path)
        chat.open()
        await chat.next(SessionOpened)
        failed = await chat.turn(prompt)
    assert failed.status == "failed"
    assert failed.error is not None
    return failed.error


async def test_an_agent_dying_at_start_fails_the_open_with_its_last_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    launch = dying_launch(
        tmp_path, monkeypatch, FAULT_AGENT_STDERR=SAYING, FAULT_AGENT_EXIT_AT_START="2"
    )
    failure = await failed_open(launch, tmp_path)
    assert failure.request == "open"
    assert failure.message.startswith("agent fault exited (exit code 2); its stderr ended with:")
    assert_last_words(failure.message)


async def test_an_agent_dying_mid_turn_fails_the_turn_with_its_last_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    launch = dying_launch(tmp_path, monkeypatch, FAULT_AGENT_DYING=SAYING)
    error = await failed_turn(launch, tmp_path, "EXIT now")
    assert error.category == "agent_exited"
    assert "agent fault exited (exit code 3); its stderr ended with:" in error.message
    assert_last_words(error.message)


async def test_an_agent_that_never_answers_initialize_is_shown_with_what_it_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    launch = dying_launch(tmp_path, monkeypatch, FAULT_AGENT_STDERR=SAYING, FAULT_AGENT_SILENT="1")
    failure = await failed_open(launch, tmp_path, handshake_timeout=0.5)
    assert failure.message.startswith(
        "agent fault did not answer initialize within 0.5 s; its stderr ended with:"
    )
    assert_last_words(failure.message)


async def test_an_agent_whose_output_is_garbage_is_shown_with_what_it_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    launch = dying_launch(tmp_path, monkeypatch, FAULT_AGENT_STDERR=SAYING)
    error = await failed_turn(launch, tmp_path, "FLOOD")
    assert "lines in a row that are not JSON-RPC" in error.message
    assert_last_words(error.message)


async def test_a_quiet_agent_fails_with_the_reason_alone(tmp_path: Path) -> None:
    error = await failed_turn(fault_launch(tmp_path), tmp_path, "EXIT now")
    assert "exit code 3" in error.message
    assert "stderr" not in error.message


async def test_a_probe_reports_the_last_words_of_an_agent_that_dies_at_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    launch = dying_launch(
        tmp_path, monkeypatch, FAULT_AGENT_STDERR=SAYING, FAULT_AGENT_EXIT_AT_START="2"
    )
    report = await runtime_plugins()["acp"].probe(launch, timeout=10)
    assert not report.ok
    assert report.detail == "the agent exited early (exit code 2)"
    assert report.stderr_tail == (
        "Error: config is broken",
        "  using *** and ***",
        "  OPENAI_API_KEY=***",
        "bye",
    )


def refusing_codex(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AgentLaunch:
    """The real Codex with a config line it no longer accepts (codex 0.171 exits at start)."""
    setup = isolated("codex", tmp_path)
    config = Path(setup.env["CODEX_HOME"]) / "config.toml"
    text = config.read_text()
    config.write_text(
        re.sub(r'(?m)^approval_policy = ".*"$', 'approval_policy = "untrusted"', text)
    )
    for key in list(os.environ):
        monkeypatch.delenv(key)
    for key, value in setup.env.items():
        monkeypatch.setenv(key, value)
    return AgentLaunch(
        name="codex",
        kind="app-server",
        command=setup.command,
        args=setup.args,
        home=tmp_path,
        config_path=tmp_path / "config.yaml",
        cwd=setup.cwd,
    )


CODEX_SAYS = 'Error: approval_policy = "untrusted" is no longer supported; remove this setting'


async def test_real_codex_refusing_its_config_is_heard_by_the_probe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    launch = refusing_codex(tmp_path, monkeypatch)
    report = await runtime_plugins()["app-server"].probe(launch, timeout=30)
    assert not report.ok
    assert report.detail == "the agent exited early (exit code 1)"
    assert CODEX_SAYS in report.stderr_tail


async def test_real_codex_refusing_its_config_fails_the_open_with_its_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    launch = refusing_codex(tmp_path, monkeypatch)
    host = runtime_plugins()["app-server"].host(launch)
    async with supervised([ChildSpec("agent", lambda: host.service, shutdown=15.0)]):
        chat = Chat(host, "route", tmp_path)
        chat.open()
        failure = await chat.next(AgentFailure, timeout=30)
    assert failure.request == "open"
    assert failure.message.startswith("agent codex exited (exit code 1); its stderr ended with:")
    assert f"\n  {CODEX_SAYS}" in failure.message
