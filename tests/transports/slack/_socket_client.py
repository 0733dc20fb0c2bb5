"""A Socket Mode client against the fake Slack, and a handler that records what it was handed:
shared by the Socket Mode tests."""

from __future__ import annotations

from typing import Any

import trio

from robota.transports.slack import Envelope, SocketModeClient

from ...support.fake_slack import APP_TOKEN, FakeSlack

__all__ = ["FAST", "Recorder", "client"]

FAST = (0.01, 0.02)


class Recorder:
    def __init__(self, *, hang: bool = False, fail_first: bool = False) -> None:
        self.envelopes: list[Envelope] = []
        self.hang = hang
        self.fail_first = fail_first

    async def __call__(self, envelope: Envelope) -> None:
        self.envelopes.append(envelope)
        if self.fail_first and len(self.envelopes) == 1:
            raise RuntimeError("handler bug")
        if self.hang:
            await trio.sleep_forever()

    @property
    def ids(self) -> list[str]:
        return [e.envelope_id for e in self.envelopes]


def client(fake: FakeSlack, handler: Recorder, **options: Any) -> SocketModeClient:
    return SocketModeClient(
        api_url=fake.api_url,
        app_token=options.pop("app_token", APP_TOKEN),
        handler=handler,
        backoff=options.pop("backoff", FAST),
        # The fake, like Slack, never answers a close: keep the wait for it short here.
        close_timeout=options.pop("close_timeout", 0.2),
        **options,
    )
