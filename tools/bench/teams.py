"""Team scheduler benchmark: 30 senders x 3 requests at once, decision time and admission.

    .venv/bin/python tools/bench/teams.py [--quick] [--rounds N]

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

What this does not measure yet: the chat transport's part of admission (an event from the
platform to the reply in its thread), which waits for the transports to serve team groups.
Figures are printed, not judged.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from robota.core.config import TeamConfig
from robota.core.policy import (
    Complete,
    Ended,
    Queued,
    Request,
    Scheduler,
    SchedulerEffect,
    Started,
    Submit,
)
from robota.core.store import StoreClient, StoreWriter
from robota.core.teams import TeamActor, TeamEffect

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


def admission_times(rounds: int, directory: Path) -> list[float]:
    writer = StoreWriter.start(directory / "robota.sqlite")
    store = StoreClient(writer)
    store.ready_sync(timeout=10)
    try:
        return [sample for round_ in range(rounds) for sample in admission_round(store, round_)]
    finally:
        writer.stop(timeout=10)


def report(name: str, samples: list[float]) -> str:
    return (
        f"{name:<34} p50 {percentile(samples, 0.5) * 1e6:8.1f} us   "
        f"p99 {percentile(samples, 0.99) * 1e6:8.1f} us   "
        f"mean {statistics.fmean(samples) * 1e6:8.1f} us   n={len(samples)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds, for the test suite")
    parser.add_argument("--rounds", type=int, default=20)
    options = parser.parse_args()
    rounds = 3 if options.quick else options.rounds
    print(f"{SENDERS} senders x {PER_SENDER} requests at once, 3 slots, {rounds} rounds")
    print(report("scheduler decision (pure)", decision_times(rounds)))
    with tempfile.TemporaryDirectory() as directory:
        admissions = admission_times(rounds, Path(directory))
    print(report("admission (tell -> committed reply)", admissions))


if __name__ == "__main__":
    main()
