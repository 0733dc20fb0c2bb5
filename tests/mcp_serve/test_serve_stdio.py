"""``robota mcp serve`` over stdio, driven by the official ``mcp`` client (the oracle) against
real agents and the fake model."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import trio

from robota.mcp import TOOLS

from ..support.model_server import FakeModel
from ..support.processes import processes_with_home_under
from ..support.real_agents import write_real_agents_config
from ..support.robota import ROBOTA, Robota
from ._client import client

TOOL_NAMES = {tool.name for tool in TOOLS}  # the names themselves: test_tools


@pytest.fixture
def model() -> Iterator[FakeModel]:
    with FakeModel(slow_deltas=200, slow_delay=0.05) as fake:
        yield fake


def text_of(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


@pytest.mark.parametrize("agent", ["codex", "claude-agent-acp"])
async def test_a_client_runs_prompts_on_a_real_agent_and_continues_the_task(
    robota: Robota, model: FakeModel, agent: str
) -> None:
    write_real_agents_config(robota, [agent], model.url, model_catalog=agent.startswith("codex"))
    async with client(robota) as session:
        listed = await session.list_tools()
        assert {t.name for t in listed.tools} == TOOL_NAMES

        agents = await session.call_tool("robota_agents", {})
        assert not agents.is_error
        (only,) = agents.structured_content["agents"]
        assert only["protocol"] in ("acp", "app-server") and "resume" in only["capabilities"]

        moves: list[str | None] = []

        async def progress(_done: float, _total: float | None, message: str | None) -> None:
            moves.append(message)

        first = await session.call_tool(
            "robota_run", {"prompt": "remember apples"}, progress_callback=progress
        )
        assert not first.is_error, text_of(first)
        assert text_of(first) == "ECHO: remember apples"
        run = first.structured_content
        assert (run["status"], run["answer"]) == ("completed", "ECHO: remember apples")
        assert run["task"] and run["turn"]
        assert moves, "progress notifications while the turn ran"

        again = await session.call_tool("robota_run", {"prompt": "HISTORY", "task": run["task"]})
        assert text_of(again) == "HISTORY: remember apples | HISTORY"
        assert again.structured_content["task"] == run["task"]

        listed_tasks = await session.call_tool("robota_tasks", {})
        assert [t["id"] for t in listed_tasks.structured_content["tasks"]] == [run["task"]]
        status = await session.call_tool("robota_task_status", {"task": run["task"]})
        assert status.structured_content["last_turn"]["final"].startswith("HISTORY")
    assert processes_with_home_under(robota.root / "agents") == []


async def test_bad_arguments_are_tool_errors_and_the_server_keeps_serving(
    robota: Robota, model: FakeModel
) -> None:
    write_real_agents_config(robota, ["codex"], model.url, model_catalog=True)
    async with client(robota) as session:
        bad = await session.call_tool("robota_run", {"prompt": 42})
        assert bad.is_error
        assert "'prompt'" in text_of(bad) and "42" in text_of(bad) and "string" in text_of(bad)
        missing = await session.call_tool("robota_task_status", {"task": "nothing-like-it"})
        assert missing.is_error and "nothing-like-it" in text_of(missing)
        still = await session.call_tool("robota_tasks", {"all": True})
        assert not still.is_error and still.structured_content == {"tasks": []}


async def test_a_cancelled_call_interrupts_its_turn(robota: Robota, model: FakeModel) -> None:
    write_real_agents_config(robota, ["codex"], model.url, model_catalog=True)
    async with client(robota) as session:
        task = (await session.call_tool("robota_task_new", {})).structured_content["task"]
        with trio.move_on_after(4):
            await session.call_tool("robota_run", {"prompt": "SLOW", "task": task})
        # The client's cancellation reached the server: the turn ends interrupted.
        for _ in range(200):
            status = await session.call_tool("robota_task_status", {"task": task})
            if status.structured_content["state"] != "running":
                break
            await trio.sleep(0.1)
        assert status.structured_content["last_turn"]["status"] == "interrupted"


def start_raw(robota: Robota, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [str(ROBOTA), "mcp", "serve", *args],
        env=robota.environment(None, ()),
        cwd=robota.root,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


INITIALIZE = (
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
    b'"capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}\n'
)


def test_stdout_carries_only_frames_and_stdin_closing_ends_it(
    robota: Robota, model: FakeModel
) -> None:
    write_real_agents_config(robota, ["codex"], model.url, model_catalog=True)
    process = start_raw(robota)
    out, err = process.communicate(INITIALIZE, timeout=60)
    assert process.returncode == 0, err
    lines = [line for line in out.decode().splitlines() if line]
    assert lines and all(line.startswith('{"') for line in lines), out
    assert '"id":1' in lines[0]


def test_a_line_that_is_no_message_is_answered_and_the_server_keeps_serving(
    robota: Robota, model: FakeModel
) -> None:
    write_real_agents_config(robota, ["codex"], model.url, model_catalog=True)
    process = start_raw(robota)
    assert process.stdin is not None and process.stdout is not None
    lines = [
        b"garbage",
        b"",  # blank: skipped, no answer
        b"[1, 2]",
        b'{"jsonrpc":"2.0","id":7}',
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
        b'{"jsonrpc":"2.0","id":8,"method":"tools/list"}',
    ]
    process.stdin.write(INITIALIZE + b"\n".join(lines) + b"\n")
    process.stdin.flush()
    answers: list[dict[str, Any]] = []
    watchdog = threading.Timer(60, os.killpg, (process.pid, signal.SIGKILL))  # bounds readline
    watchdog.start()
    try:
        while not any(answer.get("id") == 8 for answer in answers):
            line = process.stdout.readline()
            assert line, f"the server ended (or took 60 s) before answering: {answers}"
            answers.append(json.loads(line))
    finally:
        watchdog.cancel()
    _out, err = process.communicate(timeout=60)  # stdin closed: it ends
    assert process.returncode == 0, err
    by_id = {answer.get("id"): answer for answer in answers if answer.get("id") is not None}
    refused = [answer["error"] for answer in answers if answer.get("id") is None]
    assert [(e["code"], e["message"].split(":")[0]) for e in refused] == [
        (-32700, "Parse error"),
        (-32600, "Invalid Request"),
    ]
    assert by_id[7]["error"]["code"] == -32600 and "'result'" in by_id[7]["error"]["message"]
    assert {tool["name"] for tool in by_id[8]["result"]["tools"]} == TOOL_NAMES
    assert len(answers) == 5  # initialize, three refusals, the tools: nothing else
    assert (
        b"a line of 7 bytes refused: Parse error"
        in (robota.home / "logs").joinpath("robota.log").read_bytes()
    )


@pytest.mark.parametrize("how", ["sigterm", "stdin closed"])
def test_an_end_mid_turn_exits_0_and_leaves_no_agent(
    robota: Robota, model: FakeModel, how: str
) -> None:
    write_real_agents_config(robota, ["codex"], model.url, model_catalog=True)
    process = start_raw(robota)
    assert process.stdin is not None
    process.stdin.write(INITIALIZE)
    process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    process.stdin.write(
        b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"robota_run",'
        b'"arguments":{"prompt":"SLOW"}}}\n'
    )
    process.stdin.flush()
    deadline = time.monotonic() + 60
    while not processes_with_home_under(robota.root / "agents"):
        assert time.monotonic() < deadline, "the agent never started"
        time.sleep(0.1)
    if how == "sigterm":
        process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)  # closes stdin: the client leaving
    assert process.returncode == 0, err
    assert processes_with_home_under(robota.root / "agents") == []


def test_an_untrusted_workspace_is_refused_unless_restricted(
    robota: Robota, model: FakeModel
) -> None:
    write_real_agents_config(robota, ["codex"], model.url, model_catalog=True)
    elsewhere = robota.root / "elsewhere"
    elsewhere.mkdir()
    refused = subprocess.run(
        [str(ROBOTA), "mcp", "serve"],
        env=robota.environment(None, ()),
        cwd=elsewhere,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert refused.returncode == 2
    assert refused.stdout == b""
    assert b"robota trust --yes" in refused.stderr and b"--restricted" in refused.stderr
    allowed = subprocess.run(
        [str(ROBOTA), "mcp", "serve", "--restricted"],
        env=robota.environment(None, ()),
        cwd=elsewhere,
        input=INITIALIZE,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert allowed.returncode == 0, allowed.stderr
    assert b'"id":1' in allowed.stdout


async def test_approvals_follow_the_headless_policy_and_are_reported(
    robota: Robota, model: FakeModel
) -> None:
    write_real_agents_config(robota, ["codex"], model.url, model_catalog=True)
    async with client(robota) as session:
        ran = await session.call_tool("robota_run", {"prompt": "SHELL: echo refused"})
        assert not ran.is_error, text_of(ran)
        approvals = ran.structured_content["approvals"]
        assert [(a["decision"], a["by"]) for a in approvals] == [("decline", "policy")]
