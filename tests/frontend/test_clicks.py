"""What a claimed click does (``robota.core.frontend._clicks.action_kind``), by its action's id:
a table. The clicks themselves, checked, claimed and acted on through a served chat service, are
tests/frontend/test_chat_service.py's."""

from __future__ import annotations

import pytest

from robota.core.frontend import QUEUE_CANCEL, RESTART_CANCEL
from robota.core.frontend._clicks import STOP, ActionKind, action_kind


@pytest.mark.parametrize(
    ("approval_id", "own", "expected"),
    [
        (STOP, frozenset(), "stop"),
        (QUEUE_CANCEL, frozenset(), "queue_cancel"),
        (RESTART_CANCEL, frozenset(), "restart_cancel"),
        ("ap-1", frozenset(), "approval"),
        ("reset", frozenset({"reset"}), "own"),
        ("reset", frozenset(), "approval"),
        # The platform names its own buttons as it likes: its own come first.
        (STOP, frozenset({STOP}), "own"),
        ("ap-1", frozenset({"reset", "sessions"}), "approval"),
    ],
)
def test_a_claimed_action_is_done_by_its_kind(
    approval_id: str, own: frozenset[str], expected: ActionKind
) -> None:
    assert action_kind(approval_id, own) == expected
