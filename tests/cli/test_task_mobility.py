"""``robota task list/status --json`` name what a handoff did to a task: ``moving``, ``moved``
with ``movedTo``, or ``held``, read from a real store file."""

from __future__ import annotations

import json

from robota.core.store import (
    CommitHeldTask,
    CreateTask,
    HeldTask,
    LetGoTask,
    MoveHandoff,
    OfferHandoff,
    ReceiveHandoff,
    migrate,
)
from robota.core.store._connection import open_writer

from ..support.robota import Robota


def _offer(handoff: str, task: str) -> OfferHandoff:
    return OfferHandoff(
        handoff=handoff,
        task=task,
        peer="DEST-DEVICE",
        payload=b"{}",
        manifest_length=2,
        manifest_sha256=b"\0" * 32,
        manifest={},
        grant=b"g",
        expires_at=1e12,
        at=5.0,
    )


CONFIG = """\
agents:
  codex:
    kind: app-server
    command: codex
defaults:
  agent: codex
"""


def _fill(robota: Robota) -> None:
    (robota.home / "data").mkdir(parents=True)
    (robota.home / "config.yaml").write_text(CONFIG)
    db = open_writer(robota.home / "data" / "robota.sqlite")
    try:
        migrate(db)
        for n, task in enumerate(("plain", "moving", "moved")):
            CreateTask(task, "codex", "/w", "app-server", title=task, at=float(n)).apply(db)
        _offer("h1", "moving").apply(db)
        _offer("h2", "moved").apply(db)
        MoveHandoff(handoff="h2", side="source", expected=("offered",), to="transferring").apply(db)
        LetGoTask(handoff="h2").apply(db)
        ReceiveHandoff(
            handoff="h3",
            task="held",
            peer="SRC-DEVICE",
            nonce=b"\1" * 16,
            manifest_length=2,
            manifest_sha256=b"\0" * 32,
            manifest={},
            grant=b"g",
            expires_at=1e12,
        ).apply(db)
        for expected, to in (("offered", "transferring"), ("transferring", "staged")):
            MoveHandoff(handoff="h3", side="destination", expected=(expected,), to=to).apply(db)
        held = HeldTask(id="held", agent="codex", runtime_kind="app-server", cwd="/w")
        CommitHeldTask(handoff="h3", task=held, transcript=(), ack=b"a").apply(db)
    finally:
        db.close()


def test_task_list_names_moving_moved_and_held_tasks(robota: Robota) -> None:
    _fill(robota)
    completed = robota.run("task", "list", "--json", "--all")
    assert completed.returncode == 0, completed.stderr
    listed = {row["id"]: row for row in json.loads(completed.stdout)}
    assert listed["plain"]["state"] == "new" and "movedTo" not in listed["plain"]
    assert listed["moving"]["state"] == "moving" and "movedTo" not in listed["moving"]
    assert (listed["moved"]["state"], listed["moved"]["movedTo"]) == ("moved", "DEST-DEVICE")
    assert listed["held"]["state"] == "held"
    status = robota.run_json("task", "status", "moved")
    assert (status["state"], status["movedTo"]) == ("moved", "DEST-DEVICE")


def test_the_text_list_and_status_say_where_a_moved_task_went(robota: Robota) -> None:
    _fill(robota)
    listed = robota.run("task", "list", "--all")
    assert listed.returncode == 0, listed.stderr
    rows = {line.split()[1]: line for line in listed.stdout.splitlines()[1:]}
    assert "moved to DEST-DEVICE" in rows["moved"]
    assert " moving " in rows["moving"] and "DEST-DEVICE" not in rows["moving"]
    status = robota.run("task", "status", "moved")
    assert "state moved to DEST-DEVICE;" in status.stdout, status.stdout
