"""Workspace trust through a chat transport, end to end: a real host process with a real agent
serving Slack against the fake Slack. A task whose directory is not trusted runs Restricted
(the host's hook on the engine) and its progress message says so; a trusted one does not."""

from __future__ import annotations

from pathlib import Path

import trio

from robota.core.trust import workspace_root

from ...support.fake_slack import dm
from ...support.model_server import FakeModel
from ...support.slack import BOUND, now_ts, served, words
from ...support.trust import trust_store_of

# ``model`` and ``short_root``: tests/transports/conftest.py


async def test_an_untrusted_tasks_progress_message_says_restricted(
    short_root: Path, model: FakeModel
) -> None:
    async with served(short_root, model) as bot:
        with trio.fail_after(BOUND):
            while not (await bot.status())["ready"]:
                await trio.sleep(0.05)
        trusted_ts = now_ts()
        await bot.push(dm("hello trusted", ts=trusted_ts), event_id="EvTrusted")
        await bot.answered(trusted_ts)
        progress, final = bot.replies(trusted_ts)
        assert "restricted" not in words(progress), progress
        assert "echo: hello trusted" in words(final)

        # The task's directory (the profile's default) loses its trust: the same route's next
        # turn runs Restricted, and its progress message says so.
        store = trust_store_of(short_root / "home")
        assert store.revoke(workspace_root(short_root)) is not None
        restricted_ts = now_ts()
        await bot.push(dm("hello restricted", ts=restricted_ts), event_id="EvRestricted")
        await bot.answered(restricted_ts)
        progress, final = bot.replies(restricted_ts)
        assert "restricted" in words(progress), progress
        assert "echo: hello restricted" in words(final)
