"""The engine's route notices as a surface's host messages, sans-IO.

One notice maps to at most one host message (a dict with its ``type``; the session's stream
stamps its ``seq``)::

    TurnBegan                      user_message{prompt, turnId, restricted}
    InputSteered                   user_message{prompt, turnId, steered: true}
    InputQueued                    user_message{prompt, queued: true, ahead}
    TurnUpdate TextDelta           text_delta{text, itemId, phase}
               ReasoningDelta      thinking{text, itemId}
               ToolStarted         tool_start{toolId, kind, title, command}
               ToolCompleted       tool_end{toolId, state, exitCode}
               ApprovalRequested   permission_request{id, kind, title, command, decisions}
               ApprovalResolved    prompt_resolved{id, result, by, answerer}
    TurnFinished completed         complete{result, turnId}
                 interrupted       interrupted{result, turnId}
                 failed            error{message, category, turnId}
    RouteReply                     command_result{text, level}

What a surface has no message for (plan and usage updates, a tool's output deltas, the agent's
own turn start and end, ``TaskOpened``, ``RouteIdle``) maps to ``None``: the turn's end is
``TurnFinished``'s, once per turn, whichever way the agent ended it.

``TurnDrivers`` then stamps ``driverId`` on every message of a turn and on every input: the
surface whose input it is (``surface:N`` as its ``hello`` said, ``attach:N`` a terminal
attached to a background session), from ``UserInput.message_id`` as the route carried it into
the turn, the steer or the queued prompt; ``null`` when none did (``robota task send``, a turn
robota continued after a restart, whose surfaces were another process's).
"""

from __future__ import annotations

import re
from typing import Any

from ..engine import (
    InputQueued,
    InputSteered,
    RouteReply,
    TurnBegan,
    TurnFinished,
    TurnUpdate,
)
from ..events import (
    ApprovalRequested,
    ApprovalResolved,
    ReasoningDelta,
    TextDelta,
    ToolCompleted,
    ToolStarted,
)

__all__ = ["HOST_TYPES", "MAX_TURNS_FOLLOWED", "TurnDrivers", "host_message"]

HOST_TYPES = (
    "hello",
    "user_message",
    "text_delta",
    "thinking",
    "tool_start",
    "tool_end",
    "complete",
    "interrupted",
    "error",
    "permission_request",
    "prompt_resolved",
    "messages",
    "pending",
    "command_result",
    "protocol_error",
    "resume_gap",
)


def host_message(notice: object) -> dict[str, Any] | None:
    """The host message for one route notice, or ``None`` when a surface shows nothing."""
    if isinstance(notice, TurnUpdate):
        return _event_message(notice.event, notice.attempt_id)
    if isinstance(notice, TurnBegan):
        return {
            "type": "user_message",
            "prompt": notice.prompt,
            "turnId": notice.attempt_id,
            "restricted": notice.restricted,
        }
    if isinstance(notice, InputSteered):
        return {
            "type": "user_message",
            "prompt": notice.text,
            "turnId": notice.attempt_id,
            "steered": True,
        }
    if isinstance(notice, InputQueued):
        return {
            "type": "user_message",
            "prompt": notice.text,
            "queued": True,
            "ahead": notice.ahead,
        }
    if isinstance(notice, TurnFinished):
        if notice.status == "completed":
            return {"type": "complete", "result": notice.final_text, "turnId": notice.attempt_id}
        if notice.status == "interrupted":
            return {"type": "interrupted", "result": notice.final_text, "turnId": notice.attempt_id}
        error = notice.error
        return {
            "type": "error",
            "message": error.message if error is not None else "the turn failed",
            "category": error.category if error is not None else None,
            "turnId": notice.attempt_id,
        }
    if isinstance(notice, RouteReply):
        return {"type": "command_result", "text": notice.text, "level": notice.level}
    return None


def _event_message(event: object, turn_id: str) -> dict[str, Any] | None:
    if isinstance(event, TextDelta):
        return {
            "type": "text_delta",
            "text": event.text,
            "itemId": event.item_id,
            "phase": event.phase,
        }
    if isinstance(event, ReasoningDelta):
        return {"type": "thinking", "text": event.text, "itemId": event.item_id}
    if isinstance(event, ToolStarted):
        return {
            "type": "tool_start",
            "toolId": event.tool_id,
            "kind": event.kind,
            "title": event.title,
            "command": event.command,
            "turnId": turn_id,
        }
    if isinstance(event, ToolCompleted):
        return {
            "type": "tool_end",
            "toolId": event.tool_id,
            "state": event.status,
            "exitCode": event.exit_code,
            "turnId": turn_id,
        }
    if isinstance(event, ApprovalRequested):
        return {
            "type": "permission_request",
            "id": event.approval_id,
            "kind": event.kind,
            "title": event.title,
            "command": event.command,
            "cwd": event.cwd,
            "reason": event.reason,
            "decisions": list(event.decisions),
            "turnId": turn_id,
        }
    if isinstance(event, ApprovalResolved):
        return {
            "type": "prompt_resolved",
            "id": event.approval_id,
            "result": event.decision,
            "by": event.by,
            "answerer": event.answerer,
        }
    return None


_DRIVER = re.compile(r"(?:surface|attach):[0-9]+")
MAX_TURNS_FOLLOWED = 64
"""Turns of one session whose driver is kept until they finish (a turn whose end never came,
its process gone, is forgotten first)."""


class TurnDrivers:
    """Who drives each turn of one session, stamped on its messages as ``driverId``."""

    def __init__(self) -> None:
        self._turns: dict[str, str | None] = {}

    def stamp(self, notice: object, message: dict[str, Any]) -> dict[str, Any]:
        """``message`` (``host_message(notice)``) with its ``driverId`` when it is a turn's
        message or an input's; as it was otherwise (a command's result)."""
        if isinstance(notice, TurnBegan):
            driver = None if notice.recovery else _driver(notice.message_id)
            if len(self._turns) >= MAX_TURNS_FOLLOWED:
                del self._turns[next(iter(self._turns))]
            self._turns[notice.attempt_id] = driver
        elif isinstance(notice, InputSteered | InputQueued):
            driver = _driver(notice.message_id)
        elif isinstance(notice, TurnUpdate):
            driver = self._turns.get(notice.attempt_id)
        elif isinstance(notice, TurnFinished):
            driver = self._turns.pop(notice.attempt_id, None)
        else:
            return message
        message["driverId"] = driver
        return message


def _driver(message_id: str | None) -> str | None:
    return message_id if message_id is not None and _DRIVER.fullmatch(message_id) else None
