"""Print mode's profile: one real agent against the fake model."""

from __future__ import annotations

from ..support.model_server import FakeModel
from ..support.real_agents import TEMPLATE_NAMES, write_real_agents_config
from ..support.robota import Robota


def configure(robota: Robota, model: FakeModel, agent: str) -> str:
    # The catalog keeps codex-acp from prefixing answers with a "model metadata not found" note.
    write_real_agents_config(robota, [agent], model.url, model_catalog=agent.startswith("codex"))
    return TEMPLATE_NAMES.get(agent, agent)
