"""A session released at its agent (``Release``, from ``CloseSession``) tells whoever waits for
it (``closed``) once the driver closed it, after a failed close too (what the agent kept ends
with its process), and at once for a key that has no session in the process."""

from __future__ import annotations

import itertools
from types import SimpleNamespace
from typing import cast

import pytest
import trio

from robota.runtimes._agent_jobs import Release
from robota.runtimes._agent_process import AgentProcessService, JobLine, ProcessSettings
from robota.runtimes._drivers import SessionDriver
from robota.runtimes._jsonrpc import RpcError


class Closing:
    """The driver's ``close_session``; the order of what happened in ``said``."""

    def __init__(self, said: list[str], fails: bool) -> None:
        self.said = said
        self.fails = fails

    async def close_session(self, session_id: str) -> None:
        await trio.sleep(0)
        self.said.append(f"closed {session_id}")
        if self.fails:
            raise RpcError("thread/unsubscribe", -32600, "no such thread")


def _service(said: list[str], *, fails: bool, bound: dict[str, str]) -> AgentProcessService:
    service = AgentProcessService(
        cast("ProcessSettings", SimpleNamespace(launch=SimpleNamespace(name="codex"))),
        JobLine(),
        lambda _report: None,
        itertools.count(1),
    )
    service._driver = cast("SessionDriver", Closing(said, fails))
    service._bound.update(bound)
    service._keys.update({v: k for k, v in bound.items()})
    return service


@pytest.mark.parametrize(
    ("fails", "bound", "said"),
    [
        (False, {"t0": "thread-1"}, ["closed thread-1", "told"]),
        (True, {"t0": "thread-1"}, ["closed thread-1", "told"]),
        (False, {}, ["told"]),
    ],
)
def test_the_waiter_is_told_once_the_session_is_closed(
    fails: bool, bound: dict[str, str], said: list[str]
) -> None:
    happened: list[str] = []
    service = _service(happened, fails=fails, bound=bound)
    trio.run(service._execute, Release("t0", lambda: happened.append("told")))
    assert happened == said
    assert "t0" not in service._bound
