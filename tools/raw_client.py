"""A minimal raw protocol client: the floor robota is measured against (tools/bench/).

    python3 tools/raw_client.py --protocol app-server|acp [--cwd DIR] [--json]
                                [--prompt TEXT ...] -- COMMAND [ARG ...]

Standard library only, no threads, no robota import. It starts COMMAND the way robota's runtimes
do (pipes on stdin, stdout and stderr, a session and process group of its own, the environment
it was given, the working directory), speaks newline-delimited JSON-RPC to it and does only what
one turn needs:

* Codex App Server: ``initialize`` (the params robota sends), the ``initialized`` notification,
  ``thread/start`` with robota's ``default`` permission mode (approval policy ``untrusted``,
  sandbox ``workspace-write``), then per prompt ``turn/start`` and wait for ``turn/completed``.
* ACP: ``initialize`` (protocol 1, the fs and terminal capabilities robota declares),
  ``session/new``, then per prompt ``session/prompt`` and wait for its response.

Requests from the agent are answered as robota answers them in print mode where nobody can
approve (approvals declined, permissions rejected or cancelled); any other (``fs/*``,
``terminal/*``) gets -32601, which the plain text turns the benchmarks use never trigger.
The agent's stderr is discarded (robota reads it into its log).

The end is robota's (``AgentProcess.shutdown``): close stdin and wait 1.5 s, SIGTERM the group
and wait 2 s, SIGKILL; then wait up to 0.5 s for the rest of the group, SIGTERM it, 2 s, SIGKILL.

Prints one JSON object per turn (``{"text": answer, "seconds": turn time}``), or with ``--json``
a single object with the timings of each step. Exit code 0 when every turn completed, 1 if not.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

__all__ = ["AgentGone", "RawAgent", "Turn", "main"]

Protocol = Literal["app-server", "acp"]

CLIENT_INFO = {"name": "robota", "title": "robota", "version": "0.1.0"}
"""What robota sends as ``clientInfo`` (its own package version; the agent only echoes it)."""
APP_SERVER_THREAD = {"approvalPolicy": "untrusted", "sandbox": "workspace-write"}
"""``thread/start`` params of robota's ``default`` permission mode (its PERMISSION_MODES)."""
EOF_GRACE, TERM_GRACE, GROUP_GRACE = 1.5, 2.0, 0.5
"""robota's ShutdownTimings."""


class AgentGone(Exception):
    """The agent closed its stdout (exited) while the client waited for it."""


class RpcFailed(Exception):
    """The agent answered a request with an error."""


@dataclass
class Turn:
    text: str
    """The answer: the agent message text of the turn."""
    sent: float
    """``time.perf_counter()`` just before the request was written."""
    ended: float
    """Just after the line ending the turn was read."""
    status: str = "completed"
    raw: dict[str, Any] = field(default_factory=dict)
    first: float | None = None
    """When the answer's first text chunk was read (``None``: no text)."""

    @property
    def seconds(self) -> float:
        return self.ended - self.sent


def app_server_decision(method: str) -> dict[str, Any] | None:
    """The answer to an App Server server request, as robota's print mode gives it (decline)."""
    if method.endswith("requestApproval"):
        return {"decision": "decline"}
    return None


def acp_permission(params: Any) -> dict[str, Any]:
    """Reject once when the agent offers that option, else cancel (robota's policy decline)."""
    options = params.get("options") if isinstance(params, dict) else None
    for option in options or ():
        if isinstance(option, dict) and option.get("kind") == "reject_once":
            return {"outcome": {"outcome": "selected", "optionId": option.get("optionId")}}
    return {"outcome": {"outcome": "cancelled"}}


class RawAgent:
    """One agent process and one session, driven synchronously from the calling thread."""

    def __init__(
        self,
        protocol: Protocol,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        if protocol not in ("app-server", "acp"):
            raise ValueError(f"unknown protocol {protocol!r}")
        self.protocol: Protocol = protocol
        self.command = list(command)
        self.env = dict(os.environ if env is None else env)
        self.cwd = cwd
        self.process: subprocess.Popen[bytes] | None = None
        self.session_id: str | None = None
        self.version: str | None = None
        self.stamps: dict[str, float] = {}
        """``time.perf_counter()`` at each step: spawned, initialized, session."""
        self._next_id = 0
        self._text: list[str] = []
        self._first: float | None = None

    # -- process -------------------------------------------------------------------------------

    def start(self) -> None:
        self.stamps["spawn"] = time.perf_counter()
        self.process = subprocess.Popen(
            self.command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=self.env,
            cwd=self.cwd,
            start_new_session=True,
        )
        self.stamps["spawned"] = time.perf_counter()

    def close(self) -> int:
        """End the agent the way robota does; return its exit code."""
        process = self.process
        if process is None:
            return 0
        if process.stdin is not None and not process.stdin.closed:
            try:
                process.stdin.close()
            except BrokenPipeError:
                pass  # already gone
        code = _wait(process, EOF_GRACE)
        if code is None:
            _killpg(process.pid, signal.SIGTERM)
            code = _wait(process, TERM_GRACE)
        if code is None:
            _killpg(process.pid, signal.SIGKILL)
            code = process.wait()
        for signum, grace in ((None, GROUP_GRACE), (signal.SIGTERM, TERM_GRACE)):
            if signum is not None:
                _killpg(process.pid, signum)
            deadline = time.monotonic() + grace
            while _group_alive(process.pid) and time.monotonic() < deadline:
                time.sleep(0.02)
            if not _group_alive(process.pid):
                break
        else:
            _killpg(process.pid, signal.SIGKILL)
        if process.stdout is not None:
            process.stdout.close()
        return code

    def __enter__(self) -> RawAgent:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- protocol ------------------------------------------------------------------------------

    def open(self, cwd: Path) -> str:
        """Handshake and one session in ``cwd``; returns the session (thread) id."""
        if self.protocol == "app-server":
            result = self.request(
                "initialize", {"clientInfo": CLIENT_INFO, "capabilities": {"experimentalApi": True}}
            )
            self.notify("initialized")
            self.version = str(result.get("userAgent", "")) or None
            self.stamps["initialized"] = time.perf_counter()
            thread = self.request("thread/start", {"cwd": str(cwd), **APP_SERVER_THREAD})
            self.session_id = str(thread["thread"]["id"])
        else:
            result = self.request(
                "initialize",
                {
                    "protocolVersion": 1,
                    "clientCapabilities": {
                        "fs": {"readTextFile": True, "writeTextFile": True},
                        "terminal": True,
                    },
                    "clientInfo": CLIENT_INFO,
                },
            )
            info = result.get("agentInfo") if isinstance(result, dict) else None
            self.version = info.get("version") if isinstance(info, dict) else None
            self.stamps["initialized"] = time.perf_counter()
            session = self.request("session/new", {"cwd": str(cwd), "mcpServers": []})
            self.session_id = str(session["sessionId"])
        self.stamps["session"] = time.perf_counter()
        return self.session_id

    def turn(self, text: str) -> Turn:
        """One prompt, until the agent says the turn ended."""
        assert self.session_id is not None, "open() first"
        self._text = []
        self._first = None
        if self.protocol == "app-server":
            sent = time.perf_counter()
            self._write(
                self._request_message(
                    "turn/start",
                    {
                        "threadId": self.session_id,
                        "input": [{"type": "text", "text": text, "text_elements": []}],
                    },
                )
            )
            completed = self._read_until(lambda m: m.get("method") == "turn/completed")
            ended = time.perf_counter()
            turn = completed["params"]["turn"]
            status = str(turn.get("status"))
            return Turn("".join(self._text), sent, ended, status, completed, self._first)
        sent = time.perf_counter()
        request = self._request_message(
            "session/prompt",
            {"sessionId": self.session_id, "prompt": [{"type": "text", "text": text}]},
        )
        self._write(request)
        response = self._read_until(lambda m: _is_response(m, request["id"]))
        ended = time.perf_counter()
        if "error" in response:
            return Turn("".join(self._text), sent, ended, "failed", response, self._first)
        stop = response["result"].get("stopReason")
        status = "completed" if stop == "end_turn" else str(stop)
        return Turn("".join(self._text), sent, ended, status, response, self._first)

    def request(self, method: str, params: Any = None) -> Any:
        message = self._request_message(method, params)
        self._write(message)
        response = self._read_until(lambda m: _is_response(m, message["id"]))
        if "error" in response:
            raise RpcFailed(f"{method}: {response['error']}")
        return response.get("result")

    def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"method": method}
        if params is not None:
            message["params"] = params
        self._write(message)

    # -- internals -----------------------------------------------------------------------------

    def _request_message(self, method: str, params: Any) -> dict[str, Any]:
        message: dict[str, Any] = {"id": self._next_id, "method": method}
        self._next_id += 1
        if params is not None:
            message["params"] = params
        return message

    def _write(self, message: dict[str, Any]) -> None:
        if self.protocol == "acp":
            message = {"jsonrpc": "2.0", **message}
        stdin = self._pipes()[0]
        stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        stdin.flush()

    def _pipes(self) -> tuple[IO[bytes], IO[bytes]]:
        process = self.process
        assert process is not None and process.stdin is not None and process.stdout is not None
        return process.stdin, process.stdout

    def _read_until(self, done: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        stdout = self._pipes()[1]
        while True:
            line = stdout.readline()
            if not line:
                raise AgentGone(f"{self.command[0]} closed its stdout")
            try:
                message = json.loads(line)
            except ValueError:
                continue  # not JSON-RPC: skipped, as robota skips it
            if not isinstance(message, dict):
                continue
            if done(message):
                return message
            if "method" in message and "id" in message:
                self._answer(message)
            elif "method" in message:
                self._notified(message["method"], message.get("params"))

    def _answer(self, request: dict[str, Any]) -> None:
        method = str(request["method"])
        result: dict[str, Any] | None = None
        if self.protocol == "app-server":
            result = app_server_decision(method)
        elif method == "session/request_permission":
            result = acp_permission(request.get("params"))
        reply: dict[str, Any] = {"id": request["id"]}
        if result is None:
            reply["error"] = {"code": -32601, "message": f"method not found: {method}"}
        else:
            reply["result"] = result
        self._write(reply)

    def _notified(self, method: str, params: Any) -> None:
        if not isinstance(params, dict):
            return
        if method == "item/agentMessage/delta":
            self._chunk(str(params.get("delta", "")))
        elif method == "session/update":
            update = params.get("update")
            if isinstance(update, dict) and update.get("sessionUpdate") == "agent_message_chunk":
                content = update.get("content")
                if isinstance(content, dict) and content.get("type") == "text":
                    self._chunk(str(content.get("text", "")))

    def _chunk(self, text: str) -> None:
        if self._first is None:
            self._first = time.perf_counter()
        self._text.append(text)


def _is_response(message: dict[str, Any], request_id: int) -> bool:
    return message.get("id") == request_id and "method" not in message


def _wait(process: subprocess.Popen[bytes], seconds: float) -> int | None:
    try:
        return process.wait(seconds)
    except subprocess.TimeoutExpired:
        return None


def _killpg(pgid: int, signum: signal.Signals) -> None:
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        pass  # the group is empty already


def _group_alive(pgid: int) -> bool:
    """Whether a process other than a zombie is still in the group."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[-1].split()
        except OSError:
            continue
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] != "Z":
            return True
    return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0] if __doc__ else None,
        usage="%(prog)s --protocol app-server|acp [options] -- COMMAND [ARG ...]",
    )
    parser.add_argument("--protocol", choices=["app-server", "acp"], required=True)
    parser.add_argument("--cwd", type=Path, default=Path.cwd(), help="the session's directory")
    parser.add_argument("--prompt", action="append", default=[], help="a turn (repeatable)")
    parser.add_argument("--json", action="store_true", help="one object with step timings")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no agent command after --")
    prompts = args.prompt or ["hello"]
    started = time.perf_counter()
    agent = RawAgent(args.protocol, command, cwd=args.cwd)
    turns: list[Turn] = []
    try:
        agent.start()
        agent.open(args.cwd.resolve())
        for prompt in prompts:
            turn = agent.turn(prompt)
            turns.append(turn)
            if not args.json:
                print(json.dumps({"text": turn.text, "seconds": round(turn.seconds, 6)}))
                sys.stdout.flush()
    finally:
        stopping = time.perf_counter()
        agent.close()
    if args.json:
        stamps = {k: round(v - started, 6) for k, v in agent.stamps.items()}
        print(
            json.dumps(
                {
                    "version": agent.version,
                    "session_id": agent.session_id,
                    "steps": stamps,
                    "turns": [
                        {"text": t.text, "status": t.status, "seconds": round(t.seconds, 6)}
                        for t in turns
                    ],
                    "stop_seconds": round(time.perf_counter() - stopping, 6),
                }
            )
        )
    return 0 if turns and all(t.status == "completed" for t in turns) else 1


if __name__ == "__main__":
    sys.exit(main())
