"""``robota -p`` with an agent that dies at start or mid-turn: the turn's error ends with what
the agent said on stderr."""

from __future__ import annotations

import json

import pytest

from ..support.robota import Robota
from ._dying_agent import DOTENV_SECRET, DYING_WORDS, SHAPED_TOKEN, write_dying_agent_config


@pytest.mark.parametrize(
    ("mid_turn", "prompt", "code"),
    [(False, "hello", 4), (True, "EXIT now", 3)],
    ids=["start", "mid-turn"],
)
def test_the_turn_error_of_an_agent_that_dies_shows_its_last_words(
    robota: Robota, mid_turn: bool, prompt: str, code: int
) -> None:
    write_dying_agent_config(robota, mid_turn=mid_turn)
    completed = robota.run("-p", prompt, "--output-format", "json")
    assert completed.returncode == 1, completed.stderr
    result = json.loads(completed.stdout)
    assert result["is_error"] is True
    words = "".join(f"\n  {line}" for line in DYING_WORDS)
    expected = f"agent dying exited (exit code {code}); its stderr ended with:{words}"
    assert result["error"]["message"] == expected
    for leak in (DOTENV_SECRET, SHAPED_TOKEN, "\x1b"):
        assert leak not in completed.stdout + completed.stderr
