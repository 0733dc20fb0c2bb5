"""An App Server thread robota closes is unloaded by the server at once: ``close_session``
unfollows it (``thread/unsubscribe``) and every thread robota opens asks for no unload delay,
so another process (the task's next owner, once a terminal switched away from it) can resume
it; Codex lets one process write a thread. Against a recording connection; the real agent's
side is tests/host/test_tui_owner.py (the host resumes, history whole, a task the TUI let go)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest
import trio

from robota.core.agents import SessionSpec
from robota.runtimes._app_server_driver import AppServerDriver
from robota.runtimes._handshake import UNLOAD_DELAY
from robota.runtimes._jsonrpc import Connection, RpcError, RpcTimeout


class Recorded:
    """The connection's surface the client uses; answers every request with ``answer``."""

    def __init__(self, answer: object = None) -> None:
        self.sent: list[tuple[str, Any]] = []
        self.answer = answer
        self.on_notification: object = None
        self.on_request: object = None

    async def request(self, method: str, params: Any = None, *, timeout: float | None) -> Any:
        assert timeout is not None
        self.sent.append((method, params))
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


@pytest.mark.parametrize(
    "answer",
    [
        {"status": "unsubscribed"},
        RpcError("thread/unsubscribe", -32600, "no such thread"),
        RpcTimeout("slow"),
    ],
)
def test_closing_a_session_unfollows_its_thread_and_a_refusal_is_left_to_the_server(
    answer: object,
) -> None:
    connection = Recorded(answer)
    driver = AppServerDriver(cast("Connection", connection), lambda _id, _event: None)
    trio.run(driver.close_session, "thread-1")
    assert connection.sent == [("thread/unsubscribe", {"threadId": "thread-1"})]


@pytest.mark.parametrize("restricted", [False, True])
def test_every_thread_asks_to_be_unloaded_once_nobody_follows_it(restricted: bool) -> None:
    driver = AppServerDriver(cast("Connection", Recorded()), lambda _id, _event: None)
    config = driver._config(SessionSpec(Path("/tmp/a"), restricted=restricted))
    assert config[UNLOAD_DELAY] == 0
