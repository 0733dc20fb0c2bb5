"""``robota mcp serve``: the MCP server, a thin shell over the tools' decisions (``_tools``)
and a backend (``_host_backend``, ``_engine_backend``), on the official ``mcp`` SDK.

Over stdio the protocol owns the descriptors the process was started with: they are taken
before anything else runs (``take_stdio``), fd 0 then reads the null device and fd 1 writes to
stderr, so stdout carries MCP frames only, from start to exit, whatever prints. Over HTTP it
serves streamable HTTP on a loopback address behind a bearer token (``_http``), with
hypercorn on trio.

One cleanup ends every run (``serve``'s ``finally``): the client closing stdin, SIGINT,
SIGTERM or SIGHUP, a start failure and a transport failure all stop serving, stop the engine
(its agents end with it) and remove the token file; a normal close exits 0, a failure 1.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import trio

from robota.core import robota_version, runtime_plugins

from ._screen import screen_line
from ._setup import Backend, ServeSetup, ToolRefused
from ._tools import (
    TOOLS,
    AgentsCall,
    BadArgument,
    RunCall,
    TaskNewCall,
    TasksCall,
    TaskStatusCall,
    ToolCall,
    agents_json,
    cut,
    fitted,
    folder_refusal,
    parse_call,
    run_result,
)

__all__ = ["EXIT_FAILED", "EXIT_STOPPED", "HttpOptions", "Stdio", "serve", "take_stdio"]

logger = logging.getLogger("robota.mcp")

EXIT_STOPPED = 0
EXIT_FAILED = 1
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


@dataclass(frozen=True, slots=True)
class Stdio:
    """The protocol's own descriptors (see ``take_stdio``)."""

    read_fd: int
    write_fd: int


def take_stdio() -> Stdio:
    """Take the process's stdin and stdout for the protocol: the protocol keeps duplicates,
    fd 0 then reads the null device and fd 1 writes to stderr (nothing else reaches stdout,
    and no child reads the client's frames)."""
    read_fd = os.dup(0)
    write_fd = os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    for fd in (read_fd, write_fd):
        os.set_inheritable(fd, False)
    return Stdio(read_fd, write_fd)


@dataclass(frozen=True, slots=True)
class HttpOptions:
    host: str
    port: int
    token: str


class _Frames:
    """Where the server's frames are written: the SDK's and the screen's answers, one at a
    time (a descriptor's stream takes one writer)."""

    def __init__(self, fd: int) -> None:
        self._stream = trio.lowlevel.FdStream(fd)
        self._writing = trio.Lock()

    async def write(self, text: str) -> None:
        async with self._writing:
            await self._stream.send_all(text.encode("utf-8"))

    async def flush(self) -> None:
        return None

    async def aclose(self) -> None:
        await self._stream.aclose()


class _Lines:
    """The client's frames, a line each, read from a descriptor on trio (cancellable); a line
    that is not one JSON-RPC message is answered on ``frames`` and not passed on
    (``_screen``)."""

    def __init__(self, fd: int, frames: _Frames) -> None:
        self._stream = trio.lowlevel.FdStream(fd)
        self._buffer = bytearray()
        self._frames = frames

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        while True:
            line = await self._next_line()
            screened = screen_line(line)
            if screened == "pass":
                return line
            if screened != "skip":
                logger.warning(
                    "mcp serve: a line of %d bytes refused: %s",
                    len(line.encode("utf-8")),
                    screened["error"]["message"],
                )
                await self._frames.write(json.dumps(screened) + "\n")

    async def _next_line(self) -> str:
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                return line.decode("utf-8", "replace")
            chunk = await self._stream.receive_some(65536)
            if not chunk:
                if self._buffer:
                    line = bytes(self._buffer)
                    self._buffer.clear()
                    return line.decode("utf-8", "replace")
                raise StopAsyncIteration
            self._buffer += chunk

    async def aclose(self) -> None:
        await self._stream.aclose()


# -- the tools -------------------------------------------------------------------------------------


class Tools:
    """The tools' calls against a backend; each answers (text, structured, is_error)."""

    def __init__(self, setup: ServeSetup, backend: Backend) -> None:
        self.setup = setup
        self.backend = backend

    async def call(
        self, call: ToolCall, progress: Callable[[str], Awaitable[None]]
    ) -> tuple[str, dict[str, object] | None, bool]:
        if isinstance(call, AgentsCall):
            agents = agents_json(self.setup.config.agents, runtime_plugins())
            return _json({"agents": agents})
        if isinstance(call, TaskNewCall):
            task = await self.backend.new_task(self._placed(call))
            return _json({"task": task})
        if isinstance(call, RunCall):
            if call.task is None:
                made = await self.backend.new_task(self._placed(TaskNewCall(agent=call.agent)))
                call = replace(call, task=made, agent=None)  # the new task has the agent
            elif call.agent is not None:
                raise ToolRefused(
                    "robota_run: argument 'agent' is for a new task; the given task keeps its own"
                )
            outcome = await self.backend.run(call, progress)
            text, structured, failed = run_result(
                outcome.task,
                outcome.turn,
                outcome.status,
                outcome.answer,
                error=outcome.error,
                approvals=outcome.approvals,
            )
            return text, structured, failed
        if isinstance(call, TasksCall):
            rows = await trio.to_thread.run_sync(self.setup.list_tasks, call.all)
            return _json({"tasks": rows})
        if isinstance(call, TaskStatusCall):
            return _json(await self._status(call.task))
        status = await self._status(call.task)
        stopped = await self.backend.stop(str(status["id"]))
        return _json({"task": status["id"], "stopped": stopped})

    def _placed(self, call: TaskNewCall) -> TaskNewCall:
        """``call`` with its folder: the workspace's when none is given; a given one must be
        an absolute folder inside the workspace, or trusted (``ToolRefused``)."""
        if call.cwd is None:
            return replace(call, cwd=str(self.setup.workspace))
        path = Path(call.cwd)
        refusal = folder_refusal(path, self.setup.workspace)
        if refusal is None and not path.resolve().is_dir():
            refusal = "not a folder"
        if refusal == "outside" and self.setup.trusted(path.resolve()):
            refusal = None
        if refusal == "outside":
            refusal = f"outside the served workspace {self.setup.workspace} and not trusted"
        if refusal is not None:
            raise ToolRefused(f"robota_task_new: argument 'cwd': found {call.cwd!r}, {refusal}")
        return replace(call, cwd=str(path.resolve()))

    async def _status(self, name: str) -> dict[str, object]:
        try:
            return await trio.to_thread.run_sync(self.setup.task_status, name)
        except LookupError as error:
            raise ToolRefused(str(error)) from None


def _json(value: Mapping[str, object]) -> tuple[str, dict[str, object], bool]:
    return json.dumps(value, ensure_ascii=False, indent=2), dict(value), False


def build_server(tools: Tools) -> Any:
    """The SDK's low-level server with the tools' two handlers."""
    import mcp_types as types  # noqa: PLC0415 (the SDK loads only when serving)

    from mcp.server.lowlevel import Server  # noqa: PLC0415

    listed = types.ListToolsResult(
        tools=[
            types.Tool(name=t.name, description=t.description, input_schema=dict(t.input_schema))
            for t in TOOLS
        ]
    )

    async def list_tools(_ctx: Any, _params: Any) -> Any:
        return listed

    def failure(message: str) -> Any:
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=cut(message))], is_error=True
        )

    async def call_tool(ctx: Any, params: Any) -> Any:
        try:
            call = parse_call(params.name, params.arguments)
        except (BadArgument, LookupError) as error:
            return failure(str(error).strip("'\""))
        token = _progress_token(ctx.meta)
        moves = 0

        async def progress(message: str) -> None:
            nonlocal moves
            if token is None:
                return
            moves += 1
            await ctx.session.send_progress_notification(
                token, float(moves), None, message, related_request_id=ctx.request_id
            )

        try:
            text, structured, failed = await tools.call(call, progress)
        except ToolRefused as refused:
            return failure(str(refused))
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=cut(text))],
            structured_content=fitted(structured) if structured is not None else None,
            is_error=failed,
        )

    return Server(
        "robota",
        version=robota_version(),
        instructions="robota drives coding agents (Codex, Claude Code, Gemini CLI...): "
        "robota_run asks one and returns its answer; pass the same task to continue.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _progress_token(meta: Any) -> str | int | None:
    if not meta:
        return None
    token = meta.get("progressToken", meta.get("progress_token"))
    return token if isinstance(token, str | int) else None


# -- running -------------------------------------------------------------------------------------


def serve(
    setup: ServeSetup,
    backend_factory: Callable[[], Backend],
    *,
    stdio: Stdio | None = None,
    http: HttpOptions | None = None,
    cleanup: Callable[[], None] = lambda: None,
) -> int:
    """Serve until the client leaves or a stop signal; the exit code."""
    try:
        return trio.run(_serve, setup, backend_factory, stdio, http)
    except Exception as failed:
        logger.exception("mcp serve failed")
        print(f"robota: mcp serve failed: {_causes(failed)}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        cleanup()


def _causes(error: BaseException) -> str:
    if isinstance(error, BaseExceptionGroup):
        return "; ".join(_causes(e) for e in error.exceptions)
    return f"{type(error).__name__}: {error}"


async def _serve(
    setup: ServeSetup,
    backend_factory: Callable[[], Backend],
    stdio: Stdio | None,
    http: HttpOptions | None,
) -> int:
    backend = backend_factory()
    server = build_server(Tools(setup, backend))
    engine = getattr(backend, "run_engine", None)
    with trio.open_signal_receiver(*STOP_SIGNALS) as signals:
        async with trio.open_nursery() as outer:
            if engine is not None:
                await outer.start(engine)
            try:
                async with trio.open_nursery() as serving:

                    async def watch() -> None:
                        async for signum in signals:
                            logger.info("mcp serve: %s received", signal.Signals(signum).name)
                            serving.cancel_scope.cancel()

                    serving.start_soon(watch)
                    if http is not None:
                        await _serve_http(server, http)
                    elif stdio is not None:
                        await _serve_stdio(server, stdio)
                    serving.cancel_scope.cancel()
            finally:
                stop = getattr(backend, "stop_engine", None)
                if stop is not None:
                    stop()
    return EXIT_STOPPED


async def _serve_stdio(server: Any, stdio: Stdio) -> None:
    from mcp.server.stdio import stdio_server  # noqa: PLC0415

    frames = _Frames(stdio.write_fd)
    lines = _Lines(stdio.read_fd, frames)
    async with stdio_server(stdin=lines, stdout=frames) as (read, write):  # type: ignore[arg-type]
        logger.info("mcp serve: stdio ready (pid %d)", os.getpid())
        await server.run(read, write, server.create_initialization_options())


async def _serve_http(server: Any, http: HttpOptions) -> None:
    from hypercorn.config import Config as HypercornConfig  # noqa: PLC0415
    from hypercorn.trio import serve as hypercorn_serve  # noqa: PLC0415

    from ._http import bearer_guard  # noqa: PLC0415

    app: Any = bearer_guard(server.streamable_http_app(host=http.host), http.token)
    config = HypercornConfig()
    config.bind = [f"{http.host}:{http.port}"]
    config.accesslog = None
    config.errorlog = logging.getLogger("robota.mcp.http")
    config.graceful_timeout = 2.0
    async with trio.open_nursery() as nursery:
        binds: list[str] = await nursery.start(
            lambda task_status: hypercorn_serve(app, config, task_status=task_status)
        )
        logger.info("mcp serve: http ready on %s (pid %d)", ", ".join(binds), os.getpid())
        print(f"robota: serving MCP on {binds[0]}/mcp", file=sys.stderr, flush=True)
