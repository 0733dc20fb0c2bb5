"""A Feishu host whose store is slow to accept a message (another process holds SQLite's write
lock past the platform's 3 s window): the event is not ACKed before the accept commits, the
fake platform delivers it again as Feishu does, and the message is answered exactly once,
whether the host lives to commit (the redelivery is dropped as claimed) or is SIGKILLed
before it (the next host accepts the redelivery).

Under the old rule (an ACK at 2.5 s whatever the handler did) the first case still answered,
but the second lost the message: ACKed, never committed, never delivered again.

A write slower still than the handler's wait (shortened here, ``ROBOTA_TEST_ACCEPT_TIMEOUT``)
fails the handler (ACK 500, delivered again) though the writer took it and commits it later:
that message is answered once, in this run (its lane admits it once written; the redelivery
finds it claimed). It waited in the inbox for the host's next start."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import trio

from robota.core.config import Profile
from robota.core.frontend._chat_inbox import ACCEPT_ENV

from ...support.fake_feishu import FakePlatform, fake_platform
from ...support.feishu import BOUND, Served, configure, host_process, message_event
from ...support.host import sandboxed
from ...support.model_server import FakeModel
from ...support.processes import processes_with_home_under
from ...support.robota import Robota
from ...support.store_lock import write_lock

WINDOW = 3.0
"""Seconds the fake waits for an ACK before it delivers the event again (Feishu's ~3 s)."""
HELD = 3.5
"""Seconds the write lock is held once the event is pushed (at most, in the first test): past
the window and the old 2.5 s ACK, short of the host writer's 5 s busy timeout."""
GIVE_UP = 1.5
"""Seconds the host's handler waits for an accept in the late test (``ACCEPT_ENV``): short of
the window, so the first ACK is the handler's failure."""


def acks_for(fake: FakePlatform) -> list[int]:
    return [json.loads(ack.payload or b"{}").get("code") for ack in fake.acks]


@dataclass
class Slow:
    robota: Robota
    profile: Profile
    fake: FakePlatform
    bot: Served
    log: Path


async def answered_once(run: Slow, message_id: str = "om_user1") -> None:
    """Still one final and ``DONE`` after what a late duplicate would need to show."""
    await trio.sleep(1.0)
    assert len(run.bot.finals_for(message_id)) == 1
    assert run.fake.reactions_on(message_id) == ["DONE"]


@asynccontextmanager
async def redelivering(short_root: Path, model: FakeModel, times: int) -> AsyncIterator[Slow]:
    """A sandbox for Feishu hosts against a fake that delivers an event not ACKed within
    ``WINDOW`` again, up to ``times`` times; no agent is left at the end."""
    robota, profile = sandboxed(short_root, model, "codex-acp")
    async with fake_platform() as fake:
        configure(robota.home, fake.domain)
        fake.redeliver_after = WINDOW
        fake.redeliveries = times
        bot = Served(fake, model, profile.control_socket)
        yield Slow(robota, profile, fake, bot, short_root / "host.log")
    assert processes_with_home_under(short_root / "agents") == []


async def test_a_redelivery_while_the_accept_waits_is_dropped_once_it_commits(
    short_root: Path, model: FakeModel
) -> None:
    async with redelivering(short_root, model, 1) as run:
        fake, bot, log, profile = run.fake, run.bot, run.log, run.profile
        async with host_process(run.robota, fake, log) as host:
            with write_lock(profile.default_sqlite_path):
                await fake.push_event(message_event(1, "answer me once though slow"))
                # The platform delivers the un-ACKed event again while the accept waits.
                await fake.wait_until(lambda: fake.redelivered, timeout=HELD)
                assert fake.acks == [], "no ACK before the accept committed"
                await trio.sleep(0.3)  # the redelivery reaches the host, as the lock holds
            await bot.answered("om_user1")
            await fake.wait_until(lambda: len(fake.acks) == 2, timeout=BOUND)
            assert acks_for(fake) == [200, 200]
            await answered_once(run)
        assert host.returncode == 0, log.read_text()[-4000:]
        assert bot.prompts("answer me once though slow") == 1
        assert "its ACK waits for the handler" in profile.default_log_path.read_text()


async def test_a_host_killed_before_its_slow_accept_committed_loses_no_message(
    short_root: Path, model: FakeModel
) -> None:
    async with redelivering(short_root, model, 3) as run:
        fake, bot, log = run.fake, run.bot, run.log
        async with host_process(run.robota, fake, log) as first:
            with write_lock(run.profile.default_sqlite_path):
                await fake.push_event(message_event(1, "answer me after the kill"))
                await trio.sleep(HELD)
                assert fake.acks == [], "no ACK before the accept committed"
                first.kill()  # SIGKILL: the accept never commits
                await first.wait()
        assert bot.prompts("answer me after the kill") == 0

        async with host_process(run.robota, fake, log) as second:
            await bot.answered("om_user1")  # the platform delivered it again
            await answered_once(run)
        assert second.returncode == 0, log.read_text()[-4000:]
        assert bot.prompts("answer me after the kill") == 1


async def test_an_accept_that_commits_after_its_handler_gave_up_is_answered_once_in_this_run(
    short_root: Path, model: FakeModel
) -> None:
    async with redelivering(short_root, model, 2) as run:
        fake, bot, log, profile = run.fake, run.bot, run.log, run.profile
        run.robota.env[ACCEPT_ENV] = str(GIVE_UP)
        async with host_process(run.robota, fake, log) as host:
            with write_lock(profile.default_sqlite_path):
                await fake.push_event(message_event(1, "answer me though my accept was late"))
                # The handler gives up: ACK 500, the writer still holds the accept.
                await fake.wait_until(lambda: fake.acks, timeout=HELD)
                assert acks_for(fake) == [500]
                # The platform delivers the event again while the accept still waits.
                await fake.wait_until(lambda: fake.redelivered, timeout=HELD)
                await trio.sleep(0.3)  # the redelivery reaches the host, as the lock holds
            await bot.answered("om_user1")  # no restart: the late commit fed its lane
            await fake.wait_until(lambda: acks_for(fake)[-1:] == [200], timeout=BOUND)
            await answered_once(run)
        assert host.returncode == 0, log.read_text()[-4000:]
        assert bot.prompts("answer me though my accept was late") == 1
        assert "a message's accept is late" in profile.default_log_path.read_text()
