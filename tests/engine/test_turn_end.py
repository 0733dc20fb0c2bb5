"""Two facts front ends share about a turn's end: which message a turn answers, and the
``TurnCompleted`` a view or card reduces when the engine, not the agent, ended the turn."""

from __future__ import annotations

import pytest

from robota.core.engine import TurnFinished, prompt_answers, recovery_prompt
from robota.core.events import TurnCompleted, TurnError, Usage


@pytest.mark.parametrize(
    ("prompt", "text", "answers"),
    [
        ("fix the test", "fix the test", True),
        (recovery_prompt("fix the test"), "fix the test", True),
        (recovery_prompt(recovery_prompt("fix it")), "fix it", True),
        ("fix the test twice", "fix the test", False),
        ("please\nfix the test", "fix the test", False),
        ("other\n\nfix the test", "the test", False),
    ],
)
def test_which_message_a_prompt_answers(prompt: str, text: str, answers: bool) -> None:
    assert prompt_answers(prompt, text) is answers


def test_a_finished_turn_as_the_event_a_view_reduces() -> None:
    error = TurnError("boom", "unknown", retryable=False)
    usage = Usage(input_tokens=3, output_tokens=4)
    finished = TurnFinished("r", "t", "a1", "failed", "partial", error, usage, remote_turn_id="x9")
    assert finished.as_event() == TurnCompleted(
        "x9", "failed", error, final_text="partial", usage=usage
    )
    assert finished.as_event("view-1").turn_id == "view-1"
    bare = TurnFinished("r", "t", "a2", "completed", "done")
    assert bare.as_event() == TurnCompleted("", "completed", None, final_text="done")
