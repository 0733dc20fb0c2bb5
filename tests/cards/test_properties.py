"""Properties of the card policy over generated turns, timings and transient failures."""

from __future__ import annotations

import tempfile
from pathlib import Path

import trio
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from robota.core.cards import (
    CardPolicy,
    CardTurn,
    FinalAnswerDelivered,
    TerminalPlatform,
    TransientSendError,
    TurnCard,
)
from robota.core.presentation import TurnView
from robota.core.store import final_delivery
from robota.transports.feishu import FeishuPlatform
from robota.transports.slack import SlackPlatform

from ..support.turn_streams import turns
from ._harness import Clock, Driver, FakeSink, Tokens, card_world

PLATFORMS = {
    "feishu": lambda: FeishuPlatform(agent="codex"),
    "feishu-timeline": lambda: FeishuPlatform(agent="codex", layout="timeline"),
    "slack": lambda: SlackPlatform(agent="codex"),
    "terminal": lambda: TerminalPlatform(agent="codex", width=100, last=30),
}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    events=turns(max_steps=25, finish=True),
    platform=st.sampled_from(sorted(PLATFORMS)),
    failures=st.lists(st.sampled_from([None, None, 0.0, 3.0, 45.0]), max_size=40),
    gaps=st.lists(st.sampled_from([0.0, 0.01, 0.3, 0.6, 1.9, 2.5, 40.0]), min_size=1),
)
def test_the_card_ends_as_the_render_of_the_final_view_and_the_answer_goes_once(
    events: list, platform: str, failures: list[float | None], gaps: list[float]
) -> None:
    """Whatever the events, their timing and the transient failures (``None`` = the request
    succeeds, a number = it fails with that ``retry_after``, 0 meaning none given)."""
    script_failures = list(failures)

    def script(_request):
        if script_failures:
            retry_after = script_failures.pop(0)
            if retry_after is not None:
                return TransientSendError("flaky", retry_after=retry_after or None)
        return None

    clock = Clock()
    card = TurnCard(
        CardTurn("t1", "task", "route"),
        PLATFORMS[platform](),
        policy=CardPolicy(final_attempts=1000),
        clock=clock,
        wall=clock,
        token=Tokens(),
    )
    driver = Driver(card, clock, script=script)
    driver.start()
    for index, event in enumerate(events):
        driver.advance(clock.now + gaps[index % len(gaps)])
        driver.event(event)
    driver.advance(clock.now + 100_000)

    # The card the platform holds is the final view, rendered from scratch.
    fresh = PLATFORMS[platform]()
    expected = fresh.render(card.view, elapsed=None, approval_tokens={})
    assert driver.screen.card == expected
    assert driver.screen.cards_created == 1
    # The answer went out once, after the last card update.
    kinds = [kind for _, kind, _ in driver.screen.log]
    assert kinds.count("final") == 1
    assert "show" not in kinds[kinds.index("final") :]
    assert driver.screen.finals == [tuple(fresh.final_chunks(card.view.final_text or ""))]
    delivered = [n for n in driver.notices if isinstance(n, FinalAnswerDelivered)]
    assert len(delivered) == 1
    assert card.done
    assert card.next_wake() is None


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    # Each example runs threads and a real file for a second: shrinking would take minutes.
    # A failure here shows up minimal in the pure test above, which shares the property.
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
@given(
    events=turns(max_steps=12, finish=True),
    platform=st.sampled_from(sorted(PLATFORMS)),
    failures=st.lists(st.sampled_from([None, None, 0.0, 0.05]), max_size=12),
    pauses=st.lists(st.sampled_from([0.0, 0.0, 0.03, 0.12]), min_size=1, max_size=8),
)
async def test_through_the_real_actor_the_sink_ends_with_the_final_view(
    events: list, platform: str, failures: list[float | None], pauses: list[float]
) -> None:
    """The same property end to end: actor thread, timers, delivery service, SQLite ledger."""
    sink = FakeSink()
    sink.fail += [
        None if retry is None else TransientSendError("flaky", retry_after=retry or None)
        for retry in failures
    ]
    with tempfile.TemporaryDirectory() as directory:
        async with card_world(Path(directory) / "s.db", PLATFORMS[platform], sink=sink) as world:
            for index, event in enumerate(events):
                world.tell(event)
                if index % 5 == 4:  # bursts of five, then a pause of the drawn length
                    await trio.sleep(pauses[index // 5 % len(pauses)])
            [delivered] = await world.notice(FinalAnswerDelivered, timeout=30)
            ledger = world.read(final_delivery, "t1")
    view = TurnView()
    for event in events:
        view.apply(event)
    fresh = PLATFORMS[platform]()
    assert sink.card_payload() == fresh.render(view, elapsed=None, approval_tokens={})
    assert len(sink.cards) == 1  # one card, however many sends failed on the way
    chunks = fresh.final_chunks(view.final_text or "")
    assert [chunk for _, chunk in sink.finals] == chunks
    assert delivered.message_ids == ledger.final_message_ids == tuple(m for m, _ in sink.finals)
    # No card call after the first send of the answer.
    methods = sink.methods()
    if "send_final" in methods:
        assert not {"send_card", "update_card"} & set(methods[methods.index("send_final") :])
