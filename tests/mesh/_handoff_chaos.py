"""Chaos for the session handoff (issue 30 §3): two linked hosts with a real agent, a task with
history pushed from the laptop (the source) to the desk (the destination), and hosts SIGKILLed
at the handoff's moments, started again, the link healed; then at most one device can run the
task, never none, and the one that can has the whole history. Used by
``tests/mesh/test_handoff_chaos.py`` and ``tools/handoff_chaos.py``.

The moments are exact: the host arms ``robota.host._handoff_pause`` through
``ROBOTA_TEST_HANDOFF_PAUSE`` (a file listing the moments still to come), so a host stops itself
(``SIGSTOP``) right after the transaction that defines a moment; the run sees it stopped, takes
the moment off the list, and kills the stopped host, the other one or both (``Kill.who``),
lets a survivor go on (``SIGCONT``), and starts the killed again (the laptop first: the desk
dials it at once). Everything is observed by reading the two stores, never by asking a host
that may be stopped.
"""

from __future__ import annotations

import json
import os
import pty
import random
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from robota.core.store import (
    Database,
    imported_transcript,
    open_reader,
    task_mobility,
    task_turn_attempts,
)
from robota.host._handoff_pause import HANDOFF_MOMENTS, PAUSE_ENV

from ._hosts import _free_port, _link_state
from ._profiles import _env, _robota
from ._talking import agents_in_namespaces, linked_agents, new_task
from ._terminal import ROBOTA

__all__ = [
    "MOMENTS",
    "WHO",
    "Device",
    "Kill",
    "Outcome",
    "Tally",
    "chaos_run",
    "loopback_devices",
    "namespace_devices",
    "plan_for",
]

MOMENTS = HANDOFF_MOMENTS
WHO = ("source", "destination", "both")
SIDE = dict.fromkeys(MOMENTS, "destination") | {"acked": "source"}
"""The side whose transaction defines each moment (the one that stops there)."""
SETTLE = 180.0
"""Seconds a run may take to settle after its last kill: reached only when something is broken
(or the machine is very loaded)."""
EARLIER_STOP = 10.0
"""Seconds a stopped host waits, unkilled, for the other to stop at the plan's earlier moment
(``_first_due``); past them the stopped one is taken as it is."""
PROMPTS = ("first one", "second one")
T = TypeVar("T")


@dataclass(frozen=True)
class Kill:
    """At ``moment``, SIGKILL the ``source``'s host, the ``destination``'s, or ``both``."""

    moment: str
    who: str

    def __post_init__(self) -> None:
        if self.moment not in MOMENTS or self.who not in WHO:
            raise ValueError(f"no kill {self.moment}/{self.who}")


@dataclass
class Device:
    """One profile and its host: started with the pause list armed, its pid followed."""

    name: str
    home: Path
    id: str
    pause: Path
    prefix: Sequence[str] = ()
    """What ``robota server start`` runs under (``ip netns exec NAME``), if anything."""
    pid: int = 0
    starting: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def start(self) -> None:
        """``server start``, not waited for beyond the host's pid: a host may stop itself at a
        moment before it answers (a staged handoff commits as it starts)."""
        old, state = self.pid, self.home / "data" / "run" / "host.json"
        process = subprocess.Popen(
            [*self.prefix, str(ROBOTA), "server", "start"],
            env={**_env(self.home), PAUSE_ENV: str(self.pause)},
            cwd=self.home.parent,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.starting.append(process)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with suppress(OSError, ValueError, KeyError):
                self.pid = int(json.loads(state.read_text())["pid"])
            if self.pid != old and self.state() not in ("", "Z"):
                if process.poll() is not None or self.state() == "T":
                    assert process.returncode in (None, 0), f"{self.name}'s host did not start"
                    return
            elif process.poll() not in (None, 0):
                raise AssertionError(f"{self.name}'s host did not start ({process.returncode})")
            time.sleep(0.05)
        raise AssertionError(f"{self.name}'s host did not start within 120 s")

    def state(self) -> str:
        """The host process's state letter (``T``: stopped), or ``""`` once it is gone."""
        try:
            stat = Path(f"/proc/{self.pid}/stat").read_text()
        except OSError:
            return ""
        return stat.rsplit(")", 1)[1].split()[0]

    def kill(self) -> None:
        """SIGKILL, as a crash: nothing flushed, nothing said; waited for until it is gone."""
        with suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while self.state() not in ("", "Z") and time.monotonic() < deadline:
            time.sleep(0.05)

    def _ours(self) -> bool:
        """Whether ``pid`` is still this device's host (not a pid reused since)."""
        try:
            environ = Path(f"/proc/{self.pid}/environ").read_bytes().split(b"\0")
        except OSError:
            return False
        return f"ROBOTA_HOME={self.home}".encode() in environ

    def go_on(self) -> None:
        with suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGCONT)

    def stop(self) -> None:
        """At the end: the host let go on if stopped, then stopped as usual; the starts
        waited for."""
        self.go_on()
        _robota(self.home, "server", "stop")
        # A host ``server stop`` did not end (it missed the request, or stopped itself again
        # at a moment) is ended by its pid, once known to be this device's: no process left.
        state = self.home / "data" / "run" / "host.json"
        with suppress(OSError, ValueError, KeyError):
            self.pid = int(json.loads(state.read_text())["pid"])
        deadline = time.monotonic() + 30
        while self.state() not in ("", "Z") and time.monotonic() < deadline:
            time.sleep(0.05)
        if self.state() not in ("", "Z") and self._ours():
            self.kill()
        for process in self.starting:
            with suppress(subprocess.TimeoutExpired):
                process.wait(60)
            if process.poll() is None:
                process.kill()
                process.wait()

    def db(self) -> Path:
        return self.home / "data" / "robota.sqlite"


@dataclass
class Outcome:
    """What one run left (``ok``: the task runs on exactly one device, with all its turns)."""

    handoff: str
    kills: list[str] = field(default_factory=list)
    """The kills done, ``moment/who``, in order."""
    on_source: bool = False
    on_destination: bool = False
    history_complete: bool = False
    settled: bool = False
    phases: tuple[str, str] = ("-", "-")

    @property
    def on_neither(self) -> bool:
        return not (self.on_source or self.on_destination)

    @property
    def on_both(self) -> bool:
        return self.on_source and self.on_destination

    @property
    def ok(self) -> bool:
        return self.on_source != self.on_destination and self.history_complete


@dataclass
class Tally:
    """Per point: runs, task on neither, on both, history incomplete, ok."""

    rows: dict[str, list[int]] = field(default_factory=dict)

    def add(self, point: str, outcome: Outcome) -> None:
        row = self.rows.setdefault(point, [0, 0, 0, 0, 0])
        incomplete = not outcome.on_neither and not outcome.history_complete
        for i, hit in enumerate(
            (True, outcome.on_neither, outcome.on_both, incomplete, outcome.ok)
        ):
            row[i] += int(hit)

    def table(self) -> str:
        head = f"{'point':<14}{'runs':>6}{'neither':>9}{'both':>6}{'incomplete':>12}{'ok':>5}"
        lines = [head]
        for point, (runs, neither, both, incomplete, ok) in self.rows.items():
            lines.append(f"{point:<14}{runs:>6}{neither:>9}{both:>6}{incomplete:>12}{ok:>5}")
        return "\n".join(lines)


def plan_for(point: str, rng: random.Random) -> list[Kill]:
    """A run's kills (the tool's): at ``point`` first, the side drawn; then, one time in two,
    one more at a later moment, drawn too."""
    plan = [Kill(point, rng.choice(WHO))]
    later = MOMENTS[MOMENTS.index(point) + 1 :]
    if later and rng.random() < 0.5:
        plan.append(Kill(rng.choice(later), rng.choice(WHO)))
    return plan


def _query(device: Device, query: Callable[[Database], T]) -> T:
    with closing(open_reader(device.db())) as db:
        return query(db)


def _phase(device: Device, handoff: str, side: str) -> tuple[str, bool] | None:
    def read(db: Database) -> tuple[str, bool] | None:
        row = db.execute(
            "SELECT phase, released FROM mesh_handoffs WHERE id = ? AND side = ?",
            (handoff, side),
        ).fetchone()
        return None if row is None else (str(row[0]), bool(row[1]))

    return _query(device, read)


def _ended(row: tuple[str, bool] | None, *, absent_ends: bool) -> bool:
    if row is None:
        return absent_ends
    phase, released = row
    return phase == "abandoned" or (phase == "committed" and released)


def _turns(device: Device, task: str) -> list[dict[str, object]]:
    def read(db: Database) -> list[dict[str, object]]:
        attempts = task_turn_attempts(db, task, status="completed", limit=-1)
        ordered = sorted(attempts, key=lambda a: (a.created_at, a.id))
        return [{"prompt": a.prompt, "answer": a.final_text or ""} for a in ordered]

    return _query(device, read)


def _runs_here(device: Device, task: str) -> bool:
    """Whether ``task`` is there and takes input on ``device`` (not moving, moved or held)."""

    def read(db: Database) -> bool:
        there = db.execute("SELECT 1 FROM tasks WHERE id = ?", (task,)).fetchone()
        return there is not None and task_mobility(db, task) is None

    return _query(device, read)


def _accept(desk: Device, handoff: str, log: Path) -> tuple[subprocess.Popen[bytes], int]:
    """``mesh accept`` on a terminal of its own, its yes typed ahead (it reads ``/dev/tty``);
    the process and the terminal's other side (closed once the process ended)."""
    master, slave = pty.openpty()

    def controlling_terminal() -> None:
        os.setsid()
        import fcntl
        import termios

        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)

    with log.open("ab") as out:
        process = subprocess.Popen(
            [str(ROBOTA), "mesh", "accept", handoff],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            env=_env(desk.home),
            cwd=desk.home.parent,
            pass_fds=(slave,),
            preexec_fn=controlling_terminal,  # noqa: PLW1509 (spawned from the one thread)
        )
    os.close(slave)
    os.write(master, b"y\n")
    return process, master


def _arm(devices: Sequence[Device], moments: Sequence[str]) -> None:
    for device in devices:
        device.pause.write_text("".join(f"{m}\n" for m in moments))


def chaos_run(laptop: Device, desk: Device, plan: Sequence[Kill], log: Path) -> Outcome:
    """One handoff of a new task with two turns, killed as ``plan`` says (its moments in the
    handoff's order), settled, and judged. Both hosts run before and after."""
    _linked(laptop, desk)  # the push needs the link
    task = new_task(laptop.home)
    for prompt in PROMPTS:
        said = _robota(laptop.home, "task", "send", task, prompt, "--wait")
        assert said.returncode == 0, said.stderr
    expected = _turns(laptop, task)
    assert [turn["prompt"] for turn in expected] == list(PROMPTS), expected
    pending = list(plan)
    _arm((laptop, desk), [kill.moment for kill in pending])

    pushed = _robota(laptop.home, "task", "push", task, "--to", "desk", "--json")
    assert pushed.returncode == 0, pushed.stderr
    outcome = Outcome(json.loads(pushed.stdout)["handoff"])
    accepting: tuple[subprocess.Popen[bytes], int] | None = None
    side = {"source": laptop, "destination": desk}
    deadline = time.monotonic() + SETTLE
    early: float | None = None
    try:
        while time.monotonic() < deadline:
            stopped = [d for d in (laptop, desk) if d.state() == "T"]
            if stopped:
                first = _first_due(stopped, pending, side)
                if first is None:
                    early = time.monotonic() if early is None else early
                    if time.monotonic() - early < EARLIER_STOP:
                        time.sleep(0.05)  # the earlier moment's host is on its way to its stop
                        continue
                early = None
                deadline = time.monotonic() + SETTLE
                _kill_at(first or stopped[0], pending, side, outcome)
                continue
            dst = _phase(desk, outcome.handoff, "destination")
            if dst is not None and dst[0] == "offered" and _done(accepting):
                # Not answered yet (an accept that met a host killed under it ended).
                _end(accepting)
                accepting = _accept(desk, outcome.handoff, log)
            src = _phase(laptop, outcome.handoff, "source")
            if _ended(src, absent_ends=False) and _ended(dst, absent_ends=src is not None):
                outcome.settled = not pending
                break
            time.sleep(0.1)
    finally:
        _arm((laptop, desk), [])
        for device in (laptop, desk):
            device.go_on()
        _end(accepting, wait=30)
    return _judged(laptop, desk, task, expected, outcome)


def _first_due(
    stopped: Sequence[Device], pending: Sequence[Kill], side: dict[str, Device]
) -> Device | None:
    """The stopped host whose moment is the plan's next one, else ``None``. A later moment can
    stop its host first: the destination's acknowledgement may leave (sent on another of its
    paths, right after the commit's transaction) before the committing path reaches its
    ``committed`` stop, so the source stops at ``acked`` while the destination is about to
    stop at ``committed``; the plan's order is kept by waiting for that stop
    (``EARLIER_STOP``)."""
    if not pending:
        return None
    due = side["source"] if SIDE[pending[0].moment] == "source" else side["destination"]
    return due if due in stopped else None


def _done(accepting: tuple[subprocess.Popen[bytes], int] | None) -> bool:
    return accepting is None or accepting[0].poll() is not None


def _end(accepting: tuple[subprocess.Popen[bytes], int] | None, wait: float = 0) -> None:
    """The accept's process ended (waited for up to ``wait`` s, then killed), its terminal
    closed."""
    if accepting is None:
        return
    process, master = accepting
    with suppress(subprocess.TimeoutExpired):
        process.wait(wait)
    if process.poll() is None:
        process.kill()
        process.wait()
    os.close(master)


def _kill_at(
    stopped: Device, pending: list[Kill], side: dict[str, Device], outcome: Outcome
) -> None:
    """``stopped`` stopped itself at its next planned moment: take it off the list, kill as
    planned, let a survivor go on, start the killed again (the laptop first)."""
    mine = "source" if stopped is side["source"] else "destination"
    kill = next(k for k in pending if SIDE[k.moment] == mine)
    pending.remove(kill)
    _arm(tuple(side.values()), [k.moment for k in pending])
    killed = [d for name, d in side.items() if kill.who in (name, "both")]
    for device in killed:
        device.kill()
    for device in side.values():
        # One the other host stopped at its own moment meanwhile stays stopped: the loop takes
        # that moment next (``_first_due``).
        if device not in killed and (device is stopped or device.state() != "T"):
            device.go_on()
    for device in (side["source"], side["destination"]):
        if device in killed:
            device.start()
    outcome.kills.append(f"{kill.moment}/{kill.who}")


def _judged(
    laptop: Device, desk: Device, task: str, expected: list[dict[str, object]], outcome: Outcome
) -> Outcome:
    src = _phase(laptop, outcome.handoff, "source")
    dst = _phase(desk, outcome.handoff, "destination")
    outcome.phases = (src[0] if src else "-", dst[0] if dst else "-")
    outcome.on_source = _runs_here(laptop, task)
    outcome.on_destination = _runs_here(desk, task)
    if outcome.on_destination:
        brought = _query(desk, lambda db: imported_transcript(db, task))
        outcome.history_complete = brought == expected
    elif outcome.on_source:
        outcome.history_complete = _turns(laptop, task) == expected
    return outcome


def _linked(laptop: Device, desk: Device) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        desk_sees = _link_state(desk.home, laptop.id) == "connected"
        if desk_sees and _link_state(laptop.home, desk.id) == "connected":
            return
        time.sleep(0.3)
    raise AssertionError("the two hosts did not link within 120 s")


@contextmanager
def _running(devices: Sequence[Device]) -> Iterator[tuple[Device, Device]]:
    laptop, desk = devices
    started: list[Device] = []
    try:
        for device in (laptop, desk):
            device.start()
            started.append(device)
        _linked(laptop, desk)
        yield laptop, desk
    finally:
        for device in started:
            device.stop()


@contextmanager
def loopback_devices(root: Path, model_url: str) -> Iterator[tuple[Device, Device]]:
    """A laptop and a desk linked on loopback, sharing the fake model at ``model_url``."""
    address = f"127.0.0.1:{_free_port()}"
    laptop, desk, laptop_id, desk_id = linked_agents(root, (model_url, model_url), address, address)
    devices = [
        Device(name, home, device, root / f"{name}.pause")
        for name, home, device in (("laptop", laptop, laptop_id), ("desk", desk, desk_id))
    ]
    with _running(devices) as pair:
        yield pair


@contextmanager
def namespace_devices(root: Path, tag: str) -> Iterator[tuple[Device, Device]]:
    """A laptop and a desk in two network namespaces joined by a veth pair, each with its own
    fake model on its own loopback (the test is skipped where namespaces cannot be made)."""
    from ._netns import _ip_path

    with agents_in_namespaces(root, tag) as (laptop, desk):
        devices = [
            Device(name, home, device, root / f"{name}.pause", (_ip_path(), "netns", "exec", ns))
            for name, (home, ns, device) in (("laptop", laptop), ("desk", desk))
        ]
        with _running(devices) as pair:
            yield pair
