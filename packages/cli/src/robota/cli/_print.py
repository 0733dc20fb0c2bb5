"""Print mode: ``robota -p``. One prompt (or a stream of them) through the engine, then exit.

Output formats (stdout is only ever the answer or the JSON; everything else goes to stderr):

* ``text``         the final answer; progress on stderr only when stderr is a terminal
* ``json``         one ``result`` object when the last turn ends
* ``stream-json``  one JSON object per line: ``session_started``, the turn's events as
  ``robota.core.events`` encodes them, ``steered`` / ``queued`` for input that arrived during a
  turn, and a ``result`` object when each turn ends

The ``result`` object: ``type: "result"``, ``subtype: "success" | "error"``, ``is_error``,
``result`` (the final answer), ``session_id`` (the robota task id), ``agent``, ``turn_id``
(robota's id of the turn), ``duration_ms``, ``usage`` when known, ``error`` when it failed.

Exit codes: 0 every turn completed; 1 a turn failed (model, provider or agent); 2 usage or
configuration error; 130 interrupted by Ctrl-C (the running turn is interrupted first).
"""

from __future__ import annotations

import codecs
import json
import logging
import os
import signal
import stat
import sys
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, Protocol, TextIO

import trio

from robota.core import RobotaError
from robota.core.engine import (
    InputQueued,
    InputSteered,
    RouteIdle,
    RouteReply,
    TaskOpened,
    TurnBegan,
    TurnFinished,
    TurnUpdate,
    UserInput,
)
from robota.core.events import dataclass_to_json, event_to_json
from robota.core.frontend import FrontEndPort, RouteLink
from robota.host import PrintTask, choose_print_task

from ._beacon import HostBeacon
from ._print_input import INTERRUPT_GRACE, input_text, parse_input_line, prompt_text

if TYPE_CHECKING:
    from robota.core.engine import Engine
    from robota.core.presentation import TerminalRenderer, TurnView
    from robota.host import TaskChoice

    from ._prestart import Prestart
__all__ = ["OutputFormat", "PrintOptions", "PrintRun", "parse_input_line"]

logger = logging.getLogger("robota.cli.print")

OutputFormat = Literal["text", "json", "stream-json"]


@dataclass(frozen=True, slots=True)
class PrintOptions:
    prompt: str | None
    output_format: OutputFormat = "text"
    input_format: Literal["text", "stream-json"] = "text"
    task: PrintTask = field(default_factory=PrintTask)
    """Its task: ``-c``, ``-r``, ``--fork-session``, a new task's settings."""
    restricted: bool = False
    """``--restricted``: run Restricted even where the workspace is trusted; the only way to
    run in an untrusted one (``robota.host.headless_workspace``)."""


class UsageError(RobotaError):
    """Exit 2: the command line or the session it names is wrong."""


class PrintRun:
    """One print-mode run against a running engine, or a warm host's route (``port`` and
    ``chosen``: ``_print_host``); ``main`` returns the exit code."""

    def __init__(
        self,
        engine: Engine | None,
        options: PrintOptions,
        *,
        port: FrontEndPort | None = None,
        chosen: TaskChoice | None = None,
        stdout: TextIO,
        stderr: TextIO,
        stdin: TextIO | None = None,
        progress: bool = False,
        on_turn: Callable[[], None] | None = None,
    ) -> None:
        self.engine = engine
        self.chosen = chosen
        """The task a warm host already chose and asked for (``_print_host``); ``None``: this
        run chooses it on ``engine``."""
        self.on_turn = on_turn
        """Called when a turn begins and when it ends (``HostBeacon``: a team's operator)."""
        self.options = options
        self.stdout = stdout
        self.stderr = stderr
        self.stdin = stdin
        self.route = f"print:{uuid.uuid4().hex[:12]}"
        if port is None:
            assert engine is not None
            port = FrontEndPort(engine)
        self.link: RouteLink = port.subscribe(self.route)
        """Subscribed from the start: nothing the route says once told is missed."""
        self.progress = progress and options.output_format == "text"
        self.task_id: str | None = None
        self.agent: str | None = options.task.agent
        self.results: list[TurnFinished] = []
        self.failed = False
        self.usage_error: str | None = None
        self._views: dict[str, tuple[TurnView, TerminalRenderer, float]] = {}
        self._drawn = 0
        self._last_draw = 0.0
        self._await_task = False
        """Input waits until the resumed or forked task opened (or could not be)."""
        self._task_ready = trio.Event()
        self._sent = 0
        """``UserInput`` sent to the route so far."""
        self._idle_after = -1
        """``RouteIdle.inputs`` of the latest idle notice: idle after that many inputs."""
        self.fatal: str | None = None

    # -- the run -------------------------------------------------------------------------------

    async def main(self) -> int:
        link = self.link
        try:
            try:
                await self._choose_task()
            except UsageError as error:
                self.stderr.write(f"robota: {error}\n")
                return 2
            interrupted = await self._converse(link)
        finally:
            link.close()
        self._clear_progress()
        if self.usage_error is not None:
            self.stderr.write(f"robota: {self.usage_error}\n")
            return 2
        if self.fatal is not None:
            return 1
        if interrupted:
            return 130
        self._finish_output()
        return 1 if self.failed or not self.results else 0

    async def _converse(self, link: RouteLink) -> bool:
        """Feed the input and read the route until every answer is out; whether Ctrl-C came."""
        interrupted = False
        with trio.open_signal_receiver(signal.SIGINT) as signals:
            async with trio.open_nursery() as nursery:
                inputs_done = trio.Event()
                nursery.start_soon(self._feed, inputs_done)

                async def watch_signals() -> None:
                    nonlocal interrupted
                    async for _ in signals:
                        interrupted = True
                        link.interrupt()
                        nursery.start_soon(_cancel_after, nursery, INTERRUPT_GRACE)

                nursery.start_soon(watch_signals)
                done = False
                async for batch in link:  # ends when _feed ends the link
                    for notice in batch:
                        self._handle(notice)
                        done = (
                            self.usage_error is not None
                            or self.fatal is not None
                            or (isinstance(notice, TurnFinished) and interrupted)
                            # idle after the last input: every answer is out
                            or (inputs_done.is_set() and self._idle_after >= self._sent)
                        )
                        if done:
                            break
                    # One write for what arrived together (a turn's last event and its
                    # result): whoever reads stdout wakes once, not once per line.
                    self.stdout.flush()
                    if done:
                        break
                nursery.cancel_scope.cancel()
        return interrupted

    async def _choose_task(self) -> None:
        choice = self.chosen
        if choice is None:
            assert self.engine is not None
            task = self.options.task
            chosen = await choose_print_task(self.engine, task)
            if isinstance(chosen, str):
                raise UsageError(chosen)
            choice = chosen
        if choice.request is not None:
            self.link.send(choice.request)
        self.agent = choice.agent
        self._await_task = choice.await_task

    async def _feed(self, done: trio.Event) -> None:
        """Send the prompt, or each line of a stream-json stdin; ``done`` once all are sent."""
        if self._await_task:
            await self._task_ready.wait()
        if self.options.input_format == "text":
            assert self.options.prompt is not None
            self._sent = 1
            self.link.send(UserInput(self.options.prompt))
            done.set()
            return
        assert self.stdin is not None
        lines = _input_lines(self.stdin)
        number = 0
        sent = 0
        try:
            while line := await lines.readline():
                number += 1
                text = input_text(line, number, self._refuse_line)
                if text is None:
                    continue
                sent += 1
                self._sent = sent
                self.link.send(UserInput(text))
        finally:
            lines.close()
        done.set()
        if sent == 0:
            self.usage_error = "no input: stdin ended before any user message"
            self.link.end()  # nothing will ever make the route speak
        elif self._idle_after >= sent:
            # The last answer and its idle notice were read before stdin ended: the reader
            # waits for a notice that will not come.
            self.link.end()

    def _refuse_line(self, error: str) -> None:
        self._emit({"type": "error", "error": error})
        self.stdout.flush()
        self.stderr.write(f"robota: {error}\n")

    # -- notices -------------------------------------------------------------------------------

    def _handle(self, notice: object) -> None:
        match notice:
            case TaskOpened():
                self._task_ready.set()
                self.task_id = notice.task_id
                self.agent = notice.agent
                self._emit(
                    {
                        "type": "session_started",
                        "session_id": notice.task_id,
                        "agent": notice.agent,
                        "cwd": notice.cwd,
                        "agent_session_id": notice.remote_id,
                        "resumed": notice.resumed,
                        "forked_from": notice.forked_from,
                        "agent_version": notice.agent_version,
                    }
                )
            case TurnBegan():
                self.task_id = notice.task_id
                if self.on_turn is not None:
                    self.on_turn()
                if notice.restricted:
                    self._emit({"type": "restricted", "turn_id": notice.attempt_id, "mode": "plan"})
                if self.progress:
                    # Only a terminal on stderr draws progress: the renderers load then, not
                    # on every start (~20 ms of import a start would otherwise pay).
                    from robota.core.presentation import (  # noqa: PLC0415
                        TerminalRenderer,
                        TurnView,
                    )

                    view = TurnView()
                    view.restricted = notice.restricted
                    self._views[notice.attempt_id] = (
                        view,
                        TerminalRenderer(agent=self.agent or ""),
                        time.monotonic(),
                    )
            case TurnUpdate():
                self._emit(event_to_json(notice.event))
                self._draw(notice)
            case InputSteered():
                self._emit({"type": "steered", "turn_id": notice.attempt_id, "text": notice.text})
            case InputQueued():
                self._emit({"type": "queued", "prompt_id": notice.prompt_id, "text": notice.text})
            case TurnFinished():
                if self.on_turn is not None:
                    self.on_turn()
                self._clear_progress()
                self._views.pop(notice.attempt_id, None)
                self.results.append(notice)
                if notice.status != "completed":
                    self.failed = True
                if self.options.output_format == "stream-json":
                    self._emit(self._result(notice))
            case RouteIdle(inputs=inputs):
                self._idle_after = max(self._idle_after, inputs)
            case RouteReply(text=text, level=level):
                self._emit({"type": "reply", "level": level, "text": text})
                self._clear_progress()
                # Errors always; the rest ("new task ...", a command's answer) is progress,
                # which goes to stderr only when a person watches it there.
                if level == "error" or self.progress:
                    self.stderr.write(f"robota: {text}\n" if level == "error" else f"{text}\n")
                    self.stderr.flush()
                if level == "error" and self._await_task and not self._task_ready.is_set():
                    self.fatal = text  # the session to resume or fork could not be opened
            case _:
                pass

    def _emit(self, obj: dict[str, Any]) -> None:
        if self.options.output_format != "stream-json":
            return
        self.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")

    def _result(self, finished: TurnFinished) -> dict[str, Any]:
        ok = finished.status == "completed"
        result: dict[str, Any] = {
            "type": "result",
            "subtype": "success" if ok else "error",
            "is_error": not ok,
            "result": finished.final_text or "",
            "session_id": finished.task_id,
            "agent": self.agent,
            "turn_id": finished.attempt_id,
            "duration_ms": finished.duration_ms,
        }
        if finished.usage is not None:
            result["usage"] = dataclass_to_json(finished.usage)  # its fields but the None ones
        if not ok:
            error = finished.error
            result["error"] = {
                "message": error.message if error else f"the turn ended {finished.status}",
                "category": error.category if error else finished.status,
                "retryable": error.retryable if error else False,
            }
        return result

    def _finish_output(self) -> None:
        if not self.results:
            return
        last = self.results[-1]
        if self.options.output_format == "json":
            self.stdout.write(json.dumps(self._result(last), ensure_ascii=False) + "\n")
        elif self.options.output_format == "text":
            for finished in self.results:
                if finished.status == "completed" and finished.final_text:
                    self.stdout.write(finished.final_text.rstrip("\n") + "\n")
                elif finished.error is not None:
                    self.stderr.write(f"robota: the turn failed: {finished.error.message}\n")
                else:
                    self.stderr.write(f"robota: the turn ended {finished.status}\n")
        self.stdout.flush()

    # -- progress on a terminal ----------------------------------------------------------------

    def _draw(self, update: TurnUpdate) -> None:
        entry = self._views.get(update.attempt_id)
        if entry is None:
            return
        view, renderer, started = entry
        view.apply(update.event)
        now = time.monotonic()
        if now - self._last_draw < 0.1:
            return
        self._last_draw = now
        width = _terminal_width(self.stderr)
        lines = renderer.render(
            view, elapsed=now - started, width=width, color=True, last=6, output_lines=2
        )[-12:]
        self._clear_progress()
        self.stderr.write("\n".join(lines) + "\n")
        self.stderr.flush()
        self._drawn = len(lines)

    def _clear_progress(self) -> None:
        if self._drawn:
            self.stderr.write(f"\x1b[{self._drawn}F\x1b[J")
            self.stderr.flush()
            self._drawn = 0


class _Lines(Protocol):
    async def readline(self) -> str: ...

    def close(self) -> None: ...


class _PipeLines:
    """The lines of a pipe or socket, read on the trio loop itself: no worker thread per line,
    so each line reaches the engine one thread hop sooner (about 0.1 ms a turn, measured by
    tools/bench/warm_turns.py). ``readline`` returns "" at the end.

    Trio reads a duplicate of the descriptor in non-blocking mode, which the pipe's other
    readers (if any: a pipe is rarely shared) see until ``close`` puts blocking mode back."""

    def __init__(self, fd: int, encoding: str) -> None:
        self._stream = trio.lowlevel.FdStream(os.dup(fd))
        self._decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
        self._lines: deque[str] = deque()
        self._pending = ""
        self._ended = False

    async def readline(self) -> str:
        while not self._lines and not self._ended:
            chunk = await self._stream.receive_some()
            text = self._pending + self._decoder.decode(chunk, final=not chunk)
            *complete, self._pending = text.split("\n")
            self._lines.extend(f"{line}\n" for line in complete)
            if not chunk:
                self._ended = True
                if self._pending:
                    self._lines.append(self._pending)
        return self._lines.popleft() if self._lines else ""

    def close(self) -> None:
        self._stream.close()


class _FileLines:
    """Anything else (a file, a terminal, a test's StringIO): a worker thread per line."""

    def __init__(self, stream: TextIO) -> None:
        self._file = trio.wrap_file(stream)

    async def readline(self) -> str:
        return await self._file.readline()

    def close(self) -> None:
        """stdin stays open: it is not ours."""


def _input_lines(stream: TextIO) -> _Lines:
    try:
        fd = stream.fileno()
        mode = os.fstat(fd).st_mode
    except (OSError, ValueError):  # no descriptor (io.UnsupportedOperation is a ValueError)
        return _FileLines(stream)
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        return _PipeLines(fd, getattr(stream, "encoding", None) or "utf-8")
    return _FileLines(stream)


def _terminal_width(stream: TextIO) -> int:
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError):
        return 100


async def _cancel_after(nursery: trio.Nursery, seconds: float) -> None:
    await trio.sleep(seconds)
    nursery.cancel_scope.cancel()


def read_prompt(prompt: str | None, stdin: TextIO) -> str:
    """The prompt of ``-p`` (``prompt_text``); ``UsageError`` when there is none."""
    try:
        return prompt_text(prompt, stdin)
    except ValueError as error:
        raise UsageError(str(error)) from None


def run_print(options: PrintOptions, prestart: Prestart | None = None) -> int:
    """Build the engine for the profile, run one print-mode session, return the exit code.
    ``prestart``: the configuration already loaded and the agent spawned from it, which the
    engine adopts (the caller closes it afterwards; see ``_prestart``)."""
    from robota.core import (  # noqa: PLC0415
        ConfigError,
        Terminated,
        run_main,
    )
    from robota.host import WorkspaceRefused, headless_workspace, open_engine  # noqa: PLC0415

    from . import _gc  # noqa: PLC0415
    from ._profile import load_profile  # noqa: PLC0415

    if options.input_format == "text":
        try:
            prompt = read_prompt(options.prompt, sys.stdin)
        except UsageError as error:
            sys.stderr.write(f"robota: {error}\n")
            return 2
        options = replace(options, prompt=prompt)
    config, profile = load_profile() if prestart is None else (prestart.config, prestart.profile)
    agent = prestart.agent if prestart is not None else None
    directory = (options.task.cwd or config.defaults.cwd).resolve()
    try:
        # A directory that is none is the run's usage error (``PrintRun``): no turn runs.
        workspace = headless_workspace(
            config,
            profile,
            directory,
            restricted=options.restricted or not directory.is_dir(),
            mode="print",
        )
    except (WorkspaceRefused, ConfigError) as refused:
        sys.stderr.write(f"robota: {refused}\n")
        return 2
    engine = open_engine(
        workspace.config,
        profile,
        human_approves=False,
        prestarted=agent,
        restricted=workspace.hook,
    )
    _gc.settle()
    run = PrintRun(
        engine,
        options,
        stdout=sys.stdout,
        stderr=sys.stderr,
        stdin=sys.stdin,
        progress=sys.stderr.isatty(),
        on_turn=HostBeacon(profile.control_socket) if config.teams else None,
    )

    async def main() -> int:
        async with trio.open_nursery() as nursery:
            await nursery.start(engine.run)
            code = await run.main()
            nursery.cancel_scope.cancel()
        return code

    try:
        return run_main(main)
    except Terminated as terminated:
        return int(terminated.code or 1)
