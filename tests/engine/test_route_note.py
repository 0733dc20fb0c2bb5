"""A note the host tells a route (``RouteNote``): said to whoever follows the route, with its
level, and nothing else: no write, no turn, no change to the route's state."""

from __future__ import annotations

import pytest

from robota.core.engine import Notify, RouteNote, RouteReply

from ._route import KEY, route, running_turn, task


@pytest.mark.parametrize(
    ("note", "level"),
    [
        (RouteNote("a peer conversation stopped"), "info"),
        (RouteNote("the reply was not sent", "error"), "error"),
    ],
)
def test_a_note_is_said_on_the_route_and_does_nothing_else(note: RouteNote, level: str) -> None:
    idle = route(current=task())
    assert idle.handle(note) == [Notify(RouteReply(KEY, note.text, level))]
    busy = route(current=task())
    running_turn(busy)
    turn = busy.state.turn
    assert busy.handle(note) == [Notify(RouteReply(KEY, note.text, level))]
    assert busy.state.turn is turn
