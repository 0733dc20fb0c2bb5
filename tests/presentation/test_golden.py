"""Golden cards: recorded real-agent turns rendered for every platform and layout.

The event streams come from the recorded transcripts (``tests/support/replay.py``). A golden file
holds the final progress card per platform and layout plus the final-answer messages, with the
elapsed time fixed. Regenerate after an intended change, then review the diff:

    ROBOTA_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/presentation/test_golden.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from robota.core.presentation import TurnView, render_terminal
from robota.transports.feishu import FeishuRenderer, feishu_final_answer
from robota.transports.slack import render_slack_progress, slack_final_answer

from ..support.platform_limits import check_feishu_activity, check_feishu_card, check_slack_message
from ..support.replay import replay

GOLDEN = Path(__file__).parent / "golden"
AGENTS = ["codex", "codex-acp", "claude-agent-acp"]
SCENARIOS = ["text", "tool_approved", "write_approved"]
ELAPSED = 42.0


def rendered(agent: str, scenario: str) -> dict[str, Any]:
    view = TurnView()
    for event in replay(agent, scenario):
        view.apply(event)
    out: dict[str, Any] = {"status": view.status}
    for layout in ("grouped", "timeline"):
        card = FeishuRenderer(agent=agent, layout=layout).render(view, elapsed=ELAPSED)
        check_feishu_card(card.card)
        check_feishu_activity(card.activity)
        out[f"feishu_{layout}"] = card.card
    answer = view.final_text or ""
    out["feishu_answer"] = feishu_final_answer(answer)
    slack = render_slack_progress(view, agent=agent, elapsed=ELAPSED).payload()
    check_slack_message(slack)
    out["slack"] = slack
    out["slack_answer"] = [m.payload() for m in slack_final_answer(answer)]
    out["terminal"] = render_terminal(view, agent=agent, elapsed=ELAPSED)
    return out


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("agent", AGENTS)
def test_golden(agent: str, scenario: str) -> None:
    path = GOLDEN / f"{agent}__{scenario}.json"
    actual = rendered(agent, scenario)
    text = json.dumps(actual, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
    if os.environ.get("ROBOTA_UPDATE_GOLDEN") == "1":
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"{path.name} missing: run with ROBOTA_UPDATE_GOLDEN=1"
    assert json.loads(path.read_text(encoding="utf-8")) == json.loads(text)
