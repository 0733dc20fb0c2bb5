"""The operator's own terminal holds a team's write slot: a print-mode turn in another process
of the same profile, on the team's project, tells the running host (``turns.changed``); a
teammate's write waits for it and starts by itself once the terminal's turn ended."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from robota.core.control import ControlClient, HostRefused

from ...support.fake_feishu import FakePlatform
from ...support.feishu import BOUND
from ...support.feishu_team import ADMIN, running_senders, team_event, team_host
from ...support.model_server import FakeModel


@pytest.fixture
def paced_model() -> Iterator[FakeModel]:
    """``SLOW`` streams for about 6 s: long enough for a teammate to arrive during it."""
    with FakeModel(slow_deltas=120, slow_delay=0.05) as fake:
        yield fake


async def test_a_print_mode_turn_in_another_process_holds_the_write_slot(
    short_root: Path, paced_model: FakeModel
) -> None:
    async with team_host(short_root, paced_model) as (bot, robota, project):
        fake: FakePlatform = bot.fake
        await bot.noted("已上线")
        terminal = robota.start(
            "-p", "SLOW the operator's terminal work", "--cwd", str(project),
            "--output-format", "stream-json",
        )  # fmt: skip
        try:
            # Nothing reaches the platform meanwhile, so the store is polled, not the fake.
            with trio.fail_after(BOUND):
                while running_senders(robota) != ["operator"]:
                    await trio.sleep(0.05)
            await fake.push_event(team_event(1, "fix the build", ADMIN))
            await bot.replied("om_user1", "已排队")
            assert bot.prompts("fix the build") == 0
            out, err = await trio.to_thread.run_sync(lambda: terminal.communicate(timeout=60))
        finally:
            if terminal.poll() is None:
                terminal.kill()
                terminal.wait()
        assert terminal.returncode == 0, err
        result = json.loads(out.strip().splitlines()[-1])
        assert result["type"] == "result" and not result["is_error"], result
        # The terminal's turn ended and said so: the admin's request starts by itself.
        await bot.answered("om_user1")
        assert bot.prompts("fix the build") == 1
        assert running_senders(robota) == []


async def test_turns_changed_is_answered_and_a_field_it_lacks_refused(
    short_root: Path, paced_model: FakeModel
) -> None:
    async with team_host(short_root, paced_model) as (bot, _robota, _project):
        await bot.noted("已上线")

        def tell(fields: dict[str, object] | None = None) -> object:
            with ControlClient(bot.socket, timeout=BOUND) as client:
                return client.call("turns.changed", fields)

        assert await trio.to_thread.run_sync(tell) == {"teams": 1}
        with pytest.raises(HostRefused) as refused:
            await trio.to_thread.run_sync(tell, {"attempt": "x"})
        assert "attempt" in str(refused.value)
        assert await trio.to_thread.run_sync(tell) == {"teams": 1}  # still serving
