"""The bridge between actor threads and the trio loop."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import trio

from robota.core import (
    Actor,
    Address,
    ChildSpec,
    Coalescer,
    DeadLetters,
    LoopMailbox,
    LoopPort,
    Outbox,
    OutboxClosed,
    Overflow,
    Reply,
    RequestTimeout,
    request,
)
from robota.core.testing import supervised, wait_until


class Doubler(Actor):
    """Answers ``(n, reply)`` with ``2 * n``; negative n fails the request; 0 never answers."""

    def receive(self, message: Any) -> None:
        n, reply = message
        if n < 0:
            reply.fail(ValueError(f"negative: {n}"))
        elif n > 0:
            reply(2 * n)


async def test_request_reply_round_trip() -> None:
    async with supervised([ChildSpec("d", Doubler)]) as sup:
        answers = [
            await request(sup.address("d"), lambda reply, n=n: (n, reply), timeout=5)
            for n in range(1, 20)
        ]
    assert answers == [2 * n for n in range(1, 20)]


async def test_request_failure_is_raised_in_the_requester() -> None:
    async with supervised([ChildSpec("d", Doubler)]) as sup:
        with pytest.raises(ValueError, match="negative: -3"):
            await request(sup.address("d"), lambda reply: (-3, reply), timeout=5)


async def test_request_times_out_and_a_late_reply_does_not_kill_the_loop() -> None:
    replies: list[Reply[int]] = []

    class Hoarder(Actor):
        def receive(self, message: Any) -> None:
            replies.append(message)

    async with supervised([ChildSpec("h", Hoarder)]) as sup:
        with pytest.raises(RequestTimeout, match="no reply from 'h'"):
            await request(sup.address("h"), lambda reply: reply, timeout=0.05)
        # The requester is gone and its channel closed: answering now, twice, is harmless.
        replies[0](1)
        replies[0](2)
        await trio.sleep(0.01)
        assert await request(sup.address("h"), _answer_later(replies), timeout=5) == 42


def _answer_later(replies: list[Reply[int]]) -> Any:
    def build(reply: Reply[int]) -> Reply[int]:
        threading.Timer(0.01, reply, (42,)).start()
        return reply

    return build


async def test_callback_raising_or_meeting_a_closed_channel_does_not_kill_the_loop(
    caplog: pytest.LogCaptureFixture,
) -> None:
    port = LoopPort()
    send, receive = trio.open_memory_channel[int](1)
    receive.close()

    def boom() -> None:
        raise RuntimeError("callback bug")

    done = threading.Event()

    def from_actor_thread() -> None:
        port.post(boom)
        port.post(send.send_nowait, 1)  # BrokenResourceError on the trio side
        port.post(done.set)

    threading.Thread(target=from_actor_thread).start()
    await wait_until(done.is_set)
    assert "callback bug" in caplog.text
    assert "BrokenResourceError" in caplog.text
    await trio.sleep(0)  # the loop is alive and scheduling


async def test_here_is_true_on_the_ports_own_run_only() -> None:
    port = LoopPort()
    assert port.here()
    assert not await trio.to_thread.run_sync(port.here)  # an actor's thread
    assert LoopPort(trio.lowlevel.current_trio_token()).here()  # the same run, its token given
    other: list[bool] = []

    async def another_run() -> None:
        other.append(port.here())

    await trio.to_thread.run_sync(trio.run, another_run)  # another loop, on another thread
    assert other == [False]


def test_here_is_false_once_the_loop_finished() -> None:
    ports: list[LoopPort] = []

    async def main() -> None:
        ports.append(LoopPort())

    trio.run(main)
    assert ports[0].here() is False


def test_post_after_the_loop_finished_returns_false() -> None:
    ports: list[LoopPort] = []

    async def main() -> None:
        ports.append(LoopPort())

    trio.run(main)
    assert ports[0].post(print) is False


async def test_coalescer_delivers_everything_in_order_in_few_drains() -> None:
    batches: list[list[int]] = []
    coalescer: Coalescer[int] = Coalescer(LoopPort(), batches.append)
    total = 20_000

    def produce() -> None:
        for i in range(total):
            coalescer.push(i)

    producer = threading.Thread(target=produce)
    producer.start()
    await wait_until(lambda: sum(map(len, batches)) == total, timeout=10)
    producer.join()
    assert [i for batch in batches for i in batch] == list(range(total))
    assert len(batches) < total / 10


async def test_outbox_drop_oldest_keeps_the_newest() -> None:
    box: Outbox[int] = Outbox(3, Overflow.DROP_OLDEST)
    assert all(box.send_nowait(i) for i in range(5))
    assert (box.dropped, [await box.receive() for _ in range(3)]) == (2, [2, 3, 4])


async def test_outbox_drop_newest_keeps_the_promised() -> None:
    box: Outbox[int] = Outbox(3, Overflow.DROP_NEWEST)
    assert [box.send_nowait(i) for i in range(5)] == [True, True, True, False, False]
    assert [await box.receive() for _ in range(3)] == [0, 1, 2]


async def test_outbox_coalesce_replaces_in_place_by_key() -> None:
    box: Outbox[tuple[str, int]] = Outbox(2, Overflow.COALESCE, key=lambda item: item[0])
    for item in [("card", 1), ("answer", 1), ("card", 2), ("card", 3)]:
        assert box.send_nowait(item)
    assert [await box.receive() for _ in range(2)] == [("card", 3), ("answer", 1)]
    box.send_nowait(("a", 1))
    box.send_nowait(("b", 1))
    box.send_nowait(("c", 1))  # full, no same key: the oldest goes
    assert [await box.receive() for _ in range(2)] == [("b", 1), ("c", 1)]


async def test_outbox_close_policy_cuts_off_a_slow_client() -> None:
    box: Outbox[int] = Outbox(2, Overflow.CLOSE)
    assert [box.send_nowait(i) for i in range(3)] == [True, True, False]
    assert box.closed
    assert [await box.receive() for _ in range(2)] == [0, 1]
    with pytest.raises(OutboxClosed):
        await box.receive()
    assert box.send_nowait(9) is False


async def test_outbox_receiver_waits_and_ends_on_close() -> None:
    box: Outbox[int] = Outbox(8, Overflow.DROP_NEWEST)
    got: list[int] = []

    async def consume() -> None:
        async for item in box:
            got.append(item)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(consume)
        await trio.sleep(0.01)
        box.send_nowait(1)
        box.send_nowait(2)
        box.close()
    assert got == [1, 2]


def test_outbox_rejects_nonsense() -> None:
    with pytest.raises(ValueError, match="capacity"):
        Outbox(0, Overflow.DROP_OLDEST)
    with pytest.raises(ValueError, match="key"):
        Outbox(1, Overflow.COALESCE)


async def test_address_tell_is_safe_from_many_threads_and_keeps_per_sender_order() -> None:
    received: list[tuple[int, int]] = []

    class Sink(Actor):
        def receive(self, message: Any) -> None:
            received.append(message)

    async with supervised([ChildSpec("s", Sink)]) as sup:
        address: Address = sup.address("s")

        def send(sender: int) -> None:
            for i in range(500):
                address.tell((sender, i))

        threads = [threading.Thread(target=send, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        await wait_until(lambda: len(received) == 2000, timeout=10)
        for t in threads:
            t.join()
    for sender in range(4):
        assert [i for s, i in received if s == sender] == list(range(500))


async def test_loop_mailbox_handles_on_the_loop_in_order_waiting_ones_first() -> None:
    loop_thread = threading.get_ident()
    received: list[tuple[int, int, int]] = []
    mailbox = LoopMailbox("m", lambda m: received.append((*m, threading.get_ident())))
    mailbox.tell((-1, 0))
    mailbox.tell((-1, 1))  # before open: they wait
    assert received == []

    def send(sender: int) -> None:
        for i in range(300):
            mailbox.tell((sender, i))

    threads = [threading.Thread(target=send, args=(n,)) for n in range(3)]
    for t in threads[:1]:
        t.start()  # telling while the mailbox opens: nothing may overtake the waiting ones
    mailbox.open()
    for t in threads[1:]:
        t.start()
    await wait_until(lambda: len(received) == 902, timeout=10)
    for t in threads:
        t.join()
    assert received[:2] == [(-1, 0, loop_thread), (-1, 1, loop_thread)]
    assert {thread for _, _, thread in received} == {loop_thread}
    for sender in range(3):
        assert [i for s, i, _ in received if s == sender] == list(range(300))


async def test_loop_mailbox_failure_is_reported_and_the_next_message_still_handled(
    caplog: pytest.LogCaptureFixture,
) -> None:
    handled: list[int] = []
    errors: list[Exception] = []

    def receive(n: int) -> None:
        if n == 2:
            raise ValueError("table bug")
        handled.append(n)

    mailbox = LoopMailbox("agent:x", receive, on_error=errors.append)
    mailbox.open()
    for n in (1, 2, 3):
        mailbox.tell(n)
    await wait_until(lambda: handled == [1, 3], timeout=5)
    assert [str(e) for e in errors] == ["table bug"]
    assert "agent:x: handling int failed" in caplog.text
    mailbox.handle(4)  # already on the loop: handled now, no trip round it
    assert handled == [1, 3, 4]


def test_loop_mailbox_told_after_the_loop_finished_is_a_dead_letter() -> None:
    letters = DeadLetters()
    mailbox = LoopMailbox("late", lambda m: None, dead_letters=letters)

    async def main() -> None:
        mailbox.open()

    trio.run(main)
    mailbox.tell("hello")
    assert (letters.count, letters.recent[-1]) == (1, ("late", "str", "the trio loop has finished"))


async def test_loop_mailbox_handles_a_message_reported_from_within_after_the_current_one() -> None:
    steps: list[str] = []
    mailbox: LoopMailbox

    def receive(message: str) -> None:
        steps.append(f"begin {message}")
        if message == "request":
            mailbox.handle("report")  # a callback reporting back while "request" is handled
        steps.append(f"end {message}")

    mailbox = LoopMailbox("m", receive)
    mailbox.open()
    mailbox.handle("request")
    assert steps == ["begin request", "end request", "begin report", "end report"]
