"""The registry's JSON is made from each entry's text kept between calls: the same text, byte
for byte, that one ``json.dumps`` of the whole writes, whatever the entries and however often
they change (the store's rows and the readers stay as they were)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from robota.core.policy import (
    Request,
    Running,
    SchedulerState,
    Waiting,
    scheduler_from_json,
    scheduler_to_json,
)


def whole(state: SchedulerState) -> str:
    def request(r: Request) -> dict[str, Any]:
        return {"id": r.id, "sender": r.sender, "intent": r.intent, "tags": list(r.tags)}

    return json.dumps(
        {
            "v": 1,
            "running": [{**request(r.request), "started_at": r.started_at} for r in state.running],
            "queue": [
                {**request(w.request), "queued_at": w.queued_at, "reason": w.reason}
                for w in state.queue
            ],
        },
        ensure_ascii=False,
    )


A = Request("slack:C1:1#m1", "ou_a", "ask", ("read:/p",))
B = Request("feishu:chat_id:oc:request:om#om", "ou_b", "release", ("write:/p/src", "port:80"))
C = Request('a "quoted" id', "ou_名单", "发布", ())

STATES = [
    SchedulerState(),
    SchedulerState(running=(Running(A, 1.5),)),
    SchedulerState(queue=(Waiting(B, 2.0, "slot_full"),)),
    SchedulerState(
        running=(Running(A, 1.5), Running(C, 1e10)),
        queue=(Waiting(B, 2.0, "conflict:path-overlap:write:/p/src~read:/p"), Waiting(A, 3, "x")),
    ),
    SchedulerState(running=(Running(A, 2.5),)),  # the same request started at another time
]


@pytest.mark.parametrize("state", STATES)
def test_the_text_is_what_one_dumps_of_the_whole_writes(state: SchedulerState) -> None:
    text = scheduler_to_json(state)
    assert text == whole(state)
    assert scheduler_from_json(text) == state


def test_entries_kept_between_calls_never_stand_for_others() -> None:
    for _ in range(3):  # again and again, in another order: each state its own text
        for state in reversed(STATES):
            assert scheduler_to_json(state) == whole(state)
