"""The client side of ACP: the files and terminals an agent may ask robota for.

Files. ``fs/read_text_file`` and ``fs/write_text_file`` are confined to the session's working
directory (after resolving symlinks and ``..``) unless the session's permission mode is
``bypassPermissions``. A missing file reads as empty content rather than an error: gemini reads
a file before creating it and only recognises "does not exist" in a form its SDK loses, so a
proper error would make every new-file write fail (ACP.md s.9).

Terminals. ``terminal/create`` runs the command line through ``/bin/sh -c`` in the session's
directory (or the ``cwd`` asked for, under the same confinement), in its own process group, and
keeps at most ``outputByteLimit`` bytes of output, dropping from the beginning at a character
boundary. ``release`` kills what still runs; every terminal is killed when the session host closes.
A terminal's environment is an agent's (``_process``: robota's secrets and settings scrubbed,
its non-secret context kept), plus what the session adds (``ROBOTA_TASK_ID``: the task it runs
for) and the variables the request asks for, reserved names refused.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from ._jsonrpc import RequestRefused
from ._reaper import REAPER
from ._spawn import INJECTED_NAMES, is_reserved_name

__all__ = ["FileAccess", "HostError", "Terminals", "terminal_environment"]

DEFAULT_OUTPUT_LIMIT = 1024 * 1024


class HostError(RequestRefused):
    """A file or terminal request the client refuses, answered with its JSON-RPC code."""


@dataclass(frozen=True, slots=True)
class FileAccess:
    root: Path
    unrestricted: bool = False

    def resolve(self, raw: Any) -> Path:
        if not isinstance(raw, str) or not raw:
            raise HostError(-32602, "path must be a non-empty string")
        path = Path(raw)
        if not path.is_absolute():
            raise HostError(-32602, f"path must be absolute: {raw}")
        resolved = path.resolve()
        root = self.root.resolve()
        if not self.unrestricted and resolved != root and root not in resolved.parents:
            raise HostError(-32000, f"access outside the session directory refused: {raw}")
        return resolved

    def read(self, params: Mapping[str, Any]) -> dict[str, Any]:
        path = self.resolve(params.get("path"))
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return {"content": ""}
        except IsADirectoryError:
            raise HostError(-32602, f"{path} is a directory") from None
        line, limit = params.get("line"), params.get("limit")
        if isinstance(line, int) or isinstance(limit, int):
            lines = text.splitlines(keepends=True)
            start = max((line if isinstance(line, int) else 1) - 1, 0)
            end = start + limit if isinstance(limit, int) and limit >= 0 else None
            text = "".join(lines[start:end])
        return {"content": text}

    def write(self, params: Mapping[str, Any]) -> None:
        path = self.resolve(params.get("path"))
        content = params.get("content")
        if not isinstance(content, str):
            raise HostError(-32602, "content must be a string")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")


@dataclass
class _Terminal:
    process: trio.Process
    limit: int
    output: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    exited: trio.Event = field(default_factory=trio.Event)

    def append(self, chunk: bytes | bytearray) -> None:
        self.output += chunk
        excess = len(self.output) - self.limit
        if excess > 0:
            del self.output[:excess]
            # Never start inside a UTF-8 sequence: drop continuation bytes at the front.
            while self.output and (self.output[0] & 0xC0) == 0x80:
                del self.output[0]
            self.truncated = True

    def status(self) -> dict[str, Any] | None:
        code = self.process.returncode
        if code is None:
            return None
        if code < 0:
            return {"exitCode": None, "signal": signal.Signals(-code).name}
        return {"exitCode": code, "signal": None}


def terminal_environment(
    inherited: Mapping[str, str], session_env: Mapping[str, str], requested: Any
) -> dict[str, str]:
    """A terminal's environment: see the module docstring."""
    env = {
        k: v for k, v in inherited.items() if not is_reserved_name(k) or k.upper() in INJECTED_NAMES
    }
    for entry in requested if isinstance(requested, list) else ():
        name = entry.get("name") if isinstance(entry, dict) else None
        if isinstance(name, str) and not is_reserved_name(name):
            env[name] = str(entry.get("value", ""))
    env.update(session_env)
    return env


class Terminals:
    """The terminals of one ACP connection, keyed by the ids robota hands out."""

    def __init__(self, nursery: trio.Nursery) -> None:
        self._nursery = nursery
        self._terminals: dict[str, _Terminal] = {}
        self._next = 0

    async def create(
        self,
        params: Mapping[str, Any],
        files: FileAccess,
        session_env: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        command = params.get("command")
        if not isinstance(command, str) or not command:
            raise HostError(-32602, "command must be a non-empty string")
        args = params.get("args") or []
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise HostError(-32602, "args must be a list of strings")
        cwd = files.resolve(params["cwd"]) if params.get("cwd") else files.root
        env = terminal_environment(os.environ, session_env or {}, params.get("env") or ())
        limit = params.get("outputByteLimit")
        limit = limit if isinstance(limit, int) and limit > 0 else DEFAULT_OUTPUT_LIMIT
        argv = [command, *args] if args else ["/bin/sh", "-c", command]
        process = await trio.lowlevel.open_process(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=str(cwd),
            env=REAPER.marked(env),  # ended with robota however it dies (``_reaper``)
            start_new_session=True,
        )
        self._next += 1
        terminal_id = f"term-{self._next}"
        terminal = _Terminal(process, limit)
        self._terminals[terminal_id] = terminal
        self._nursery.start_soon(self._pump, terminal)
        return {"terminalId": terminal_id}

    async def _pump(self, terminal: _Terminal) -> None:
        stream = terminal.process.stdout
        assert stream is not None
        async for chunk in stream:
            terminal.append(chunk)
        await terminal.process.wait()
        terminal.exited.set()

    def _get(self, params: Mapping[str, Any]) -> _Terminal:
        terminal = self._terminals.get(str(params.get("terminalId")))
        if terminal is None:
            raise HostError(-32602, f"unknown terminal {params.get('terminalId')!r}")
        return terminal

    def output(self, params: Mapping[str, Any]) -> dict[str, Any]:
        terminal = self._get(params)
        result: dict[str, Any] = {
            "output": terminal.output.decode("utf-8", errors="replace"),
            "truncated": terminal.truncated,
        }
        status = terminal.status() if terminal.exited.is_set() else None
        if status is not None:
            result["exitStatus"] = status
        return result

    async def wait_for_exit(self, params: Mapping[str, Any]) -> dict[str, Any]:
        terminal = self._get(params)
        await terminal.exited.wait()
        status = terminal.status()
        assert status is not None
        return status

    def kill(self, params: Mapping[str, Any]) -> dict[str, Any]:
        _kill_group(self._get(params).process)
        return {}

    def release(self, params: Mapping[str, Any]) -> dict[str, Any]:
        terminal = self._get(params)
        _kill_group(terminal.process)
        del self._terminals[str(params.get("terminalId"))]
        return {}

    def close(self) -> None:
        for terminal in self._terminals.values():
            _kill_group(terminal.process)
        self._terminals.clear()


def _kill_group(process: trio.Process) -> None:
    if process.returncode is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # it ended on its own
