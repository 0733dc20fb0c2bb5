"""An MCP client session on ``robota mcp serve`` over stdio, as an MCP client starts it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from ..support.robota import ROBOTA, Robota


@asynccontextmanager
async def client(robota: Robota, *args: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=str(ROBOTA),
        args=["mcp", "serve", *args],
        env=robota.environment(None, ()),
        cwd=str(robota.root),
    )
    errors = open(robota.root / "mcp.stderr", "w")  # noqa: SIM115, PTH123
    try:
        async with (
            stdio_client(params, errlog=errors) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session
    finally:
        errors.close()


async def settled(session: ClientSession, task: str, seconds: float = 30.0) -> dict[str, Any]:
    """``robota_task_status`` of ``task`` once it runs nothing (or as it was after ``seconds``)."""
    status: dict[str, Any] = {}
    with trio.move_on_after(seconds):
        while status.get("state") in (None, "running"):
            if status:
                await trio.sleep(0.1)
            answer = await session.call_tool("robota_task_status", {"task": task})
            status = dict(answer.structured_content or {})
    return status
