"""Textual's terminal driver, made safe for a terminal that hangs up under it.

Textual writes the screen through a writer thread fed by a queue of 30 writes. When the
terminal goes away (its window closed, its tmux pane killed) the next write raises ``EIO``,
which ends that thread; the queue then fills, and the app's shutdown (which writes the escape
sequences that restore the screen, then queues the thread's stop) blocks on it forever, so
robota and its agents outlive the terminal. Seen in the tmux test of a closed terminal.

``TerminalOutput`` stands between the writer thread and the terminal: the first write or flush
that fails marks the terminal gone, and everything after is dropped, so the thread keeps
draining its queue and the shutdown ends. Nothing written to a terminal that is gone could be
seen anyway. ``HangupSafeDriver`` is Textual's own driver for this platform with that output
put in front of its file; the app picks it in ``get_driver_class``.
"""

from __future__ import annotations

from io import TextIOWrapper
from typing import IO, TYPE_CHECKING, Any, cast

# POSIX only, as robota is (Unix sockets, flock, process groups).
from textual.drivers.linux_driver import LinuxDriver

if TYPE_CHECKING:
    from textual.app import App
    from textual.driver import Driver

__all__ = ["HangupSafeDriver", "TerminalOutput", "hangup_safe"]


class TerminalOutput:
    """A text file that turns silent once writing to it failed (see the module docstring)."""

    def __init__(self, file: IO[str]) -> None:
        self._file = file
        self.gone = False

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                self._file.write(text)
            except (OSError, ValueError):  # EIO after a hang-up; ValueError: closed
                self.gone = True
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self._file.flush()
            except (OSError, ValueError):
                self.gone = True

    def fileno(self) -> int:
        return self._file.fileno()

    def isatty(self) -> bool:
        return not self.gone and self._file.isatty()


class HangupSafeDriver(LinuxDriver):
    """Textual's terminal driver with its output behind a ``TerminalOutput``."""

    def __init__(self, app: App[Any], **options: Any) -> None:
        super().__init__(app, **options)
        self._file = cast("TextIOWrapper", TerminalOutput(cast("IO[str]", self._file)))


def hangup_safe(driver_class: type[Driver]) -> type[Driver]:
    """``HangupSafeDriver`` in place of the terminal driver; any other (a driver that the
    environment names, the headless one) as it is."""
    return HangupSafeDriver if driver_class is LinuxDriver else driver_class
