"""``robota mcp serve`` while a host runs for the profile: the tools act through it, as
``robota task`` does (its routes, its warm agents), driven by the SDK's stdio client."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from ..support.host import host_process, sandboxed
from ..support.model_server import FakeModel
from ..support.processes import processes_with_home_under
from ..support.robota import ROBOTA


@pytest.fixture
def model() -> Iterator[FakeModel]:
    with FakeModel() as fake:
        yield fake


async def test_the_tools_act_through_the_running_host(short_root: Path, model: FakeModel) -> None:
    robota, profile = sandboxed(short_root, model, "codex")
    with host_process(robota, profile):
        params = StdioServerParameters(
            command=str(ROBOTA),
            args=["mcp", "serve"],
            env=robota.environment(None, ()),
            cwd=str(robota.root),
        )
        with (short_root / "mcp.stderr").open("w") as errors:
            async with (
                stdio_client(params, errlog=errors) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                first = await session.call_tool("robota_run", {"prompt": "remember plums"})
                assert not first.is_error, first.content
                task = first.structured_content["task"]
                assert first.structured_content["answer"] == "ECHO: remember plums"
                again = await session.call_tool("robota_run", {"prompt": "HISTORY", "task": task})
                assert again.structured_content["answer"] == "HISTORY: remember plums | HISTORY"
                status = await session.call_tool("robota_task_status", {"task": task})
                # Driven through the host's own route for the task, not one of this process.
                routes = status.structured_content["routes"]
                assert routes and all(r.startswith("cli:") for r in routes), routes
        listed = subprocess.run(
            [str(ROBOTA), "task", "list", "--json"],
            env=robota.environment(None, ()),
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        assert [t["id"] for t in json.loads(listed.stdout)] == [task]
    assert processes_with_home_under(short_root / "agents") == []
