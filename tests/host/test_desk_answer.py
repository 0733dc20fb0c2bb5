"""A peer device's message on the host (``TaskDesk.answer``, issue 30 §1): queued behind the
running turn as a turn of its own, never a steer into it and never merged with other input,
and its own answer returned."""

from __future__ import annotations

from pathlib import Path

import trio

from robota.host import Host

from ..support.host import BOUND, ask, running_host, sandboxed
from ..support.model_server import FakeModel
from ..support.processes import processes_with_home_under


async def test_a_peers_message_waits_for_the_running_turn_and_runs_as_its_own(
    short_root: Path, model: FakeModel
) -> None:
    _, profile = sandboxed(short_root, model, "codex")
    hosts: list[Host] = []
    async with running_host(profile, hosts.append) as (socket, stopped):
        desk = hosts[0].desk
        task_id = (await ask(socket, "task.new", {"title": "asked"}))["task"]["id"]
        await ask(socket, "task.send", {"task": task_id, "text": "SLOW the first turn"})
        while (await ask(socket, "server.status"))["turns_running"] == 0:
            await trio.sleep(0.05)
        await trio.sleep(1.0)  # well into the turn: a plain prompt now would steer it (Codex)
        with trio.fail_after(BOUND):
            answered = await desk.answer(task_id, "  from a peer\n", timeout=BOUND)
        assert (answered.status, answered.final_text) == ("completed", "ECHO: from a peer")
        history = await ask(socket, "task.send", {"task": task_id, "text": "HISTORY", "wait": True})
        [turn] = history["turns"]
        assert turn["final"] == "HISTORY: SLOW the first turn | from a peer | HISTORY"
        assert turn["turn_id"] != answered.attempt_id

        await ask(socket, "server.stop")
        await stopped.wait()
    assert processes_with_home_under(short_root / "agents") == []
