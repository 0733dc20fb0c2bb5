"""Print mode's output made straight from a warm host's frames: no engine in this process.

Once the host said ``hello`` to ``print.run`` (``_print_host``), what is left for this process
is a relay: the prompt (or each ``--input-format stream-json`` line) goes out as a ``submit``
frame, Ctrl-C as ``abort``, and the host's ``notice`` frames come back as the engine's notices
in their JSON form (``robota.core.protocol``), from which the output is written. The notices
are read as JSON, never decoded into the engine's classes, and the loop is a plain
``selectors`` loop: a run through the host loads neither trio, nor the engine, nor the front
end (tests/cli/test_import_budget.py), which is most of what a start costs
(``docs/performance.md``).

The output is ``PrintRun``'s (``_print``), field for field: the same ``session_started``,
events (the host's ``event_to_json``, passed on as they are), ``steered``, ``queued``,
``reply`` and ``result`` objects, the same text, the same stderr lines and exit codes, and the
same end (every answer out once the route is idle after the last input; an interrupted turn's
end, or ``INTERRUPT_GRACE`` after Ctrl-C; the host's connection closing). tests/host/
test_print_host.py compares each format with the run in print mode's own process. Progress on a
terminal (``text`` with stderr a terminal) needs the turn renderers, so that run keeps
``PrintRun`` on the host's stream (``_print_host.HostRoute``).
"""

from __future__ import annotations

import codecs
import json
import os
import selectors
import signal
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any, TextIO

from robota.core.protocol import (
    MAX_FRAME,
    LineSplitter,
    Overlong,
    ProtocolError,
    decode_frame,
    encode_frame,
)

from ._print_input import INTERRUPT_GRACE, input_text

__all__ = ["HostPrint"]

_DONE = "done"
"""``_deliver``: every answer is out (or the run stops here)."""


class HostPrint:
    """One print-mode run relayed to and from a warm host; ``run`` returns the exit code."""

    def __init__(
        self,
        sock: socket.socket,
        leftover: list[bytes],
        *,
        agent: str | None,
        await_task: bool,
        output_format: str,
        prompt: str | None,
        stdout: TextIO,
        stderr: TextIO,
        stdin: TextIO,
    ) -> None:
        self.sock = sock
        self._leftover = leftover
        self.agent = agent
        self.await_task = await_task
        """Input waits until the forked task opened (or could not be)."""
        self.output_format = output_format
        self.prompt = prompt
        """``None``: the input is stdin's stream-json lines."""
        self.stdout = stdout
        self.stderr = stderr
        self.stdin = stdin
        self.task_ready = threading.Event()
        self.results: list[dict[str, Any]] = []
        self.failed = False
        self.usage_error: str | None = None
        self.fatal: str | None = None
        self.sent = 0
        """Inputs sent so far (the feeding thread counts before it sends)."""
        self.inputs_done = False
        self.idle_after = -1
        """``RouteIdle.inputs`` of the latest idle notice: idle after that many inputs."""
        self.interrupts = 0
        self._send_lock = threading.Lock()
        self._wake_read, self._wake_write = os.pipe()
        """Ctrl-C and the end of the input wake the reader through this pipe."""

    # -- the run -------------------------------------------------------------------------------

    def run(self) -> int:
        previous = signal.signal(signal.SIGINT, self._on_interrupt)
        try:
            if self.prompt is None:
                threading.Thread(target=self._feed, name="robota-print-input", daemon=True).start()
            elif not self.await_task:
                self._submit_prompt()
            self._read()
        finally:
            signal.signal(signal.SIGINT, previous)
            os.close(self._wake_read)
            os.close(self._wake_write)
        if self.usage_error is not None:
            self.stderr.write(f"robota: {self.usage_error}\n")
            return 2
        if self.fatal is not None:
            return 1
        if self.interrupts:
            return 130
        self._finish_output()
        return 1 if self.failed or not self.results else 0

    def _on_interrupt(self, signum: int, frame: object) -> None:
        del signum, frame
        self.interrupts += 1
        os.write(self._wake_write, b"i")

    def _read(self) -> None:
        """Read the host's frames until every answer is out (``PrintRun._converse``)."""
        splitter = LineSplitter(MAX_FRAME)
        lines: list[bytes | Overlong | None] = list(self._leftover)
        deadline: float | None = None
        aborted = 0
        with selectors.DefaultSelector() as selector:
            selector.register(self.sock, selectors.EVENT_READ)
            selector.register(self._wake_read, selectors.EVENT_READ)
            while True:
                outcome = self._deliver(lines)
                # One write for what arrived together: whoever reads stdout wakes once.
                self.stdout.flush()
                if outcome == _DONE:
                    return
                if outcome is not None:
                    self._notice({"kind": "RouteReply", "text": outcome, "level": "error"})
                    self.stdout.flush()
                    return
                lines = []
                if self.inputs_done and (
                    self.usage_error is not None or self.idle_after >= self.sent
                ):
                    return  # no input came, or its answers were out before the input ended
                while aborted < self.interrupts:
                    aborted += 1
                    self._send({"type": "abort"})
                    if deadline is None:
                        deadline = time.monotonic() + INTERRUPT_GRACE
                timeout = None if deadline is None else deadline - time.monotonic()
                if timeout is not None and timeout <= 0:
                    return
                for key, _ in selector.select(timeout):
                    if key.fileobj == self._wake_read:
                        os.read(self._wake_read, 512)
                        continue
                    try:
                        data = self.sock.recv(64 * 1024)
                    except OSError:
                        return
                    if not data:
                        lines.append(None)  # ``_deliver``: the host closed the connection
                    else:
                        lines += splitter.feed(data)

    def _deliver(self, lines: list[bytes | Overlong | None]) -> str | None:
        """Handle the frames of ``lines`` (``None``: the connection's end): ``_DONE``, what is
        wrong with the stream (the run's last word), or ``None`` to read on."""
        for line in lines:
            if line is None:
                return "the host closed the connection"
            if isinstance(line, Overlong):
                return f"the host's stream is not the protocol's: a frame over {line.limit} bytes"
            try:
                frame = decode_frame(line)
            except ProtocolError as error:
                return f"the host's stream is not the protocol's: {error}"
            if frame["type"] == "protocol_error":
                notice: Any = {"kind": "RouteReply", "text": str(frame.get("message"))}
                notice["level"] = "error"
            elif frame["type"] == "notice":
                notice = frame.get("notice")
                if not isinstance(notice, dict) or not isinstance(notice.get("kind"), str):
                    return "the host's stream is not the protocol's: a notice without its kind"
            else:
                continue
            self._notice(notice)
            if (
                self.usage_error is not None
                or self.fatal is not None
                or (notice["kind"] == "TurnFinished" and self.interrupts)
                # idle after the last input: every answer is out
                or (self.inputs_done and self.idle_after >= self.sent)
            ):
                return _DONE
        return None

    # -- input ---------------------------------------------------------------------------------

    def _send(self, frame: dict[str, Any]) -> None:
        try:
            with self._send_lock:
                self.sock.sendall(encode_frame(frame))
        except OSError:
            pass  # the host went away: the reader says so

    def _submit_prompt(self) -> None:
        self.sent = 1
        self._send({"type": "submit", "prompt": self.prompt})
        self.inputs_done = True

    def _feed(self) -> None:
        """Send each stream-json line of stdin (a thread: stdin blocks)."""
        if self.await_task:
            self.task_ready.wait()
        for number, line in enumerate(_lines(self.stdin), start=1):
            text = input_text(line, number, self._refuse_line)
            if text is not None:
                self.sent += 1
                self._send({"type": "submit", "prompt": text})
        if self.sent == 0:
            self.usage_error = "no input: stdin ended before any user message"
        self.inputs_done = True
        try:
            os.write(self._wake_write, b"e")
        except OSError:
            pass  # the run is over

    def _refuse_line(self, error: str) -> None:
        self._emit({"type": "error", "error": error})
        self.stdout.flush()
        self.stderr.write(f"robota: {error}\n")

    # -- notices -------------------------------------------------------------------------------

    def _notice(self, notice: dict[str, Any]) -> None:
        kind = notice["kind"]
        if kind == "TaskOpened":
            self.agent = notice.get("agent")
            self._emit(
                {
                    "type": "session_started",
                    "session_id": notice.get("task_id"),
                    "agent": notice.get("agent"),
                    "cwd": notice.get("cwd"),
                    "agent_session_id": notice.get("remote_id"),
                    "resumed": notice.get("resumed"),
                    "forked_from": notice.get("forked_from"),
                    "agent_version": notice.get("agent_version"),
                }
            )
            if not self.task_ready.is_set():
                self.task_ready.set()
                if self.prompt is not None and self.await_task:
                    self._submit_prompt()
        elif kind == "TurnBegan":
            if notice.get("restricted"):
                self._emit(
                    {"type": "restricted", "turn_id": notice.get("attempt_id"), "mode": "plan"}
                )
        elif kind == "TurnUpdate":
            self._emit(notice.get("event") or {})
        elif kind == "InputSteered":
            self._emit(
                {"type": "steered", "turn_id": notice.get("attempt_id"), "text": notice.get("text")}
            )
        elif kind == "InputQueued":
            queued = {"type": "queued", "prompt_id": notice.get("prompt_id")}
            self._emit({**queued, "text": notice.get("text")})
        elif kind == "TurnFinished":
            self.results.append(notice)
            if notice.get("status") != "completed":
                self.failed = True
            if self.output_format == "stream-json":
                self._emit(self._result(notice))
        elif kind == "RouteIdle":
            inputs = notice.get("inputs")
            if isinstance(inputs, int):
                self.idle_after = max(self.idle_after, inputs)
        elif kind == "RouteReply":
            self._reply(str(notice.get("text")), notice.get("level") or "info")

    def _reply(self, text: str, level: str) -> None:
        self._emit({"type": "reply", "level": level, "text": text})
        if level == "error":
            # Errors always; the rest is progress, which a run without a terminal never shows.
            self.stderr.write(f"robota: {text}\n")
            self.stderr.flush()
            if self.await_task and not self.task_ready.is_set():
                self.fatal = text  # the session to fork could not be opened

    def _emit(self, obj: dict[str, Any]) -> None:
        if self.output_format == "stream-json":
            self.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")

    def _result(self, finished: dict[str, Any]) -> dict[str, Any]:
        status = finished.get("status")
        ok = status == "completed"
        result: dict[str, Any] = {
            "type": "result",
            "subtype": "success" if ok else "error",
            "is_error": not ok,
            "result": finished.get("final_text") or "",
            "session_id": finished.get("task_id"),
            "agent": self.agent,
            "turn_id": finished.get("attempt_id"),
            "duration_ms": finished.get("duration_ms", 0),
        }
        if finished.get("usage") is not None:
            result["usage"] = finished["usage"]  # the record's fields but the None ones
        if not ok:
            error = finished.get("error")
            result["error"] = {
                "message": error["message"] if error else f"the turn ended {status}",
                "category": error["category"] if error else status,
                "retryable": error["retryable"] if error else False,
            }
        return result

    def _finish_output(self) -> None:
        if not self.results:
            return
        if self.output_format == "json":
            self.stdout.write(json.dumps(self._result(self.results[-1]), ensure_ascii=False) + "\n")
        elif self.output_format == "text":
            for finished in self.results:
                text, error = finished.get("final_text"), finished.get("error")
                if finished.get("status") == "completed" and text:
                    self.stdout.write(text.rstrip("\n") + "\n")
                elif error:
                    self.stderr.write(f"robota: the turn failed: {error['message']}\n")
                else:
                    self.stderr.write(f"robota: the turn ended {finished.get('status')}\n")
        self.stdout.flush()


def _lines(stream: TextIO) -> Iterator[str]:
    """The lines of ``stream``, undecodable bytes replaced as ``PrintRun``'s reader does."""
    binary = getattr(stream, "buffer", None)
    if binary is None:
        yield from stream
        return
    encoding = getattr(stream, "encoding", None) or "utf-8"
    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
    for raw in binary:
        yield decoder.decode(raw)
    if tail := decoder.decode(b"", final=True):
        yield tail
