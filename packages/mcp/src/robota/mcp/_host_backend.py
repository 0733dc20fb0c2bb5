"""The served tools through the profile's running host, as ``robota task`` drives it.

A new task is ``task.new``, a run is ``task.send`` with ``wait`` (the host's task desk starts
the turn on the task's route, with its warm agents, and answers once the route went idle), a
stop is ``task.stop``: the host's routes, store and approvals policy, nothing of this
process's own. The control client blocks, so each call runs in a worker thread; while a run
waits, a progress line goes out every few seconds, and a cancelled run asks the host to stop
the turn.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import trio

from robota.core.control import ControlClient, HostRefused, HostUnreachable, NoHostRunning

from ._setup import Progress, RunOutcome, ToolRefused
from ._tools import RunCall, TaskNewCall

__all__ = ["HostBackend", "host_runs"]

logger = logging.getLogger("robota.mcp")

CALL_TIMEOUT = 180.0
TICK = 3.0
"""Seconds between a waiting run's progress lines."""


def host_runs(socket_path: Path) -> bool:
    """Whether a host answers on the profile's control socket."""
    try:
        with ControlClient(socket_path, timeout=5.0) as client:
            client.call("server.status")
    except NoHostRunning:
        return False
    except (HostRefused, HostUnreachable):
        return True  # something listens and answered, or is busy: it is the profile's host
    return True


class HostBackend:
    def __init__(self, socket_path: Path) -> None:
        self.socket_path = socket_path

    def _call(self, type_name: str, fields: dict[str, object], timeout: float) -> Any:
        try:
            with ControlClient(self.socket_path, timeout=timeout) as client:
                return client.call(type_name, fields)
        except HostRefused as refused:
            raise ToolRefused(refused.message) from None
        except (NoHostRunning, HostUnreachable) as error:
            raise ToolRefused(f"the profile's host: {error}") from None

    async def new_task(self, call: TaskNewCall) -> str:
        fields: dict[str, object] = {"nodir": False}
        for name in ("agent", "cwd", "title"):
            value = getattr(call, name)
            if value is not None:
                fields[name] = value
        result = await trio.to_thread.run_sync(self._call, "task.new", fields, CALL_TIMEOUT)
        return str(result["task"]["id"])

    async def run(self, call: RunCall, progress: Progress) -> RunOutcome:
        assert call.task is not None  # a new task is made first (``Tools``)
        task = call.task
        fields: dict[str, object] = {
            "task": task,
            "text": call.prompt,
            "wait": True,
            "timeout": call.timeout,
        }
        result: dict[str, Any] = {}

        async def ask() -> None:
            try:
                result["reply"] = await trio.to_thread.run_sync(
                    self._call, "task.send", fields, call.timeout + 60, abandon_on_cancel=True
                )
            except ToolRefused as refused:
                result["refused"] = refused

        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(ask)
                waited = 0.0
                while not result:
                    with trio.move_on_after(TICK):
                        while not result:
                            await trio.sleep(0.05)
                    if not result:
                        waited += TICK
                        await progress(f"running ({waited:g} s)")
        except trio.Cancelled:
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(self._stop_quietly, task)
            raise
        if "refused" in result:
            refused: ToolRefused = result["refused"]
            if "no end within" in str(refused):
                return RunOutcome(task, None, None, None)
            raise refused
        reply = result["reply"]
        task_id = str(reply["task"]["id"])
        turns = reply.get("turns") or []
        if not turns:
            replies = "; ".join(r.get("text", "") for r in reply.get("replies") or ())
            raise ToolRefused(replies or "the host started no turn")
        last = turns[-1]
        return RunOutcome(
            task_id, last.get("turn_id"), last["status"], last.get("final"), last.get("error")
        )

    def _stop_quietly(self, task: str) -> None:
        try:
            self._call("task.stop", {"task": task}, 30.0)
        except ToolRefused as refused:
            logger.info("mcp: stopping task %s: %s", task, refused)

    async def stop(self, task_id: str) -> bool:
        fields: dict[str, object] = {"task": task_id}
        result = await trio.to_thread.run_sync(self._call, "task.stop", fields, 60.0)
        return bool(result.get("stopped"))
