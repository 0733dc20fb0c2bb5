"""The dispatch scheduler: tag conflicts, evaluation order, promotion order, the sweep, and a
property test with many requests at once (slots never exceeded, per-sender order kept)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robota.core.policy import (
    Complete,
    Ended,
    Pending,
    Queued,
    Rejected,
    Request,
    Scheduler,
    SchedulerEffect,
    SchedulerState,
    Started,
    Submit,
    Sweep,
    Withdrawn,
    confirmations_from_json,
    confirmations_to_json,
    conflict,
    conflict_reason,
    queued_reply,
    scheduler_from_json,
    scheduler_to_json,
    tags_conflict,
)


@pytest.mark.parametrize(
    ("a", "b", "conflicts"),
    [
        ("read:/p", "read:/p", False),
        ("read:/p", "read:/p/src", False),
        ("write:/p", "read:/p", True),
        ("read:/p", "write:/p", True),
        ("write:/p", "write:/p", True),
        ("write:/p", "read:/p/src/a.py", True),
        ("write:/p/src", "read:/p", True),
        ("write:/p/src", "write:/p/docs", False),
        ("write:/p", "write:/proj", False),  # segments, not characters
        ("write:/p/", "read:/p", True),
        ("write:/p/./src", "read:/p/src/x", True),
        ("write:/", "read:/anything", True),
        ("mcp:pg", "mcp:pg", True),
        ("mcp:pg", "mcp:redis", False),
        ("port:80", "port:80", True),
        ("port:80", "port:8080", False),
        ("net:push", "net:push", True),
        ("exclusive:deploy", "exclusive:deploy", True),
        ("exclusive:deploy", "exclusive:migrate", False),
        ("exclusive:x", "mcp:x", False),
        ("write:/p", "port:80", False),
        ("write:/p", "exclusive:/p", False),
    ],
)
def test_tag_conflicts(a: str, b: str, conflicts: bool) -> None:
    assert tags_conflict(a, b) is conflicts
    assert tags_conflict(b, a) is conflicts


def test_conflict_reasons_name_the_tags() -> None:
    pair = conflict(("read:/q", "write:/p/src"), ("read:/p",))
    assert pair == ("write:/p/src", "read:/p")
    assert conflict_reason(pair) == "conflict:path-overlap:write:/p/src~read:/p"
    assert conflict_reason(("net:push", "net:push")) == "conflict:exclusive-tag:net:push"
    assert conflict(("read:/p",), ("read:/p",)) is None


def req(id_: str, sender: str, *tags: str) -> Request:
    return Request(id_, sender, "ask", tags or ("read:/p",))


def run(scheduler: Scheduler, *messages: Submit | Complete | Sweep) -> list[SchedulerEffect]:
    effects: list[SchedulerEffect] = []
    for message in messages:
        effects += scheduler.handle(message)
    return effects


def test_evaluation_order_slots_then_tags_then_sender() -> None:
    scheduler = Scheduler(slots=2, queue_limit=10)
    a, b = req("a", "u1", "write:/p/src"), req("b", "u2", "read:/p/docs")
    assert run(scheduler, Submit(a, 0), Submit(b, 0)) == [Started(a), Started(b)]
    # Slots full wins over a conflict.
    c = req("c", "u3", "write:/p")
    assert run(scheduler, Submit(c, 1)) == [Queued(c, 1, 2, "slot_full")]
    run(scheduler, Complete("b", 2))  # c still conflicts with a: nothing promoted
    assert [w.request.id for w in scheduler.queue] == ["c"]
    d = req("d", "u4", "read:/p/src/x")
    assert run(scheduler, Submit(d, 3)) == [
        Queued(d, 2, 1, "conflict:path-overlap:read:/p/src/x~write:/p/src")
    ]
    e = req("e", "u1", "read:/elsewhere")
    assert run(scheduler, Submit(e, 3)) == [Queued(e, 3, 1, "user_serial")]


def test_a_sender_with_a_queued_request_waits_behind_it() -> None:
    scheduler = Scheduler(slots=1, queue_limit=10)
    run(scheduler, Submit(req("a", "u1"), 0), Submit(req("b", "u2"), 0))
    scheduler.slots = 3  # room now, but u2's first request still waits: u2's next must too
    c = req("c", "u2", "read:/other")
    assert run(scheduler, Submit(c, 1)) == [Queued(c, 2, 1, "user_serial")]


def test_queue_full_is_rejected_and_duplicates_are_ignored() -> None:
    scheduler = Scheduler(slots=1, queue_limit=2)
    run(scheduler, Submit(req("a", "u1"), 0), Submit(req("b", "u2"), 0), Submit(req("c", "u3"), 0))
    d = req("d", "u4")
    assert run(scheduler, Submit(d, 0)) == [Rejected(d, "queue_full")]
    assert run(scheduler, Submit(req("a", "u1"), 0), Submit(req("b", "u2"), 0)) == []
    assert Scheduler(slots=1, queue_limit=0).handle(Submit(req("x", "u"), 0)) == [
        Started(req("x", "u"))
    ]


def test_promotion_takes_the_first_promotable_and_keeps_per_sender_fifo() -> None:
    scheduler = Scheduler(slots=2, queue_limit=10)
    w = req("w", "admin", "write:/p")
    run(scheduler, Submit(w, 0))
    queued = [
        req("r1", "u1", "read:/p"),  # conflicts with w
        req("r2", "u2", "read:/q"),  # starts at once (no conflict, a slot free)
        req("r3", "u1", "read:/q"),  # u1 waits behind r1
        req("r4", "u3", "read:/p"),
    ]
    effects = run(scheduler, *(Submit(r, 1) for r in queued))
    assert effects[1] == Started(queued[1])
    assert [w.request.id for w in scheduler.queue] == ["r1", "r3", "r4"]
    run(scheduler, Complete("r2", 2))  # a slot, but r1 and r4 conflict, r3 is behind r1
    assert [w.request.id for w in scheduler.queue] == ["r1", "r3", "r4"]
    assert run(scheduler, Complete("w", 3)) == [
        Ended("w"),
        Started(queued[0], promoted=True),
        Started(queued[3], promoted=True),  # r3 is u1's second: it waits for r1
    ]
    assert run(scheduler, Complete("r1", 4)) == [Ended("r1"), Started(queued[2], promoted=True)]


def test_complete_withdraws_a_queued_request_and_ignores_unknown_ids() -> None:
    scheduler = Scheduler(slots=1, queue_limit=5)
    run(scheduler, Submit(req("a", "u1"), 0), Submit(req("b", "u2"), 0))
    assert run(scheduler, Complete("b", 1)) == [Withdrawn("b")]
    assert run(scheduler, Complete("nope", 1)) == []
    assert scheduler.state == SchedulerState(scheduler.state.running, ())


def test_sweep_ends_overdue_requests_as_timed_out_and_promotes() -> None:
    scheduler = Scheduler(slots=2, queue_limit=5, max_turn_seconds=60)
    a, b, c = req("a", "u1"), req("b", "u2"), req("c", "u3")
    run(scheduler, Submit(a, 0), Submit(b, 30), Submit(c, 40))
    assert run(scheduler, Sweep(59)) == []
    assert run(scheduler, Sweep(60)) == [Ended("a", timed_out=True), Started(c, promoted=True)]
    assert run(scheduler, Sweep(200)) == [Ended("b", timed_out=True), Ended("c", timed_out=True)]
    assert scheduler.state == SchedulerState()


def test_state_restores_and_the_queue_runs_in_order_after_it() -> None:
    scheduler = Scheduler(slots=1, queue_limit=5)
    run(scheduler, Submit(req("a", "u1"), 0), Submit(req("b", "u2"), 1), Submit(req("c", "u3"), 2))
    restored = Scheduler.restore(scheduler.state, slots=1, queue_limit=5, max_turn_seconds=60)
    assert restored.state == scheduler.state
    assert run(restored, Complete("a", 3), Complete("b", 4)) == [
        Ended("a"),
        Started(req("b", "u2"), promoted=True),
        Ended("b"),
        Started(req("c", "u3"), promoted=True),
    ]


def test_queued_reply_has_the_position() -> None:
    queued = Queued(req("a", "u"), 1, 2, "slot_full")
    assert queued_reply("en-US", queued) == (
        "Queued (position 1): 2 requests are running ahead of yours; it starts by itself."
    )
    assert "第 1 位" in queued_reply("zh-CN", queued) and "2 个请求" in queued_reply(
        "zh-CN", queued
    )


_TAGS = st.sampled_from(
    ["read:/p", "write:/p", "read:/p/src", "write:/p/src", "write:/p/docs", "port:80", "net:push"]
)


@settings(max_examples=300, deadline=None)
@given(
    slots=st.integers(1, 4),
    queue_limit=st.integers(0, 12),
    submissions=st.lists(
        st.tuples(st.integers(0, 3), st.lists(_TAGS, min_size=1, max_size=2)), max_size=60
    ),
    completions=st.lists(st.integers(0, 1000), max_size=80),
)
def test_many_requests_at_once(
    slots: int,
    queue_limit: int,
    submissions: list[tuple[int, list[str]]],
    completions: list[int],
) -> None:
    """Slots are never exceeded, no conflicting pair runs together, a sender runs one request at
    a time and in the order sent, and everything accepted eventually runs once."""
    scheduler = Scheduler(slots=slots, queue_limit=queue_limit)
    order: dict[str, list[str]] = {}
    started: list[str] = []
    accepted: set[str] = set()

    def apply(effects: list[SchedulerEffect]) -> None:
        for effect in effects:
            if isinstance(effect, Started):
                started.append(effect.request.id)
                accepted.add(effect.request.id)
            elif isinstance(effect, Queued):
                accepted.add(effect.request.id)
        running = scheduler.running
        assert len(running) <= slots
        senders = [r.request.sender for r in running]
        assert len(senders) == len(set(senders))
        for i, one in enumerate(running):
            for other in running[i + 1 :]:
                assert conflict(one.request.tags, other.request.tags) is None

    for number, (sender, tags) in enumerate(submissions):
        request = Request(f"r{number}", f"u{sender}", "ask", tuple(tags))
        effects = scheduler.handle(Submit(request, number))
        if not any(isinstance(e, Rejected) for e in effects):
            order.setdefault(request.sender, []).append(request.id)
        apply(effects)
        if completions and scheduler.running:
            pick = completions.pop()
            apply(
                scheduler.handle(
                    Complete(scheduler.running[pick % len(scheduler.running)].request.id, number)
                )
            )
    for _ in range(len(submissions) + 1):  # drain: complete the oldest until nothing runs
        if not scheduler.running:
            break
        apply(scheduler.handle(Complete(scheduler.running[0].request.id, 10_000)))
    assert scheduler.queue == [] and scheduler.running == []
    assert sorted(started) == sorted(accepted) and len(started) == len(set(started))
    for ids in order.values():
        assert [i for i in started if i in ids] == ids


def test_the_registry_round_trips_through_its_json() -> None:
    scheduler = Scheduler(slots=1, queue_limit=5)
    run(scheduler, Submit(req("a", "u1", "write:/p"), 1.5), Submit(req("b", "u2", "port:80"), 2))
    text = scheduler_to_json(scheduler.state)
    assert scheduler_from_json(text) == scheduler.state
    assert scheduler_from_json("{}") == SchedulerState()
    pending = (Pending("t", "ou_a", "drop_db", "users 名单", 3.0),)
    assert confirmations_from_json(confirmations_to_json(pending)) == pending


@pytest.mark.parametrize(
    "text", ['{"v": 2, "running": [], "queue": []}', '{"v": 1, "running": [{}], "queue": []}', "[]"]
)
def test_a_registry_in_another_format_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="team registry"):
        scheduler_from_json(text)
