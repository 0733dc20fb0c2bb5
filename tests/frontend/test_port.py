"""The front ends' port: order, back-pressure, ending, and readers on trio, on a thread, woken."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
import trio

from robota.core.engine import (
    AnswerApproval,
    FrontEndRequest,
    Interrupt,
    Outputs,
    RouteIdle,
    RouteReply,
    TurnBegan,
    TurnFinished,
    TurnUpdate,
    UserInput,
)
from robota.core.events import (
    ApprovalRequested,
    ReasoningDelta,
    TextDelta,
    ToolStarted,
    ToolUpdated,
    TurnStarted,
)
from robota.core.frontend import (
    FrontEndPort,
    LinkEnded,
    Overflowed,
    RouteLink,
    merge_notices,
)

ROUTE = "test:route"
JOIN = 10.0
"""Bound on every wait for another thread: a hang fails the test instead of the run."""


class Hub:
    """An engine's front-end surface around a real ``Outputs``: what routes deliver through."""

    def __init__(self) -> None:
        self.outputs = Outputs()
        self.told: list[tuple[str, FrontEndRequest]] = []
        self.connected: dict[str, int] = {}
        """Route keys connected now, with how many times each was connected."""

    def connect(self, route_key: str, deliver: Callable[[object], None]) -> None:
        self.connected[route_key] = self.connected.get(route_key, 0) + 1
        self.outputs.connect(route_key, deliver)

    def disconnect(self, route_key: str) -> None:
        self.connected.pop(route_key, None)
        self.outputs.disconnect(route_key)

    def tell(self, route_key: str, request: FrontEndRequest) -> None:
        self.told.append((route_key, request))

    def say(self, *notices: object, route_key: str = ROUTE) -> None:
        for notice in notices:
            self.outputs.deliver(route_key, notice)


def update(event: object, attempt: str = "a1") -> TurnUpdate:
    return TurnUpdate(ROUTE, "t1", attempt, event)  # type: ignore[arg-type]


def in_thread(target: Callable[[], object]) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


# -- the merge rule ------------------------------------------------------------------------------

MERGES = [
    (
        "text of one message",
        update(TextDelta("m1", "Hel")),
        update(TextDelta("m1", "lo")),
        update(TextDelta("m1", "Hello")),
    ),
    (
        "text keeps its phase",
        update(TextDelta("m1", "a", "final")),
        update(TextDelta("m1", "b", "final")),
        update(TextDelta("m1", "ab", "final")),
    ),
    (
        "reasoning of one part",
        update(ReasoningDelta("r1", "x", 1)),
        update(ReasoningDelta("r1", "y", 1)),
        update(ReasoningDelta("r1", "xy", 1)),
    ),
    (
        "a tool's streamed output",
        update(ToolUpdated("c1", output_delta="a\n")),
        update(ToolUpdated("c1", output_delta="b\n")),
        update(ToolUpdated("c1", output_delta="a\nb\n")),
    ),
    ("another message", update(TextDelta("m1", "a")), update(TextDelta("m2", "b")), None),
    ("a phase change", update(TextDelta("m1", "a")), update(TextDelta("m1", "b", "final")), None),
    (
        "another reasoning part",
        update(ReasoningDelta("r1", "x", 0)),
        update(ReasoningDelta("r1", "y", 1)),
        None,
    ),
    ("another turn", update(TextDelta("m1", "a"), "a1"), update(TextDelta("m1", "b"), "a2"), None),
    ("another kind", update(TextDelta("m1", "a")), update(ReasoningDelta("m1", "b")), None),
    (
        "a tool's status change",
        update(ToolUpdated("c1", output_delta="a")),
        update(ToolUpdated("c1", output_delta="b", status="completed")),
        None,
    ),
    (
        "another tool",
        update(ToolUpdated("c1", output_delta="a")),
        update(ToolUpdated("c2", output_delta="b")),
        None,
    ),
    (
        "a structural event",
        update(ToolStarted("c1", "command", "ls")),
        update(ToolStarted("c2", "command", "ls")),
        None,
    ),
    (
        "after a lifecycle notice",
        TurnBegan(ROUTE, "t1", "a1", "hi"),
        update(TextDelta("m1", "a")),
        None,
    ),
    ("a lifecycle notice", update(TextDelta("m1", "a")), RouteIdle(ROUTE, 1), None),
]


@pytest.mark.parametrize(("case", "last", "new", "merged"), MERGES, ids=[m[0] for m in MERGES])
def test_which_notices_merge(case: str, last: object, new: object, merged: object) -> None:
    assert merge_notices(last, new) == merged


# -- order and back-pressure ---------------------------------------------------------------------


def test_a_reader_that_keeps_up_sees_every_notice_as_sent() -> None:
    hub = Hub()
    link = FrontEndPort(hub).subscribe(ROUTE, coalesce_after=4)
    for n in range(50):
        hub.say(update(TextDelta("m1", f"{n},")))
        assert link.drain() == [update(TextDelta("m1", f"{n},"))]
    assert link.coalesced == 0


@pytest.mark.concurrency
def test_order_is_kept_across_batches_from_one_route_thread() -> None:
    hub = Hub()
    link = FrontEndPort(hub).subscribe(ROUTE)
    sent = [RouteReply(ROUTE, str(n)) for n in range(2000)]
    speaker = in_thread(lambda: hub.say(*sent))
    heard: list[object] = []
    while len(heard) < len(sent):
        heard += link.wait(JOIN)
    speaker.join(JOIN)
    assert heard == sent


def test_a_slow_reader_gets_deltas_merged_and_every_lifecycle_notice() -> None:
    hub = Hub()
    link = FrontEndPort(hub).subscribe(ROUTE, coalesce_after=3)
    began = TurnBegan(ROUTE, "t1", "a1", "hi")
    tool = update(ToolStarted("c1", "command", "ls"))
    approval = update(ApprovalRequested("ap1", "command", "Run ls?"))
    finished = TurnFinished(ROUTE, "t1", "a1", "completed", "onetwothree")
    hub.say(began, update(TurnStarted("r1")), update(TextDelta("m1", "one")))
    hub.say(update(TextDelta("m1", "two")), update(TextDelta("m1", "three")))  # behind: merge
    hub.say(tool, update(ToolUpdated("c1", output_delta="x")), approval)
    hub.say(
        update(ToolUpdated("c1", output_delta="y")), update(ToolUpdated("c1", output_delta="z"))
    )
    hub.say(finished, RouteIdle(ROUTE, 1))
    assert link.drain() == [
        began,
        update(TurnStarted("r1")),
        update(TextDelta("m1", "onetwothree")),
        tool,
        update(ToolUpdated("c1", output_delta="x")),
        approval,
        update(ToolUpdated("c1", output_delta="yz")),
        finished,
        RouteIdle(ROUTE, 1),
    ]
    assert link.coalesced == 3
    assert link.dropped == 0


def test_below_the_threshold_nothing_merges() -> None:
    hub = Hub()
    link = FrontEndPort(hub).subscribe(ROUTE, coalesce_after=10)
    deltas = [update(TextDelta("m1", c)) for c in "abcdefghij"]
    hub.say(*deltas)
    assert link.drain() == deltas


def test_a_reader_past_the_bound_is_cut_off_and_told_why() -> None:
    hub = Hub()
    link = FrontEndPort(hub).subscribe(ROUTE, capacity=3, coalesce_after=2)
    replies = [RouteReply(ROUTE, str(n)) for n in range(5)]
    hub.say(*replies)  # never blocks the route, never raises into it
    assert link.ended
    assert link.dropped == 1  # the one that overflowed; the next found the route disconnected
    assert link.wait(JOIN) == replies[:3]  # what waited stays readable
    with pytest.raises(LinkEnded) as ended:
        link.wait(JOIN)
    assert isinstance(ended.value.reason, Overflowed)
    assert "3 notices behind" in str(ended.value)
    hub.say(RouteReply(ROUTE, "later"))
    assert link.dropped == 1


# -- ending --------------------------------------------------------------------------------------


@pytest.mark.concurrency
def test_close_wakes_a_reader_waiting_on_another_thread() -> None:
    link = FrontEndPort(Hub()).subscribe(ROUTE)
    outcome: list[object] = []
    waiting = threading.Event()

    def reader() -> None:
        waiting.set()
        try:
            link.wait()  # no timeout: only the close can end this
        except LinkEnded as error:
            outcome.append(error)

    thread = in_thread(reader)
    assert waiting.wait(JOIN)
    link.close()
    thread.join(JOIN)
    assert not thread.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], LinkEnded)
    assert outcome[0].reason is None


def test_a_deliver_after_close_is_dropped_without_raising() -> None:
    hub = Hub()
    link = FrontEndPort(hub).subscribe(ROUTE)
    hub.say(RouteReply(ROUTE, "before"))
    deliver = link.deliver
    link.close()
    assert link.drain() == []  # the reader left: what waited is gone
    deliver(RouteReply(ROUTE, "late"))  # a route thread that fetched deliver before the close
    hub.say(RouteReply(ROUTE, "later"))  # disconnected: Outputs drops it
    assert link.drain() == []
    assert link.dropped == 1
    with pytest.raises(LinkEnded):
        link.wait(0)


def test_end_keeps_what_waits_readable() -> None:
    hub = Hub()
    link = FrontEndPort(hub).subscribe(ROUTE)
    hub.say(RouteReply(ROUTE, "last words"))
    failure = RuntimeError("the engine stopped")
    link.end(failure)
    link.end(None)  # only the first end counts
    assert link.wait(JOIN) == [RouteReply(ROUTE, "last words")]
    with pytest.raises(LinkEnded) as ended:
        link.wait(JOIN)
    assert ended.value.reason is failure


def test_a_second_subscription_takes_the_route_over() -> None:
    hub = Hub()
    port = FrontEndPort(hub)
    old = port.subscribe(ROUTE)
    new = port.subscribe(ROUTE)
    assert old.ended and old.reason is not None and "took it over" in str(old.reason)
    old.close()  # must not disconnect the new one
    hub.say(RouteReply(ROUTE, "hi"))
    assert new.drain() == [RouteReply(ROUTE, "hi")]
    assert old.drain() == []


def test_shared_subscriptions_each_hear_the_route_in_its_order() -> None:
    hub = Hub()
    port = FrontEndPort(hub)
    chat = port.subscribe(ROUTE, shared=True)
    waiter = port.subscribe(ROUTE, shared=True)
    assert (port.listeners(ROUTE), hub.connected) == (2, {ROUTE: 1}), "one connection"
    hub.say(RouteReply(ROUTE, "one"), RouteReply(ROUTE, "two"))
    expected = [RouteReply(ROUTE, "one"), RouteReply(ROUTE, "two")]
    assert chat.drain() == expected and waiter.drain() == expected

    waiter.close()  # one leaves: the other still hears, the route stays connected
    hub.say(RouteReply(ROUTE, "three"))
    assert (chat.drain(), port.listeners(ROUTE), list(hub.connected)) == (
        [RouteReply(ROUTE, "three")],
        1,
        [ROUTE],
    )
    chat.close()  # the last one leaves: the route is disconnected
    assert (port.listeners(ROUTE), list(hub.connected)) == (0, [])


def test_an_exclusive_subscription_ends_every_shared_one() -> None:
    hub = Hub()
    port = FrontEndPort(hub)
    shared = [port.subscribe(ROUTE, shared=True) for _ in range(2)]
    only = port.subscribe(ROUTE)
    assert all(link.ended and "took it over" in str(link.reason) for link in shared)
    hub.say(RouteReply(ROUTE, "mine"))
    assert only.drain() == [RouteReply(ROUTE, "mine")]
    assert port.listeners(ROUTE) == 1


# -- readers -------------------------------------------------------------------------------------


@pytest.mark.concurrency
def test_a_woken_reader_is_woken_once_per_burst() -> None:
    hub = Hub()
    link = FrontEndPort(hub).subscribe(ROUTE)
    wakes: list[int] = []
    hub.say(RouteReply(ROUTE, "0"))  # before the reader attached: kept
    link.attach(lambda: wakes.append(1))
    assert wakes == [1]
    speakers = [in_thread(lambda n=n: hub.say(RouteReply(ROUTE, str(n)))) for n in range(1, 40)]
    for speaker in speakers:
        speaker.join(JOIN)
    assert wakes == [1], "no second wake before the first drain"
    assert sorted(int(n.text) for n in link.drain()) == list(range(40))  # type: ignore[union-attr]
    hub.say(RouteReply(ROUTE, "next"))
    assert wakes == [1, 1]
    link.end()
    assert wakes == [1, 1, 1], "the end wakes the reader too"


def test_a_reader_that_attaches_after_the_end_is_woken() -> None:
    link = FrontEndPort(Hub()).subscribe(ROUTE)
    link.end(RuntimeError("the engine failed to start"))  # before the UI loop attached
    wakes: list[int] = []
    link.attach(lambda: wakes.append(1))
    assert wakes == [1]
    assert link.drain() == [] and link.ended
    assert str(link.reason) == "the engine failed to start"


def test_a_wake_up_that_raises_does_not_reach_the_route() -> None:
    hub = Hub()
    link = FrontEndPort(hub).subscribe(ROUTE)

    def closed_loop() -> None:
        raise RuntimeError("Event loop is closed")

    link.attach(closed_loop)
    hub.say(RouteReply(ROUTE, "x"))
    assert link.drain() == [RouteReply(ROUTE, "x")]


@pytest.mark.concurrency
async def test_a_trio_reader_hears_route_threads_and_ends_when_closed_from_one() -> None:
    hub = Hub()
    link = FrontEndPort(hub).subscribe(ROUTE)
    sent = [RouteReply(ROUTE, str(n)) for n in range(300)]
    speaker = in_thread(lambda: (hub.say(*sent), link.end()))
    heard: list[object] = []
    with trio.fail_after(JOIN):
        async for batch in link:
            heard += batch
    await trio.to_thread.run_sync(speaker.join, JOIN)
    assert heard == sent

    second = FrontEndPort(hub).subscribe(ROUTE)
    closer = threading.Timer(0.05, second.close)
    closer.start()
    with trio.fail_after(JOIN), pytest.raises(LinkEnded):
        await second.receive()  # parked until the close on the timer's thread
    closer.join(JOIN)


async def test_a_trio_reader_ended_from_its_own_loop_wakes() -> None:
    link = FrontEndPort(Hub()).subscribe(ROUTE)
    got: list[BaseException] = []

    async def read() -> None:
        try:
            await link.receive()
        except LinkEnded as error:
            got.append(error)

    with trio.fail_after(JOIN):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(read)
            await trio.sleep(0.01)
            link.end()  # print mode's feeder, on the same loop as its reader
    assert len(got) == 1


def test_sends_reach_the_route_in_order() -> None:
    hub = Hub()
    link: RouteLink = FrontEndPort(hub).subscribe(ROUTE)
    link.send(UserInput("hello"))
    link.answer("ap1", "decline")
    link.interrupt()
    link.close()
    link.send(UserInput("after the reader left"))  # telling needs no subscription
    assert [request for _, request in hub.told] == [
        UserInput("hello"),
        AnswerApproval("ap1", "decline"),
        Interrupt(),
        UserInput("after the reader left"),
    ]
    assert {key for key, _ in hub.told} == {ROUTE}
