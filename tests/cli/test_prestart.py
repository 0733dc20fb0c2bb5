"""Print mode's prestarted agent: adopted by the engine when it is the task's agent, ended
whenever it is not adopted (a usage error, an exception, another agent's task, Ctrl-C), and
ended by the reaper when robota is SIGKILLed before adopting it.

Every agent command is wrapped in a shell script that logs its pid and agent name and then
``exec``s the agent (same pid), so a test counts exactly which agent processes a run spawned.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ..support.model_server import FakeModel
from ..support.processes import processes_with_home_under
from ..support.real_agents import write_real_agents_config
from ..support.robota import ROBOTA, Robota

SPAWN_LOG = "spawned.log"
WIRE_TAP = Path(__file__).resolve().parents[2] / "tools" / "wire_tap.py"
WRAPPER = '#!/bin/sh\necho "$$ $ROBOTA_AGENT_NAME" >> {log}\nexec "$@"\n'


@pytest.fixture
def model() -> Iterator[FakeModel]:
    with FakeModel() as fake:
        yield fake


def configure(
    robota: Robota, model: FakeModel, *, tap: Path | None = None, **changes: object
) -> None:
    """codex (the default) and codex-acp, each behind the spawn-logging wrapper (and, with
    ``tap``, the wire tap, which logs every JSON-RPC line there)."""
    config = write_real_agents_config(robota, ["codex", "codex-acp"], model.url, model_catalog=True)
    wrapper = robota.root / "spawn-logger"
    wrapper.write_text(WRAPPER.format(log=robota.root / SPAWN_LOG))
    wrapper.chmod(0o755)
    tapped = [sys.executable, "-I", "-S", str(WIRE_TAP), str(tap), "--"] if tap else []
    for agent in config["agents"].values():
        agent["args"] = [*tapped, agent["command"], *agent["args"]]
        agent["command"] = str(wrapper)
    config.update(changes)
    (robota.home / "config.yaml").write_text(json.dumps(config, indent=2))


def spawned(robota: Robota) -> list[tuple[int, str]]:
    """The agent processes started so far: (pid, agent name), in order."""
    log = robota.root / SPAWN_LOG
    if not log.exists():
        return []
    pairs = (line.split() for line in log.read_text().splitlines())
    return [(int(pid), name) for pid, name in pairs]


def robota_log(robota: Robota) -> str:
    return (robota.home / "logs" / "robota.log").read_text()


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def assert_nothing_left(robota: Robota) -> None:
    assert [pid for pid, _ in spawned(robota) if alive(pid)] == []
    assert processes_with_home_under(robota.root / "agents") == []


@pytest.mark.parametrize("agent", ["codex", "codex-acp"])
def test_the_prestarted_agent_is_the_one_that_answers(
    robota: Robota, model: FakeModel, agent: str
) -> None:
    tap = robota.root / "wire.jsonl"
    configure(robota, model, tap=tap)
    done = robota.run("-p", "hello there", "--agent", agent)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ECHO: hello there\n"
    ((pid, name),) = spawned(robota)  # one agent process for the whole run
    assert name == agent
    assert f"agent {agent} adopted (pid {pid}," in robota_log(robota)
    assert_one_handshake(tap)
    assert_nothing_left(robota)


def wire_requests(tap: Path) -> list[tuple[int, str]]:
    """The requests robota wrote to its agent, as the wire tap saw them: (id, method)."""
    entries = [json.loads(line) for line in tap.read_text().splitlines()] if tap.exists() else []
    return [
        (e["id"], e["method"])
        for e in entries
        if e.get("dir") == ">" and {"id", "method"} <= set(e)
    ]


def assert_one_handshake(tap: Path) -> None:
    """``initialize`` went out once, as id 0, and robota's requests go on from id 1."""
    requests = wire_requests(tap)
    assert requests[0] == (0, "initialize")
    assert [method for _, method in requests].count("initialize") == 1
    assert [request_id for request_id, _ in requests] == list(range(len(requests)))


def children_of(pid: int) -> dict[int, bytes]:
    """The live children of ``pid``: their command lines."""
    found = {}
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            stat = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if stat[0] != "Z" and int(stat[1]) == pid:
            found[int(proc.name)] = cmdline
    return found


class WaitingRun:
    """``robota -p ARGS`` reading its prompt from a stdin the test holds open: its agent is
    prestarted and robota waits, before its engine exists, for the test to go on.

    The reaper (robota's watcher process) is stopped meanwhile (SIGSTOP), so whatever ends
    the agent before the reaper is continued was robota itself; ``release`` continues it."""

    def __init__(self, robota: Robota, *args: str) -> None:
        self.robota = robota
        self.process = subprocess.Popen(
            [str(ROBOTA), "-p", *args],
            env=robota.env,
            cwd=robota.root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.reaper = 0
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and self.process.poll() is None:
            reapers = [
                child
                for child, cmdline in children_of(self.process.pid).items()
                if b"robota-reaper" in cmdline
            ]
            if reapers and spawned(robota):
                self.reaper = reapers[0]
                break
            time.sleep(0.02)
        assert self.reaper, "robota started its agent and the reaper"
        os.kill(self.reaper, signal.SIGSTOP)
        ((self.pid, self.agent),) = spawned(robota)

    def finish(self, stdin: str) -> subprocess.CompletedProcess[str]:
        out, err = self.process.communicate(stdin, timeout=60)
        return subprocess.CompletedProcess(self.process.args, self.process.returncode, out, err)

    def release(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.communicate(timeout=30)
        with contextlib.suppress(ProcessLookupError):  # it may have done its work and gone
            os.kill(self.reaper, signal.SIGCONT)


StartWaiting = Callable[..., WaitingRun]


@pytest.fixture
def start_waiting(robota: Robota) -> Iterator[StartWaiting]:
    """Start a ``WaitingRun``; each is released (robota killed, the reaper continued) after
    the test."""
    runs: list[WaitingRun] = []

    def start(*args: str) -> WaitingRun:
        runs.append(WaitingRun(robota, *args))
        return runs[-1]

    yield start
    for run in runs:
        run.release()


def test_another_agents_task_ends_the_prestarted_one_unused(
    robota: Robota, model: FakeModel, start_waiting: StartWaiting
) -> None:
    configure(robota, model)
    first = robota.run("-p", "first", "--agent", "codex-acp", "--output-format", "json")
    assert first.returncode == 0, first.stderr
    task = json.loads(first.stdout)["session_id"]
    assert [name for _, name in spawned(robota)] == ["codex-acp"]
    (robota.root / SPAWN_LOG).unlink()

    run = start_waiting("-r", task, "--output-format", "json")
    assert run.agent == "codex", "the default agent is prestarted"
    again = run.finish("again")
    assert again.returncode == 0, again.stderr
    result = json.loads(again.stdout)
    assert (result["session_id"], result["agent"], result["result"]) == (
        task,
        "codex-acp",
        "ECHO: again",
    )
    # The task's own agent was spawned as usual; robota ended the unused one itself.
    assert [name for _, name in spawned(robota)] == ["codex", "codex-acp"]
    assert "agent codex adopted" not in robota_log(robota)
    assert_nothing_left(robota)


BLOCKED_STORE = {"storage": {"sqlitePath": "./blocked/robota.sqlite"}}
"""The store's directory is a file: opening the engine raises."""


@pytest.mark.parametrize(
    ("args", "changes", "stdin", "outcome"),
    [
        ([], {}, "", (2, "stdin was empty")),
        (["--cwd", "/nonexistent/dir"], {}, "x", (2, "not a directory")),
        ([], BLOCKED_STORE, "x", (1, "FileExistsError")),
    ],
    ids=["usage-error-before-the-engine", "usage-error-in-the-engine", "exception"],
)
def test_a_run_that_fails_after_the_prestart_ends_its_agent(  # noqa: PLR0917 (the table)
    robota: Robota,
    model: FakeModel,
    start_waiting: StartWaiting,
    args: list[str],
    changes: dict[str, object],
    stdin: str,
    outcome: tuple[int, str],
) -> None:
    code, says = outcome
    configure(robota, model, **changes)
    (robota.home / "blocked").write_text("a file where the store's directory should be\n")
    run = start_waiting(*args)
    failed = run.finish(stdin)
    assert failed.returncode == code, failed.stderr
    assert says in failed.stderr
    assert not alive(run.pid), "robota ended its prestarted agent before it exited"
    assert_nothing_left(robota)


def test_ctrl_c_before_the_engine_ends_the_prestarted_agent(
    robota: Robota, model: FakeModel, start_waiting: StartWaiting
) -> None:
    configure(robota, model)
    run = start_waiting()
    run.process.send_signal(signal.SIGINT)
    interrupted = run.finish("")
    assert interrupted.returncode != 0
    assert not alive(run.pid), "robota ended its prestarted agent before it exited"
    assert_nothing_left(robota)


def test_sigkill_before_the_engine_leaves_the_agent_to_the_reaper(
    robota: Robota, model: FakeModel, start_waiting: StartWaiting
) -> None:
    configure(robota, model)
    run = start_waiting()
    run.process.kill()
    run.finish("")
    assert alive(run.pid), "nothing but the reaper can end it, and the reaper is stopped"
    os.kill(run.reaper, signal.SIGCONT)
    deadline = time.monotonic() + 30  # the reaper's grace is 2 s; this only bounds the wait
    while alive(run.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(run.pid), "the reaper ended the agent robota could not"
    assert_nothing_left(robota)


@pytest.mark.parametrize("agent", ["codex", "codex-acp"])
def test_initialize_is_written_at_the_spawn_before_the_engine_exists(
    robota: Robota, model: FakeModel, start_waiting: StartWaiting, agent: str
) -> None:
    tap = robota.root / "wire.jsonl"
    configure(robota, model, tap=tap)
    run = start_waiting("--agent", agent)
    deadline = time.monotonic() + 30  # bounds the wait for the agent to read its stdin
    while not wire_requests(tap) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert wire_requests(tap) == [(0, "initialize")], "written while robota waits on stdin"
    done = run.finish("hello there")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ECHO: hello there\n"
    assert_one_handshake(tap)


@pytest.mark.parametrize(
    "options",
    [
        [],
        ["--permission-mode", "acceptEdits"],
        ["--append-system-prompt", "Answer briefly."],
        ["--restricted"],  # the directory runs Restricted: permission mode plan
    ],
)
def test_a_new_tasks_thread_is_started_ahead_with_the_engines_settings(
    robota: Robota, model: FakeModel, options: list[str]
) -> None:
    """The prestart writes ``thread/start`` (id 1) after ``initialize``; the engine's own
    request has the same params and takes its answer: one ``thread/start`` on the wire (a
    guess with other params would be followed by the engine's, as id 2)."""
    tap = robota.root / "wire.jsonl"
    configure(robota, model, tap=tap)
    done = robota.run("-p", "hello there", "--agent", "codex", *options)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ECHO: hello there\n"
    requests = wire_requests(tap)
    assert requests[:3] == [(0, "initialize"), (1, "thread/start"), (2, "turn/start")]
    assert [method for _, method in requests].count("thread/start") == 1
    assert_nothing_left(robota)


def test_a_continued_task_opens_no_thread_ahead(robota: Robota, model: FakeModel) -> None:
    """``-c``: the task's thread is resumed by the engine; nothing is guessed for it."""
    tap = robota.root / "wire.jsonl"
    configure(robota, model, tap=tap)
    first = robota.run("-p", "first", "--agent", "codex")
    assert first.returncode == 0, first.stderr
    seen = len(wire_requests(tap))
    again = robota.run("-p", "again", "--agent", "codex", "-c")
    assert again.returncode == 0, again.stderr
    assert again.stdout == "ECHO: again\n"
    requests = wire_requests(tap)[seen:]
    assert requests[:3] == [(0, "initialize"), (1, "thread/resume"), (2, "turn/start")]
    assert "thread/start" not in [method for _, method in requests]
