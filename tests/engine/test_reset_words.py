"""A reset's refusal names what it needs in the installed runtime plugins' words, not core's.

Only a protocol that forks a thread through a turn can reset (the capability decides, see
test_route_core); which kinds those are, and what they are called, the plugins say.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from robota.core import AgentCapabilities, PluginError
from robota.core.engine import _route_history


@dataclass
class Plugin:
    kind: str
    capabilities: AgentCapabilities


@dataclass
class Titled(Plugin):
    title: str = ""


FORKS, STAYS = AgentCapabilities(fork_at_turn=True), AgentCapabilities(fork=True)


@pytest.fixture(autouse=True)
def fresh() -> Iterator[None]:
    _route_history._forking_agents.cache_clear()
    yield
    _route_history._forking_agents.cache_clear()


@pytest.mark.parametrize(
    ("plugins", "words"),
    [
        (None, "an App Server agent (or another that forks a thread through a turn)"),
        ({}, "an agent that forks a thread through a turn"),
        ({"x": Titled("x", STAYS, "X")}, "an agent that forks a thread through a turn"),
        ({"x": Titled("x", FORKS, "Echo Protocol")}, "an Echo Protocol agent (or another that"),
        ({"my-rt": Plugin("my-rt", FORKS)}, "a my-rt agent (or another"),
        (
            {"a": Titled("a", FORKS, "A"), "b": Titled("b", STAYS, "B"), "c": Plugin("c", FORKS)},
            "an A or c agent (or another",
        ),
        ("broken", "an agent that forks a thread through a turn"),
    ],
)
def test_the_refusal_names_the_kinds_that_fork_at_a_turn(
    monkeypatch: pytest.MonkeyPatch, plugins: object, words: str
) -> None:
    if plugins == "broken":

        def broken() -> dict[str, object]:
            raise PluginError("runtime plugin 'x' failed to load")

        monkeypatch.setattr(_route_history, "runtime_plugins", broken)
    elif plugins is not None:  # None: the installed ones (app-server forks at a turn, acp not)
        monkeypatch.setattr(_route_history, "runtime_plugins", lambda: plugins)
    assert _route_history._forking_agents().startswith(words)
