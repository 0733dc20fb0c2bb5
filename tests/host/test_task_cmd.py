"""``robota task`` end to end: the real ``robota`` script against a host process (``run_host``,
as ``robota server run`` runs it) with a real ACP agent and the fake model; then the same
profile with no host, where the reads still work and a change is refused with exit 2."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from robota.core.control import probe_host

from ..support.host import (
    host_process,
    sandboxed,
    task,
    task_json,
)
from ..support.model_server import FakeModel
from ..support.processes import processes_with_home_under
from ..support.robota import ROBOTA, Robota

FAULT_AGENT = Path(__file__).parent.parent / "support" / "fault_agent.py"

AGENT = "claude-agent-acp"
"""An agent that forks sessions (codex-acp cannot)."""


@pytest.fixture
def slow_model() -> Iterator[FakeModel]:
    """SLOW runs for minutes: it ends only when ``task stop`` interrupts it."""
    with FakeModel(slow_deltas=4000, slow_delay=0.05) as fake:
        yield fake


def test_task_commands_drive_a_real_agent_through_the_host(
    short_root: Path, slow_model: FakeModel
) -> None:
    robota, profile = sandboxed(short_root, slow_model, AGENT)

    # No host yet: the reads work, a change is refused naming what is missing.
    assert task_json(robota, "list") == []
    refused = task(robota, "new")
    assert refused.returncode == 2
    assert "needs a running host" in refused.stderr and "robota server start" in refused.stderr

    with host_process(robota, profile):
        task_id = new_send_and_list(robota)
        queue_and_stop(robota, task_id)
        fork_id = rename_and_fork(robota, task_id)
        nogroup = task(robota, "newgroup", task_id)
        assert nogroup.returncode == 2
        assert "can create group chats" in nogroup.stderr
    assert not probe_host(profile.host_lock, profile.host_state_file).running

    without_a_host(robota, task_id, fork_id)
    assert processes_with_home_under(short_root / "agents") == []


def new_send_and_list(robota: Robota) -> str:
    created = task_json(robota, "new", "--title", "first")
    task_id: str = created["task"]["id"]
    assert created["route"].startswith("cli:") and created["task"]["title"] == "first"

    sent = task(robota, "send", task_id, "hello cli", "--wait")
    assert (sent.returncode, sent.stdout) == (0, "ECHO: hello cli\n"), sent.stderr

    failed = task(robota, "send", "1", "FAIL400", "--wait")  # a list number names it too
    assert failed.returncode == 1, failed.stdout
    assert "turn failed" in failed.stderr

    listed = task_json(robota, "list")
    assert [(r["number"], r["id"], r["title"]) for r in listed] == [(1, task_id, "first")]
    row = listed[0]
    assert (row["state"], row["route_kind"], row["agent"]) == ("failed", "cli", "claude")
    assert row["cwd"] == str(robota.root) and row["last_activity"] > 0
    table = task(robota, "list")
    assert table.returncode == 0 and task_id in table.stdout and "failed" in table.stdout
    return task_id


def queue_and_stop(robota: Robota, task_id: str) -> None:
    """A turn runs; a prompt sent meanwhile waits in the queue, is cancelled; the turn is
    stopped."""
    started = task_json(robota, "send", task_id[:6], "SLOW")  # a unique id prefix
    assert started["outcome"]["kind"] == "started"
    queued = task_json(robota, "send", task_id, "after the slow one")
    assert queued["outcome"]["kind"] == "queued"
    prompt_id = queued["outcome"]["prompt_id"]

    listing = task(robota, "queue", task_id)
    assert listing.returncode == 0, listing.stderr
    assert re.search(rf"^{prompt_id}: after the slow one$", listing.stdout, re.MULTILINE)
    cancelled = task(robota, "queue", task_id, "cancel", str(prompt_id))
    assert cancelled.returncode == 0 and f"cancelled queued prompt {prompt_id}" in cancelled.stdout
    assert task(robota, "queue", task_id).stdout == "the queue is empty\n"

    stopped = task(robota, "stop", task_id)
    assert (stopped.returncode, stopped.stdout) == (0, f"task {task_id}: stopped\n")
    assert task_json(robota, "status", task_id)["state"] == "interrupted"

    # --wait is bounded on its own: past --timeout the turn goes on, and the command says so.
    waited = task(robota, "send", task_id, "SLOW", "--wait", "--timeout", "1")
    assert waited.returncode == 1 and "no end within 1 s; the turn goes on" in waited.stderr
    assert task_json(robota, "status", task_id)["state"] == "running"
    assert task(robota, "stop", task_id).stdout == f"task {task_id}: stopped\n"
    again = task(robota, "stop", task_id)  # said once, not also in the route's words
    assert (again.returncode, again.stdout) == (0, f"task {task_id}: no turn was running\n")


def rename_and_fork(robota: Robota, task_id: str) -> str:
    renamed = task(robota, "rename", "1", "the renamed one")
    assert renamed.returncode == 0, renamed.stderr
    assert "the renamed one" in renamed.stdout

    forked = task_json(robota, "fork", task_id, "--title", "forked")
    fork_id: str = forked["task"]["id"]
    assert fork_id != task_id and forked["task"]["forked_from"] == task_id
    assert forked["task"]["title"] == "forked"
    history = task(robota, "send", fork_id, "HISTORY", "--wait")
    assert history.returncode == 0, history.stderr
    assert history.stdout.startswith("HISTORY: hello cli | ")
    return fork_id


def without_a_host(robota: Robota, task_id: str, fork_id: str) -> None:
    """The host is gone: the store still answers, changes are refused."""
    status = task_json(robota, "status", task_id)
    assert (status["title"], status["state"]) == ("the renamed one", "interrupted")
    assert status["number"] == 2
    assert status["last_turn"]["prompt"] == "SLOW"
    listed = task_json(robota, "list")
    assert [(r["number"], r["id"]) for r in listed] == [(1, fork_id), (2, task_id)]
    assert task_json(robota, "list", "--all") == listed
    # Inside an agent robota started, TASK may be omitted.
    by_id = task_json(robota, "status", env={"ROBOTA_TASK_ID": fork_id})
    assert by_id["id"] == fork_id
    # Codex's thread id names a task by its agent session.
    by_thread = task_json(robota, "status", env={"CODEX_THREAD_ID": status["remote_id"]})
    assert by_thread["id"] == task_id
    no_task = task(robota, "status")
    assert no_task.returncode == 2 and "give TASK" in no_task.stderr

    offline = task(robota, "send", "2", "anyone?")
    assert offline.returncode == 2 and "needs a running host" in offline.stderr
    renaming = task(robota, "rename", task_id, "x")
    assert renaming.returncode == 2 and "needs a running host" in renaming.stderr


def test_inside_an_agents_terminal_task_names_itself(short_root: Path, model: FakeModel) -> None:
    """What an ACP agent runs in robota's terminals knows its task (``ROBOTA_TASK_ID``), so
    ``robota task`` there needs no TASK; and it never sees robota's secrets."""
    robota, profile = sandboxed(short_root, model, "codex-acp")
    config_file = robota.home / "config.yaml"
    config = json.loads(config_file.read_text())
    fault = {"kind": "acp", "command": sys.executable, "args": [str(FAULT_AGENT)]}
    config["agents"]["fault"] = fault
    config_file.write_text(json.dumps(config))
    (robota.root / "bin" / "robota").symlink_to(ROBOTA)  # on PATH, as an installed one is

    with host_process(robota, profile, {"FEISHU_APP_SECRET": "s3cret"}):
        task_id = task_json(robota, "new", "--agent", "fault")["task"]["id"]
        inside = task(robota, "send", task_id, "TERMINAL robota task status --json", "--wait")
        assert inside.returncode == 0, inside.stderr
        assert inside.stdout.startswith("terminal: {")
        assert f'"id": "{task_id}"' in inside.stdout
        secret = task(robota, "send", task_id, "TERMINAL echo ${FEISHU_APP_SECRET-none}", "--wait")
        assert secret.stdout == "terminal: none\n\n", secret.stderr
    assert processes_with_home_under(short_root / "agents") == []
