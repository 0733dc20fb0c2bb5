"""``RestartDesk``: a route's restart notes go out in order, so ``restarting`` right after
``scheduled`` (``/restart --force``) replaces the scheduled note instead of posting its own,
whatever the platform's send takes. A real store writer on a real SQLite file binds the cancel
token."""

from __future__ import annotations

import logging
from pathlib import Path

import trio

from robota.core import ChildSpec, Supervisor
from robota.core.frontend import RestartDesk, RestartNote
from robota.core.store import StoreClient, StoreWriter

TEXTS = {
    "restart_scheduled": "scheduled",
    "restart_forced": "forced",
    "restart_cancelled": "cancelled",
    "restart_restarting": "restarting",
    "restart_restarted": "restarted",
    "reason": "reason",
}


async def test_restarting_told_at_once_replaces_the_scheduled_note(tmp_path: Path) -> None:
    sent: list[tuple[str, str | None, str | None]] = []
    posted = trio.Event()

    async def send(
        route_key: str, text: str, token: str | None, earlier: str | None, anchor: str | None
    ) -> str | None:
        del anchor
        if earlier is None:
            await trio.sleep(0.2)  # the platform takes its time: the next note is told meanwhile
        sent.append((text, token and "token", earlier))
        if text == "restarting":
            posted.set()
        return None if earlier is not None else f"om_{route_key}"

    supervisor = Supervisor(
        "restart-desk-test", [ChildSpec("store", lambda: StoreWriter(tmp_path / "s.sqlite"))]
    )
    store = StoreClient(supervisor.address("store"))
    async with trio.open_nursery() as nursery:
        await nursery.start(supervisor.run)
        desk = RestartDesk(store, TEXTS, send, name="test", log=logging.getLogger("test"))
        desk.note(RestartNote("chat:1", "r1", "scheduled", forced=True), nursery)
        desk.note(RestartNote("chat:1", "r1", "restarting", forced=True), nursery)
        desk.note(RestartNote("chat:2", "r1", "restarted"), nursery)
        with trio.fail_after(10):
            await posted.wait()
        supervisor.stop()
    mine = [s for s in sent if s[0] != "restarted"]
    assert mine == [("forced", "token", None), ("restarting", None, "om_chat:1")], sent
    assert ("restarted", None, None) in sent, "another route's note is not held back"
