"""The writer as a supervised child: a crash costs a restart, never an acknowledged write."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from robota.core import ChildSpec
from robota.core.store import (
    AppendAuditEvent,
    ClaimInboundEvent,
    StoreClient,
    StoreWriter,
    audit_events,
    event_claimed,
    open_reader,
)
from robota.core.testing import crash, supervised, wait_until


@pytest.mark.concurrency
async def test_a_crashed_writer_is_restarted_and_loses_no_acked_write(
    db_path: Path, repetition: int
) -> None:
    acked: list[int] = []
    async with supervised([ChildSpec("store", lambda: StoreWriter(db_path))]) as sup:
        client = StoreClient(sup.address("store"))
        for n in range(10):
            acked.append(await client.write(AppendAuditEvent("before", {"n": n}), timeout=5))

        crash(sup.address("store"))

        # Written while the crash is on its way: they queue behind it, the kernel rescues the
        # drain from the dead incarnation's inbox, and the next incarnation serves them.
        async def write(n: int) -> None:
            acked.append(await client.write(AppendAuditEvent("during", {"n": n}), timeout=5))

        async with trio.open_nursery() as nursery:
            for n in range(30):
                nursery.start_soon(write, n)

        await wait_until(lambda: sup.is_running("store") and sup.incarnation("store") == 2)
        assert await client.write(ClaimInboundEvent("after", "m"), timeout=5) is True

    reader = open_reader(db_path)
    try:
        stored = {event.id for event in audit_events(reader, limit=1000)}
        assert event_claimed(reader, "after")
    finally:
        reader.close()
    assert len(acked) == 40
    assert set(acked) <= stored


async def test_a_restarted_writer_keeps_serving_the_same_client(db_path: Path) -> None:
    async with supervised([ChildSpec("store", lambda: StoreWriter(db_path))]) as sup:
        client = StoreClient(sup.address("store"))
        assert await client.write(ClaimInboundEvent("e", "m"), timeout=5) is True
        for incarnation in (2, 3):
            crash(sup.address("store"))
            await wait_until(
                lambda n=incarnation: sup.is_running("store") and sup.incarnation("store") == n
            )
            # The claim survived the crash; the restarted writer reads it from the file.
            assert await client.write(ClaimInboundEvent("e", "m"), timeout=5) is False
