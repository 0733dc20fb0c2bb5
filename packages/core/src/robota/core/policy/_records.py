"""The scheduler's state and the pending confirmations as JSON text, for the store's team row.

A versioned, explicit encoding (``{"v": 1, ...}``), so a registry written by this robota is read
back field by field and a malformed or future one is refused with ``ValueError`` instead of
being half understood: a team actor that cannot read its registry must say so, not run a queue
in the wrong order.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from ._confirm import Pending
from ._scheduler import Request, Running, SchedulerState, Waiting

__all__ = [
    "confirmations_from_json",
    "confirmations_to_json",
    "scheduler_from_json",
    "scheduler_to_json",
]

_VERSION = 1


def _request(request: Request) -> dict[str, Any]:
    return {
        "id": request.id,
        "sender": request.sender,
        "intent": request.intent,
        "tags": list(request.tags),
    }


def _read_request(raw: Any) -> Request:
    return Request(
        str(raw["id"]), str(raw["sender"]), str(raw["intent"]), tuple(map(str, raw["tags"]))
    )


def scheduler_to_json(state: SchedulerState) -> str:
    # What json.dumps writes for the whole, from each entry's text kept between calls: a team
    # actor saves its registry on every decision, and a burst of requests changes one entry
    # of a long queue at a time.
    running = ", ".join(map(_running_json, state.running))
    queue = ", ".join(map(_waiting_json, state.queue))
    return f'{{"v": {_VERSION}, "running": [{running}], "queue": [{queue}]}}'


@functools.lru_cache(maxsize=1024)
def _running_json(entry: Running) -> str:
    return json.dumps(
        {**_request(entry.request), "started_at": entry.started_at}, ensure_ascii=False
    )


@functools.lru_cache(maxsize=1024)
def _waiting_json(entry: Waiting) -> str:
    raw = {**_request(entry.request), "queued_at": entry.queued_at, "reason": entry.reason}
    return json.dumps(raw, ensure_ascii=False)


def scheduler_from_json(text: str) -> SchedulerState:
    """The state ``scheduler_to_json`` wrote; ``{}`` (a team never saved) is the empty state."""
    raw = json.loads(text)
    if raw == {}:
        return SchedulerState()
    version = raw.get("v") if isinstance(raw, dict) else type(raw).__name__
    if version != _VERSION:
        raise ValueError(f"a team registry in an unknown format ({version!r})")
    try:
        return SchedulerState(
            tuple(Running(_read_request(r), float(r["started_at"])) for r in raw["running"]),
            tuple(
                Waiting(_read_request(w), float(w["queued_at"]), str(w["reason"]))
                for w in raw["queue"]
            ),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"a malformed team registry ({error!r})") from error


def confirmations_to_json(pending: tuple[Pending, ...]) -> str:
    return json.dumps(
        [
            {
                "thread": p.thread,
                "sender": p.sender,
                "intent": p.intent,
                "args": p.args,
                "asked_at": p.asked_at,
            }
            for p in pending
        ],
        ensure_ascii=False,
    )


def confirmations_from_json(text: str) -> tuple[Pending, ...]:
    raw = json.loads(text)
    items: list[Any] = raw if isinstance(raw, list) else []
    if items is not raw:
        raise ValueError("pending confirmations that are not a list")
    try:
        return tuple(
            Pending(
                str(p["thread"]),
                str(p["sender"]),
                str(p["intent"]),
                str(p["args"]),
                float(p["asked_at"]),
            )
            for p in items
        )
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"malformed pending confirmations ({error!r})") from error
