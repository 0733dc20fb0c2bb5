"""The safe restart's shell: the host's clock and counts fed to ``_restart.RestartCore``, and
the enrolled routes handed to the next host.

The enrollment is a JSON file in the profile's data directory (``data/restart.json``, written
atomically, owner-only), not a store table: it is a one-shot handoff between two processes of
one profile (the old host writes it just before it stops, the new one reads and removes it
once ready), nothing ever queries it, and a schema migration would tie a transient note to the
store's versioned schema. Nothing of it is passed in argv.

Each enrolled route hears the restart's news (``robota.core.frontend.RestartNote``, through
``notify``): ``scheduled`` when it joins, ``cancelled`` or ``restarting`` for every route
enrolled then, and ``restarted`` from the new host once it is ready (``restarted_notes``).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import trio

from robota.core.frontend import RestartNote, RestartPhase

from ._restart import Go, RestartCore, Schedule, Wait

__all__ = [
    "ENROLLMENT_FILE",
    "Enrollment",
    "HostRestarts",
    "read_enrollment",
    "restart_notes",
    "restarted_notes",
]

logger = logging.getLogger("robota.host")

ENROLLMENT_FILE = "restart.json"
POLL = 0.25
"""Seconds between two looks at the host while a restart is pending (cheap: counters only)."""


@dataclass(frozen=True, slots=True)
class Enrollment:
    """What the old host left for the new one."""

    schedule_id: str
    reason: str | None
    routes: dict[str, str | None]
    previous_pid: int


def restart_notes(
    schedule: Schedule, phase: RestartPhase, routes: list[str] | None = None
) -> list[RestartNote]:
    """The notes of ``phase`` for ``routes`` (default: every enrolled route), each with the
    reason that route gave."""
    keys = list(schedule.routes) if routes is None else routes
    return [
        RestartNote(key, schedule.id, phase, schedule.routes.get(key), schedule.force)
        for key in keys
    ]


def restarted_notes(enrollment: Enrollment) -> list[RestartNote]:
    """What the new host tells the routes the previous one enrolled."""
    return [
        RestartNote(key, enrollment.schedule_id, "restarted", reason)
        for key, reason in enrollment.routes.items()
    ]


def _encode(schedule: Schedule) -> bytes:
    body = {
        "schedule_id": schedule.id,
        "reason": schedule.reason,
        "routes": schedule.routes,
        "previous_pid": os.getpid(),
    }
    return json.dumps(body, indent=2, ensure_ascii=False).encode() + b"\n"


def read_enrollment(path: Path) -> Enrollment | None:
    """The handoff at ``path`` (``None``: none, or unusable; an unusable one is logged)."""
    try:
        obj = json.loads(path.read_bytes())
        routes = obj["routes"]
        if not isinstance(routes, dict) or not all(
            isinstance(k, str) and (v is None or isinstance(v, str)) for k, v in routes.items()
        ):
            raise TypeError("routes must map route keys to reasons")  # noqa: TRY301
        return Enrollment(
            str(obj["schedule_id"]),
            obj.get("reason") if isinstance(obj.get("reason"), str) else None,
            routes,
            int(obj["previous_pid"]),
        )
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as error:
        logger.warning("restart: %s is unusable (%s); ignored", path, error)
        return None


class HostRestarts:
    """Trio thread. ``watch`` runs in the host's nursery; ``go`` is called once a restart
    goes (the host then stops and replaces itself)."""

    def __init__(
        self,
        data_dir: Path,
        *,
        turns_running: Callable[[], int],
        finals_pending: Callable[[], int],
        go: Callable[[Schedule], None],
        notify: Callable[[RestartNote], object] = lambda _note: None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        counter = itertools.count(1)
        # Unique across hosts of a profile: a card from the previous host cannot match.
        prefix = f"{os.getpid()}-{int(time.time())}"
        self.core = RestartCore(lambda: f"{prefix}-{next(counter)}")
        self.path = data_dir / ENROLLMENT_FILE
        self._turns_running = turns_running
        self._finals_pending = finals_pending
        self._go = go
        self._notify = notify
        self._clock = clock
        self._changed = trio.Event()

    def request(self, route: str | None, *, force: bool, reason: str | None) -> Schedule:
        joined = route is not None and (
            self.core.pending is None or route not in self.core.pending.routes
        )
        schedule = self.core.request(route=route, force=force, reason=reason, now=self._clock())
        if joined and route is not None and not self.core.going:
            self._tell(restart_notes(schedule, "scheduled", [route]))
        logger.info(
            "restart %s scheduled%s (%d routes enrolled)",
            schedule.id,
            " (forced)" if schedule.force else "",
            len(schedule.routes),
        )
        self._changed.set()
        return schedule

    def cancel(self, schedule_id: str | None) -> tuple[bool, str | None]:
        """Cancel ``schedule_id`` (``None``: the pending one); whether it was, and its id."""
        pending = self.core.pending
        wanted = schedule_id if schedule_id is not None else (pending.id if pending else None)
        cancelled = wanted is not None and self.core.cancel(wanted)
        if cancelled and pending is not None:
            logger.info("restart %s cancelled", wanted)
            self._tell(restart_notes(pending, "cancelled"))
        return cancelled, wanted

    def _tell(self, notes: list[RestartNote]) -> None:
        for note in notes:
            self._notify(note)

    def inbound(self) -> None:
        self.core.inbound(self._clock())

    def status(self) -> dict[str, object] | None:
        pending = self.core.pending
        if pending is None:
            return None
        return {"schedule_id": pending.id, "force": pending.force, "going": self.core.going}

    async def watch(self) -> None:
        """Decide whenever asked, and every ``POLL`` seconds while a restart is pending."""
        while True:
            decision = self.core.decide(
                self._clock(),
                turns_running=self._turns_running(),
                finals_pending=self._finals_pending(),
            )
            if isinstance(decision, Go):
                self._tell(restart_notes(decision.schedule, "restarting"))
                self._handoff(decision.schedule)
                self._go(decision.schedule)
                return
            self._changed = trio.Event()
            if isinstance(decision, Wait):
                with trio.move_on_after(POLL):
                    await self._changed.wait()
            else:
                await self._changed.wait()

    def _handoff(self, schedule: Schedule) -> None:
        from robota.core.config import atomic_write  # noqa: PLC0415

        logger.info("restart %s: the host replaces itself", schedule.id)
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            atomic_write(self.path, _encode(schedule))
        except OSError as error:
            # The restart still happens; only the notes to its routes are lost.
            logger.error(  # noqa: TRY400 (the reason is enough; no traceback)
                "restart %s: cannot write %s: %s", schedule.id, self.path, error
            )

    def take_enrollment(self) -> Enrollment | None:
        """The previous host's handoff, removed once read (the new host is ready)."""
        enrollment = read_enrollment(self.path)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        return enrollment
