"""The engine as a real process, killed with SIGKILL mid-turn and started again on its database.

Each run is ``engine_process.py`` (the real ``Engine``, the fault ACP agent as its child, recovery
on for its one route) in a session of its own; the test feeds it prompts on stdin and reads every
notice it delivered as a JSON line on stdout. SIGKILL leaves no chance to clean up: what the
next start finds is exactly what had been committed; the agent process learns of the kill by the
end of its stdin, and robota's reaper (a watcher process of its own) ends its process group.

What "exactly once" means here. A turn's end is written (``FinishTurnAttempt``), then its final
answer is claimed in the delivery ledger (``RecordFinalDelivery``), and only the run that won
the claim delivers it, after the claim committed. So a final answer is never delivered twice,
whatever is killed when; and a final whose line is in a killed run's output was delivered (the
runner writes each line into the pipe before the engine's delivery returns). The one loss
allowed: a kill after the claim committed and before the line was written loses that display
line, never the answer itself, which stays in the database (``turn_attempts.final_text``, the
task's ``last_turn_status``), and is never sent again.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from robota.core.engine import recovery_prompt
from robota.core.store import (
    Database,
    FinishTurnAttempt,
    InsertTurnAttempt,
    RecordFinalDelivery,
    TakeQueuedTurn,
    TurnAttempt,
    WriteOp,
    open_reader,
)

from ..support.agent_actor import alive, pids

RUNNER = Path(__file__).with_name("engine_process.py")
ROUTE = "console:sigkill"  # engine_process.ROUTE
RECOVERY_PREFIX = recovery_prompt("")
Line = dict[str, Any]


# -- one engine process ------------------------------------------------------------------------


@dataclass
class EngineProcess:
    """One run of ``engine_process.py``; ``lines`` fills from its stdout as it writes."""

    index: int
    process: subprocess.Popen[bytes]
    stderr: Path
    started_at: float
    lines: list[Line] = field(default_factory=list)
    killed_at: float | None = None
    _changed: threading.Condition = field(default_factory=threading.Condition)
    _reader: threading.Thread | None = None

    def __post_init__(self) -> None:
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        for raw in stdout:
            try:
                line = json.loads(raw)
            except ValueError:
                line = {"type": "Unparsed", "raw": raw.decode(errors="replace")}
            with self._changed:
                self.lines.append(line)
                self._changed.notify_all()

    # -- reading -------------------------------------------------------------------------------

    def snapshot(self) -> list[Line]:
        with self._changed:
            return list(self.lines)

    def of(self, kind: str) -> list[Line]:
        return [line for line in self.snapshot() if line["type"] == kind]

    def wait(
        self,
        done: Callable[[list[Line]], bool],
        what: str,
        *,
        timeout: float = 20.0,
        or_else: Callable[[], bool] | None = None,
    ) -> bool:
        """Wait until ``done(lines)`` (returns True) or ``or_else()`` (polled; returns False)."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                if done(self.lines):
                    return True
                if or_else is not None and or_else():
                    return False
                left = deadline - time.monotonic()
                if left <= 0 or self.process.poll() is not None:
                    break
                self._changed.wait(min(left, 0.05))
        raise AssertionError(f"run {self.index}: no {what} within {timeout:g} s\n{self.report()}")

    def ready(self) -> None:
        self.wait(lambda lines: any(line["type"] == "Ready" for line in lines), "Ready")

    def report(self) -> str:
        kinds = " ".join(line["type"] for line in self.snapshot())
        return f"exit {self.process.poll()}; lines: {kinds}\nstderr:\n{self.stderr.read_text()}"

    # -- driving -------------------------------------------------------------------------------

    def send(self, text: str) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(json.dumps({"input": text}).encode() + b"\n")
        stdin.flush()

    def sigkill(self) -> None:
        self.killed_at = time.time()
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)
        self._join()

    def finish(self) -> None:
        """End of input: the engine stops cleanly and the process exits 0."""
        stdin = self.process.stdin
        assert stdin is not None
        stdin.close()
        self.process.wait(timeout=20)
        self._join()
        assert self.process.returncode == 0, self.report()

    def _join(self) -> None:
        assert self._reader is not None
        self._reader.join(timeout=10)
        assert not self._reader.is_alive(), "stdout stayed open after the engine process ended"

    def stop(self) -> None:
        """Cleanup: whatever state it is in, the process is gone afterwards."""
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.process.wait(timeout=10)
        if self._reader is not None:
            self._reader.join(timeout=10)  # before its stream is closed under it
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()


class Engines:
    """Starts engine processes on one database and ends every one of them (and the agents they
    started) at teardown."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.db = tmp / "robota.db"
        self.runs: list[EngineProcess] = []

    def start(self, *options: str) -> EngineProcess:
        index = len(self.runs) + 1
        stderr = self.tmp / f"engine-{index}.stderr"
        with stderr.open("wb") as err:
            process = subprocess.Popen(
                [sys.executable, str(RUNNER), str(self.db), str(self.tmp), *options],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                start_new_session=True,
            )
        run = EngineProcess(index, process, stderr, time.time())
        self.runs.append(run)
        return run

    def agents_exit(self, timeout: float = 5.0) -> None:
        """Every agent process any run started has ended (within ``timeout``)."""
        deadline = time.monotonic() + timeout
        while (left := [pid for pid in pids(self.tmp) if alive(pid)]) and (
            time.monotonic() < deadline
        ):
            time.sleep(0.02)
        assert not left, f"agent processes {left} outlived their engine"

    def close(self) -> None:
        for run in self.runs:
            run.stop()
            # Next to the stderr files, for a post-mortem of a failed run.
            lines = "".join(json.dumps(line) + "\n" for line in run.snapshot())
            (self.tmp / f"engine-{run.index}.jsonl").write_text(lines)
        for pid in pids(self.tmp):
            if alive(pid) and _is_fault_agent(pid):
                os.kill(pid, signal.SIGKILL)


def _is_fault_agent(pid: int) -> bool:
    try:
        return b"fault_agent.py" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


@pytest.fixture
def engines(tmp_path: Path) -> Iterator[Engines]:
    started = Engines(tmp_path)
    try:
        yield started
    finally:
        started.close()


# -- the database -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stored:
    """What the database holds after the runs."""

    attempts: list[TurnAttempt]
    """Oldest first."""
    delivered_at: dict[str, float | None]
    """Final-delivery ledger: attempt id -> when its final was claimed."""
    queue: list[tuple[str, str]]
    """(text, status) of every queued prompt, in queue order."""

    def by_id(self) -> dict[str, TurnAttempt]:
        return {a.id: a for a in self.attempts}

    def completed(self) -> list[TurnAttempt]:
        done = [a for a in self.attempts if a.status == "completed"]
        return sorted(done, key=lambda a: a.finished_at or 0.0)

    def pending(self) -> list[str]:
        return [text for text, status in self.queue if status == "pending"]


def stored(db_path: Path) -> Stored:
    with closing(open_reader(db_path)) as db:
        attempts = [
            TurnAttempt.from_row(row)
            for row in db.query("SELECT * FROM turn_attempts ORDER BY created_at, rowid")
        ]
        ledger = {
            str(row["turn_id"]): row["final_delivered_at"]
            for row in db.query("SELECT turn_id, final_delivered_at FROM final_deliveries")
        }
        queue = [
            (str(row["text"]), str(row["status"]))
            for row in db.query("SELECT text, status FROM queued_prompts ORDER BY id")
        ]
    return Stored(attempts, ledger, queue)


def doctor(db_path: Path, *ops: WriteOp[Any]) -> None:
    """Apply ``ops`` in one transaction while no engine runs: the state a kill at one of the
    engine's crash points leaves."""
    db = Database(sqlite3.connect(db_path))
    try:
        with db.conn:
            for op in ops:
                op.apply(db)
    finally:
        db.close()


def original(prompt: str) -> str:
    """The prompt a person typed, under any number of recovery prefixes."""
    while prompt.startswith(RECOVERY_PREFIX):
        prompt = prompt.removeprefix(RECOVERY_PREFIX)
    return prompt


def kinds(lines: list[Line], *wanted: str) -> list[Line]:
    return [line for line in lines if line["type"] in wanted]


def count(kind: str, at_least: int) -> Callable[[list[Line]], bool]:
    return lambda lines: len(kinds(lines, kind)) >= at_least


def idle_after(kind: str, at_least: int) -> Callable[[list[Line]], bool]:
    """``at_least`` lines of ``kind``, then ``RouteIdle``."""

    def done(lines: list[Line]) -> bool:
        seen = [i for i, line in enumerate(lines) if line["type"] == kind]
        idle = [i for i, line in enumerate(lines) if line["type"] == "RouteIdle"]
        return len(seen) >= at_least and bool(idle) and idle[-1] > seen[at_least - 1]

    return done


def turn_started(lines: list[Line]) -> bool:
    return any(line["type"] == "TurnUpdate" and line["event"] == "TurnStarted" for line in lines)


def killed_with_a_hang_and_a_queue(engines: Engines, *queued: str) -> Line:
    """A first run killed while ``HANG a`` runs and ``queued`` wait; returns its ``TurnBegan``
    once the run and its agent process are gone."""
    run = engines.start()
    run.ready()
    run.send("HANG a")
    run.wait(turn_started, "TurnStarted")
    for text in queued:
        run.send(text)
    run.wait(count("InputQueued", len(queued)), "InputQueued")
    assert len(pids(engines.tmp)) == 1, "one agent process"
    run.sigkill()
    engines.agents_exit()  # end of its stdin, and the reaper
    assert not run.of("TurnFinished")
    assert not run.of("Unparsed")
    [began] = run.of("TurnBegan")
    return began


# -- one kill in the middle of a turn ---------------------------------------------------------

QUEUED = ("queued one", "queued two", "queued three")


def test_a_sigkilled_engine_continues_its_turn_and_keeps_the_queue(engines: Engines) -> None:
    cut_short = killed_with_a_hang_and_a_queue(engines, *QUEUED)
    left = stored(engines.db)
    [running] = left.attempts
    assert (running.id, running.status) == (cut_short["attempt_id"], "running")
    assert left.pending() == list(QUEUED)
    assert cut_short["attempt_id"] not in left.delivered_at

    second = engines.start()
    second.wait(idle_after("TurnFinished", 4), "4 TurnFinished, then RouteIdle")
    second.finish()
    engines.agents_exit()  # a clean stop ends the agent too
    began, finished = second.of("TurnBegan"), second.of("TurnFinished")
    expected = [recovery_prompt("HANG a"), *QUEUED]
    assert [b["prompt"] for b in began] == expected
    assert [b["recovery"] for b in began] == [True, False, False, False]
    assert [(f["status"], f["final_text"]) for f in finished] == [
        ("completed", f"echo: {prompt}") for prompt in expected
    ]
    assert [f["attempt_id"] for f in finished] == [b["attempt_id"] for b in began]
    assert len({f["attempt_id"] for f in finished} | {cut_short["attempt_id"]}) == 5
    assert "continuing it in a new turn" in " ".join(r["text"] for r in second.of("RouteReply"))
    assert kinds(second.snapshot(), "TurnFinished", "RouteIdle")[-1]["type"] == "RouteIdle"

    after = stored(engines.db)
    attempts = after.by_id()
    assert attempts[cut_short["attempt_id"]].status == "interrupted"
    assert attempts[cut_short["attempt_id"]].final_text is None
    assert [(a.prompt, a.status) for a in after.attempts] == [
        ("HANG a", "interrupted"),
        *((prompt, "completed") for prompt in expected),
    ]
    for line in finished:
        assert attempts[line["attempt_id"]].final_text == line["final_text"]
    assert set(after.delivered_at) == set(attempts), "every attempt's final is claimed"
    assert all(at is not None for at in after.delivered_at.values())
    assert after.queue == [(text, "taken") for text in QUEUED]

    third = engines.start()
    third.ready()
    time.sleep(0.5)
    third.finish()
    assert [line["type"] for line in third.snapshot()] == ["Ready"], third.report()
    assert stored(engines.db) == after, "a start with nothing left changes nothing"


# -- several kills at different points -------------------------------------------------------

PROMPTS = tuple(f"step {n}" for n in range(1, 7))
AGENT_DELAY = 0.12
"""Seconds the agent takes per answer, so kills can land inside turns."""
AGENT_OPTION = ("--agent-delay", str(AGENT_DELAY))
KILL_POINTS = ("mid-turn", "after-final", "in-recovery", "after-final", "anywhere")
SEEDS = [int(seed) for seed in os.environ.get("ROBOTA_SIGKILL_SEED", "7 23").split()]
"""``ROBOTA_SIGKILL_SEED="1 2 3"`` tries other kill schedules."""


def quiet(now: Stored) -> bool:
    """Nothing runs or waits, and every attempt's final is claimed."""
    return not now.pending() and all(
        a.status in ("completed", "failed", "interrupted")
        and now.delivered_at.get(a.id) is not None
        for a in now.attempts
    )


def all_answered(now: Stored) -> bool:
    return sorted(original(a.prompt) for a in now.completed()) == sorted(PROMPTS)


def kill_when(run: EngineProcess, point: str, delay: float, db: Path) -> bool:
    """Wait for ``point`` in ``run``, then ``delay`` s; False if all work was done first."""
    if point in ("mid-turn", "after-final"):
        kind = "TurnBegan" if point == "mid-turn" else "TurnFinished"
        seen = len(run.of(kind))

        def done() -> bool:
            now = stored(db)
            return all_answered(now) and quiet(now)

        if not run.wait(count(kind, seen + 1), kind, or_else=done):
            return False
    else:
        run.ready()
    time.sleep(delay)
    return True


def settle(run: EngineProcess, db: Path) -> None:
    """Let the last run go to the end: nothing left to run, every final it claimed delivered,
    and all prompts answered (or its route idle, when one was lost; the checks say which)."""

    def settled(lines: list[Line]) -> bool:
        if not any(line["type"] == "Ready" for line in lines):
            return False
        now = stored(db)
        shown = {line["attempt_id"] for line in lines if line["type"] == "TurnFinished"}
        claimed = now.delivered_at
        mine = {a.id for a in now.completed() if (claimed.get(a.id) or 0) >= run.started_at}
        if not quiet(now) or not mine <= shown:
            return False
        if all_answered(now):
            return True
        turns = kinds(lines, "TurnBegan", "TurnFinished", "RouteIdle")
        return not turns or turns[-1]["type"] == "RouteIdle"

    run.wait(settled, "the last run to settle", timeout=30)
    run.finish()


@pytest.mark.parametrize("seed", SEEDS)
def test_repeated_sigkills_answer_every_prompt_once_and_in_order(
    engines: Engines, seed: int
) -> None:
    """Kills mid-turn, right after a final was delivered (while the next prompt is taken from
    the queue), during recovery and at random, in a seeded order and with seeded delays; then a
    run to the end. Every prompt is answered exactly once over all runs, in order (see the
    module docstring for what "once" promises)."""
    rng = random.Random(seed)
    delays: dict[str, Callable[[], float]] = {
        "mid-turn": lambda: rng.uniform(0, AGENT_DELAY),
        "after-final": lambda: 0.0,
        "in-recovery": lambda: rng.uniform(0, 0.03),
        "anywhere": lambda: rng.uniform(0, 4 * AGENT_DELAY),
    }
    schedule = [(point, delays[point]()) for point in rng.sample(KILL_POINTS, len(KILL_POINTS))]

    run = engines.start(*AGENT_OPTION)
    run.ready()
    for prompt in PROMPTS:
        run.send(prompt)
    run.wait(lambda ls: count("TurnBegan", 1)(ls) and count("InputQueued", 5)(ls), "queue")
    fired: list[str] = []
    for point, delay in schedule:
        if not kill_when(run, point, delay, engines.db):
            break
        run.sigkill()
        fired.append(f"{point}+{delay * 1000:.0f}ms")
        engines.agents_exit()
        run = engines.start(*AGENT_OPTION)
    settle(run, engines.db)
    engines.agents_exit()

    summary = f"seed {seed}: kills {fired}; {len(engines.runs)} runs"
    lost = check_exactly_once(engines, summary)

    again = engines.start(*AGENT_OPTION)
    again.ready()
    time.sleep(0.3)
    again.finish()
    assert [line["type"] for line in again.snapshot()] == ["Ready"], again.report()
    print(f"{summary}; display lines lost to a kill: {lost}")


def check_exactly_once(engines: Engines, summary: str) -> list[str]:
    """Check the outputs of every run against the database; return the prompts whose final
    display line a kill took (their answers are in the database, claimed once)."""
    lines = [line for r in engines.runs for line in r.snapshot()]  # in the order seen
    assert not kinds(lines, "Unparsed"), summary
    after = stored(engines.db)
    attempts = after.by_id()

    # No final twice, and each delivered line is what the database says the attempt answered.
    finals = kinds(lines, "TurnFinished")
    twice = [a for a, n in Counter(line["attempt_id"] for line in finals).items() if n > 1]
    assert not twice, f"{summary}: finals delivered twice: {twice}"
    for line in finals:
        attempt = attempts[line["attempt_id"]]
        expected = ("completed", f"echo: {attempt.prompt}")
        assert (line["status"], line["final_text"]) == expected, summary
        assert attempt.final_text == line["final_text"], summary

    # Every prompt ran (a prompt taken from the queue is recorded as its turn in the same
    # write: see test_a_kill_right_after_a_queued_prompt_became_its_turn_continues_it).
    begun = {original(a.prompt) for a in after.attempts}
    dropped = [p for p in PROMPTS if p not in begun]
    assert not dropped, f"{summary}: {dropped} never ran; queue: {after.queue}"

    # Exactly one completed attempt per prompt, finished in the order the prompts were given.
    completed = after.completed()
    assert [original(a.prompt) for a in completed] == list(PROMPTS), summary
    # Its final was claimed; its line is in some run's output, or the run that claimed it was
    # killed before it could write the line (the answer is in the database all the same).
    shown = {line["attempt_id"] for line in finals}
    killed = [r for r in engines.runs if r.killed_at is not None]
    lost = []
    for attempt in completed:
        claimed = after.delivered_at[attempt.id]
        assert claimed is not None, summary
        if attempt.id in shown:
            continue
        lost.append(original(attempt.prompt))
        assert attempt.final_text == f"echo: {attempt.prompt}", summary
        assert any(r.started_at <= claimed <= (r.killed_at or 0.0) for r in killed), (
            f"{summary}: {attempt.prompt!r} was claimed outside a killed run and never shown"
        )
    answered = [original(attempts[line["attempt_id"]].prompt) for line in finals]
    assert answered == [p for p in PROMPTS if p not in lost], summary

    # Every turn a kill cut short ends interrupted without a final, and is continued exactly
    # once by a recovery turn (the note is said once, so a recovery cut short is continued by a
    # turn with the same prompt): per prompt, the attempts in order are interrupted ones, then
    # one completed. Turns began in prompt order over all runs.
    for attempt in after.attempts:
        assert attempt.status in ("completed", "interrupted"), summary
        if attempt.status == "interrupted":
            assert attempt.final_text is None, summary
    for prompt in PROMPTS:
        chain = sorted(
            (a for a in after.attempts if a.prompt in (prompt, recovery_prompt(prompt))),
            key=lambda a: a.created_at,
        )
        statuses = [a.status for a in chain]
        assert statuses == ["interrupted"] * (len(chain) - 1) + ["completed"], (
            f"{summary}: {prompt!r} ran as {statuses}"
        )
        assert all(a.prompt == recovery_prompt(prompt) for a in chain[1:]), summary
    began = [original(line["prompt"]) for line in kinds(lines, "TurnBegan")]
    assert began == sorted(began, key=PROMPTS.index), summary
    assert set(after.delivered_at) == set(attempts), summary
    assert after.queue == [(p, "taken") for p in PROMPTS[1:]], summary
    return lost


# -- kills at the engine's crash points (states built: the windows are too narrow to aim at) ----


def test_a_kill_between_a_turns_end_and_its_claim_delivers_the_final_once(
    engines: Engines,
) -> None:
    """The turn's end is written, the kill comes before its final is claimed: the next start
    delivers that final (once), then runs the queue; the start after delivers nothing."""
    hang = killed_with_a_hang_and_a_queue(engines, "b")
    doctor(
        engines.db,
        FinishTurnAttempt(hang["attempt_id"], "completed", final_text="echo: HANG a"),
    )
    second = engines.start()
    second.wait(idle_after("TurnFinished", 2), "2 TurnFinished, then RouteIdle")
    second.finish()
    finished = second.of("TurnFinished")
    assert [(f["attempt_id"], f["final_text"]) for f in finished] == [
        (hang["attempt_id"], "echo: HANG a"),
        (second.of("TurnBegan")[0]["attempt_id"], "echo: b"),
    ]
    assert [b["prompt"] for b in second.of("TurnBegan")] == ["b"]
    third = engines.start()
    third.ready()
    time.sleep(0.3)
    third.finish()
    assert [line["type"] for line in third.snapshot()] == ["Ready"], third.report()


def test_a_kill_right_after_a_queued_prompt_became_its_turn_continues_it(
    engines: Engines,
) -> None:
    """The prompt is taken from the queue and recorded as its attempt in one write; a kill
    right after it leaves an attempt to continue, never a prompt taken and lost."""
    hang = killed_with_a_hang_and_a_queue(engines, "b", "c")
    # The HANG turn ended and its final was delivered; "b" became its turn; then the kill.
    doctor(
        engines.db,
        FinishTurnAttempt(hang["attempt_id"], "completed", final_text="echo: HANG a"),
        RecordFinalDelivery(hang["attempt_id"]),
        TakeQueuedTurn(ROUTE, "attempt-b", hang["task_id"]),
    )
    run = engines.start()
    run.wait(idle_after("TurnFinished", 2), "2 TurnFinished, then RouteIdle")
    run.finish()
    assert [(b["prompt"], b["recovery"]) for b in run.of("TurnBegan")] == [
        (recovery_prompt("b"), True),
        ("c", False),
    ]
    assert [f["final_text"] for f in run.of("TurnFinished")] == [
        f"echo: {recovery_prompt('b')}",
        "echo: c",
    ]
    attempts = stored(engines.db).by_id()
    assert attempts["attempt-b"].status == "interrupted"


def test_a_kill_right_after_recovery_recorded_its_turn_continues_that_turn_once(
    engines: Engines,
) -> None:
    """Recovery ends the cut-short attempt, claims its final and records the turn taking over
    in one write; killed right after, the next start continues the taking-over turn (once) and
    never delivers the first."""
    hang = killed_with_a_hang_and_a_queue(engines, "b")
    doctor(
        engines.db,
        FinishTurnAttempt(
            hang["attempt_id"], "interrupted", error="robota stopped while this turn ran"
        ),
        RecordFinalDelivery(hang["attempt_id"]),
        InsertTurnAttempt("attempt-r", hang["task_id"], ROUTE, recovery_prompt("HANG a")),
    )
    run = engines.start()
    run.wait(idle_after("TurnFinished", 2), "2 TurnFinished, then RouteIdle")
    run.finish()
    began = run.of("TurnBegan")
    assert [(original(b["prompt"]), b["recovery"]) for b in began] == [
        ("HANG a", True),
        ("b", False),
    ]
    finished = run.of("TurnFinished")
    assert [f["attempt_id"] for f in finished] == [b["attempt_id"] for b in began]
    assert [f["status"] for f in finished] == ["completed", "completed"]
    after = stored(engines.db)
    assert [(a.id, a.status) for a in after.attempts[:2]] == [
        (hang["attempt_id"], "interrupted"),
        ("attempt-r", "interrupted"),
    ]
    assert len(after.attempts) == 4


def test_a_turn_too_old_to_continue_is_never_delivered_by_a_later_start(
    engines: Engines,
) -> None:
    hang = killed_with_a_hang_and_a_queue(engines)["attempt_id"]
    db = Database(sqlite3.connect(engines.db))
    try:
        with db.conn:
            db.execute(
                "UPDATE turn_attempts SET heartbeat_at = heartbeat_at - 3600, "
                "created_at = created_at - 3600 WHERE id = ?",
                (hang,),
            )
    finally:
        db.close()
    shown = []
    for _ in range(2):
        run = engines.start()
        run.ready()
        time.sleep(0.5)
        run.finish()
        shown += [line["type"] for line in run.snapshot()]
    assert shown == ["Ready", "Ready"]
    after = stored(engines.db)
    assert after.by_id()[hang].status == "interrupted"
    assert after.delivered_at[hang] is not None, "its final is claimed: it never comes"


def test_an_agent_that_ignores_eof_ends_with_a_sigkilled_engine(engines: Engines) -> None:
    """codex-acp and claude-agent-acp run on when their stdin closes; robota's reaper (a
    watcher in a session of its own) ends their process groups when robota dies."""
    run = engines.start("--agent-env", "FAULT_AGENT_IGNORE_EOF=1")
    run.ready()
    run.send("HANG a")
    run.wait(turn_started, "TurnStarted")
    run.sigkill()
    engines.agents_exit(timeout=5.0)
