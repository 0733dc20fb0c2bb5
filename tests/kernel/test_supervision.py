"""Supervision trees: strategies, restart types, backoff, intensity, shutdown, stashes."""

from __future__ import annotations

import logging
import threading

import pytest
import trio

from robota.core import (
    Backoff,
    ChildSpec,
    CrashRequested,
    Restart,
    Strategy,
    Supervisor,
    SupervisorFailed,
)
from robota.core.testing import FAST_BACKOFF, Probe, Recording, crash, supervised, wait_until

from ._actors import FailsToStart, Gated, Journaled

pytestmark = pytest.mark.concurrency

GRACE = 0.15  # longer than any FAST_BACKOFF delay: a restart that should not happen would have


def probes(*names: str) -> tuple[list[ChildSpec], dict[str, Recording]]:
    recordings = {name: Recording() for name in names}
    specs = [ChildSpec(name, lambda r=recordings[name]: Probe(r)) for name in names]
    return specs, recordings


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        (Strategy.ONE_FOR_ONE, {"a": 1, "b": 2, "c": 1}),
        (Strategy.ONE_FOR_ALL, {"a": 2, "b": 2, "c": 2}),
        (Strategy.REST_FOR_ONE, {"a": 1, "b": 2, "c": 2}),
    ],
)
async def test_strategy_restarts_exactly_the_right_children(
    strategy: Strategy, expected: dict[str, int]
) -> None:
    specs, recordings = probes("a", "b", "c")
    async with supervised(specs, strategy=strategy) as sup:
        await wait_until(lambda: all(r.starts == 1 for r in recordings.values()))
        crash(sup.address("b"))
        await wait_until(
            lambda: all(sup.is_running(c) for c in "abc") and sup.incarnation("b") == 2
        )
        await trio.sleep(GRACE)
        assert {c: sup.incarnation(c) for c in "abc"} == expected
        assert {c: recordings[c].starts for c in "abc"} == expected


async def test_children_start_in_order_and_stop_in_reverse() -> None:
    journal: list[tuple[str, str]] = []
    specs = [ChildSpec(n, lambda n=n: Journaled(n, journal)) for n in ("a", "b", "c")]
    async with supervised(specs):
        await wait_until(lambda: len(journal) == 3)
    assert journal == [
        ("start", "a"),
        ("start", "b"),
        ("start", "c"),
        ("stop", "c"),
        ("stop", "b"),
        ("stop", "a"),
    ]


async def test_one_for_all_stops_siblings_in_reverse_then_restarts_in_order() -> None:
    journal: list[tuple[str, str]] = []
    specs = [ChildSpec(n, lambda n=n: Journaled(n, journal)) for n in ("a", "b", "c")]
    async with supervised(specs, strategy=Strategy.ONE_FOR_ALL) as sup:
        await wait_until(lambda: len(journal) == 3)
        crash(sup.address("a"))
        await wait_until(lambda: len(journal) == 8)
        # a crashed (no stop hook); c and b stop in reverse; all three start in order
        assert journal[3:] == [
            ("stop", "c"),
            ("stop", "b"),
            ("start", "a"),
            ("start", "b"),
            ("start", "c"),
        ]


async def test_messages_sent_during_backoff_arrive_in_order() -> None:
    recording = Recording()
    spec = ChildSpec("p", lambda: Probe(recording))
    slow = Backoff(base=0.2, cap=0.2, reset_after=5.0)
    async with supervised([spec], backoff=slow) as sup:
        address = sup.address("p")
        address.tell("before")
        await recording.received(1)
        crash(address)
        await wait_until(lambda: not address.is_up)
        sent_while_down = 0
        for i in range(50):
            address.tell(i)
            sent_while_down += not address.is_up
        assert sent_while_down == 50, "the backoff window was too short for this test"
        messages = await recording.received(51)
        assert messages == ["before", *range(50)]
        assert sup.incarnation("p") == 2


async def test_hundred_messages_queued_behind_a_crash_survive_and_the_crash_is_not_retried() -> (
    None
):
    recording = Recording()
    gate = threading.Event()
    async with supervised([ChildSpec("g", lambda: Gated(recording, gate))]) as sup:
        address = sup.address("g")
        address.tell("hold")
        await recording.received(1)
        address.tell("boom")
        for i in range(100):
            address.tell(i)
        gate.set()
        messages = await recording.received(102)
        assert messages == ["hold", "boom", *range(100)]
        await trio.sleep(GRACE)
        assert recording.messages.count("boom") == 1
        assert recording.starts == 2


async def test_crash_in_started_is_a_crash_and_rescues_the_stash() -> None:
    attempts = Recording()
    good = Recording()
    failing = [True, True]

    def factory() -> FailsToStart | Probe:
        if failing:
            failing.pop()
            return FailsToStart(attempts)
        return Probe(good)

    async with supervised([ChildSpec("s", factory)], intensity=5) as sup:
        sup.address("s").tell("hello")
        assert await good.received(1) == ["hello"]
        assert attempts.starts == 2
        assert sup.incarnation("s") == 3


async def test_an_error_answering_an_ask_is_a_reply_not_a_crash() -> None:
    recording = Recording()
    actor_ref = Probe.start(recording, fail_on=lambda m: m == "bad")
    try:
        with pytest.raises(RuntimeError, match="fail on 'bad'"):
            actor_ref.ask("bad", timeout=5)
        assert actor_ref.ask("good", timeout=5) == "good"
        assert actor_ref.is_alive()
    finally:
        actor_ref.stop()


async def test_transient_child_is_not_restarted_after_a_normal_stop_but_permanent_is() -> None:
    perm, trans, temp = Recording(), Recording(), Recording()
    gate = threading.Event()
    gate.set()
    specs = [
        ChildSpec("perm", lambda: Gated(perm, gate), restart=Restart.PERMANENT),
        ChildSpec("trans", lambda: Gated(trans, gate), restart=Restart.TRANSIENT),
        ChildSpec("temp", lambda: Gated(temp, gate), restart=Restart.TEMPORARY),
    ]
    async with supervised(specs) as sup:
        for child in ("perm", "trans", "temp"):
            sup.address(child).tell("stop")
        await wait_until(lambda: sup.incarnation("perm") == 2 and sup.is_running("perm"))
        await trio.sleep(GRACE)
        assert (perm.starts, trans.starts, temp.starts) == (2, 1, 1)
        assert sup.address("trans").is_closed
        assert sup.address("temp").is_closed


async def test_transient_child_is_restarted_after_a_crash_and_temporary_is_not() -> None:
    trans, temp = Recording(), Recording()
    specs = [
        ChildSpec("trans", lambda: Probe(trans), restart=Restart.TRANSIENT),
        ChildSpec("temp", lambda: Probe(temp), restart=Restart.TEMPORARY),
    ]
    async with supervised(specs) as sup:
        crash(sup.address("trans"))
        crash(sup.address("temp"))
        await wait_until(lambda: trans.starts == 2)
        await trio.sleep(GRACE)
        assert temp.starts == 1
        assert sup.address("temp").is_closed


async def test_intensity_trips_stops_children_and_escalates() -> None:
    journal: list[tuple[str, str]] = []
    specs = [
        ChildSpec("steady", lambda: Journaled("steady", journal)),
        ChildSpec("flaky", lambda: Journaled("flaky", journal)),
    ]
    with pytest.RaisesGroup(SupervisorFailed):
        async with supervised(specs, intensity=2, period=30) as sup:
            for n in range(1, 4):
                await wait_until(
                    lambda n=n: sup.incarnation("flaky") == n and sup.is_running("flaky")
                )
                crash(sup.address("flaky"))
            await trio.sleep(5)  # cancelled by the escalation
            pytest.fail("the supervisor did not escalate")
    assert journal[-1] == ("stop", "steady")


async def test_escalation_reaches_the_parent_which_restarts_the_subtree() -> None:
    leaf = Recording()
    inner_runs = Recording()

    def make_inner() -> Supervisor:
        inner_runs.add("run")
        return Supervisor(
            "inner", [ChildSpec("leaf", lambda: Probe(leaf))], intensity=0, backoff=FAST_BACKOFF
        )

    inner_instances: list[Supervisor] = []

    def factory() -> Supervisor:
        inner_instances.append(make_inner())
        return inner_instances[-1]

    async with supervised([ChildSpec("inner", factory)]) as parent:
        await wait_until(lambda: leaf.starts == 1)
        crash(inner_instances[0].address("leaf"))  # intensity 0: the first crash escalates
        await wait_until(lambda: parent.incarnation("inner") == 2 and leaf.starts == 2)
        assert len(inner_instances) == 2


async def test_a_parent_may_restart_the_same_subtree_and_its_addresses_stay_valid() -> None:
    leaf = Recording()
    inner = Supervisor(
        "inner", [ChildSpec("leaf", lambda: Probe(leaf))], intensity=0, backoff=FAST_BACKOFF
    )
    address = inner.address("leaf")  # held by callers before, across and after the restart
    async with supervised([ChildSpec("inner", lambda: inner)]) as parent:
        await wait_until(lambda: leaf.starts == 1)
        address.tell("before")
        await leaf.received(1)
        crash(address)  # intensity 0: the inner supervisor fails; the parent runs it again
        await wait_until(lambda: parent.incarnation("inner") == 2 and leaf.starts == 2)
        address.tell("after")
        received = await leaf.received(2)
        assert received == ["before", "after"]
        assert not address.is_closed


async def test_stuck_child_is_abandoned_after_its_shutdown_timeout(
    caplog: pytest.LogCaptureFixture,
) -> None:
    recording = Recording()
    spec = ChildSpec("stuck", lambda: Probe(recording, stop_delay=0.3), shutdown=0.05)
    with caplog.at_level(logging.ERROR, logger="robota.core.kernel"):
        async with supervised([spec]):
            await wait_until(lambda: recording.starts == 1)
    assert recording.stops == 0, "the supervisor waited for the stuck child"
    assert any("abandoned" in r.getMessage() for r in caplog.records)
    await wait_until(lambda: recording.stops == 1, timeout=5)  # it does finish, harmlessly


async def test_late_exit_report_of_an_abandoned_incarnation_is_ignored() -> None:
    slow, other = Recording(), Recording()
    specs = [
        ChildSpec("slow", lambda: Probe(slow, stop_delay=0.3), shutdown=0.02),
        ChildSpec("other", lambda: Probe(other)),
    ]
    async with supervised(specs, strategy=Strategy.ONE_FOR_ALL) as sup:
        crash(sup.address("other"))  # one_for_all: "slow" is stopped, abandoned, restarted
        await wait_until(lambda: sup.incarnation("slow") >= 3 and sup.is_running("slow"))
        incarnation = sup.incarnation("slow")
        await wait_until(lambda: slow.stops == 1, timeout=5)  # the abandoned one reports late
        await trio.sleep(GRACE)
        assert sup.incarnation("slow") == incarnation
        assert sup.is_running("slow")
        sup.address("slow").tell("still here")
        assert (await slow.received(1)) == ["still here"]


async def test_backoff_delays_double_and_are_capped() -> None:
    backoff = Backoff(base=1.0, cap=30.0, reset_after=30.0)
    assert [backoff.delay(n) for n in range(1, 8)] == [1, 2, 4, 8, 16, 30, 30]
    assert backoff.delay(0) == 0


async def test_restart_waits_for_the_backoff_delay() -> None:
    recording = Recording()
    backoff = Backoff(base=0.3, cap=0.3, reset_after=10)
    async with supervised([ChildSpec("p", lambda: Probe(recording))], backoff=backoff) as sup:
        crash(sup.address("p"))
        crashed_at = trio.current_time()
        await wait_until(lambda: recording.starts == 2)
        assert trio.current_time() - crashed_at >= 0.3


async def test_stash_overflow_goes_to_dead_letters_with_the_message_type() -> None:
    recording = Recording()
    backoff = Backoff(base=0.3, cap=0.3, reset_after=10)
    spec = ChildSpec("p", lambda: Probe(recording), stash_limit=5)
    async with supervised([spec], backoff=backoff) as sup:
        crash(sup.address("p"))
        await wait_until(lambda: not sup.address("p").is_up)
        for i in range(8):
            sup.address("p").tell(i)
        assert sup.dead_letters.count == 3
        assert {kind for _, kind, _ in sup.dead_letters.recent} == {"int"}
        assert await recording.received(5) == [0, 1, 2, 3, 4]


async def test_messages_after_final_stop_are_dead_letters() -> None:
    recording = Recording()
    async with supervised([ChildSpec("p", lambda: Probe(recording))]) as sup:
        pass
    sup.address("p").tell("late")
    assert sup.dead_letters.count == 1
    assert recording.messages == []


def test_crash_requested_is_a_kernel_error() -> None:
    from robota.core import KernelError

    assert issubclass(CrashRequested, KernelError)


def test_duplicate_child_ids_are_refused() -> None:
    with pytest.raises(ValueError, match="duplicate child ids"):
        Supervisor("s", [ChildSpec("a", Probe), ChildSpec("a", Probe)])


async def test_a_nested_tree_stops_depth_first_in_reverse_order() -> None:
    journal: list[tuple[str, str]] = []

    def inner() -> Supervisor:
        return Supervisor(
            "inner",
            [ChildSpec(n, lambda n=n: Journaled(n, journal)) for n in ("i1", "i2")],
            backoff=FAST_BACKOFF,
        )

    specs = [
        ChildSpec("a", lambda: Journaled("a", journal)),
        ChildSpec("inner", inner),
        ChildSpec("z", lambda: Journaled("z", journal)),
    ]
    async with supervised(specs):
        await wait_until(lambda: len(journal) == 4)
    assert journal == [
        ("start", "a"),
        ("start", "i1"),
        ("start", "i2"),
        ("start", "z"),
        ("stop", "z"),
        ("stop", "i2"),
        ("stop", "i1"),
        ("stop", "a"),
    ]


async def test_terminated_runs_on_crash_and_on_stop() -> None:
    ends: list[tuple[str, str]] = []

    class Holder(Probe):
        def terminated(self, reason: object) -> None:
            ends.append((type(reason).__name__, threading.current_thread().name))

    async with supervised([ChildSpec("h", Holder)]) as sup:
        crash(sup.address("h"))
        await wait_until(lambda: sup.incarnation("h") == 2 and sup.is_running("h"))
    assert [kind for kind, _ in ends] == ["Crashed", "Stopped"]
    assert all(thread != threading.current_thread().name for _, thread in ends)


async def test_a_stop_after_a_run_ended_leaves_the_next_run_alone() -> None:
    specs, recordings = probes("a")
    sup = Supervisor("late-stop", specs, backoff=FAST_BACKOFF)
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        sup.stop()
    sup.stop()  # late: the run is over (this used to cancel the next run before it started)
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        assert sup.is_running("a") and recordings["a"].starts == 2
        sup.stop()


async def test_a_run_cancelled_from_outside_can_run_again() -> None:
    specs, recordings = probes("a")
    sup = Supervisor("cancelled", specs, backoff=FAST_BACKOFF)
    for _ in range(2):
        async with trio.open_nursery() as nursery:
            await nursery.start(sup.run)
            assert sup.is_running("a")
            nursery.cancel_scope.cancel()
    assert recordings["a"].starts == 2
