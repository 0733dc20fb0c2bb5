"""A refused App Server resume: a thread another agent process holds loaded (Codex: "already
has an active writer") fails the open, naming the cause, instead of starting a blank thread
that would answer without the task's history (and become the task's thread); a thread the
server no longer has still opens afresh (``resumed=False``). Against a scripted connection;
the real agent's side is tests/host/test_session_handover.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest
import trio

from robota.core.agents import SessionSpec
from robota.runtimes._app_server_driver import AppServerDriver, held_elsewhere
from robota.runtimes._drivers import SessionRefused
from robota.runtimes._jsonrpc import Connection, RpcError

HELD = "cannot resume thread t-1: thread t-1 already has an active writer"


class Scripted:
    """The connection's surface the client uses: ``thread/resume`` refused with ``refusal``,
    ``thread/start`` answered with a new thread."""

    def __init__(self, refusal: str) -> None:
        self.refusal = refusal
        self.sent: list[str] = []
        self.on_notification: object = None
        self.on_request: object = None

    async def request(self, method: str, params: Any = None, *, timeout: float | None) -> Any:
        self.sent.append(method)
        if method == "thread/resume":
            raise RpcError(method, -32600, self.refusal)
        return {"thread": {"id": "t-new"}}


@pytest.mark.parametrize(
    ("message", "held"),
    [
        (HELD, True),
        ("thread T Already Has An Active Writer", True),
        ("no rollout found for thread id t-1", False),
        ("thread not found", False),
    ],
)
def test_which_refusals_mean_another_process_holds_the_thread(message: str, held: bool) -> None:
    assert held_elsewhere(RpcError("thread/resume", -32600, message)) is held


def test_a_thread_held_elsewhere_fails_the_open_and_starts_no_blank_thread() -> None:
    connection = Scripted(HELD)
    driver = AppServerDriver(cast("Connection", connection), lambda _id, _event: None)
    with pytest.raises(SessionRefused, match="held by another agent process") as refused:
        trio.run(driver.open, SessionSpec(Path("/tmp/a")), "t-1")
    assert "active writer" in str(refused.value)
    assert connection.sent == ["thread/resume"]


def test_a_thread_the_server_lost_opens_afresh() -> None:
    connection = Scripted("no rollout found for thread id t-1")
    driver = AppServerDriver(cast("Connection", connection), lambda _id, _event: None)
    opened = trio.run(driver.open, SessionSpec(Path("/tmp/a")), "t-1")
    assert opened == ("t-new", False)
    assert connection.sent == ["thread/resume", "thread/start"]
