"""``robota init``'s agents are the runtime plugins': each declares those its protocol drives.

Core gathers them (``known_agents``) from whatever is installed, in the order the plugins are
found, each agent once; a plugin that declares none adds none.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from robota.core.config import KnownAgent, KnowsAgents, _detect, detect_agents, known_agents
from robota.runtimes import ACP_AGENTS, APP_SERVER_AGENTS, KNOWN_AGENTS, acp, app_server


def test_the_shipped_plugins_declare_their_agents() -> None:
    assert isinstance(app_server, KnowsAgents) and isinstance(acp, KnowsAgents)
    assert app_server.known_agents == APP_SERVER_AGENTS
    assert acp.known_agents == ACP_AGENTS
    assert known_agents() == KNOWN_AGENTS == (*APP_SERVER_AGENTS, *ACP_AGENTS)


@dataclass
class Declares:
    known_agents: tuple[KnownAgent, ...]


class Silent:
    """A runtime plugin that declares no agents."""


ONE, TWO, THREE = KnownAgent("one", "one-pkg"), KnownAgent("two", "@x/two"), KnownAgent("3", "3")


@pytest.mark.parametrize(
    ("plugins", "agents"),
    [
        ({}, ()),
        ({"a": Silent()}, ()),
        ({"a": Declares((ONE,)), "b": Silent()}, (ONE,)),
        ({"a": Declares((ONE, TWO)), "b": Declares((THREE,))}, (ONE, TWO, THREE)),
        ({"b": Declares((THREE,)), "a": Declares((ONE, TWO))}, (THREE, ONE, TWO)),
        ({"a": Declares((ONE, TWO)), "b": Declares((TWO, ONE, THREE))}, (ONE, TWO, THREE)),
    ],
)
def test_known_agents_gathers_every_plugins_once_in_order(
    monkeypatch: pytest.MonkeyPatch, plugins: dict[str, object], agents: tuple[KnownAgent, ...]
) -> None:
    monkeypatch.setattr(_detect, "runtime_plugins", lambda: plugins)
    assert known_agents() == agents
    # detection's default is the same list
    assert tuple(s.agent for s in detect_agents(path="", timeout=0.1)) == agents
