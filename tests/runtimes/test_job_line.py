"""The line of jobs from an agent's session table to its process service: order kept whether a
job waits in the channel (no process yet, or jobs ahead of it) or goes straight to the service."""

from __future__ import annotations

import trio
import trio.testing

from robota.runtimes._agent_jobs import Interrupt, Job
from robota.runtimes._agent_process import JobLine


async def test_waiting_jobs_go_first_then_new_ones_straight_through() -> None:
    line = JobLine()
    taken: list[str] = []
    for key in ("a", "b", "c"):
        line.submit(Interrupt(key))  # no service yet: they wait

    def taker(job: Job) -> None:
        assert isinstance(job, Interrupt)
        taken.append(job.key)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(line.serve, taker)
        line.submit(Interrupt("d"))  # the service has not run yet: behind the waiting ones
        await trio.testing.wait_all_tasks_blocked()
        assert taken == ["a", "b", "c", "d"]
        line.submit(Interrupt("e"))
        assert taken[-1] == "e"  # nothing waits: handed over in the same step
        nursery.cancel_scope.cancel()
    line.submit(Interrupt("f"))  # the service is gone: it waits for the next one
    assert taken[-1] == "e"
    assert await line.take() == Interrupt("f")
