"""One turn through ``robota -p`` against the same turn through a minimal raw protocol client.

    .venv/bin/python tools/bench/print_vs_raw.py [--quick] [--pairs N] [--agent NAME ...]
        [--baseline CHECKOUT] [--warm-host] [--resume]

Both are what a user runs: a fresh process each time, from spawn to exit. robota: ``robota -p
"<prompt>"`` (text output) in a sandboxed profile whose agent is real and offline; the raw
client: ``python tools/raw_client.py --protocol P --prompt "<prompt>" -- AGENT``, standard
library only, which spawns the agent as robota does, shakes hands, opens a session, runs the turn
and ends the agent as robota does (close stdin, SIGTERM, SIGKILL, the group). The agents are the
same binaries with the same isolated configuration (two copies, so neither sees the other's
history) against one fake model server (``tools/fake_model.py``, its own process); the prompt is
answered ``ECHO: <prompt>`` and both answers are checked.

One unmeasured warm-up run of each first (Codex creates its state database on its first run),
then N pairs (default 10) run interleaved, robota then raw, so drift on the shared machine hits
both alike. Printed per agent: median and spread of each, the median difference, and the ratio
robota/raw as the median of the per-pair ratios. Default agents: codex (App Server) and
claude-agent-acp (ACP); ``--agent`` picks others (codex-acp, gemini, qwen, opencode).

``--baseline CHECKOUT`` makes it an A/B in the same run: each round also runs the robota of
another checkout (the same ``robota`` script with ``PYTHONPATH=CHECKOUT/packages/*/src``, so
that checkout's sources come first), the two robotas in alternating order before the raw
client, and both ratios are printed with the per-round figures. ``--tap`` puts every agent
behind ``tools/wire_tap.py`` (both clients alike: one pipe hop and a small Python start more) and
prints, per client, when ``initialized`` and ``thread/start`` (App Server) or ``session/new`` and
``session/prompt`` (ACP) were written, from the client's spawn: robota's own start is the gap.

``--warm-host`` measures print mode through a warm host (``robota.cli._print_host``): the
sandbox's host is started once (``robota server start``), the warm-up run through it starts the
agent, and then each round's ``robota -p`` hands its turn to the host, while the raw client still
starts its agent every run. The host's log is checked afterwards: every measured run went
through it. The machine's load (``/proc/loadavg``) is printed before and after: the ratio on a
shared machine is only as steady as its spread says.

``--resume`` measures a task taken up again: one unmeasured ``robota -p`` per agent makes the
task, and every robota run after it (the warm-up and the rounds) is ``robota -p PROMPT -c``,
continuing it; the raw client still runs its one-shot turn. Without ``--warm-host`` that is
print mode in its own process (it resumes the agent's session in an agent of its own); with it,
the host runs each turn on the route that holds the task (the log is checked: one new task per
agent, every other run resumed there).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from _real import (
    DEFAULT_AGENTS,
    RAW_CLIENT,
    Pair,
    Sandbox,
    fake_model,
    median,
    read_tap,
)


def timed(command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, str, str]:
    """Run a command to its end; (seconds from spawn to exit, stdout, stderr tail)."""
    started = time.perf_counter()
    done = subprocess.run(
        command,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    seconds = time.perf_counter() - started
    return seconds, done.stdout, f"exit {done.returncode}: {done.stderr[-800:]}"


def run_robota(
    sandbox: Sandbox,
    pair: Pair,
    prompt: str,
    env: dict[str, str] | None = None,
    *,
    resume: bool = False,
) -> float:
    command = sandbox.robota("-p", prompt, "--agent", pair.name, *(["-c"] if resume else []))
    seconds, out, err = timed(command, env or sandbox.env, sandbox.cwd)
    if out != f"ECHO: {prompt}\n":
        raise SystemExit(f"robota -p ({pair.name}) failed: {err}")
    return seconds


def run_raw(pair: Pair, prompt: str) -> float:
    command = [sys.executable, str(RAW_CLIENT), "--protocol", pair.protocol]
    command += ["--cwd", str(pair.raw_cwd), "--prompt", prompt, "--", *pair.raw_command()]
    seconds, out, err = timed(command, pair.raw_env, pair.raw_cwd)
    if f'"text": "ECHO: {prompt}"' not in out:
        raise SystemExit(f"raw client ({pair.name}) failed: {err}")
    return seconds


def own_cache(env: dict[str, str], where: Path) -> dict[str, str]:
    """``env`` with a user cache of its own at ``where``: two robotas' compiled-code tables
    may differ in format, and one file for both would have each rebuild it on every run."""
    where.mkdir(mode=0o700, exist_ok=True)
    return {**env, "XDG_CACHE_HOME": str(where)}


def baseline_env(sandbox: Sandbox, checkout: Path) -> dict[str, str]:
    """The sandbox's environment with another checkout's sources first on the path."""
    sources = sorted(str(src) for src in checkout.glob("packages/*/src"))
    if not sources:
        raise SystemExit(f"--baseline {checkout}: no packages/*/src there")
    env = {**sandbox.env, "PYTHONPATH": ":".join(sources)}
    return own_cache(env, sandbox.root / "baseline-cache")


def summary(label: str, mine: list[float], theirs: list[float]) -> list[str]:
    ratios = [m / t for m, t in zip(mine, theirs, strict=True)]
    diffs = [m - t for m, t in zip(mine, theirs, strict=True)]
    return [
        f"{label:26} {median(mine) * 1e3:8.0f} ms {median(theirs) * 1e3:6.0f} ms "
        f"{median(diffs) * 1e3:6.0f} ms {median(ratios):6.2f}x",
        f"{'':26} robota {min(mine) * 1e3:.0f}-{max(mine) * 1e3:.0f} ms, "
        f"raw {min(theirs) * 1e3:.0f}-{max(theirs) * 1e3:.0f} ms (min-max), "
        f"ratio {min(ratios):.2f}-{max(ratios):.2f}",
    ]


MARKS = {"app-server": ("initialized", "thread/start"), "acp": ("session/new", "session/prompt")}
"""With ``--tap``: the messages whose time from the client's spawn is printed."""


@dataclass
class Side:
    """One client measured in the rounds: its run and, with a tap, its wire marks."""

    label: str
    run: Callable[[str], float]
    tap: Path | None
    protocol: str
    seconds: list[float] = field(default_factory=list)
    marks: dict[str, list[float]] = field(default_factory=dict)

    def measure(self, prompt: str) -> None:
        seen = len(read_tap(self.tap)) if self.tap is not None else 0
        started = time.perf_counter()
        self.seconds.append(self.run(prompt))
        if self.tap is None:
            return
        found: dict[str, float] = {}
        for entry in read_tap(self.tap)[seen:]:
            method = entry.get("method")
            if entry.get("dir") == ">" and method in MARKS[self.protocol]:
                found.setdefault(method, entry["t"] - started)
        for method, offset in found.items():
            self.marks.setdefault(method, []).append(offset)


def mark_rows(protocol: str, sides: list[Side]) -> list[str]:
    return [
        f"{'':26} spawn -> {method} written p50: "
        + ", ".join(
            f"{side.label} {median(side.marks.get(method, [])) * 1e3:.0f} ms" for side in sides
        )
        for method in MARKS[protocol]
    ]


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def host_runs(sandbox: Sandbox, said: str = "print.run: task ") -> int:
    """The turns the sandbox's host ran for print mode so far (its log says each: ``said``,
    or ``print.run: resumed task`` for a task taken up again)."""
    logs = (sandbox.home / "logs").glob("*.log*")
    return sum(path.read_text(errors="replace").count(said) for path in logs)


def server(sandbox: Sandbox, command: str) -> None:
    done = subprocess.run(
        sandbox.robota("server", command, "--json"),
        env=sandbox.env,
        cwd=sandbox.cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"robota server {command} failed: {done.stdout} {done.stderr[-800:]}")


def bench(
    names: list[str],
    pairs: int,
    baseline: Path | None,
    *,
    tap: bool,
    warm_host: bool = False,
    resume: bool = False,
) -> None:
    order = "robota, raw, robota, raw, ..."
    if baseline is not None:
        order = f"baseline {baseline} and this robota alternating first, then raw"
    print(
        f"print_vs_raw: one turn per fresh process, spawn to exit; {pairs} pairs per agent, "
        f"interleaved ({order}), python {sys.version.split()[0]}"
        + (", each agent behind a wire tap" if tap else "")
        + (", robota -p through a warm host" if warm_host else "")
        + (", robota -p -c continuing one task" if resume else "")
    )
    print(f"load average (1, 5, 15 min) before: {load()}")
    header = f"{'agent':26} {'robota p50':>11} {'raw p50':>9} {'diff p50':>9} {'ratio':>7}"
    rows: list[str] = []
    with tempfile.TemporaryDirectory(prefix="robota-bench-") as tmp, fake_model() as url:
        sandbox = Sandbox(Path(tmp), url, names, tap=tap)
        old_env = baseline_env(sandbox, baseline) if baseline is not None else None
        sandbox.env = own_cache(sandbox.env, sandbox.root / "cache")
        if warm_host:
            server(sandbox, "start")
        try:
            rows += measure_agents(sandbox, names, pairs, old_env, tap=tap, resume=resume)
            if warm_host:
                check_host_runs(sandbox, len(names), pairs, resume=resume)
        finally:
            if warm_host:
                server(sandbox, "stop")
    print(header)
    for row in rows:
        print(row)
    print("ratio: median over the pairs of robota's time / the raw client's time")
    print(f"load average (1, 5, 15 min) after: {load()}")


def check_host_runs(sandbox: Sandbox, agents: int, pairs: int, *, resume: bool) -> None:
    """Every measured run went through the host (and, resuming, to the task it holds)."""
    expected = {"print.run: task ": agents * (pairs + 1)}
    if resume:
        expected = {"print.run: task ": agents, "print.run: resumed task ": agents * (pairs + 1)}
    for said, runs in expected.items():
        if host_runs(sandbox, said) != runs:
            raise SystemExit(f"{host_runs(sandbox, said)} runs said {said!r}, not {runs}")


def measure_agents(
    sandbox: Sandbox,
    names: list[str],
    pairs: int,
    old_env: dict[str, str] | None,
    *,
    tap: bool,
    resume: bool = False,
) -> list[str]:
    """The rows of each agent's rounds."""
    rows: list[str] = []
    for name in names:
        pair = sandbox.pairs[name]
        if resume:
            run_robota(sandbox, pair, "the task")  # the task every run after continues

        def this(prompt: str, pair: Pair = pair) -> float:
            return run_robota(sandbox, pair, prompt, resume=resume)

        def raw(prompt: str, pair: Pair = pair) -> float:
            return run_raw(pair, prompt)

        mine = Side("this", this, pair.robota_tap, pair.protocol)
        theirs = Side("raw", raw, pair.raw_tap, pair.protocol)
        sides = [mine, theirs]
        old: Side | None = None
        if old_env is not None:

            def base(prompt: str, pair: Pair = pair, env: dict[str, str] = old_env) -> float:
                return run_robota(sandbox, pair, prompt, env, resume=resume)

            old = Side("baseline", base, pair.robota_tap, pair.protocol)
            sides.insert(0, old)
        for side in sides:
            side.run("warm up")
        for i in range(pairs):
            if old is not None and i % 2 == 0:
                old.measure(f"base {i}")
            mine.measure(f"pair {i}")
            if old is not None and i % 2 == 1:
                old.measure(f"base {i}")
            theirs.measure(f"pair {i}")
        rows += summary(f"{name} ({pair.protocol})", mine.seconds, theirs.seconds)
        if old is not None:
            rows += summary("  baseline", old.seconds, theirs.seconds)
            rows.append(
                f"{'':26} per round (baseline/this/raw ms, ratios): "
                + "; ".join(
                    f"{b * 1e3:.0f}/{m * 1e3:.0f}/{t * 1e3:.0f} {b / t:.2f}->{m / t:.2f}"
                    for b, m, t in zip(old.seconds, mine.seconds, theirs.seconds, strict=True)
                )
            )
        if tap:
            rows += mark_rows(pair.protocol, sides)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 pair per agent")
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--agent", action="append", help="agent to measure (repeatable)")
    parser.add_argument(
        "--baseline", type=Path, help="another checkout whose robota runs beside this one"
    )
    parser.add_argument(
        "--tap",
        action="store_true",
        help="put each agent behind tools/wire_tap.py and print when the handshake's and the "
        "session's messages were written, from the client's spawn",
    )
    parser.add_argument(
        "--warm-host",
        action="store_true",
        help="start the sandbox's host once; robota -p then hands each turn to it",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="robota continues one task (-c) each run, made by an unmeasured first run",
    )
    args = parser.parse_args()
    names = args.agent or list(DEFAULT_AGENTS)
    pairs = 1 if args.quick else args.pairs
    bench(
        names,
        pairs,
        args.baseline,
        tap=args.tap,
        warm_host=args.warm_host,
        resume=args.resume,
    )


if __name__ == "__main__":
    main()
