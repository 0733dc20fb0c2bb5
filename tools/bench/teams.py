"""Team scheduler benchmark: 30 senders x 3 requests at once, decision time and admission.

    .venv/bin/python tools/bench/teams.py [--quick] [--rounds N] [--feishu] [--senders N]

Two figures, each over ``--rounds`` rounds (default 20; 3 with ``--quick``) of the issue's load,
30 senders sending 3 requests each at the same moment to a team of 3 slots (tags drawn from a
read of the project, a write of its ``src``, a read of its ``docs`` and ``port:80``, so queueing
happens for slots, for conflicts and for the same sender), each request completed as it starts:

* **decision time**: one ``Scheduler.handle`` call (``robota.core.policy``: a submit, a
  completion with its promotions), pure, timed alone, p50 and p99 over every call;
* **admission**: from a thread telling ``Submit`` to the ``TeamActor`` (30 threads released
  together by a barrier) until the request's first effect (``Started`` or ``Queued``) is
  delivered, which happens only after the registry holding it was committed to a real SQLite
  store (WAL, the real ``StoreWriter``); p50 and p99 over every request.

* **door admission**: the same load through the team's ``TeamDoor`` (``handle`` from 30
  threads at once, the door's decisions, the registry, the commit, the door's effect) until the
  request's first effect reaches the transport's ``TeamReplies`` (its ``StartRequest`` or its
  queued reply); each start's turn is ended at once (``turn_ended``); p50 and p99.

* with ``--feishu``, **admission end to end** (``_team_feishu``): a real host and agent serve the
  team on the fake Feishu Open Platform; ``--senders`` members (default 30; 5 with
  ``--quick``) post 3 requests each at once, and each request's time from its event to the
  platform receiving the bot's first answer (the ``OnIt`` reaction of a start, or the queued
  reply in its thread) is taken; p50 and p99; then every request must be answered once.

Figures are printed, not judged.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from robota.core.config import TeamConfig  # noqa: E402
from robota.core.policy import (  # noqa: E402
    Complete,
    Ended,
    Queued,
    Request,
    Scheduler,
    SchedulerEffect,
    Started,
    Submit,
)
from robota.core.store import StoreClient, StoreWriter  # noqa: E402
from robota.core.teams import (  # noqa: E402
    DoorEffect,
    StartRequest,
    TeamActor,
    TeamDoor,
    TeamEffect,
    TeamMessage,
    ThreadReply,
)

SENDERS = 30
PER_SENDER = 3
TAGS = ("read:/p", "write:/p/src", "read:/p/docs", "port:80")


def requests(round_: int) -> list[list[Request]]:
    return [
        [
            Request(
                f"{round_}-u{sender}-{index}",
                f"u{sender}",
                "ask",
                (TAGS[(sender + index) % len(TAGS)],),
            )
            for index in range(PER_SENDER)
        ]
        for sender in range(SENDERS)
    ]


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def decision_times(rounds: int) -> list[float]:
    samples: list[float] = []
    for round_ in range(rounds):
        scheduler = Scheduler(slots=3, queue_limit=SENDERS * PER_SENDER)
        pending: list[str] = []

        def timed(message: Any, scheduler: Scheduler = scheduler) -> list[SchedulerEffect]:
            start = time.perf_counter()
            effects = scheduler.handle(message)
            samples.append(time.perf_counter() - start)
            return effects

        def started(effects: list[SchedulerEffect], pending: list[str] = pending) -> None:
            pending.extend(e.request.id for e in effects if isinstance(e, Started))

        for index in range(PER_SENDER):
            for sender in requests(round_):
                started(timed(Submit(sender[index], 0.0)))
        for _ in range(SENDERS * PER_SENDER):
            if not pending:
                break
            started(timed(Complete(pending.pop(0), 1.0)))
        assert not scheduler.running and not scheduler.queue
    return samples


class Admissions:
    """Times from each tell to the request's first delivered effect; completes what starts."""

    def __init__(self, total: int) -> None:
        self.sent: dict[str, float] = {}
        self.admitted: dict[str, float] = {}
        self.ended = 0
        self.total = total
        self.ref: Any = None
        self.lock = threading.Lock()
        self.done = threading.Event()

    def __call__(self, effect: TeamEffect) -> None:
        now = time.perf_counter()
        with self.lock:
            if isinstance(effect, Started | Queued):
                self.admitted.setdefault(effect.request.id, now)
            if isinstance(effect, Started):
                self.ref.tell(Complete(effect.request.id, 1.0))
            if isinstance(effect, Ended):
                self.ended += 1
                if self.ended == self.total:
                    self.done.set()


def admission_round(store: StoreClient, round_: int) -> list[float]:
    team = TeamConfig(
        name=f"bench-{round_}",
        transport="feishu",
        chat=f"oc_{round_}",
        project=Path("/p"),
        slots=3,
        queue_limit=SENDERS * PER_SENDER,
    )
    admissions = Admissions(SENDERS * PER_SENDER)
    ref = TeamActor.start(team, store, admissions)
    admissions.ref = ref
    barrier = threading.Barrier(SENDERS)

    def send(mine: list[Request]) -> None:
        barrier.wait(timeout=10)
        for request in mine:
            with admissions.lock:
                admissions.sent[request.id] = time.perf_counter()
            ref.tell(Submit(request, 0.0))

    threads = [threading.Thread(target=send, args=(mine,)) for mine in requests(round_)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    try:
        if not admissions.done.wait(60):
            raise RuntimeError(f"round {round_}: {admissions.ended} requests ended of 90")
    finally:
        ref.stop(timeout=10)
    return [admissions.admitted[i] - sent for i, sent in admissions.sent.items()]


class DoorAdmissions:
    """The transport's ``TeamReplies``: times from each ``handle`` to the request's first
    effect; ends each started request's turn at once."""

    def __init__(self, total: int) -> None:
        self.sent: dict[str, float] = {}
        self.admitted: dict[str, float] = {}
        self.total = total
        self.door: TeamDoor | None = None
        self.lock = threading.Lock()
        self.done = threading.Event()

    def perform(self, effect: DoorEffect) -> None:
        now = time.perf_counter()
        if not isinstance(effect, StartRequest | ThreadReply):
            return
        with self.lock:
            self.admitted.setdefault(effect.anchor, now)
            if len(self.admitted) == self.total:
                self.done.set()
        # The last starts' turns are not ended: the round is over and its door stops.
        if isinstance(effect, StartRequest) and self.door is not None and not self.done.is_set():
            self.door.turn_ended(effect.route)


def door_round(store: StoreClient, round_: int) -> list[float]:
    team = TeamConfig(
        name=f"door-{round_}",
        transport="slack",
        chat=f"C{round_}",
        project=Path("/p"),
        slots=3,
        queue_limit=SENDERS * PER_SENDER,
    )
    admissions = DoorAdmissions(SENDERS * PER_SENDER)
    door = TeamDoor(team, store)
    door.bind(TeamActor.start(team, store, door.deliver))
    admissions.door = door
    door.attach(admissions, owner=None, prefix="!")
    barrier = threading.Barrier(SENDERS)

    def send(sender: int) -> None:
        barrier.wait(timeout=10)
        for index in range(PER_SENDER):
            anchor = f"{round_}-u{sender}-{index}"
            route = f"slack:C{round_}:{anchor}"
            message = TeamMessage(f"C{round_}", f"u{sender}", f"q {anchor}", anchor, route, False)
            with admissions.lock:
                admissions.sent[anchor] = time.perf_counter()
            door.handle(message)

    threads = [threading.Thread(target=send, args=(sender,)) for sender in range(SENDERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    try:
        if not admissions.done.wait(60):
            got = len(admissions.admitted)
            raise RuntimeError(f"round {round_}: {got} requests admitted of {admissions.total}")
    finally:
        door.stop()
    return [admissions.admitted[a] - sent for a, sent in admissions.sent.items()]


def store_rounds(
    rounds: int, directory: Path, one: Callable[[StoreClient, int], list[float]]
) -> list[float]:
    writer = StoreWriter.start(directory / "robota.sqlite")
    store = StoreClient(writer)
    store.ready_sync(timeout=10)
    try:
        return [sample for round_ in range(rounds) for sample in one(store, round_)]
    finally:
        writer.stop(timeout=10)


def report(name: str, samples: list[float], *, unit: str = "us") -> str:
    scale = 1e6 if unit == "us" else 1e3
    return (
        f"{name:<34} p50 {percentile(samples, 0.5) * scale:8.1f} {unit}   "
        f"p99 {percentile(samples, 0.99) * scale:8.1f} {unit}   "
        f"mean {statistics.fmean(samples) * scale:8.1f} {unit}   n={len(samples)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds, for the test suite")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--feishu", action="store_true", help="also end to end on the fake")
    parser.add_argument("--senders", type=int, default=None)
    parser.add_argument("--agent", default="codex-acp")
    options = parser.parse_args()
    rounds = 3 if options.quick else options.rounds
    print(f"{SENDERS} senders x {PER_SENDER} requests at once, 3 slots, {rounds} rounds")
    print(report("scheduler decision (pure)", decision_times(rounds)))
    with tempfile.TemporaryDirectory() as directory:
        admissions = store_rounds(rounds, Path(directory), admission_round)
    print(report("admission (tell -> committed reply)", admissions))
    with tempfile.TemporaryDirectory() as directory:
        doors = store_rounds(rounds, Path(directory), door_round)
    print(report("door admission (handle -> effect)", doors))
    if options.feishu:
        feishu(options)


def feishu(options: argparse.Namespace) -> None:
    from _real import fake_model
    from _team_feishu import feishu_admissions

    senders = options.senders or (5 if options.quick else SENDERS)
    print(f"fake Feishu, a real host and {options.agent}: {senders} senders x {PER_SENDER} at once")
    with tempfile.TemporaryDirectory(prefix="rb-teams-", dir="/tmp") as tmp, fake_model() as url:
        samples, line = feishu_admissions(Path(tmp), url, options.agent, senders, PER_SENDER)
    print(report("admission (event -> first answer)", samples, unit="ms"))
    print(line)


if __name__ == "__main__":
    main()
