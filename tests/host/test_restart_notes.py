"""The safe restart's shell (``HostRestarts``): which enrolled route hears what, the handoff to
the next host, and the transports that show the notes (``HostTransports.note``)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import trio

from robota.core.frontend import RestartNote
from robota.host import (
    HostRestarts,
    HostTransports,
    Schedule,
    read_enrollment,
    restarted_notes,
)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def restarts(tmp_path: Path, heard: list[RestartNote], went: list[Schedule]) -> HostRestarts:
    return HostRestarts(
        tmp_path,
        turns_running=lambda: 0,
        finals_pending=lambda: 0,
        go=went.append,
        notify=heard.append,
        clock=Clock(),
    )


def phases(heard: list[RestartNote]) -> list[tuple[str, str, str | None]]:
    return [(n.phase, n.route_key, n.reason) for n in heard]


def test_each_route_hears_scheduled_once_and_all_hear_cancelled(tmp_path: Path) -> None:
    heard: list[RestartNote] = []
    shell = restarts(tmp_path, heard, [])
    first = shell.request("feishu:oc_1", force=False, reason="upgrade")
    shell.request("slack:C1", force=False, reason=None)
    shell.request("feishu:oc_1", force=False, reason="again")  # already enrolled: no note
    shell.request(None, force=False, reason="cli")  # no route: nobody to tell
    assert phases(heard) == [
        ("scheduled", "feishu:oc_1", "upgrade"),
        ("scheduled", "slack:C1", None),
    ]
    assert {n.schedule_id for n in heard} == {first.id}
    heard.clear()
    assert shell.cancel("not-this-one") == (False, "not-this-one")
    assert heard == []
    assert shell.cancel(None) == (True, first.id)
    assert phases(heard) == [
        ("cancelled", "feishu:oc_1", "upgrade"),
        ("cancelled", "slack:C1", None),
    ]


async def test_a_restart_that_goes_tells_restarting_and_hands_the_routes_over(
    tmp_path: Path,
) -> None:
    heard: list[RestartNote] = []
    went: list[Schedule] = []
    shell = restarts(tmp_path, heard, went)
    schedule = shell.request("feishu:oc_1:t_9", force=True, reason="now")
    with trio.fail_after(30):
        await shell.watch()  # forced: it goes at once and returns
    assert went == [schedule]
    assert phases(heard) == [
        ("scheduled", "feishu:oc_1:t_9", "now"),
        ("restarting", "feishu:oc_1:t_9", "now"),
    ]
    handoff = tmp_path / "restart.json"
    assert oct(handoff.stat().st_mode & 0o777) == "0o600"
    enrollment = read_enrollment(handoff)
    assert enrollment is not None
    assert (enrollment.schedule_id, enrollment.routes) == (schedule.id, {"feishu:oc_1:t_9": "now"})
    assert [(n.phase, n.route_key, n.schedule_id) for n in restarted_notes(enrollment)] == [
        ("restarted", "feishu:oc_1:t_9", schedule.id)
    ]
    # The next host takes it once: a second look finds nothing.
    taker = restarts(tmp_path, [], [])
    assert taker.take_enrollment() == enrollment
    assert taker.take_enrollment() is None


def test_an_unusable_handoff_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "restart.json"
    path.write_text(json.dumps({"schedule_id": "x", "routes": ["not", "a", "map"]}))
    assert read_enrollment(path) is None
    path.write_text("{")
    assert read_enrollment(path) is None


class NotedService:
    def __init__(self, fail: bool = False) -> None:
        self.notes: list[RestartNote] = []
        self.fail = fail

    async def run(self, **_: Any) -> None:  # pragma: no cover (never started here)
        return None

    def restart_note(self, note: RestartNote) -> None:
        if self.fail:
            raise RuntimeError("platform down")
        self.notes.append(note)


def test_transports_show_the_notes_of_their_own_routes_only() -> None:
    config = SimpleNamespace(transports=SimpleNamespace(chat={}))
    transports = HostTransports(config, None, port=None, store=None)  # type: ignore[arg-type]
    feishu, broken = NotedService(), NotedService(fail=True)
    transports.services.update({"feishu": feishu, "slack": broken, "plain": object()})
    note = RestartNote("feishu:oc_1", "s1", "scheduled")
    assert transports.note(note) is True
    assert feishu.notes == [note]
    assert transports.note(RestartNote("slack:C1", "s1", "scheduled")) is False, "logged"
    assert transports.note(RestartNote("plain:x", "s1", "scheduled")) is False
    assert transports.note(RestartNote("cli:abc", "s1", "scheduled")) is False


class FinalsService(NotedService):
    def __init__(self, pending: int) -> None:
        super().__init__()
        self.pending = pending

    def pending_finals(self) -> int:
        if self.pending < 0:
            raise RuntimeError("broken")
        return self.pending


def test_the_transports_pending_finals_are_summed_and_a_broken_count_is_skipped() -> None:
    config = SimpleNamespace(transports=SimpleNamespace(chat={}))
    transports = HostTransports(config, None, port=None, store=None)  # type: ignore[arg-type]
    assert transports.pending_finals() == 0
    transports.services.update(
        {"feishu": FinalsService(2), "slack": FinalsService(1), "plain": NotedService()}
    )
    assert transports.pending_finals() == 3
    transports.services["slack"] = FinalsService(-1)
    assert transports.pending_finals() == 2, "logged, not raised"
