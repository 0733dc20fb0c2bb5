"""``robota mesh send --wait`` says in a sentence why no reply came (the end's reason kept
first, as scripts read it)."""

from __future__ import annotations

import pytest

from robota.cli._mesh_send import _REASONS, _why
from robota.mesh import END_REASONS


@pytest.mark.parametrize(
    ("ended", "task", "said"),
    [
        ("no-task", "7", " (desk has no task '7' (robota task list there))"),
        ("peer: max-hops", None, " (the conversation reached mesh.limits.maxHops)"),
        ("max-replies", None, " (the conversation reached mesh.limits.maxReplies)"),
        ("refused", None, " (desk refused the message)"),
        ("none came", None, ""),
    ],
)
def test_an_end_is_said_as_a_sentence(ended: str, task: str | None, said: str) -> None:
    assert _why(ended, "desk", task) == said


def test_every_end_reason_has_a_sentence() -> None:
    assert set(_REASONS) == set(END_REASONS)
