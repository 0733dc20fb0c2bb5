"""``route_loose_ends``: what of a route the store still has under way (a turn running, a
prompt queued, a message whose reactions are unsettled, its task current on another route),
which keeps a quiet chat's route from being forgotten (issue 28 s.3)."""

from __future__ import annotations

import pytest

from robota.core.store import (
    AcceptInbound,
    BindRouteTask,
    CancelPrompt,
    CreateTask,
    EnqueuePrompt,
    FinishTurnAttempt,
    InsertTurnAttempt,
    SettleInbox,
    open_reader,
    route_loose_ends,
)

ROUTE = "feishu:chat_id:oc_1"
OTHER = "feishu:chat_id:oc_2"


@pytest.fixture
def reader(store):
    db = open_reader(store.path)
    yield db
    db.close()


def test_a_routes_loose_ends_come_and_go_with_its_rows(store, reader) -> None:
    write = store.client.write_sync

    def loose() -> set[str]:
        return set(route_loose_ends(reader, ROUTE))

    assert loose() == set()
    inbox = write(
        AcceptInbound("ev1", "feishu-message:om_1", "feishu", ROUTE, "om_1", "{}"), timeout=5
    )
    assert loose() == {"inbox"}
    write(InsertTurnAttempt("a1", "t1", ROUTE, "hello", inbox=inbox), timeout=5)
    assert loose() == {"inbox", "running"}
    write(FinishTurnAttempt("a1", "completed", final_text="done"), timeout=5)
    assert loose() == {"inbox"}, "its reactions are not settled yet"
    write(SettleInbox("feishu-message:om_1"), timeout=5)
    assert loose() == set()

    prompt = write(EnqueuePrompt(ROUTE, "later"), timeout=5)
    assert loose() == {"queued"}
    write(CancelPrompt(prompt), timeout=5)
    assert loose() == set()

    # Another route's rows are its own.
    write(EnqueuePrompt(OTHER, "theirs"), timeout=5)
    write(InsertTurnAttempt("b1", "t9", OTHER, "theirs"), timeout=5)
    assert loose() == set()

    for task in ("t1", "t2"):
        write(CreateTask(task, "codex", "/p", "acp", at=1.0), timeout=5)
    write(BindRouteTask(ROUTE, "t1", at=2.0), timeout=5)
    assert loose() == set()
    write(BindRouteTask(OTHER, "t1", at=3.0), timeout=5)
    assert loose() == {"shared"}, "its task's session is another route's too"
    write(BindRouteTask(OTHER, "t2", at=4.0), timeout=5)
    assert loose() == set()
