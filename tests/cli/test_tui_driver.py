"""The TUI's driver survives a terminal that hangs up: Textual's real writer thread, fed
through ``TerminalOutput``, keeps draining after the terminal's writes fail, so the app's
shutdown (queue the restore sequences, then stop the thread) ends instead of blocking."""

from __future__ import annotations

import asyncio
import contextlib
import io
import queue
import sys
import threading

import pytest
from textual.drivers._writer_thread import MAX_QUEUED_WRITES, WriterThread
from textual.drivers.headless_driver import HeadlessDriver
from textual.drivers.linux_driver import LinuxDriver

from robota.cli._tui._app import RobotaApp
from robota.cli._tui._driver import TerminalOutput, hangup_safe

BOUND = 10.0  # seconds: a liveness bound, far above what draining a queue takes


class HungUpTerminal(io.StringIO):
    """A terminal that took ``good`` writes, then hung up: every later write fails with EIO."""

    def __init__(self, good: int) -> None:
        super().__init__()
        self.good = good
        self.attempts = 0

    def write(self, text: str) -> int:
        self.attempts += 1
        if self.attempts > self.good:
            raise OSError(5, "Input/output error")
        return super().write(text)


def shut_down(
    output: object, writes: int, bound: float = BOUND
) -> tuple[WriterThread, threading.Thread]:
    """What Textual's shutdown does to its writer thread: many writes, then ``stop``, on a
    thread of its own; returned once it ended or the bound passed."""
    writer = WriterThread(output)  # type: ignore[arg-type]
    writer.start()

    def shutdown() -> None:
        for n in range(writes):
            writer.write(f"\x1b[{n}m")
        writer.stop()

    shutting = threading.Thread(target=shutdown, daemon=True)
    shutting.start()
    shutting.join(bound)
    return writer, shutting


def test_a_hung_up_terminal_leaves_the_writer_thread_draining() -> None:
    terminal = HungUpTerminal(good=3)
    output = TerminalOutput(terminal)
    writer, shutting = shut_down(output, writes=MAX_QUEUED_WRITES * 4)
    assert not shutting.is_alive() and not writer.is_alive()
    assert output.gone
    assert terminal.getvalue() == "\x1b[0m\x1b[1m\x1b[2m"  # what came before the hang-up
    assert terminal.attempts == 4  # one failed write, then nothing more was tried


def test_without_it_the_same_shutdown_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The failure the wrapper exists for: Textual's writer thread dies on the first EIO and
    the shutdown then blocks on its full queue."""
    died: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: died.append(args.exc_value))
    # It can never end by itself; half a second shows it is stuck, not slow.
    writer, shutting = shut_down(HungUpTerminal(good=0), MAX_QUEUED_WRITES * 4, bound=0.5)
    try:
        assert shutting.is_alive()  # blocked
        assert not writer.is_alive()
        assert len(died) == 1 and isinstance(died[0], OSError)
    finally:
        while shutting.is_alive():  # free it: take what the dead thread never will
            with contextlib.suppress(queue.Empty):
                writer._queue.get(timeout=0.1)


@pytest.mark.parametrize(
    ("fails", "gone"),
    [(None, False), (OSError(5, "EIO"), True), (ValueError("closed"), True)],
)
def test_a_failed_flush_marks_the_terminal_gone(fails: Exception | None, gone: bool) -> None:
    class Terminal(io.StringIO):
        def flush(self) -> None:
            if fails is not None:
                raise fails

    output = TerminalOutput(Terminal())
    output.flush()
    assert output.gone is gone
    assert output.write("x") == 1  # the count Textual expects, written or dropped


def test_the_app_wraps_only_the_terminal_driver() -> None:
    assert hangup_safe(HeadlessDriver) is HeadlessDriver
    app = RobotaApp.__new__(RobotaApp)  # get_driver_class reads no state of the app
    chosen = RobotaApp.get_driver_class(app)
    assert issubclass(chosen, LinuxDriver) and chosen is not LinuxDriver

    async def build() -> object:
        return chosen(app)

    driver = asyncio.run(build())
    output = driver._file  # type: ignore[attr-defined]
    assert isinstance(output, TerminalOutput)
    assert output.fileno() == sys.__stderr__.fileno()  # type: ignore[union-attr]
