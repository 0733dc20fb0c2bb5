"""The controlling terminal, for what is shown or typed only there (the recovery phrase).

``Terminal`` opens ``/dev/tty`` itself (never standard input or output, which a pipe, a log or
a model may read): without a controlling terminal it raises ``NoTerminal`` before anything is
shown. ``ask(prompt, echo=False)`` turns the terminal's echo off while a secret is typed and
puts it back whatever happens. ``forget_screen`` clears the screen and its scrollback once a
shown secret is no longer needed there.
"""

from __future__ import annotations

import contextlib
import os
import termios
from types import TracebackType

from robota.mesh import NoTerminal

__all__ = ["Terminal"]

_LIMIT = 4096


class Terminal:
    """The controlling terminal, opened apart from standard input and output."""

    def __init__(self) -> None:
        try:
            self._fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
        except OSError:
            raise NoTerminal(
                "no controlling terminal: this is shown and typed only on a terminal"
            ) from None

    def __enter__(self) -> Terminal:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def write(self, text: str) -> None:
        data = text.replace("\n", "\r\n").encode("utf-8")
        while data:
            data = data[os.write(self._fd, data) :]

    def ask(self, prompt: str, *, echo: bool = True) -> str:
        """``prompt``, then one typed line (without its end); ``NoTerminal`` when the terminal
        hangs up. With ``echo=False`` the echo is off *before* the prompt is shown, so nothing
        typed in answer to it can be echoed."""
        saved = None
        if not echo:
            with contextlib.suppress(termios.error):
                saved = termios.tcgetattr(self._fd)
                quiet = termios.tcgetattr(self._fd)
                quiet[3] &= ~termios.ECHO
                termios.tcsetattr(self._fd, termios.TCSANOW, quiet)
        line = b""
        try:
            self.write(prompt)
            while not line.endswith((b"\n", b"\r")) and len(line) < _LIMIT:
                chunk = os.read(self._fd, 1)
                if not chunk:
                    raise NoTerminal("the terminal hung up")
                line += chunk
        finally:
            if saved is not None:
                termios.tcsetattr(self._fd, termios.TCSANOW, saved)
                self.write("\n")
        return line.decode("utf-8", "replace").rstrip("\r\n")

    def forget_screen(self) -> None:
        """Clear the screen and its scrollback (a shown phrase is not left there)."""
        self.write("\x1b[H\x1b[2J\x1b[3J")
