"""Socket Mode's ``accept``: what must be durable before Slack is told it has an envelope (a
chat message's claim and inbox row) runs before the acknowledgement; one that fails is neither
acknowledged nor handled, so Slack delivers the envelope again."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
import trio

from robota.transports.slack import Envelope

from ...support.fake_slack import FakeSlack, dm, events_api, fake_slack
from ._socket_client import Recorder, client


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    async with fake_slack() as slack:
        yield slack


class Accept:
    """Records each envelope with how many acks had gone out by then; fails those asked."""

    def __init__(self, fake: FakeSlack, *, fail: set[str] | None = None) -> None:
        self.fake = fake
        self.fail = fail or set()
        self.seen: list[tuple[str, int]] = []

    async def __call__(self, envelope: Envelope) -> None:
        await trio.sleep(0.05)  # a store write's time: the ack must wait for it
        self.seen.append((envelope.envelope_id, len(self.fake.current.acks)))
        if envelope.envelope_id in self.fail:
            raise OSError("the store refused")


async def test_an_envelope_is_acknowledged_only_after_its_accept(
    fake: FakeSlack, nursery: trio.Nursery
) -> None:
    handler = Recorder()
    accept = Accept(fake)
    link = client(fake, handler, accept=accept)
    await nursery.start(link.run)
    envelope = events_api(dm("hello"), event_id="Ev1")
    await fake.push(envelope)
    await fake.wait_until(lambda: handler.envelopes)
    assert accept.seen == [(envelope["envelope_id"], 0)]  # nothing acknowledged before it
    assert fake.current.acks == [json.dumps({"envelope_id": envelope["envelope_id"]})]


async def test_an_envelope_whose_accept_fails_is_neither_acknowledged_nor_handled(
    fake: FakeSlack, nursery: trio.Nursery
) -> None:
    handler = Recorder()
    failing = events_api(dm("lost?"), event_id="Ev1")
    accept = Accept(fake, fail={failing["envelope_id"]})
    link = client(fake, handler, accept=accept)
    await nursery.start(link.run)
    await fake.push(failing)
    after = events_api(dm("next"), event_id="Ev2")
    await fake.push(after)
    await fake.wait_until(lambda: handler.envelopes)
    assert handler.ids == [after["envelope_id"]]
    assert fake.current.acks == [json.dumps({"envelope_id": after["envelope_id"]})]
