"""What the real-agent benchmarks share: the fake model as a process, a sandboxed robota, and
the same agents set up twice (once for robota, once for the raw client), offline.

Every agent runs isolated as the test suite runs it (``tests/support/agents.py``: private HOME,
config pointing at the fake model on 127.0.0.1, update checks and telemetry off; Codex with the
fake model's catalog). robota gets a profile of its own (``ROBOTA_HOME``) naming those agents;
the raw client starts the other copy with the environment robota would give it (robota's own
environment without its reserved names, then the agent's configured ``env``). With ``tap``, each
agent's command is wrapped in ``tools/wire_tap.py`` (the same wrapper for both clients).
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# These need the path set above (tests/support is not an installed package).
from tests.support.agents import AgentSetup, isolated  # noqa: E402
from tests.support.trust import trust_workspace  # noqa: E402
from tools.raw_client import Protocol, RawAgent  # noqa: E402

__all__ = [
    "DEFAULT_AGENTS",
    "RAW_CLIENT",
    "Pair",
    "Protocol",
    "RawAgent",
    "Sandbox",
    "children",
    "fake_model",
    "median",
    "pct",
    "read_tap",
    "rss_kib",
    "tools_prompt",
    "spacing",
    "tap_started",
    "turn_marks",
    "verdict",
]

ROBOTA = Path(sys.executable).with_name("robota")
FAKE_MODEL = ROOT / "tools" / "fake_model.py"
RAW_CLIENT = ROOT / "tools" / "raw_client.py"
WIRE_TAP = ROOT / "tools" / "wire_tap.py"
PROTOCOLS: dict[str, Protocol] = {"app-server": "app-server", "acp": "acp"}
DEFAULT_AGENTS = ("codex", "claude-agent-acp")


@contextmanager
def fake_model() -> Iterator[str]:
    """The fake model server in a process of its own (off the benchmark's interpreter)."""
    with subprocess.Popen(
        [sys.executable, str(FAKE_MODEL)], stdout=subprocess.PIPE, text=True
    ) as server:
        assert server.stdout is not None
        try:
            url = server.stdout.readline().strip()
            if not url.startswith("http://127.0.0.1:"):
                raise SystemExit(f"the fake model did not start (said {url!r})")
            yield url
        finally:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


@dataclass
class Pair:
    """One agent set up twice: for robota (in its profile) and for the raw client."""

    name: str
    protocol: Protocol
    robota: AgentSetup
    raw: AgentSetup
    robota_cwd: Path
    raw_cwd: Path
    raw_env: dict[str, str]
    robota_tap: Path | None
    raw_tap: Path | None

    def raw_command(self) -> list[str]:
        command = [self.raw.command, *self.raw.args]
        return tap_command(self.raw_tap, command) if self.raw_tap else command

    def raw_agent(self) -> RawAgent:
        return RawAgent(self.protocol, self.raw_command(), env=self.raw_env, cwd=self.raw_cwd)


def tap_command(log: Path, command: Sequence[str]) -> list[str]:
    return [sys.executable, "-I", "-S", str(WIRE_TAP), str(log), "--", *command]


class Sandbox:
    """A robota profile under ``root`` whose agents are real, isolated and offline."""

    def __init__(
        self,
        root: Path,
        model_url: str,
        names: Sequence[str],
        *,
        tap: bool,
        pythonpath: str | None = None,
    ) -> None:
        self.root = root
        (root / "user").mkdir(parents=True, exist_ok=True)
        self.home = root / "robota-home"
        self.home.mkdir(mode=0o700, exist_ok=True)
        self.env = {
            "HOME": str(root / "user"),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "ROBOTA_HOME": str(self.home),
            "LC_ALL": "C.UTF-8",
        }
        # An A/B run puts another checkout's sources first (``PYTHONPATH=OLD/packages/*/src``),
        # from the environment or for this sandbox alone (``pythonpath``).
        pythonpath = pythonpath or os.environ.get("PYTHONPATH")
        if pythonpath:
            self.env["PYTHONPATH"] = pythonpath
        self.pairs: dict[str, Pair] = {}
        agents: dict[str, Any] = {}
        for name in names:
            catalog = name.startswith("codex")
            mine = isolated(name, root / "robota-agents", model_url, model_catalog=catalog)
            theirs = isolated(name, root / "raw-agents", model_url, model_catalog=catalog)
            robota_tap = root / f"tap-robota-{name}.jsonl" if tap else None
            command = [mine.command, *mine.args]
            if robota_tap is not None:
                command = tap_command(robota_tap, command)
            agents[name] = {
                "kind": mine.kind,
                "command": command[0],
                "args": command[1:],
                "env": mine.env,
            }
            raw_env = {k: v for k, v in self.env.items() if not k.startswith("ROBOTA")}
            self.pairs[name] = Pair(
                name,
                PROTOCOLS[mine.kind],
                mine,
                theirs,
                mine.cwd,
                theirs.cwd,
                {**raw_env, **theirs.env},
                robota_tap,
                root / f"tap-raw-{name}.jsonl" if tap else None,
            )
        # One working directory for robota's tasks; the raw client uses its agent's work dir.
        self.cwd = root / "robota-work"
        self.cwd.mkdir(exist_ok=True)
        config = {
            "agents": agents,
            "defaults": {"agent": names[0], "cwd": str(self.cwd)},
            "storage": {"sqlitePath": "./data/robota.sqlite"},
        }
        (self.home / "config.yaml").write_text(json.dumps(config, indent=2))
        # Headless starts refuse an untrusted workspace: the sandbox's own is trusted, as a user
        # would with `robota trust --yes` there.
        trust_workspace(self.home, self.cwd)

    def robota(self, *args: str) -> list[str]:
        return [str(ROBOTA), *args]


def read_tap(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def turn_marks(entries: list[dict[str, Any]], protocol: Protocol) -> list[tuple[float, float]]:
    """Per turn, when the tap saw the turn's request go to the agent and its end come back:
    App Server ``turn/start`` and the ``turn/completed`` notification, ACP ``session/prompt``
    and its response."""
    requests = [e for e in entries if e.get("dir") == ">"]
    answers = [e for e in entries if e.get("dir") == "<"]
    if protocol == "app-server":
        starts = [e["t"] for e in requests if e.get("method") == "turn/start"]
        ends = [e["t"] for e in answers if e.get("method") == "turn/completed"]
        return list(zip(starts, ends, strict=False))
    prompts = {e["id"]: e["t"] for e in requests if e.get("method") == "session/prompt"}
    return [
        (prompts[e["id"]], e["t"]) for e in answers if "method" not in e and e.get("id") in prompts
    ]


def tap_started(entries: list[dict[str, Any]]) -> float | None:
    return next((e["t"] for e in entries if e.get("event") == "start"), None)


def rss_kib(pid: int) -> int:
    """VmRSS of one process (not its children), KiB; 0 when it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def children(pid: int) -> list[tuple[int, str]]:
    """Direct children of ``pid``: (pid, command line)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[-1].split()[1])
            if ppid != pid:
                continue
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ValueError, IndexError):
            continue
        found.append((int(entry.name), command.strip()))
    return found


def pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def verdict(value: float, target: float) -> str:
    return "pass" if value <= target else "OVER"


def spacing(gaps: Sequence[float], interval: float, critical: float) -> tuple[str, bool]:
    """Gaps between a progress message's versions against the card throttle: every version
    waits ``interval`` after the one before but the last (the terminal one, and approvals,
    none here): ``critical``. The least gap but the last (or ``none``), and whether all kept
    it (5 % slack for the clocks of two processes)."""
    spaced, terminal = gaps[:-1], gaps[-1]
    least = f"{min(spaced):.2f} s" if spaced else "none"
    kept = all(g >= interval * 0.95 for g in spaced) and terminal >= critical * 0.95
    return least, kept


def tools_prompt(tools: int) -> str:
    """The fake model's turn of ``tools`` shell calls for a cadence figure. A short one (the
    quick runs') sleeps 0.2 s per call: on an idle machine twenty bare calls end inside one
    throttle interval, leaving no gap to measure; a long one is long enough as it is."""
    return f"TOOLS {tools} {'sleep 0.2' if tools <= 50 else 'true'}"
