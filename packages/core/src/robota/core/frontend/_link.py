"""A chat transport's connection, pure: what the platform said so far, and the status the host
is told (docs/architecture/chat-transports.md §10).

Every chat platform has the same two things to get right before it serves: who the bot is
(Slack's ``auth.test``, Feishu's bot info: an outbound call that worked) and its inbound link
(Socket Mode, the long connection), which retries on its own and says how it goes. The
transport is ``connected`` once both worked, ``connecting`` with the last error and the next
attempt while either cannot be made, and ``failed`` for good (this run) once the platform
refused a credential: nothing said after that changes it. A status is reported only when it
changes (the link saying ``connected`` again after a reconnection is a change once it said
``connecting``).

``step`` is the machine; the chat service (``_service``) feeds it what happened and reports
what it returns.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._transport import TransportState, TransportStatus

__all__ = [
    "Event",
    "Identified",
    "IdentifyFailed",
    "LinkConnecting",
    "LinkUp",
    "LinkView",
    "PlatformRefused",
    "step",
]


@dataclass(frozen=True, slots=True)
class Identified:
    """The bot's identity was read: an outbound call worked."""


@dataclass(frozen=True, slots=True)
class IdentifyFailed:
    """Reading it failed for now; ``detail``: the error and the next attempt."""

    detail: str


@dataclass(frozen=True, slots=True)
class LinkConnecting:
    """The inbound link is (re)connecting; ``detail``: the last error and the next attempt."""

    detail: str | None = None


@dataclass(frozen=True, slots=True)
class LinkUp:
    """The inbound link is up."""


@dataclass(frozen=True, slots=True)
class PlatformRefused:
    """The platform refused a credential: final for this run."""

    reason: str


Event = Identified | IdentifyFailed | LinkConnecting | LinkUp | PlatformRefused


@dataclass(frozen=True, slots=True)
class LinkView:
    identified: bool = False
    up: bool = False
    refused: str | None = None
    said: TransportStatus | None = None
    """The status last reported."""

    @property
    def serving(self) -> bool:
        return self.refused is None and self.identified and self.up


def step(view: LinkView, event: Event) -> tuple[LinkView, TransportStatus | None]:
    """The view after ``event``, and the status to report (``None``: unchanged)."""
    if view.refused is not None:
        return view, None
    if isinstance(event, PlatformRefused):
        return _say(LinkView(view.identified, view.up, event.reason), "failed", event.reason)
    if isinstance(event, Identified):
        view = LinkView(True, view.up, None, view.said)
    elif isinstance(event, LinkUp):
        view = LinkView(view.identified, True, None, view.said)
    elif isinstance(event, LinkConnecting):
        return _say(LinkView(view.identified, False, None, view.said), "connecting", event.detail)
    elif not view.identified:  # IdentifyFailed before the first success
        return _say(view, "connecting", event.detail)
    if view.serving:
        return _say(view, "connected", None)
    return view, None


def _say(
    view: LinkView, state: TransportState, detail: str | None
) -> tuple[LinkView, TransportStatus | None]:
    status = TransportStatus(state, detail)
    if status == view.said:
        return view, None
    return LinkView(view.identified, view.up, view.refused, status), status
