"""The served tools through the profile's running host, as ``robota task`` drives it.

A new task is ``task.new``, a run is ``task.run`` (``task.send`` with ``wait`` as a stream:
the host's task desk starts the turn on the task's route, with its warm agents, streams the
route's notices and ends with the result once the route went idle), a stop is ``task.stop``:
the host's routes, store and approvals policy, nothing of this process's own. The run's
notices go through the same ``TurnFollow`` as the in-process engine's, so both backends send
the same progress lines and report the same approvals. The control client blocks, so its calls
run in a worker thread; the run's stream is read on trio, and a cancelled run asks the host to
stop the turn.
"""

from __future__ import annotations

import logging
import socket
from pathlib import Path
from typing import Any

import trio

from robota.core.control import ControlClient, HostRefused, HostUnreachable, NoHostRunning
from robota.core.protocol import (
    Failure,
    LineSplitter,
    Overlong,
    ProtocolError,
    decode_frame,
    decode_reply,
    loads_strict,
    notice_from_json,
)

from ._follow import TurnFollow
from ._setup import Progress, RunOutcome, ToolRefused
from ._tools import RunCall, TaskNewCall

__all__ = ["HostBackend", "host_runs"]

logger = logging.getLogger("robota.mcp")

CALL_TIMEOUT = 180.0
MAX_REPLY = 64 * 1024 * 1024
"""The longest line of a run's stream (its result holds the whole answer)."""
RECEIVE = 64 * 1024


async def _follow_stream(
    stream: trio.SocketStream, follow: TurnFollow, progress: Progress
) -> dict[str, Any] | Failure:
    """Feed ``follow`` the notices of a ``task.run`` stream, saying its progress lines; the
    stream's ``result``, or the host's refusal."""
    lines = LineSplitter(MAX_REPLY)
    while True:
        data = await stream.receive_some(RECEIVE)
        for line in lines.feed(data) if data else lines.close():
            if isinstance(line, Overlong):
                raise ToolRefused(f"the host's stream holds a line over {line.limit} bytes")
            frame = _frame(line)
            if isinstance(frame, Failure):
                return frame
            if frame["type"] == "result":
                result: dict[str, Any] = frame["result"]
                return result
            if frame["type"] == "notice":
                said = follow.hear(notice_from_json(frame.get("notice")), trio.current_time())
                if said is not None:
                    await progress(said)
        if not data:
            raise ToolRefused("the profile's host closed the run's stream before its end")


def _frame(line: bytes) -> dict[str, Any] | Failure:
    """A line of a ``task.run`` stream: a frame, or (no ``type``) the host's failure reply."""
    try:
        obj = loads_strict(line)
        if isinstance(obj, dict) and "type" not in obj:
            reply = decode_reply(line)
            if isinstance(reply, Failure):
                return reply
        return decode_frame(line)
    except (ProtocolError, ValueError) as error:
        raise ToolRefused(f"the profile's host sent what is not a run's stream: {error}") from None


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
        fields: dict[str, object] = {"task": task, "text": call.prompt, "timeout": call.timeout}
        sock = await trio.to_thread.run_sync(self._open_stream, "task.run", fields)
        follow = TurnFollow(call.prompt)
        try:
            async with trio.SocketStream(trio.socket.from_stdlib_socket(sock)) as stream:
                reply = await _follow_stream(stream, follow, progress)
        except trio.Cancelled:
            # The client cancelled (or the server stops): the turn stops with it.
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(self._stop_quietly, task)
            raise
        if isinstance(reply, Failure):
            if reply.code == "timeout":
                return follow.outcome(task)  # the wait ran out; the turn goes on
            raise ToolRefused(reply.message)
        task_id = str(reply["task"]["id"])
        if follow.finished is not None:
            return follow.outcome(task_id)
        turns = reply.get("turns") or []
        if not turns:
            replies = "; ".join(r.get("text", "") for r in reply.get("replies") or ())
            raise ToolRefused(replies or "the host started no turn")
        # A task another process owns: its run was passed on and only its result came back.
        last = turns[-1]
        return RunOutcome(
            task_id, last.get("turn_id"), last["status"], last.get("final"), last.get("error")
        )

    def _open_stream(self, type_name: str, fields: dict[str, object]) -> socket.socket:
        try:
            return ControlClient(self.socket_path, timeout=CALL_TIMEOUT).stream(type_name, fields)
        except (NoHostRunning, HostUnreachable) as error:
            raise ToolRefused(f"the profile's host: {error}") from None

    def _stop_quietly(self, task: str) -> None:
        try:
            self._call("task.stop", {"task": task}, 30.0)
        except ToolRefused as refused:
            logger.info("mcp: stopping task %s: %s", task, refused)

    async def stop(self, task_id: str) -> bool:
        fields: dict[str, object] = {"task": task_id}
        result = await trio.to_thread.run_sync(self._call, "task.stop", fields, 60.0)
        return bool(result.get("stopped"))
