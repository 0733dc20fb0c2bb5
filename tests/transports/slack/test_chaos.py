"""Chaos on Slack (``..chaos``): a real host SIGKILLed at each exposed moment of a message
(after its ``eyes``, between Slack keeping its progress message and the host's record of it,
mid-turn, during the continued turn, between the terminal progress message
and the final, between Slack keeping the final and the host's record of it, between the
terminal reaction and the removal of ``eyes``, while a queued prompt
waits), started again each time, in one run; then every
message has exactly one final, one terminal reaction and no ``eyes``, and no progress message
is left, or was redrawn, running, or posted twice."""

from __future__ import annotations

from pathlib import Path

import pytest

from ...support.chaos import MOMENTS, chaos, host_logs, slack_chaos
from ...support.processes import processes_with_home_under

# The chaos runs kill and restart a host at a moment a few milliseconds wide, a dozen times a
# run: one worker runs them one after another (``./dev test``'s --dist loadgroup), so no two
# of them load the machine at once.
pytestmark = pytest.mark.xdist_group("chaos")


async def test_a_host_killed_at_each_exposed_moment_answers_every_message_once(
    short_root: Path,
) -> None:
    async with slack_chaos(short_root) as run:
        tally = await chaos(run, MOMENTS)
    assert tally.clean, (tally, host_logs(short_root))
    assert tally.kills == len(MOMENTS) + 1  # ``recovered`` kills twice
    assert processes_with_home_under(short_root / "agents") == []
