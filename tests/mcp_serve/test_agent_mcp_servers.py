"""``mcpServers`` in config.yaml reach every agent: a real agent offers the fake model the tools
of a configured MCP server (the SDK's own server, ``tests/support/mcp_probe_server.py``); a
Restricted session is offered none."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from ..support.model_server import FakeModel
from ..support.processes import processes_with_home_under
from ..support.real_agents import write_real_agents_config
from ..support.robota import Robota
from ._client import client

PROBE = Path(__file__).resolve().parent.parent / "support" / "mcp_probe_server.py"


@pytest.fixture
def model() -> Iterator[FakeModel]:
    with FakeModel() as fake:
        yield fake


def with_probe(robota: Robota, model: FakeModel, agent: str) -> None:
    config = write_real_agents_config(
        robota, [agent], model.url, model_catalog=agent.startswith("codex")
    )
    config["mcpServers"] = {"probe": {"command": sys.executable, "args": [str(PROBE)]}}
    (robota.home / "config.yaml").write_text(json.dumps(config, indent=2))
    catalog = robota.root / "agents" / agent / "fake-model-catalog.json"
    if catalog.is_file():
        # Codex hides MCP tools behind its tool search for models that have one: the fake
        # model lists what it is offered, so its model has none.
        models = json.loads(catalog.read_text())
        for model_entry in models["models"]:
            model_entry["supports_search_tool"] = False
        catalog.write_text(json.dumps(models))


def offered(answer: str) -> list[str]:
    assert answer.startswith("TOOLNAMES: "), answer
    return answer.removeprefix("TOOLNAMES: ").split()


async def offered_over_time(robota: Robota, *args: str, tries: int) -> list[list[str]]:
    """What the agent offers the fake model, asked on one task up to ``tries`` times, half a
    second apart, until the probe's tool is among it: an agent connects to its MCP servers
    while its session opens, and may take its first turn before a slow server is ready."""
    seen: list[list[str]] = []
    async with client(robota, *args) as session:
        task = None
        for _ in range(tries):
            arguments = (
                {"prompt": "TOOLNAMES"} if task is None else {"prompt": "TOOLNAMES", "task": task}
            )
            ran = await session.call_tool("robota_run", arguments)
            assert not ran.is_error, ran.content
            task = ran.structured_content["task"]
            seen.append(offered(ran.structured_content["answer"]))
            if any("probe_echo" in name for name in seen[-1]):
                break
            await trio.sleep(0.5)
    return seen


@pytest.mark.parametrize("agent", ["codex", "claude-agent-acp"])
async def test_an_agent_offers_the_configured_servers_tools(
    robota: Robota, model: FakeModel, agent: str
) -> None:
    with_probe(robota, model, agent)
    seen = await offered_over_time(robota, tries=40)
    assert any("probe_echo" in name for name in seen[-1]), seen[-1]

    restricted = await offered_over_time(robota, "--restricted", tries=6)
    assert len(restricted) == 6
    assert not any("probe_echo" in name for names in restricted for name in names), restricted
    assert processes_with_home_under(robota.root / "agents") == []
