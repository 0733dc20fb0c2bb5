"""A chat transport's connection machine, by table (``robota.core.frontend._link``): what
each event reports, given what was said before."""

from __future__ import annotations

import pytest

from robota.core.frontend import TransportStatus
from robota.core.frontend._link import (
    Event,
    Identified,
    IdentifyFailed,
    LinkConnecting,
    LinkUp,
    LinkView,
    PlatformRefused,
    step,
)

CONNECTED = TransportStatus("connected")


def run(events: list[Event]) -> list[TransportStatus | None]:
    view = LinkView()
    said = []
    for event in events:
        view, status = step(view, event)
        said.append(status)
    return said


@pytest.mark.parametrize(
    ("case", "events", "said"),
    [
        ("identified, then the link", [Identified(), LinkUp()], [None, CONNECTED]),
        ("the link, then identified", [LinkUp(), Identified()], [None, CONNECTED]),
        (
            "the link says up twice: once reported",
            [Identified(), LinkUp(), LinkUp()],
            [None, CONNECTED, None],
        ),
        (
            "identify retries",
            [IdentifyFailed("timeout; next in 1 s"), IdentifyFailed("timeout; next in 2 s")],
            [
                TransportStatus("connecting", "timeout; next in 1 s"),
                TransportStatus("connecting", "timeout; next in 2 s"),
            ],
        ),
        (
            "the same detail twice: once reported",
            [LinkConnecting("refused; next in 1 s"), LinkConnecting("refused; next in 1 s")],
            [TransportStatus("connecting", "refused; next in 1 s"), None],
        ),
        (
            "a refused token is final",
            [PlatformRefused("invalid_auth"), Identified(), LinkUp(), LinkConnecting("x")],
            [TransportStatus("failed", "invalid_auth"), None, None, None],
        ),
        (
            "refused after serving",
            [Identified(), LinkUp(), PlatformRefused("revoked")],
            [None, CONNECTED, TransportStatus("failed", "revoked")],
        ),
        (
            "a reconnection says connecting, then connected again",
            [Identified(), LinkUp(), LinkConnecting("closed; next in 1 s"), LinkUp()],
            [None, CONNECTED, TransportStatus("connecting", "closed; next in 1 s"), CONNECTED],
        ),
        (
            "an identify failure once serving changes nothing",
            [Identified(), LinkUp(), IdentifyFailed("timeout")],
            [None, CONNECTED, None],
        ),
        (
            "connecting with no detail",
            [LinkConnecting()],
            [TransportStatus("connecting")],
        ),
    ],
)
def test_the_connection_machine(
    case: str, events: list[Event], said: list[TransportStatus | None]
) -> None:
    assert run(events) == said, case
