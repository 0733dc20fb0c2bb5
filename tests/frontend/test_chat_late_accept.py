"""A message whose accept outlasts its handler (issue 28 s.1): the handler gives up (the
platform is told an error and delivers the event again), but what the store does with the
write decides what becomes of the message, in this run. A write that commits late is admitted
by its lane in its place, and the redelivery is dropped as claimed; a write taken back before
the writer took it, or one that failed, keeps nothing, and the redelivery is accepted. Either
way the route is told the message once, without a restart.

Another connection holds SQLite's write lock (a long transaction elsewhere, a stalled disk)
for ``held`` seconds; the writer's busy timeout is ``busy`` (past it, its batch fails)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Literal, NamedTuple

import pytest
import trio

from robota.core import RequestTimeout
from robota.core.frontend._chat_inbox import ACCEPT_ENV, Accepted, accept_timeout
from robota.core.store import StoreClient, StoreWriter, open_reader
from robota.core.store._inbox import AcceptInbound

from ._chat_served import inbox_left, served, settle
from ._fake_platform import FakePlatform, event

GIVE_UP = 0.3
"""Seconds the handler waits for the accept in these tests (``ROBOTA_TEST_ACCEPT_TIMEOUT``)."""


@contextmanager
def writer(path: Path, busy: float) -> Iterator[StoreClient]:
    ref = StoreWriter.start(path, busy_timeout=busy)
    client = StoreClient(ref)
    client.ready_sync(timeout=10)
    try:
        yield client
    finally:
        ref.stop(timeout=10)


@contextmanager
def write_lock(path: Path) -> Iterator[None]:
    with closing(sqlite3.connect(path, isolation_level=None, timeout=10)) as held:
        held.execute("BEGIN IMMEDIATE")
        try:
            yield
        finally:
            held.execute("ROLLBACK")


def claimed(path: Path, key: str) -> bool:
    with closing(open_reader(path)) as db:
        row = db.execute(
            "SELECT 1 FROM inbound_event_receipts WHERE event_id = ?", (key,)
        ).fetchone()
    return row is not None


Blocked = Literal["taken", "queued"]
"""Whether the accept is the write the writer is stuck on (taken), or waits behind another
one (queued: the handler takes it back)."""


class Case(NamedTuple):
    held: float
    busy: float
    give_up: Literal["timeout", "cancel"]
    """By the inbox's own timeout, or by the caller's deadline first (Slack's way: cancelled)."""
    blocked: Blocked
    told_late: bool
    """The route is told the first delivery (else only the redelivery is accepted)."""


@pytest.mark.parametrize(
    "case",
    [
        # The lock goes before the writer's busy timeout: the accept commits late, its lane
        # admits it; the redelivery finds the claims taken.
        Case(1.0, 5.0, "timeout", "taken", told_late=True),
        Case(1.0, 5.0, "cancel", "taken", told_late=True),
        # Past the busy timeout the batch fails: nothing kept, the redelivery is accepted.
        Case(1.5, 0.5, "timeout", "taken", told_late=False),
        Case(1.5, 0.5, "cancel", "taken", told_late=False),
        # Queued behind another write: taken back at once, never written.
        Case(1.0, 5.0, "timeout", "queued", told_late=False),
        Case(1.0, 5.0, "cancel", "queued", told_late=False),
    ],
    ids=lambda case: f"{case.give_up}-{case.blocked}-{'late' if case.told_late else 'never'}",
)
async def test_a_message_whose_accept_outlasts_its_handler_is_told_once_without_a_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: Case
) -> None:
    held, busy, give_up, blocked, told_late = case
    monkeypatch.setenv(ACCEPT_ENV, str(GIVE_UP / 2 if give_up == "timeout" else 30))
    path = tmp_path / "robota.sqlite"
    platform = FakePlatform()
    payload = event("m1", "answer me once", at=time.time())
    with writer(path, busy) as client:
        async with served((path, client), platform) as s:
            async with trio.open_nursery() as nursery:
                with write_lock(path):
                    if blocked == "queued":  # the writer is stuck on another write first
                        nursery.start_soon(_barrier, client)
                        await trio.sleep(0.1)
                    gave_up = RequestTimeout if give_up == "timeout" else trio.TooSlowError
                    with pytest.raises(gave_up), trio.fail_after(GIVE_UP):
                        await s.service.heard(platform.hear(payload))  # type: ignore[arg-type]
                    assert s.told() == []  # nothing is told while the write is unknown
                    await trio.sleep(held - GIVE_UP)
            if told_late:
                await settle(s, lambda: bool(s.told()))
                assert inbox_left(path) == ["m1"]  # the engine here is a hub: never consumed
            else:
                await trio.sleep(0.3)
                assert s.told() == []
                assert inbox_left(path) == []
                assert not claimed(path, "fake-event:e-m1")
            # The platform delivers the event again (told an error, or never acknowledged).
            await s.service.heard(platform.hear(payload))  # type: ignore[arg-type]
            await settle(s, lambda: bool(s.told()))
            await trio.sleep(0.3)  # what a second telling would need
            ((route, text, message_id, inbox),) = s.told()
            assert (route, text, message_id) == ("fake:c1", "answer me once", "m1")
            assert inbox is not None
            assert platform.said.count(("react", "c1", "m1", "working")) == 1


async def _barrier(client: StoreClient) -> None:
    """A write the writer takes first and is stuck on while the lock holds (any outcome)."""
    op = AcceptInbound("e-other", "m-other", "elsewhere", "elsewhere:c9", "other", "{}")
    try:
        await client.write(op, timeout=30)
    except Exception:
        pass


async def test_messages_after_a_late_accept_keep_their_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lane waits for the late write: the chat's next message comes after it."""
    monkeypatch.setenv(ACCEPT_ENV, str(GIVE_UP))
    path = tmp_path / "robota.sqlite"
    platform = FakePlatform()
    with writer(path, 5.0) as client:
        async with served((path, client), platform) as s:
            with write_lock(path):
                with pytest.raises(RequestTimeout):
                    first = platform.hear(event("m1", "first", at=time.time()))
                    await s.service.heard(first)  # type: ignore[arg-type]
                await trio.sleep(0.5)
            await s.service.heard(platform.hear(event("m2", "second", at=time.time())))  # type: ignore[arg-type]
            await settle(s, lambda: len(s.told()) == 2)
            assert [text for _, text, _, _ in s.told()] == ["first", "second"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("", 10.0),
        ("2.5", 2.5),
        ("0", 10.0),
        ("-1", 10.0),
        ("soon", 10.0),
        ("nan", 10.0),
    ],
)
def test_the_accept_timeout_is_shortened_only_by_a_positive_number(
    monkeypatch: pytest.MonkeyPatch, raw: str, expected: float
) -> None:
    monkeypatch.setenv(ACCEPT_ENV, raw)
    assert accept_timeout() == expected


@pytest.mark.parametrize(
    ("outcomes", "inbox", "failed"),
    [
        ([7], 7, False),
        ([None], None, False),
        ([OSError("disk")], None, True),
        ([None, 7], None, False),  # taken back, then nothing can land: the first counts
        ([7, OSError("late")], 7, False),
    ],
)
async def test_an_accepted_item_keeps_the_first_outcome_that_lands(
    outcomes: list[object], inbox: int | None, failed: bool
) -> None:
    accepted = Accepted("item")
    for outcome in outcomes:
        accepted.landed(outcome)
    assert accepted.written.is_set()
    assert (accepted.inbox, accepted.failed is not None) == (inbox, failed)
