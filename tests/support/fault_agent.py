"""A small ACP agent that misbehaves on request: the faults the agent actor must survive.

Run as ``python fault_agent.py``; it speaks ACP over stdio (newline-delimited JSON-RPC), enough
for robota's ACP client: ``initialize``, ``session/new``, ``session/load``, ``session/prompt``,
``session/cancel``. The prompt text picks the behaviour:

* ``EXIT``      one text chunk, then the process exits with code 3 mid-turn
* ``GARBAGE``   five lines of binary garbage, then a normal answer
* ``FLOOD``     garbage lines without end (the output is no longer JSON-RPC)
* ``LONGLINE``  one 20 MiB line (the answer the turn waits for would be in it), then silence
* ``HANG``      no answer until ``session/cancel``
* ``ASK``       asks ``session/request_permission`` (allow once / reject once) and answers with
  the option kind it got back
* ``TERMINAL <command>``  runs the command in a terminal of the client's (``terminal/create``,
  ``terminal/wait_for_exit``, ``terminal/output``, ``terminal/release``) and answers
  ``terminal: <its output>``
* ``HISTORY``   answers with every prompt this session received (survives ``session/load``
  through a state file, as a real agent's saved session would)
* anything else: one chunk ``echo: <prompt>`` and ``end_turn``

Environment (set through the agent's configured ``env``):

* ``FAULT_AGENT_SILENT=1``  never answer ``initialize``
* ``FAULT_AGENT_PIDS=FILE`` append this process's pid, and its helper child's, to FILE
* ``FAULT_AGENT_CHILD=1``   start a helper child (a sleeping Python) in the same process group, so
  tests can prove the whole group is ended
* ``FAULT_AGENT_IGNORE_EOF=1``  keep running after stdin closes (like codex-acp)
* ``FAULT_AGENT_STATE=DIR`` where sessions are saved (for ``session/load``)
* ``FAULT_AGENT_DELAY=SECONDS``  wait this long before each echo answer (a turn that takes time)
* ``FAULT_AGENT_STDERR=TEXT``  write TEXT (and a newline) on stderr as it starts
* ``FAULT_AGENT_EXIT_AT_START=CODE``  then exit with CODE before reading anything
* ``FAULT_AGENT_DYING=TEXT``  write TEXT on stderr just before ``EXIT`` exits
* ``FAULT_AGENT_CALLS=FILE``  append each request's method and its ``sessionId``, if any, to FILE
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

_write_lock = threading.Lock()


def send(message: dict[str, Any]) -> None:
    raw = json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n"
    with _write_lock:
        sys.stdout.buffer.write(raw)
        sys.stdout.buffer.flush()


def write_raw(data: bytes) -> None:
    with _write_lock:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()


def chunk(session_id: str, text: str) -> None:
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    send({"method": "session/update", "params": {"sessionId": session_id, "update": update}})


class Agent:
    def __init__(self) -> None:
        self.sessions = 0
        self.state = Path(os.environ.get("FAULT_AGENT_STATE", "."))
        self.waiting: dict[str, Any] = {}  # session id -> request id of a HANG prompt
        self.asking: dict[Any, tuple[str, Any]] = {}  # our request id -> (session, prompt id)
        # our request id -> (step, session, prompt id, terminal id)
        self.terminals: dict[Any, tuple[str, str, Any, str]] = {}

    def history(self, session_id: str) -> list[str]:
        path = self.state / f"{session_id}.json"
        return list(json.loads(path.read_text())) if path.exists() else []

    def remember(self, session_id: str, text: str) -> None:
        self.state.mkdir(parents=True, exist_ok=True)
        path = self.state / f"{session_id}.json"
        # Written aside and renamed: a kill mid-write (robota's reaper TERMs agents that
        # outlive it) leaves the previous history, never an empty file the next start chokes on.
        fresh = path.with_name(f"{path.name}.{os.getpid()}")
        fresh.write_text(json.dumps([*self.history(session_id), text]))
        fresh.replace(path)

    def handle(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        params = message.get("params") or {}
        request_id = message.get("id")
        calls = os.environ.get("FAULT_AGENT_CALLS")
        if calls and method is not None:
            with Path(calls).open("a") as out:
                out.write(f"{method} {params.get('sessionId', '')}".rstrip() + "\n")
        if method is None and request_id in self.terminals:
            self.terminal_step(request_id, message)
        elif method is None and request_id in self.asking:
            session_id, prompt_id = self.asking.pop(request_id)
            outcome = (message.get("result") or {}).get("outcome") or {}
            options = {"yes": "allow_once", "no": "reject_once"}
            kind = options.get(outcome.get("optionId"), outcome.get("outcome", "none"))
            chunk(session_id, f"permission: {kind}")
            send({"id": prompt_id, "result": {"stopReason": "end_turn"}})
        elif method == "initialize":
            if os.environ.get("FAULT_AGENT_SILENT") == "1":
                return
            caps = {"loadSession": True, "promptCapabilities": {"image": False}}
            result = {
                "protocolVersion": 1,
                "agentCapabilities": caps,
                "agentInfo": {"name": "fault-agent", "version": "1.0.0"},
                "authMethods": [],
            }
            send({"id": request_id, "result": result})
        elif method == "session/new":
            self.sessions += 1
            session_id = f"fault-{os.getpid()}-{self.sessions}"
            send({"id": request_id, "result": {"sessionId": session_id}})
        elif method == "session/load":
            send({"id": request_id, "result": {}})
        elif method == "session/prompt":
            self.prompt(request_id, params)
        elif method == "session/cancel":
            waiting = self.waiting.pop(str(params.get("sessionId")), None)
            if waiting is not None:
                send({"id": waiting, "result": {"stopReason": "cancelled"}})
        elif request_id is not None:
            send({"id": request_id, "error": {"code": -32601, "message": f"no {method}"}})

    def terminal_step(self, request_id: Any, message: dict[str, Any]) -> None:
        """The client answered one of a TERMINAL prompt's requests: ask the next."""
        step, session_id, prompt_id, terminal_id = self.terminals.pop(request_id)
        result = message.get("result") or {}
        if "error" in message:
            chunk(session_id, f"terminal refused: {message['error'].get('message')}")
            send({"id": prompt_id, "result": {"stopReason": "end_turn"}})
            return
        after = {"create": "terminal/wait_for_exit", "wait": "terminal/output"}
        if step == "create":
            terminal_id = str(result.get("terminalId"))
        if step == "output":
            chunk(session_id, f"terminal: {result.get('output', '')}")
            next_step, method = "release", "terminal/release"
        elif step == "release":
            send({"id": prompt_id, "result": {"stopReason": "end_turn"}})
            return
        else:
            next_step, method = {"create": "wait", "wait": "output"}[step], after[step]
        ask_id = f"{next_step}-{prompt_id}"
        self.terminals[ask_id] = (next_step, session_id, prompt_id, terminal_id)
        params = {"sessionId": session_id, "terminalId": terminal_id}
        send({"id": ask_id, "method": method, "params": params})

    def prompt(self, request_id: Any, params: dict[str, Any]) -> None:
        session_id = str(params.get("sessionId"))
        text = " ".join(
            block.get("text", "") for block in params.get("prompt") or [] if isinstance(block, dict)
        )
        self.remember(session_id, text)
        if text.startswith("EXIT"):
            chunk(session_id, "about to exit")
            time.sleep(0.05)
            say_on_stderr(os.environ.get("FAULT_AGENT_DYING"))
            os._exit(3)
        if text.startswith("GARBAGE"):
            for n in range(5):
                write_raw(bytes(range(256))[n * 40 : n * 40 + 60].replace(b"\n", b"") + b"\n")
            chunk(session_id, "survived the garbage")
        elif text.startswith("FLOOD"):
            while True:
                write_raw(b"\x00\xff not json at all \x01\x02\n")
                time.sleep(0.001)
        elif text.startswith("LONGLINE"):
            write_raw(b'{"jsonrpc":"2.0","id":' + json.dumps(request_id).encode() + b',"x":"')
            block = b"y" * (1024 * 1024)
            for _ in range(20):
                write_raw(block)
            write_raw(b'"}\n')
            time.sleep(3600)
        elif text.startswith("HANG"):
            chunk(session_id, "hanging")
            self.waiting[session_id] = request_id
            return
        elif text.startswith("ASK"):
            ask_id = f"ask-{request_id}"
            self.asking[ask_id] = (session_id, request_id)
            tool = {"toolCallId": "t1", "title": "touch file", "kind": "edit", "status": "pending"}
            options = [
                {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                {"optionId": "no", "name": "Reject", "kind": "reject_once"},
            ]
            params = {"sessionId": session_id, "toolCall": tool, "options": options}
            send({"id": ask_id, "method": "session/request_permission", "params": params})
            return
        elif text.startswith("TERMINAL "):
            ask_id = f"create-{request_id}"
            self.terminals[ask_id] = ("create", session_id, request_id, "")
            params = {"sessionId": session_id, "command": text.removeprefix("TERMINAL ")}
            send({"id": ask_id, "method": "terminal/create", "params": params})
            return
        elif text.startswith("HISTORY"):
            chunk(session_id, "history: " + " | ".join(self.history(session_id)))
        else:
            time.sleep(float(os.environ.get("FAULT_AGENT_DELAY", "0")))
            chunk(session_id, f"echo: {text}")
        send({"id": request_id, "result": {"stopReason": "end_turn"}})


def say_on_stderr(text: str | None) -> None:
    if text is not None:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()


def main() -> None:
    say_on_stderr(os.environ.get("FAULT_AGENT_STDERR"))
    if "FAULT_AGENT_EXIT_AT_START" in os.environ:
        sys.exit(int(os.environ["FAULT_AGENT_EXIT_AT_START"]))
    pids = os.environ.get("FAULT_AGENT_PIDS")
    recorded = [os.getpid()]
    if os.environ.get("FAULT_AGENT_CHILD") == "1":
        # Same process group as this agent; no PATH lookup (tests may run with an empty PATH).
        helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
        recorded.append(helper.pid)
    if pids:
        with Path(pids).open("a") as out:
            out.write("".join(f"{pid}\n" for pid in recorded))
    agent = Agent()
    for line in sys.stdin.buffer:
        if line.strip():
            agent.handle(json.loads(line))
    if os.environ.get("FAULT_AGENT_IGNORE_EOF") == "1":
        time.sleep(3600)


if __name__ == "__main__":
    main()
