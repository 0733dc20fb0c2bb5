"""Warm turns: what one long-lived robota adds to each turn over a raw client, its start, its RSS.

    .venv/bin/python tools/bench/warm_turns.py [--quick] [--turns N] [--starts N] [--agent NAME ...]

Per agent (default codex, the App Server, and claude-agent-acp, ACP), two clients talk to two
copies of the same real agent, isolated and offline, against one fake model server:

* robota: ``robota -p --input-format stream-json --output-format stream-json --agent NAME``, one
  process for the whole run; each user message is a JSON line on its stdin, written once the
  previous turn's ``result`` line came back;
* the raw client (``tools/raw_client.py``, in this process): the agent's own protocol and nothing
  else (App Server ``turn/start`` until ``turn/completed``; ACP ``session/prompt`` until its
  response).

Each agent's command is wrapped in ``tools/wire_tap.py`` (for both clients alike), which stamps
every JSON-RPC line as it crosses, on the clock this process uses. That splits each turn
exactly: robota's own share is (user line written -> the turn's request reaches the agent) +
(the agent's turn-ending message -> the ``result`` line read here); the raw client's share is the
same two intervals around its own request (pipe hops and the tap's relay: the floor). Their
difference, per turn, is what robota adds; the agent's own turn time, which varies by
milliseconds from turn to turn, is outside both shares and cancels. The plain end-to-end
difference (robota's turn minus the raw turn next to it) is printed too, noise and all.

The run: both clients start (the first prompt is written at spawn), answer it (warm-up), then
N turns (default 20) run interleaved, robota then raw, each prompt answered ``ECHO: <prompt>``
and checked. Then ``--starts`` - 1 more fresh starts of each, for more samples of:

* ready: from spawning the process (robota; the agent, for the raw client) until the first
  prompt, written at spawn, reaches the agent as ``turn/start`` / ``session/prompt``: the agent
  is spawned, has answered ``initialize`` and opened a session. robota starts its agent lazily,
  on the first prompt, so this is its first moment of being useful. robota's own share is its
  ready time minus the raw client's (the agent's own start is in both); of that, the part before
  robota spawned its agent (interpreter, imports, profile, store, engine) is shown apart.

RSS is robota's process itself (VmRSS of its pid; not the agent, not the reaper, which is
shown apart): idle after start (after the warm-up turn and 0.5 s of quiet) and idle after the N
turns. Targets (issue 5) are printed beside the figures with pass / OVER: at most 0.5 ms per
turn over the raw client on ACP and 1 ms on the App Server, ready within 300 ms (robota's own
share), idle RSS within 60 MB, growth over the turns within 2 MB.

Beside them, measured first in the same run: the architecture's floor per turn (``_floor.py``),
the hops and commits every turn must make (loop -> route actor -> store writer commit -> loop,
for the prompt and for the answer) with the kernel's pieces and no robota logic. The per-turn
figure is split into that floor and the rest, robota's own logic and its stdin/stdout.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from _floor import Floor, measure_floor
from _real import (
    DEFAULT_AGENTS,
    Pair,
    RawAgent,
    Sandbox,
    children,
    fake_model,
    median,
    pct,
    read_tap,
    rss_kib,
    tap_started,
    turn_marks,
    verdict,
)

TURN_TARGET_MS = {"app-server": 1.0, "acp": 0.5}
READY_TARGET_MS = 300.0
IDLE_RSS_TARGET_MB = 60.0
GROWTH_TARGET_MB = 2.0
QUIET = 0.5
"""Seconds of quiet before RSS is read."""


@dataclass
class RobotaSession:
    """One ``robota -p --input-format stream-json`` process; the first prompt at spawn."""

    process: subprocess.Popen[bytes]
    spawn: float
    sent: list[float] = field(default_factory=list)
    results: list[float] = field(default_factory=list)

    @classmethod
    def start(cls, sandbox: Sandbox, pair: Pair, first: str, stderr: IO[bytes]) -> RobotaSession:
        command = ["-p", "--input-format", "stream-json", "--output-format", "stream-json"]
        spawn = time.perf_counter()
        process = subprocess.Popen(
            sandbox.robota(*command, "--agent", pair.name),
            env=sandbox.env,
            cwd=sandbox.cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
        )
        session = cls(process, spawn)
        session.turn(first)
        return session

    def turn(self, text: str) -> None:
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        line = json.dumps({"type": "user", "text": text}).encode() + b"\n"
        self.sent.append(time.perf_counter())
        stdin.write(line)
        stdin.flush()
        while True:
            raw = stdout.readline()
            if not raw:
                raise SystemExit(f"robota ended during the turn {text!r}")
            if b'"type": "result"' not in raw:
                continue
            self.results.append(time.perf_counter())
            result = json.loads(raw)
            if result["result"] != f"ECHO: {text}":
                raise SystemExit(f"robota answered {result!r} to {text!r}")
            return

    def close(self) -> tuple[int, float]:
        """Close stdin and wait for the exit; (exit code, seconds it took)."""
        assert self.process.stdin is not None
        closed = time.perf_counter()
        self.process.stdin.close()
        try:
            code = self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.terminate()
            code = self.process.wait(30)
            print(f"  robota did not exit 30 s after its stdin closed (exit {code} on SIGTERM)")
        if self.process.stdout is not None:
            self.process.stdout.close()
        return code, time.perf_counter() - closed


def start_raw(pair: Pair, first: str) -> tuple[RawAgent, list[float], list[float]]:
    agent = pair.raw_agent()
    agent.start()
    agent.open(pair.raw_cwd)
    turn = agent.turn(first)
    check(turn.text, first, "raw client")
    return agent, [turn.sent], [turn.ended]


def check(answer: str, prompt: str, who: str) -> None:
    if answer != f"ECHO: {prompt}":
        raise SystemExit(f"{who} answered {answer!r} to {prompt!r}")


def segments(entries: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """A tap log split per tap process (each starts with its ``start`` entry)."""
    parts: list[list[dict[str, Any]]] = []
    for entry in entries:
        if entry.get("event") == "start":
            parts.append([])
        if parts:
            parts[-1].append(entry)
    return parts


@dataclass(frozen=True)
class Ready:
    total: float
    """Spawn -> the first turn request reached the agent, ms."""
    agent: float
    """Of that, the agent's own work: each request before the turn's, sent -> answered, ms."""
    before_agent: float
    """Spawn -> the agent's command (the tap) started, ms."""

    @property
    def own(self) -> float:
        return self.total - self.agent


def ready(spawn: float, log: list[dict[str, Any]], pair: Pair) -> Ready:
    marks = turn_marks(log, pair.protocol)
    started = tap_started(log)
    assert marks and started is not None, "the tap saw no turn"
    first = marks[0][0]
    sent = {e["id"]: e["t"] for e in log if e.get("dir") == ">" and "method" in e and "id" in e}
    answered = [
        e["t"] - sent[e["id"]]
        for e in log
        if e.get("dir") == "<" and "method" not in e and e.get("id") in sent and e["t"] <= first
    ]
    return Ready((first - spawn) * 1e3, sum(answered) * 1e3, (started - spawn) * 1e3)


@dataclass
class Shares:
    inbound: list[float] = field(default_factory=list)
    outbound: list[float] = field(default_factory=list)

    def add(self, sent: float, result: float, mark: tuple[float, float]) -> None:
        self.inbound.append(mark[0] - sent)
        self.outbound.append(result - mark[1])

    @property
    def total(self) -> list[float]:
        return [a + b for a, b in zip(self.inbound, self.outbound, strict=True)]


def requests_per_turn(log: list[dict[str, Any]], pair: Pair) -> tuple[float, set[str]]:
    """Median client -> agent messages per warm turn, and their methods (responses as 'reply')."""
    marks = turn_marks(log, pair.protocol)[1:]
    counts: list[int] = []
    methods: set[str] = set()
    for begin, end in marks:
        window = [e for e in log if e.get("dir") == ">" and begin <= e["t"] <= end]
        counts.append(len(window))
        methods.update(str(e.get("method", "reply")) for e in window)
    return median(counts), methods


def reaper_kib(pid: int) -> int:
    return sum(rss_kib(child) for child, command in children(pid) if "_reaper" in command)


@dataclass
class Run:
    """What one agent's run measured (times are ``perf_counter`` seconds)."""

    robota: RobotaSession
    raw_sent: list[float]
    raw_ended: list[float]
    robota_log: list[dict[str, Any]]
    raw_log: list[dict[str, Any]]
    readies: list[tuple[Ready, Ready]]
    idle_kib: int
    after_kib: int
    reaper_kib: int
    exit_code: int
    exit_seconds: float


def measure(sandbox: Sandbox, pair: Pair, turns: int, starts: int) -> Run:
    robota_tap, raw_tap = pair.robota_tap, pair.raw_tap
    assert robota_tap is not None and raw_tap is not None

    def last(log: Path) -> list[dict[str, Any]]:
        return segments(read_tap(log))[-1]

    with (sandbox.root / f"robota-{pair.name}.stderr").open("wb") as stderr:
        robota = RobotaSession.start(sandbox, pair, "warm up", stderr)
        raw, raw_sent, raw_ended = start_raw(pair, "warm up")
        time.sleep(QUIET)
        idle_kib = rss_kib(robota.process.pid)
        reaper = reaper_kib(robota.process.pid)
        for k in range(turns):
            robota.turn(f"turn {k}")
            turn = raw.turn(f"turn {k}")
            check(turn.text, f"turn {k}", "raw client")
            raw_sent.append(turn.sent)
            raw_ended.append(turn.ended)
        time.sleep(QUIET)
        after_kib = rss_kib(robota.process.pid)
        code, exit_seconds = robota.close()
        raw.close()
        robota_log, raw_log = last(robota_tap), last(raw_tap)
        readies = [
            (ready(robota.spawn, robota_log, pair), ready(raw.stamps["spawn"], raw_log, pair))
        ]
        for _ in range(starts - 1):
            extra = RobotaSession.start(sandbox, pair, "warm up", stderr)
            extra.close()
            other, _, _ = start_raw(pair, "warm up")
            other.close()
            readies.append(
                (
                    ready(extra.spawn, last(robota_tap), pair),
                    ready(other.stamps["spawn"], last(raw_tap), pair),
                )
            )
    return Run(
        robota,
        raw_sent,
        raw_ended,
        robota_log,
        raw_log,
        readies,
        idle_kib,
        after_kib,
        reaper,
        code,
        exit_seconds,
    )


def diff_ms(later: list[float], earlier: list[float], scale: float = 1e3) -> list[float]:
    """Element by element ``later - earlier``, seconds to milliseconds (``scale=1``: as is)."""
    return [(a - b) * scale for a, b in zip(later, earlier, strict=True)]


def report(pair: Pair, turns: int, run: Run, floor: Floor) -> list[str]:
    robota_marks = turn_marks(run.robota_log, pair.protocol)
    raw_marks = turn_marks(run.raw_log, pair.protocol)
    if len(robota_marks) != turns + 1 or len(raw_marks) != turns + 1:
        raise SystemExit(f"the taps saw {len(robota_marks)} and {len(raw_marks)} turns")
    mine, theirs = Shares(), Shares()
    robota = run.robota
    for k in range(1, turns + 1):
        mine.add(robota.sent[k], robota.results[k], robota_marks[k])
        theirs.add(run.raw_sent[k], run.raw_ended[k], raw_marks[k])
    robota_turn = diff_ms(robota.results[1:], robota.sent[1:])
    raw_turn = diff_ms(run.raw_ended[1:], run.raw_sent[1:])
    target = TURN_TARGET_MS[pair.protocol]
    overhead = diff_ms(mine.total, theirs.total)

    def row(label: str, values: list[float], note: str = "") -> str:
        return f"  {label:46} {median(values):8.2f} {pct(values, 0.9):8.2f} ms {note}".rstrip()

    out = [
        f"{pair.name} ({pair.protocol}): {turns} warm turns, interleaved with the raw client",
        f"  {'':46} {'median':>8} {'p90':>8}",
        row("robota turn (line written -> result read)", robota_turn),
        row("raw turn (request written -> its end read)", raw_turn),
        row("end to end, robota - raw (agent noise in it)", diff_ms(robota_turn, raw_turn, 1)),
        row("robota's own share (tap)", [t * 1e3 for t in mine.total]),
        row("raw client's own share (tap: pipe hops)", [t * 1e3 for t in theirs.total]),
        row(
            "per turn over raw (share - share)",
            overhead,
            f"target <= {target:g} ms: {verdict(median(overhead), target)}",
        ),
        row("  of which prompt -> agent", diff_ms(mine.inbound, theirs.inbound)),
        row("  of which agent's end -> result", diff_ms(mine.outbound, theirs.outbound)),
        f"  of the per turn: the architecture's floor {floor.total_ms:.2f} ms (above), robota's "
        f"own logic and its stdin/stdout {median(overhead) - floor.total_ms:.2f} ms",
    ]
    mine_count, mine_methods = requests_per_turn(run.robota_log, pair)
    raw_count, raw_methods = requests_per_turn(run.raw_log, pair)
    out.append(
        f"  messages to the agent per turn: robota {mine_count:g} "
        f"({', '.join(sorted(mine_methods))}), raw {raw_count:g} ({', '.join(sorted(raw_methods))})"
    )
    readies = run.readies
    share = median([r.own - w.own for r, w in readies])
    totals = (median([r.total for r, _ in readies]), median([w.total for _, w in readies]))
    agents = (median([r.agent for r, _ in readies]), median([w.agent for _, w in readies]))
    out += [
        f"  ready (spawn -> first prompt at the agent), median of {len(readies)}: robota "
        f"{totals[0]:.0f} ms, raw {totals[1]:.0f} ms; the agent's own answers in them "
        f"{agents[0]:.0f} / {agents[1]:.0f} ms",
        f"  robota's own share of ready: {share:.0f} ms (target <= {READY_TARGET_MS:.0f} ms: "
        f"{verdict(share, READY_TARGET_MS)}), of which before it spawned the agent "
        f"{median([r.before_agent - w.before_agent for r, w in readies]):.0f} ms",
    ]
    idle_mb, after_mb = run.idle_kib / 1024, run.after_kib / 1024
    growth = after_mb - idle_mb
    out += [
        f"  robota RSS: {idle_mb:.1f} MB idle after start (target <= {IDLE_RSS_TARGET_MB:.0f} MB:"
        f" {verdict(idle_mb, IDLE_RSS_TARGET_MB)}), {after_mb:.1f} MB after {turns} turns: "
        f"{growth:+.1f} MB (target <= {GROWTH_TARGET_MB:.0f} MB: "
        f"{verdict(growth, GROWTH_TARGET_MB)}); its reaper process {run.reaper_kib / 1024:.1f} MB",
        f"  robota's exit once its stdin closed: code {run.exit_code} after "
        f"{run.exit_seconds * 1e3:.0f} ms",
    ]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 turns, 1 start per agent")
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--starts", type=int, default=5, help="fresh starts for 'ready'")
    parser.add_argument("--agent", action="append", help="agent to measure (repeatable)")
    args = parser.parse_args()
    names = args.agent or list(DEFAULT_AGENTS)
    turns, starts = (3, 1) if args.quick else (args.turns, args.starts)
    print(f"warm_turns ({'quick' if args.quick else 'full'}), python {sys.version.split()[0]}")
    floor = measure_floor(10 if args.quick else 30)
    print(
        "the architecture's floor per turn (loop -> actor -> store writer commits -> loop, for the"
        " prompt and for the answer; kernel pieces only, each sample after 30 ms of quiet as a"
        f" warm turn has): {median(floor.inbound) * 1e3:.2f} + {median(floor.outbound) * 1e3:.2f}"
        f" = {floor.total_ms:.2f} ms",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="robota-bench-") as tmp, fake_model() as url:
        sandbox = Sandbox(Path(tmp), url, names, tap=True)
        for name in names:
            pair = sandbox.pairs[name]
            for line in report(pair, turns, measure(sandbox, pair, turns, starts), floor):
                print(line, flush=True)


if __name__ == "__main__":
    main()
