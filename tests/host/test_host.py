"""The host in-process: its supervision tree with a real ACP agent against the fake model,
driven through its control endpoint by the blocking client, as ``robota task`` drives it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio

from robota.core.control import ControlClient, HostRefused, probe_host

from ..support.host import (
    BOUND,
    HOST_PROCESS,
    agent_name,
    ask,
    running_host,
    sandboxed,
    wait_for_status,
)
from ..support.model_server import FakeModel
from ..support.processes import processes_with_home_under


@pytest.mark.parametrize("agent", ["codex-acp", "claude-agent-acp"])
async def test_the_host_serves_status_new_send_and_stop(
    short_root: Path, model: FakeModel, agent: str
) -> None:
    _, profile = sandboxed(short_root, model, agent)
    async with running_host(profile) as (socket, stopped):
        status = await ask(socket, "server.status")
        assert (status["running"], status["ready"]) == (True, True)
        assert status["pid"] == os.getpid()
        assert status["routes"] == {"known": 0, "active": 0}

        created = await ask(socket, "task.new", {"title": "from the host test"})
        task_id = created["task"]["id"]
        assert task_id and created["task"]["title"] == "from the host test"
        assert created["route"].startswith("cli:")

        sent = await ask(socket, "task.send", {"task": task_id, "text": "hello host", "wait": True})
        assert sent["task"]["id"] == task_id
        assert [t["final"] for t in sent["turns"]] == ["ECHO: hello host"]
        assert sent["turns"][0]["status"] == "completed"

        again = await ask(socket, "task.send", {"task": task_id, "text": "HISTORY", "wait": True})
        assert [t["final"] for t in again["turns"]] == ["HISTORY: hello host | HISTORY"]

        slow = await ask(socket, "task.send", {"task": task_id, "text": "SLOW stop me"})
        assert "turns" not in slow, "without wait the reply comes once the route was told"
        while (await ask(socket, "server.status"))["turns_running"] == 0:
            await trio.sleep(0.05)
        interrupted = await ask(socket, "task.stop", {"task": task_id})
        assert (interrupted["route"], interrupted["stopped"]) == (created["route"], True)
        while (await ask(socket, "server.status"))["turns_running"] != 0:
            await trio.sleep(0.05)

        idle = await ask(socket, "task.stop", {"task": task_id})
        assert (idle["route"], idle["stopped"]) == (created["route"], False)
        assert [r["text"] for r in idle["replies"]] == ["no turn is running"]

        with pytest.raises(HostRefused) as unknown:
            await ask(socket, "task.send", {"task": "no-such-task", "text": "hi"})
        assert unknown.value.code == "not_found"
        with pytest.raises(HostRefused) as empty:
            await ask(socket, "task.send", {"task": task_id, "text": "  "})
        assert (empty.value.code, empty.value.field) == ("bad_request", "text")
        with pytest.raises(HostRefused) as relative:
            await ask(socket, "task.new", {"cwd": "some/dir"})
        assert (relative.value.code, relative.value.field) == ("bad_request", "cwd")

        status = await ask(socket, "server.status")
        assert status["routes"]["known"] == 1
        assert status["agents"][0]["name"] == agent_name(agent)

        stopping = await ask(socket, "server.stop")
        assert stopping["stopping"] is True
        await stopped.wait()
    assert processes_with_home_under(short_root / "agents") == []


async def test_the_host_resolves_task_as_the_task_commands_take_it(
    short_root: Path, model: FakeModel
) -> None:
    """A request's ``task`` is TASK as typed (a list number, an id prefix, a title) and
    ``caller`` stands in for an omitted one; the host decides with the CLI's ``pick_task``."""
    _, profile = sandboxed(short_root, model, "claude-agent-acp")
    async with running_host(profile) as (socket, stopped):
        made = [await ask(socket, "task.new", {"title": t}) for t in ("twin", "twin", "third")]
        first, second, third = (m["task"]["id"] for m in made)
        # The shortest prefix of ``first`` that is no other id's and no list number (a number
        # of up to six digits names the N-th task, so all-digit prefixes that short are out).
        prefix = next(
            first[:n]
            for n in range(1, 13)
            if not (second.startswith(first[:n]) or third.startswith(first[:n]))
            and not (first[:n].isdigit() and n <= 6)
        )

        def stopped_task(fields: dict[str, Any]) -> Any:
            return ask(socket, "task.stop", fields)

        named = {
            "1": third,  # the newest first, as `robota task list` numbers them
            "3": first,
            prefix: first,
            "third": third,
            f"  {second} ": second,
        }
        for name, expected in named.items():
            assert (await stopped_task({"task": name}))["task"]["id"] == expected, name
        by_env = await stopped_task({"caller": {"ROBOTA_TASK_ID": second}})
        assert by_env["task"]["id"] == second
        # A list number past the end that no id starts with either (ids are hex, so a digit
        # can be an id's prefix: of six digits at least three start none of the three ids).
        ids = (first, second, third)
        past = next(d for d in "456789" if not any(task.startswith(d) for task in ids))
        refusals = [
            ({"task": "twin"}, "not_found", "task", "'twin' names several"),
            ({"task": past}, "not_found", "task", f"no task named '{past}'"),
            ({}, "not_found", "task", "give TASK"),
            ({"caller": {"ROBOTA_TASK_ID": "feedfacecafe"}}, "not_found", "task", "no such task"),
            ({"caller": {"HOME": "/root"}}, "bad_request", "caller", "'HOME' names no task"),
        ]
        for fields, code, field, said in refusals:
            with pytest.raises(HostRefused) as refused:
                await stopped_task(fields)
            assert (refused.value.code, refused.value.field) == (code, field), fields
            assert said in refused.value.message, (fields, refused.value.message)
        with pytest.raises(HostRefused) as twins:
            await ask(socket, "task.send", {"task": "twin", "text": "hi"})
        assert first in twins.value.message and second in twins.value.message
        renamed = await ask(socket, "task.rename", {"task": "2", "title": "second"})
        assert renamed["task"] == {**renamed["task"], "id": second, "title": "second"}
        assert (await stopped_task({"task": "twin"}))["task"]["id"] == first

        await ask(socket, "server.stop")
        await stopped.wait()
    assert processes_with_home_under(short_root / "agents") == []


@pytest.mark.parametrize("agent", ["codex-acp"])
async def test_a_task_made_elsewhere_is_bound_to_the_hosts_own_route(
    short_root: Path, model: FakeModel, agent: str
) -> None:
    robota, profile = sandboxed(short_root, model, agent)
    printed = await trio.to_thread.run_sync(
        partial(robota.run, "-p", "made by print mode", "--output-format", "json")
    )
    assert printed.returncode == 0, printed.stderr
    task_id = json.loads(printed.stdout)["session_id"]

    async with running_host(profile) as (socket, stopped):
        sent = await ask(socket, "task.send", {"task": task_id, "text": "HISTORY", "wait": True})
        assert sent["route"] == f"cli:{task_id}", "a print route is never adopted"
        assert [t["final"] for t in sent["turns"]] == ["HISTORY: made by print mode | HISTORY"]

        again = await ask(socket, "task.send", {"task": task_id, "text": "once more", "wait": True})
        assert again["route"] == f"cli:{task_id}"
        assert [t["final"] for t in again["turns"]] == ["ECHO: once more"]

        await ask(socket, "server.stop")
        await stopped.wait()
    assert processes_with_home_under(short_root / "agents") == []

    # The next host finds the task current on its cli route and drives it through it.
    async with running_host(profile) as (socket, stopped):
        later = await ask(socket, "task.send", {"task": task_id, "text": "HISTORY", "wait": True})
        assert later["route"] == f"cli:{task_id}"
        assert [t["final"] for t in later["turns"]] == [
            "HISTORY: made by print mode | HISTORY | once more | HISTORY"
        ]
        await ask(socket, "server.stop")
        await stopped.wait()
    assert processes_with_home_under(short_root / "agents") == []


async def test_two_waiters_on_one_task_both_hear_its_turns(
    short_root: Path, model: FakeModel
) -> None:
    _, profile = sandboxed(short_root, model, "codex-acp")
    async with running_host(profile) as (socket, stopped):
        task_id = (await ask(socket, "task.new", {}))["task"]["id"]
        results: dict[str, Any] = {}

        async def send(text: str) -> None:
            fields = {"task": task_id, "text": text, "wait": True}
            results[text] = await ask(socket, "task.send", fields)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(send, "SLOW first")
            while (await ask(socket, "server.status"))["turns_running"] == 0:
                await trio.sleep(0.05)
            nursery.start_soon(send, "second")
        # The second prompt came while the first turn ran: the route went idle only after
        # the turn it queued, and each waiter heard both turns through its own tap.
        first, second = results["SLOW first"], results["second"]
        assert [t["final"] for t in second["turns"]][-1] == "ECHO: second"
        assert [t["turn_id"] for t in first["turns"]] == [t["turn_id"] for t in second["turns"]]
        assert len(first["turns"]) == 2 and first["turns"][0]["final"].startswith("slow-00")
        await ask(socket, "server.stop")
        await stopped.wait()
    assert processes_with_home_under(short_root / "agents") == []


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_run_host_stops_cleanly_on_a_signal(
    short_root: Path, model: FakeModel, signum: signal.Signals
) -> None:
    robota, profile = sandboxed(short_root, model, "codex-acp")
    env = robota.environment(None, ())
    with subprocess.Popen(
        [sys.executable, str(HOST_PROCESS)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as host:
        try:
            with ControlClient(profile.control_socket, timeout=BOUND) as client:
                status = wait_for_status(client, host)
                assert (status["running"], status["pid"]) == (True, host.pid)
                created = client.call("task.new", {})
                sent = client.call(
                    "task.send", {"task": created["task"]["id"], "text": "hi", "wait": True}
                )
                assert [t["final"] for t in sent["turns"]] == ["ECHO: hi"]

            second = subprocess.run(
                [sys.executable, str(HOST_PROCESS)],
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=BOUND,
                check=False,
            )
            assert second.returncode == 0, second.stderr
            assert second.stdout.startswith(f"already running: pid {host.pid}")

            host.send_signal(signum)
            _, err = host.communicate(timeout=BOUND)
        finally:
            if host.poll() is None:
                host.kill()
    assert host.returncode == 0, err
    assert not probe_host(profile.host_lock, profile.host_state_file).running
    assert processes_with_home_under(short_root / "agents") == []
