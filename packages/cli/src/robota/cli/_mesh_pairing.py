"""``robota mesh pair`` and ``robota mesh join ADDRESS``: pairing through the profile's host.

The host runs the PAKE and the links (``robota.host``'s mesh service: ``mesh.pair``, a stream,
and ``mesh.join``, both operator-only); this module is the operator's side, on the controlling
terminal only (``_mesh_tty.Terminal``): ``pair`` shows the one-time code there and asks ``y``
to accept the joiner's name and fingerprint (its device id); ``join`` reads the code there.

A code is never taken from argv, standard input or the environment: ``join ADDRESS CODE``,
``--code`` and a code piped in are refused with a message saying where it is read (exit 1, not
a usage error), before any connection. Without a controlling terminal both commands refuse
(exit 2) and show no code.
"""

from __future__ import annotations

import os
import select
import socket
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from robota.core.config import Profile

    from ._mesh_tty import Terminal

__all__ = ["ONLY_ON_TERMINAL", "code_elsewhere", "pair_over", "stdin_holds_data"]

ONLY_ON_TERMINAL = (
    "the pairing code is read only on the terminal: run 'robota mesh join ADDRESS' and type "
    "the code when it asks"
)
_CODE_TRIES = 3
_LINE_LIMIT = 64 * 1024


def stdin_holds_data() -> bool:
    """Whether something was piped or redirected into standard input (a terminal, or nothing
    to read, is not): a code there is refused, never read."""
    try:
        if os.isatty(0):
            return False
        ready, _, _ = select.select([0], [], [], 0)
        if not ready:
            return False
        return bool(os.read(0, 1))
    except OSError:
        return False


def code_elsewhere(argv_code: str | None, option_code: str | None, piped: bool) -> bool:
    """Whether a code came in some other way than the terminal (a pure decision)."""
    return bool(argv_code) or bool(option_code) or piped


def read_code(terminal: Terminal, device: str, name: str) -> str | None:
    """The code as typed on the terminal, checked (its check character catches a typo before
    anything is sent); ``None`` after ``_CODE_TRIES`` bad ones."""
    from robota.mesh import BadCode, parse_code  # noqa: PLC0415

    terminal.write(f"This device: {name}, fingerprint {device}\n")
    for _attempt in range(_CODE_TRIES):
        typed = terminal.ask("Type the pairing code shown on the other device: ", echo=False)
        try:
            return parse_code(typed)
        except BadCode as error:
            terminal.write(f"That is not a pairing code: {error}.\n")
    return None


def pair_over(profile: Profile, terminal: Terminal, timeout: float) -> dict[str, Any]:
    """Run ``mesh.pair`` on the host: the code and the question on ``terminal``; the host's
    last frame (``paired`` or ``failed``), or its refusal as ``{"type": "refused", ...}``."""
    from robota.core.protocol import encode_frame, encode_request, loads_strict  # noqa: PLC0415

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(str(profile.control_socket))
        sock.sendall(encode_request(1, "mesh.pair", {}))
        for line in _lines(sock):
            frame = loads_strict(line)
            if not isinstance(frame, dict):
                continue
            kind = frame.get("type")
            if "error" in frame and kind is None:
                error = frame["error"] if isinstance(frame["error"], dict) else {}
                return {"type": "refused", "message": str(error.get("message", "refused"))}
            if kind == "code":
                _show_code(terminal, str(frame.get("code", "")), frame.get("expiresIn"))
            elif kind == "confirm":
                yes = _ask_yes(terminal, str(frame.get("name", "")), str(frame.get("device", "")))
                sock.sendall(encode_frame({"type": "decision", "yes": yes}))
            elif kind in ("paired", "failed"):
                return frame
    return {"type": "failed", "reason": "the host closed the connection"}


def _lines(sock: socket.socket) -> Any:
    data = b""
    while True:
        while b"\n" in data:
            line, data = data.split(b"\n", 1)
            yield line
        chunk = sock.recv(_LINE_LIMIT)
        if not chunk:
            return
        data += chunk
        if len(data) > _LINE_LIMIT:
            return


def _show_code(terminal: Terminal, code: str, expires: object) -> None:
    seconds = f" for {expires} s" if isinstance(expires, int) else ""
    terminal.write(
        f"\nPairing code (good once{seconds}):\n\n    {code}\n\n"
        "On the new device, with its host running: robota mesh join ADDRESS\n"
        "(ADDRESS: this device's mesh.listen address) and type the code there.\n"
    )


def _ask_yes(terminal: Terminal, name: str, device: str) -> bool:
    answer = terminal.ask(f"\nPair device {name!r}, fingerprint {device}? [y/N] ")
    return answer.strip().lower() == "y"


def listen_hint(listen: tuple[str, ...]) -> str:
    return ", ".join(listen) if listen else "(none: set mesh.listen)"
