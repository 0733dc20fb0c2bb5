"""Agent processes: scrubbed environment, process groups, shutdown that always ends them."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import trio

from robota.core import AgentLaunch
from robota.runtimes import AgentProcess, ShutdownTimings, agent_environment, start_failure
from robota.runtimes._reaper import MARK

from ..support.agents import isolated

PLANTED = {
    "FEISHU_APP_SECRET": "planted-feishu-secret",
    "feishu_app_id": "planted-lower-case",
    "SLACK_BOT_TOKEN": "xoxb-planted",
    "Slack_App_Token": "xapp-planted",
    "ROBOTA_INTERNAL": "planted-robota",
    "ROBOTA_LARK_APP_ID": "planted-inherited-id",
    "PATH": os.environ["PATH"],
    "LANG": "C.UTF-8",
}


def test_environment_scrub_removes_secrets_and_injects_context(tmp_path: Path) -> None:
    env = agent_environment(
        PLANTED,
        {
            "OPENAI_API_KEY": "agent-own-key",
            "SLACK_USER_TOKEN": "sneaky",
            "ROBOTA_HOME": "/evil",
            "ROBOTA_LARK_APP_SECRET": "sneaky",
            "ROBOTA_LARK_BOT_OPEN_ID": "ou_bot",  # a transport's id, set by the host
            "ROBOTA_SLACK_USER_ID": "U1",
        },
        agent_name="codex",
        home=tmp_path,
        config_path=tmp_path / "config.yaml",
    )
    assert not any(
        "planted" in v or "xox" in v or "xapp" in v or v == "sneaky" for v in env.values()
    )
    assert env["OPENAI_API_KEY"] == "agent-own-key"
    assert env["ROBOTA_HOME"] == str(tmp_path)
    assert env["ROBOTA"] == "1"
    assert env["ROBOTA_AGENT_NAME"] == "codex"
    assert env["LANG"] == "C.UTF-8"
    assert (env["ROBOTA_LARK_BOT_OPEN_ID"], env["ROBOTA_SLACK_USER_ID"]) == ("ou_bot", "U1")
    assert "ROBOTA_LARK_APP_SECRET" not in env


async def test_spawned_process_sees_only_the_scrubbed_environment(tmp_path: Path) -> None:
    inherited = {**PLANTED, MARK: "the-mark-of-the-robota-that-started-this-one"}
    env = agent_environment(
        inherited, {}, agent_name="probe", home=tmp_path, config_path=tmp_path / "c.yaml"
    )
    dump = "import json, os, sys; sys.stdout.write(json.dumps(dict(os.environ)))"
    agent = await AgentProcess.start("probe", [sys.executable, "-c", dump], env=env)
    assert agent.process.stdout is not None
    data = b""
    async for chunk in agent.process.stdout:
        data += chunk
    await agent.shutdown()
    seen = json.loads(data)
    assert {k for k in seen if k.upper().startswith(("FEISHU_", "SLACK_"))} == set()
    assert "ROBOTA_INTERNAL" not in seen
    assert seen["ROBOTA_CONFIG"] == str(tmp_path / "c.yaml")
    # Marked by this robota's reaper, not by the one that started this robota.
    assert len(seen[MARK]) == 16 and seen[MARK] != inherited[MARK]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); it is gone for our purposes.
    status = Path(f"/proc/{pid}/stat")
    return status.exists() and status.read_text().split(") ", 1)[1][0] != "Z"


def group_members(pgid: int) -> list[int]:
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().split(") ", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(stat.parent.name))
    return members


async def test_an_agent_that_ignores_eof_is_terminated_with_its_group(tmp_path: Path) -> None:
    setup = isolated("codex-acp", tmp_path)  # codex-acp keeps running after stdin closes
    agent = await AgentProcess.start(
        "codex-acp",
        [setup.command, *setup.args],
        env=setup.env,
        cwd=setup.cwd,
        timings=ShutdownTimings(eof_grace=0.3, term_grace=2.0),
    )
    await trio.sleep(0.3)
    assert alive(agent.pid)
    code = await agent.shutdown()
    assert code == -signal.SIGTERM
    assert group_members(agent.pid) == []


async def test_grandchildren_do_not_outlive_the_agent(tmp_path: Path) -> None:
    marker = tmp_path / "grandchild.pid"
    script = f"sleep 300 & echo $! > {marker}; exec cat"
    agent = await AgentProcess.start(
        "shell",
        ["/bin/sh", "-c", script],
        env={"PATH": os.environ["PATH"]},
        timings=ShutdownTimings(eof_grace=0.5, term_grace=1.0),
    )
    with trio.fail_after(5):
        while not marker.exists() or not marker.read_text().strip():
            await trio.sleep(0.01)
    grandchild = int(marker.read_text())
    assert alive(grandchild)
    await agent.shutdown()  # cat exits on EOF; the sleeping grandchild must go too
    with trio.fail_after(5):
        while alive(grandchild):
            await trio.sleep(0.01)
    assert group_members(agent.pid) == []


async def test_descendants_get_a_moment_to_finish_after_the_leader_exits(tmp_path: Path) -> None:
    """Claude Code's native child writes its session file as it exits, after its parent has;
    killing the group the instant the leader is gone would lose that file."""
    started, marker = tmp_path / "started", tmp_path / "flushed"
    child = (
        f"import time, pathlib; pathlib.Path({str(started)!r}).touch(); time.sleep(0.4); "
        f"pathlib.Path({str(marker)!r}).write_text('ok')"
    )
    leader = (
        "import subprocess, sys; "
        f"subprocess.Popen([sys.executable, '-c', {child!r}]); "
        "sys.stdin.read()"  # exits at EOF, leaving its child to finish
    )
    # A grace well beyond the child's 0.4 s: what is tested is that the group is given one,
    # not how fast a loaded machine starts an interpreter.
    agent = await AgentProcess.start(
        "leader",
        [sys.executable, "-c", leader],
        env=dict(os.environ),
        cwd=tmp_path,
        timings=ShutdownTimings(group_grace=3.0),
    )
    async with trio.open_nursery() as nursery:
        nursery.start_soon(agent.drain_stderr)
        with trio.fail_after(30):
            while not started.exists():  # the child runs, 0.4 s from done
                await trio.sleep(0.02)
        await agent.shutdown()
    assert marker.read_text() == "ok"
    assert not agent._group_alive()


async def _start_error(launch: AgentLaunch) -> OSError:
    try:
        process = await AgentProcess.launch(launch)
    except OSError as error:
        return error
    await process.shutdown()
    raise AssertionError(f"{launch.command} started")


async def test_a_start_failure_names_the_missing_program_or_directory(tmp_path: Path) -> None:
    """The OS says only "No such file or directory"; the person reads which, and what to do."""
    cases = [
        (
            AgentLaunch(name="codex", kind="acp", command="codex-not-installed-here"),
            "cannot start agent codex: 'codex-not-installed-here' is not found on PATH; "
            "`robota doctor` says how to install it",
        ),
        (
            AgentLaunch(name="mine", kind="acp", command=str(tmp_path / "gone")),
            f"cannot start agent mine: '{tmp_path / 'gone'}' is not found; "
            "`robota doctor` says how to install it",
        ),
        (
            AgentLaunch(
                name="codex", kind="acp", command=sys.executable, cwd=tmp_path / "no-such-dir"
            ),
            f"cannot start agent codex: its directory {tmp_path / 'no-such-dir'} does not exist",
        ),
    ]
    not_executable = tmp_path / "agent.txt"
    not_executable.write_text("not a program")
    cases.append(
        (
            AgentLaunch(name="mine", kind="acp", command=str(not_executable)),
            f"cannot start agent mine: '{not_executable}' may not be run (permission denied)",
        )
    )
    for launch, said in cases:
        assert start_failure(launch, await _start_error(launch)) == said
