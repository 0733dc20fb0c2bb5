"""``mcpServers`` in config.yaml reach every agent: a real agent offers the fake model the tools
of a configured MCP server (the SDK's own server, ``tests/support/mcp_probe_server.py``); a
Restricted session is offered none."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..cli._robota import Robota
from ..cli.test_doctor import processes_with_home_under, write_real_agents_config
from ..support.model_server import FakeModel

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


@pytest.mark.parametrize("agent", ["codex", "claude-agent-acp"])
def test_an_agent_offers_the_configured_servers_tools(
    robota: Robota, model: FakeModel, agent: str
) -> None:
    with_probe(robota, model, agent)
    done = robota.run("-p", "TOOLNAMES", "--output-format", "json")
    assert done.returncode == 0, done.stderr
    names = offered(json.loads(done.stdout)["result"])
    assert any("probe_echo" in name for name in names), names

    restricted = robota.run("-p", "TOOLNAMES", "--restricted", "--output-format", "json")
    assert restricted.returncode == 0, restricted.stderr
    names = offered(json.loads(restricted.stdout)["result"])
    assert not any("probe_echo" in name for name in names), names
    assert processes_with_home_under(robota.root / "agents") == []
