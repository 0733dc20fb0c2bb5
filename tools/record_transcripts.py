"""Record what crosses the wire between a client and each real agent, as test fixtures.

    .venv/bin/python tools/record_transcripts.py [--agent NAME ...] [--scenario NAME ...]
                                                [--out DIR] [--keep] [--log FILE]

Each agent runs isolated and offline (``tests/support/agents.py``) against the fake model server
(``tests/support/model_server.py``) and is driven through scenarios with raw JSON-RPC
(``robota.runtimes.Connection`` over ``AgentProcess``). Every message, both directions, in wire
order, is written to ``tests/transcripts/<agent>/<scenario>.jsonl``, one JSON object per line:

    {"dir": "out", "msg": {...}}     client -> agent (what this tool sent)
    {"dir": "in",  "msg": {...}}     agent -> client

Scenarios with two agent processes (``resume``, ``load``) add ``"process": 1 | 2`` to each line.
Volatile values are normalised: the session cwd becomes ``<cwd>``, the agent's HOME ``<home>``,
the scenario's state directory ``<state>``, this checkout ``<repo>`` (the same paths without
their leading slash become ``<cwd-rel>`` ...) and the fake model's URL ``<model-url>``; ids and
timestamps are kept. A message whose JSON exceeds 32 KB has its biggest
values replaced by ``"<truncated by record_transcripts.py: N bytes>"`` until it fits (qwen's first
``available_commands_update`` is ~560 KB).

The client declares no fs and no terminal capability, answers permission requests by option
kind (``allow_once`` / ``reject_once``) and Codex approvals with ``accept`` / ``decline``, and
answers any other agent request with -32601. Every request has a timeout, every scenario a
deadline, and every agent is shut down (``AgentProcess.shutdown``) before the tool moves on.
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# These imports need the path set above (tests/support is not an installed package).
from tests.support.agents import AgentSetup, isolated  # noqa: E402
from tests.support.model_server import FakeModel, extract  # noqa: E402

from robota.runtimes import (  # noqa: E402
    AgentProcess,
    Connection,
    MethodNotFound,
    RpcError,
)

OUT = ROOT / "tests" / "transcripts"
MAX_MESSAGE = 32 * 1024
REQUEST_TIMEOUT = 30.0
TURN_TIMEOUT = 60.0
SCENARIO_DEADLINE = 150.0
SETTLE_QUIET = 0.5
SETTLE_MAX = 3.0

CLIENT_INFO = {"name": "robota-recorder", "title": "robota transcript recorder", "version": "0.1.0"}


async def _METHOD_NOT_FOUND(method: str, params: Any) -> Any:  # noqa: ARG001
    """Every agent request this tool does not handle is answered -32601 (method not found)."""
    raise MethodNotFound


log = logging.getLogger("record_transcripts")


# -- the wire tap --------------------------------------------------------------------------------


class Transcript:
    """Messages in wire order, each tagged with its direction (and process, when asked)."""

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []
        self.process: int | None = None

    def add(self, direction: str, raw: bytes) -> None:
        raw = raw.strip()
        if not raw:
            return
        try:
            message: Any = json.loads(raw)
        except ValueError:
            message = {"unparsed": raw.decode(errors="replace")}
        line: dict[str, Any] = {"dir": direction, "msg": message}
        if self.process is not None:
            line["process"] = self.process
        self.lines.append(line)


class _Lines:
    def __init__(self, transcript: Transcript, direction: str) -> None:
        self._transcript = transcript
        self._direction = direction
        self._pending = b""

    def feed(self, data: bytes) -> None:
        self._pending += data
        *lines, self._pending = self._pending.split(b"\n")
        for line in lines:
            self._transcript.add(self._direction, line)


class TapSend(trio.abc.SendStream):
    def __init__(self, inner: trio.abc.SendStream, transcript: Transcript) -> None:
        self._inner = inner
        self._lines = _Lines(transcript, "out")

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        self._lines.feed(bytes(data))
        await self._inner.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self._inner.wait_send_all_might_not_block()

    async def aclose(self) -> None:
        await self._inner.aclose()


class TapReceive(trio.abc.ReceiveStream):
    def __init__(self, inner: trio.abc.ReceiveStream, transcript: Transcript) -> None:
        self._inner = inner
        self._lines = _Lines(transcript, "in")

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        data = bytes(await self._inner.receive_some(max_bytes))
        self._lines.feed(data)
        return data

    async def aclose(self) -> None:
        await self._inner.aclose()


# -- one agent process ---------------------------------------------------------------------------


@dataclass
class Peer:
    """A running agent: its connection, the notifications so far, and how to answer approvals."""

    name: str
    acp: bool
    connection: Connection | None = None
    notes: list[tuple[str, Any]] = field(default_factory=list)
    agent_requests: list[tuple[str, Any]] = field(default_factory=list)
    approve: bool = True
    _changed: trio.Event = field(default_factory=trio.Event)

    def on_notification(self, method: str, params: Any) -> None:
        self.notes.append((method, params))
        self._changed.set()
        self._changed = trio.Event()

    async def on_request(self, method: str, params: Any) -> Any:
        self.agent_requests.append((method, params))
        if method == "session/request_permission":
            wanted = "allow_once" if self.approve else "reject_once"
            for option in params.get("options") or []:
                if option.get("kind") == wanted:
                    return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}
            return {"outcome": {"outcome": "cancelled"}}
        if method in ("item/commandExecution/requestApproval", "item/fileChange/requestApproval"):
            return {"decision": "accept" if self.approve else "decline"}
        return await _METHOD_NOT_FOUND(method, params)

    async def request(self, method: str, params: Any, timeout: float = REQUEST_TIMEOUT) -> Any:
        assert self.connection is not None
        return await self.connection.request(method, params, timeout=timeout)

    async def notify(self, method: str, params: Any) -> None:
        assert self.connection is not None
        await self.connection.notify(method, params)

    async def wait_for(
        self, match: Callable[[str, Any], bool], *, after: int = 0, timeout: float = TURN_TIMEOUT
    ) -> int:
        """Index (into ``notes``) of the first matching notification at or after ``after``."""
        with trio.fail_after(timeout):
            index = after
            while True:
                while index < len(self.notes):
                    if match(*self.notes[index]):
                        return index
                    index += 1
                await self._changed.wait()


async def _quiet(transcript: Transcript, seconds: float) -> None:
    """Return once no message has crossed the wire for ``seconds``."""
    while True:
        count = len(transcript.lines)
        await trio.sleep(seconds)
        if len(transcript.lines) == count:
            return


@asynccontextmanager
async def running(setup: AgentSetup, transcript: Transcript, *, acp: bool) -> AsyncIterator[Peer]:
    peer = Peer(setup.name, acp)
    agent = await AgentProcess.start(
        setup.name, [setup.command, *setup.args], env=setup.env, cwd=setup.cwd
    )
    try:
        assert agent.process.stdin is not None and agent.process.stdout is not None
        peer.connection = Connection(
            TapSend(agent.process.stdin, transcript),
            TapReceive(agent.process.stdout, transcript),
            name=setup.name,
            jsonrpc_field=acp,
            on_notification=peer.on_notification,
            on_request=peer.on_request,
        )
        async with trio.open_nursery() as nursery:
            nursery.start_soon(agent.drain_stderr)
            await nursery.start(peer.connection.run)
            try:
                yield peer
                # Agents send trailing notifications (commands lists, suggestions, usage) after a
                # response: keep them in the transcript.
                with trio.move_on_after(SETTLE_MAX):
                    await _quiet(transcript, SETTLE_QUIET)
            finally:
                await agent.shutdown()
                nursery.cancel_scope.cancel()
    finally:
        if agent.process.returncode is None:
            await agent.shutdown()


# -- protocol steps ------------------------------------------------------------------------------


def _text_input(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text, "text_elements": []}]


async def acp_start(peer: Peer, cwd: Path) -> str:
    await peer.request(
        "initialize",
        {
            "protocolVersion": 1,
            "clientCapabilities": {
                "fs": {"readTextFile": False, "writeTextFile": False},
                "terminal": False,
            },
            "clientInfo": CLIENT_INFO,
        },
    )
    result = await peer.request("session/new", {"cwd": str(cwd), "mcpServers": []})
    return str(result["sessionId"])


async def acp_prompt(peer: Peer, session: str, text: str, timeout: float = TURN_TIMEOUT) -> Any:
    params = {"sessionId": session, "prompt": [{"type": "text", "text": text}]}
    return await peer.request("session/prompt", params, timeout=timeout)


async def app_start(peer: Peer) -> None:
    await peer.request(
        "initialize", {"clientInfo": CLIENT_INFO, "capabilities": {"experimentalApi": True}}
    )
    await peer.notify("initialized", None)


async def app_thread(peer: Peer, cwd: Path, *, ask: bool = False) -> str:
    params: dict[str, Any] = {"cwd": str(cwd), "sandbox": "danger-full-access"}
    params["approvalPolicy"] = "untrusted" if ask else "never"
    result = await peer.request("thread/start", params)
    return str(result["thread"]["id"])


async def app_turn(peer: Peer, thread: str, text: str) -> dict[str, Any]:
    """Start a turn and wait for its ``turn/completed``; return that turn."""
    after = len(peer.notes)
    result = await peer.request("turn/start", {"threadId": thread, "input": _text_input(text)})
    turn_id = result["turn"]["id"]
    index = await peer.wait_for(
        lambda m, p: m == "turn/completed" and p["turn"]["id"] == turn_id, after=after
    )
    turn: dict[str, Any] = peer.notes[index][1]["turn"]
    return turn


def _slow_delta(acp: bool) -> Callable[[str, Any], bool]:
    def match(method: str, params: Any) -> bool:
        if acp:
            update = params.get("update") or {}
            content = update.get("content") or {}
            return update.get("sessionUpdate") == "agent_message_chunk" and "slow-" in str(
                content.get("text", "")
            )
        return method == "item/agentMessage/delta" and "slow-" in str(params.get("delta", ""))

    return match


def _leaf(error: BaseException) -> BaseException:
    """The error inside nurseries' exception groups (the first one, when there are several)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def _error_text(error: BaseException) -> str:
    if isinstance(error, RpcError):
        return json.dumps({"code": error.code, "message": error.message, "data": error.data})
    return f"{type(error).__name__}: {error}"


# -- scenarios -----------------------------------------------------------------------------------


@dataclass
class Context:
    agent: str
    root: Path
    model: FakeModel
    transcript: Transcript
    notes: list[str] = field(default_factory=list)
    """What the scenario observed (errors quoted verbatim), for the summary."""

    def setup(self, *, ask: bool = False) -> AgentSetup:
        return isolated(self.agent, self.root, self.model.url, ask=ask, model_catalog=True)


Scenario = Callable[[Context], Awaitable[None]]


async def acp_text(ctx: Context) -> None:
    setup = ctx.setup()
    async with running(setup, ctx.transcript, acp=True) as peer:
        session = await acp_start(peer, setup.cwd)
        result = await acp_prompt(peer, session, "hello from the recorder")
        ctx.notes.append(f"stopReason {result.get('stopReason')}")
        _expect_text(ctx, "ECHO: hello from the recorder")


def _acp_tool(approve: bool) -> Scenario:
    async def scenario(ctx: Context) -> None:
        setup = ctx.setup(ask=True)
        word = "approved" if approve else "declined"
        async with running(setup, ctx.transcript, acp=True) as peer:
            peer.approve = approve
            session = await acp_start(peer, setup.cwd)
            result = await acp_prompt(
                peer, session, f"SHELL: echo {word} > {word}.txt && cat {word}.txt"
            )
            asked = [m for m, _ in peer.agent_requests if m == "session/request_permission"]
            ctx.notes.append(
                f"stopReason {result.get('stopReason')}; permission requests {len(asked)}"
            )
            if not asked:
                raise RuntimeError("the agent never asked for permission")

    return scenario


async def acp_write(ctx: Context) -> None:
    setup = ctx.setup(ask=True)
    async with running(setup, ctx.transcript, acp=True) as peer:
        session = await acp_start(peer, setup.cwd)
        result = await acp_prompt(peer, session, "WRITE: written.txt hello from the fake model")
        written = setup.cwd / "written.txt"
        ctx.notes.append(f"stopReason {result.get('stopReason')}; file written: {written.exists()}")


async def acp_cancel(ctx: Context) -> None:
    setup = ctx.setup()
    async with running(setup, ctx.transcript, acp=True) as peer:
        session = await acp_start(peer, setup.cwd)
        outcome: dict[str, Any] = {}

        async def prompt() -> None:
            outcome["result"] = await acp_prompt(peer, session, "SLOW counting for the cancel")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(prompt)
            await peer.wait_for(_slow_delta(acp=True))
            began = time.monotonic()
            await peer.notify("session/cancel", {"sessionId": session})
        took = time.monotonic() - began
        ctx.notes.append(f"stopReason {outcome['result'].get('stopReason')} after {took:.3f} s")
        after = await acp_prompt(peer, session, "after the cancel")
        ctx.notes.append(f"next prompt: stopReason {after.get('stopReason')}")


def _acp_failure(prompt: str) -> Scenario:
    async def scenario(ctx: Context) -> None:
        setup = ctx.setup()
        async with running(setup, ctx.transcript, acp=True) as peer:
            session = await acp_start(peer, setup.cwd)
            try:
                result = await acp_prompt(peer, session, prompt, timeout=90)
            except RpcError as error:
                ctx.notes.append(f"session/prompt error: {_error_text(error)}")
            else:
                ctx.notes.append(f"session/prompt result: {json.dumps(result)}")
            texts = [
                (p.get("update") or {}).get("content", {}).get("text")
                for m, p in peer.notes
                if m == "session/update"
                and (p.get("update") or {}).get("sessionUpdate") == "agent_message_chunk"
            ]
            if any(texts):
                ctx.notes.append(f"message text: {''.join(t for t in texts if t)!r}")

    return scenario


async def acp_load(ctx: Context) -> None:
    setup = ctx.setup()
    ctx.transcript.process = 1
    async with running(setup, ctx.transcript, acp=True) as peer:
        session = await acp_start(peer, setup.cwd)
        await acp_prompt(peer, session, "remember the word PINEAPPLE")
    ctx.transcript.process = 2
    async with running(setup, ctx.transcript, acp=True) as peer:
        result = await peer.request(
            "initialize",
            {
                "protocolVersion": 1,
                "clientCapabilities": {
                    "fs": {"readTextFile": False, "writeTextFile": False},
                    "terminal": False,
                },
                "clientInfo": CLIENT_INFO,
            },
        )
        if not (result.get("agentCapabilities") or {}).get("loadSession"):
            raise RuntimeError("the agent does not advertise loadSession")
        params = {"sessionId": session, "cwd": str(setup.cwd), "mcpServers": []}
        await peer.request("session/load", params)
        await acp_prompt(peer, session, "HISTORY of this conversation")
        answer = _history_answer(ctx.model)
        ctx.notes.append(f"after load the model saw: {answer!r}")
        if "PINEAPPLE" not in answer:
            raise RuntimeError(f"the loaded session lost its history: {answer!r}")


def _expect_text(ctx: Context, text: str) -> None:
    """The fake model's answer reached the client (as deltas: compare the joined stream)."""
    streamed = "".join(
        str(_delta_text(line["msg"])) for line in ctx.transcript.lines if line["dir"] == "in"
    )
    if text not in streamed:
        raise RuntimeError(f"{text!r} never reached the client; it saw {streamed[:300]!r}")


def _delta_text(message: Any) -> str:
    params = message.get("params") if isinstance(message, dict) else None
    if not isinstance(params, dict):
        return ""
    if message.get("method") == "item/agentMessage/delta":
        return str(params.get("delta", ""))
    update = params.get("update")
    if isinstance(update, dict) and update.get("sessionUpdate") == "agent_message_chunk":
        return str((update.get("content") or {}).get("text", ""))
    return ""


def _history_answer(model: FakeModel) -> str:
    """The prompts the model saw in the last HISTORY request: what the agent kept."""
    for request in reversed(model.model_requests()):
        if request.scenario == "history":
            return " | ".join(extract(request.api.split("_")[0], request.body).prompts)
    return ""


async def app_text(ctx: Context) -> None:
    setup = ctx.setup()
    async with running(setup, ctx.transcript, acp=False) as peer:
        await app_start(peer)
        thread = await app_thread(peer, setup.cwd)
        turn = await app_turn(peer, thread, "hello from the recorder")
        ctx.notes.append(f"turn {turn['status']}")
        _expect_text(ctx, "ECHO: hello from the recorder")


def _app_tool(approve: bool) -> Scenario:
    async def scenario(ctx: Context) -> None:
        setup = ctx.setup()
        word = "approved" if approve else "declined"
        async with running(setup, ctx.transcript, acp=False) as peer:
            peer.approve = approve
            await app_start(peer)
            thread = await app_thread(peer, setup.cwd, ask=True)
            turn = await app_turn(
                peer, thread, f"SHELL: echo {word} > {word}.txt && cat {word}.txt"
            )
            asked = [m for m, _ in peer.agent_requests if m.endswith("/requestApproval")]
            ctx.notes.append(f"turn {turn['status']}; approval requests {len(asked)}")
            if not asked:
                raise RuntimeError("the agent never asked for approval")

    return scenario


async def app_write(ctx: Context) -> None:
    setup = ctx.setup()
    async with running(setup, ctx.transcript, acp=False) as peer:
        await app_start(peer)
        thread = await app_thread(peer, setup.cwd, ask=True)
        turn = await app_turn(peer, thread, "WRITE: written.txt hello from the fake model")
        written = setup.cwd / "written.txt"
        ctx.notes.append(f"turn {turn['status']}; file written: {written.exists()}")


async def _app_slow_then(ctx: Context, action: str) -> None:
    setup = ctx.setup()
    async with running(setup, ctx.transcript, acp=False) as peer:
        await app_start(peer)
        thread = await app_thread(peer, setup.cwd)
        started = await peer.request(
            "turn/start",
            {"threadId": thread, "input": _text_input(f"SLOW counting for the {action}")},
        )
        turn_id = started["turn"]["id"]
        await peer.wait_for(_slow_delta(acp=False))
        began = time.monotonic()
        if action == "interrupt":
            await peer.request("turn/interrupt", {"threadId": thread, "turnId": turn_id})
        else:
            steer = {
                "threadId": thread,
                "expectedTurnId": turn_id,
                "input": _text_input("steered: say this instead"),
            }
            result = await peer.request("turn/steer", steer)
            ctx.notes.append(f"steer result {json.dumps(result)}")
        index = await peer.wait_for(
            lambda m, p: m == "turn/completed" and p["turn"]["id"] == turn_id
        )
        took = time.monotonic() - began
        turn = peer.notes[index][1]["turn"]
        ctx.notes.append(f"turn {turn['status']} {took:.3f} s after the {action}")
        if action == "interrupt":
            after = await app_turn(peer, thread, "after the interrupt")
            ctx.notes.append(f"next turn {after['status']}")


async def app_interrupt(ctx: Context) -> None:
    await _app_slow_then(ctx, "interrupt")


async def app_steer(ctx: Context) -> None:
    await _app_slow_then(ctx, "steer")


def _app_failure(prompt: str) -> Scenario:
    async def scenario(ctx: Context) -> None:
        setup = ctx.setup()
        async with running(setup, ctx.transcript, acp=False) as peer:
            await app_start(peer)
            thread = await app_thread(peer, setup.cwd)
            turn = await app_turn(peer, thread, prompt)
            errors = [p for m, p in peer.notes if m == "error"]
            ctx.notes.append(f"turn {turn['status']}; turn.error {json.dumps(turn.get('error'))}")
            for params in errors:
                ctx.notes.append(f"error notification {json.dumps(params.get('error'))}")

    return scenario


async def app_fork(ctx: Context) -> None:
    setup = ctx.setup()
    async with running(setup, ctx.transcript, acp=False) as peer:
        await app_start(peer)
        thread = await app_thread(peer, setup.cwd)
        await app_turn(peer, thread, "remember the word PINEAPPLE")
        fork = await peer.request(
            "thread/fork", {"threadId": thread, "excludeTurns": True}, timeout=REQUEST_TIMEOUT
        )
        forked = str(fork["thread"]["id"])
        turn = await app_turn(peer, forked, "HISTORY of the fork")
        answer = _history_answer(ctx.model)
        ctx.notes.append(f"fork turn {turn['status']}; the model saw: {answer!r}")
        if "PINEAPPLE" not in answer:
            raise RuntimeError(f"the fork lost its history: {answer!r}")


async def app_resume(ctx: Context) -> None:
    setup = ctx.setup()
    ctx.transcript.process = 1
    async with running(setup, ctx.transcript, acp=False) as peer:
        await app_start(peer)
        thread = await app_thread(peer, setup.cwd)
        await app_turn(peer, thread, "remember the word PINEAPPLE")
    ctx.transcript.process = 2
    async with running(setup, ctx.transcript, acp=False) as peer:
        await app_start(peer)
        await peer.request("thread/resume", {"threadId": thread, "excludeTurns": True})
        turn = await app_turn(peer, thread, "HISTORY after the resume")
        answer = _history_answer(ctx.model)
        ctx.notes.append(f"turn {turn['status']}; the model saw: {answer!r}")
        if "PINEAPPLE" not in answer:
            raise RuntimeError(f"the resumed thread lost its history: {answer!r}")


APP_SERVER_SCENARIOS: dict[str, Scenario] = {
    "text": app_text,
    "tool_approved": _app_tool(approve=True),
    "tool_declined": _app_tool(approve=False),
    "write_approved": app_write,
    "interrupt": app_interrupt,
    "steer": app_steer,
    "fork": app_fork,
    "resume": app_resume,
    "error_400": _app_failure("FAIL400"),
    "error_500": _app_failure("FAIL500"),
    "stream_cut": _app_failure("CUTSTREAM"),
}

ACP_SCENARIOS: dict[str, Scenario] = {
    "text": acp_text,
    "tool_approved": _acp_tool(approve=True),
    "tool_declined": _acp_tool(approve=False),
    "write_approved": acp_write,
    "cancel": acp_cancel,
    "load": acp_load,
    "error_400": _acp_failure("FAIL400"),
    "error_500": _acp_failure("FAIL500"),
    "stream_cut": _acp_failure("CUTSTREAM"),
}

RETRIES_500 = {"gemini", "qwen", "opencode", "claude-agent-acp"}
"""Agents that retry HTTP 500 with backoff for minutes (AGENTS.md 5.5): no error_500 scenario."""
NO_LOAD = {"gemini"}
"""gemini 0.61's session/load in a new process fails (ACP.md 11)."""

AGENTS = ("codex", "codex-acp", "claude-agent-acp", "gemini", "qwen", "opencode")


def scenarios_for(agent: str) -> dict[str, Scenario]:
    if agent == "codex":
        return dict(APP_SERVER_SCENARIOS)
    chosen = dict(ACP_SCENARIOS)
    if agent in RETRIES_500:
        del chosen["error_500"]
    if agent in NO_LOAD:
        del chosen["load"]
    return chosen


# -- output --------------------------------------------------------------------------------------


def normalise(value: Any, replacements: list[tuple[str, str]]) -> Any:
    if isinstance(value, str):
        for old, new in replacements:
            value = value.replace(old, new)
        return value
    if isinstance(value, list):
        return [normalise(v, replacements) for v in value]
    if isinstance(value, dict):
        return {normalise(k, replacements): normalise(v, replacements) for k, v in value.items()}
    return value


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False))


def shrink(message: Any, limit: int = MAX_MESSAGE) -> Any:
    """Replace the bulk of an oversized message with a placeholder until it fits.

    The bulk is found by following the biggest child while it holds most of its parent; the value
    where that stops is replaced whole (one placeholder for qwen's ``availableSkillDetails``
    rather than hundreds). The envelope (message, params, update) is never replaced whole: at
    those levels only its biggest child goes.
    """
    while _size(message) > limit:
        path: list[tuple[Any, Any]] = []  # (container, key) from the root down
        node = message
        while isinstance(node, (dict, list)) and node:
            items = list(node.items() if isinstance(node, dict) else enumerate(node))
            key, child = max(items, key=lambda item: _size(item[1]))
            dominant = _size(child) * 2 >= _size(node)
            if not dominant and len(path) >= 3:
                break  # replace this node whole
            path.append((node, key))
            node = child
            if not dominant:
                break  # an envelope level: replace only its biggest child
        if not path:
            break
        container, key = path[-1]
        container[key] = f"<truncated by record_transcripts.py: {_size(container[key])} bytes>"
    return message


def write_transcript(
    path: Path, transcript: Transcript, replacements: list[tuple[str, str]], *, limit: int
) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for line in transcript.lines:
            clean = dict(line, msg=shrink(normalise(line["msg"], replacements), limit))
            out.write(json.dumps(clean, ensure_ascii=False, separators=(",", ":")) + "\n")


# -- driver --------------------------------------------------------------------------------------


@dataclass
class Result:
    agent: str
    scenario: str
    ok: bool
    seconds: float
    notes: list[str]
    path: Path | None = None


@dataclass(frozen=True)
class Options:
    state: Path
    out: Path = OUT
    dump: Path | None = None
    max_message: int = MAX_MESSAGE


async def run_one(agent: str, name: str, scenario: Scenario, options: Options) -> Result:
    root = options.state / agent / name
    root.mkdir(parents=True, exist_ok=True)
    transcript = Transcript()
    began = time.monotonic()
    with FakeModel() as model:
        ctx = Context(agent, root, model, transcript)
        ok = True
        try:
            with trio.fail_after(SCENARIO_DEADLINE):
                await scenario(ctx)
        except Exception as error:  # reported, and the transcript is not written
            ok = False
            ctx.notes.append(f"FAILED: {_error_text(_leaf(error))}")
        if options.dump is not None:
            options.dump.mkdir(parents=True, exist_ok=True)
            with (options.dump / f"{agent}-{name}.jsonl").open("w", encoding="utf-8") as handle:
                for request in model.requests:
                    handle.write(json.dumps(request.as_json()) + "\n")
        if model.errors:
            ok = False
            ctx.notes.append(f"FAKE MODEL ERRORS: {model.errors}")
        url = model.url
    seconds = time.monotonic() - began
    setup_home = root / agent / "home"
    paths = [
        (str(root / agent / "work"), "<cwd>"),
        (str(setup_home), "<home>"),
        (str(root), "<state>"),
        (str(ROOT), "<repo>"),
    ]
    # opencode also shows paths relative to "/" (its project root outside a git repository).
    relative = [(path.lstrip("/"), f"{name[:-1]}-rel>") for path, name in paths]
    replacements = sorted([*paths, *relative, (url, "<model-url>")], key=lambda pair: -len(pair[0]))
    result = Result(agent, name, ok, seconds, ctx.notes)
    if ok:
        result.path = options.out / agent / f"{name}.jsonl"
        write_transcript(result.path, transcript, replacements, limit=options.max_message)
    return result


async def main_async(args: argparse.Namespace) -> int:
    state = Path(tempfile.mkdtemp(prefix="robota-transcripts-"))
    options = Options(state, args.out, args.dump_requests, args.max_message)
    results: list[Result] = []
    try:
        for agent in args.agent or AGENTS:
            for name, scenario in scenarios_for(agent).items():
                if args.scenario and name not in args.scenario:
                    continue
                result = await run_one(agent, name, scenario, options)
                results.append(result)
                mark = "ok  " if result.ok else "FAIL"
                print(f"{mark} {agent:17} {name:15} {result.seconds:6.1f} s", flush=True)
                for note in result.notes:
                    print(f"       {note}", flush=True)
    finally:
        if args.keep:
            print(f"state kept in {state}")
        else:
            shutil.rmtree(state, ignore_errors=True)
    return 0 if all(r.ok for r in results) else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--agent", action="append", choices=AGENTS, help="repeatable")
    parser.add_argument("--scenario", action="append", help="repeatable")
    parser.add_argument("--out", type=Path, default=OUT, help=f"default {OUT}")
    parser.add_argument("--keep", action="store_true", help="keep the agents' state directories")
    parser.add_argument(
        "--dump-requests", type=Path, help="also write the fake model's request log here"
    )
    parser.add_argument(
        "--max-message",
        type=int,
        default=MAX_MESSAGE,
        help=f"bytes of JSON above which a message is shrunk (default {MAX_MESSAGE})",
    )
    parser.add_argument("--log", type=Path, help="write robota.runtimes debug logs (agent stderr)")
    args = parser.parse_args(argv)
    if args.log:
        logging.basicConfig(filename=args.log, level=logging.DEBUG)
    return trio.run(main_async, args)


if __name__ == "__main__":
    sys.exit(main())
