"""Print mode through a warm host: ``robota -p`` hands its conversation to the profile's running
host (``robota server``), whose agent is already up, instead of starting one of its own.

Whether a host runs is a connect to the profile's control socket, nothing more: no socket file
(most terminals) costs a ``stat``, a stale one a refused ``connect``, and this module imports
only the standard library until a host answered, so a run without a host starts its agent as
early as before (``_prestart``; tests/cli/test_import_budget.py). ``--no-host`` skips the
check, and so does a run from inside a robota turn (``ROBOTA_TASK_ID`` set: an agent robota
started): its host may be the one running that very turn on the same agent, and print mode
in its own process can never wait on it.

The host's side is ``robota.host``'s ``print.run`` (``_print_turns``): it applies print mode's
trust rule (an untrusted workspace without ``--restricted`` is refused with print mode's
message and exit 2), chooses the task as print mode does (``choose_print_task``), and answers
``local`` where its engine would not run the turn as print mode's own would (a ``--restricted``
run in a trusted workspace, a project's settings): this process then runs it in-process, as
it does when the host is of an older robota or refuses for any other reason.
A task taken up as it is (``-c``, ``-r``) runs on the host's route that holds its agent
session; one another live process owns (a background session, the daemon) the host refuses as
``owned``, naming it: the workspace's daemon is asked next (it runs its own task), and when it
does not take it either, print mode says the host's words and exits 1, never opening that
session in its own process.

Once the host said ``hello``, this process only relays: ``_print_relay.HostPrint`` sends the
input and Ctrl-C's interrupt as ``submit`` and ``abort`` frames and writes the output from the
host's ``notice`` frames read as JSON, loading no engine (the start is most of what a one-shot
run through a warm host costs). A run that draws progress on a terminal needs the turn
renderers and so the engine's classes: there ``HostRoute`` is the ``RouteHub`` print mode's
``FrontEndPort`` connects to, a reader thread decodes the host's frames
(``robota.core.protocol``) and delivers them, so ``PrintRun`` reads a real ``RouteLink`` and
renders exactly as from its own engine. Leaving closes the connection, and the host interrupts
what the route still runs.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from robota.core.config import Profile
    from robota.core.engine import FrontEndRequest
    from robota.core.frontend import RouteLink

    from ._print import PrintOptions

__all__ = [
    "HostRoute",
    "connect_host",
    "daemon_socket",
    "print_on_host",
    "print_request",
    "wants_host",
]

HANDSHAKE_TIMEOUT = 30.0
"""Seconds the host may take to answer ``print.run`` (a trust check and a store read)."""


def wants_host(*, no_host: bool, environ: dict[str, str] | os._Environ[str]) -> bool:
    """Whether print mode looks for a warm host at all (module docstring)."""
    return not no_host and not environ.get("ROBOTA_TASK_ID")


def daemon_socket(profile: Profile, cwd: Path | None) -> Path | None:
    """The control socket of the daemon of ``cwd``'s workspace (``robota daemon``), if one
    runs. A profile that never ran a daemon has no daemon lock: one ``glob``, nothing
    imported."""
    try:
        if not any(profile.sessions_dir.glob("daemon-*.lock")):
            return None
    except OSError:
        return None
    from robota.host import find_daemon, workspace_of  # noqa: PLC0415

    found = find_daemon(profile, workspace_of((cwd or Path.cwd()).resolve()))
    return Path(found.socket) if found is not None else None


SHORT_ADDRESS = 103
"""Bytes of a Unix socket path that ``connect`` takes as it is on any platform (Linux: 107)."""


def connect_host(socket_path: Path) -> socket.socket | None:
    """A connection to the host listening at ``socket_path``, or ``None`` (none listens)."""
    if not socket_path.exists():
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(HANDSHAKE_TIMEOUT)
        if len(os.fsencode(socket_path)) <= SHORT_ADDRESS:
            sock.connect(str(socket_path))
        else:
            _connect_long(sock, socket_path)
    except OSError:
        sock.close()
        return None
    return sock


def _connect_long(sock: socket.socket, socket_path: Path) -> None:
    """Connect to a socket under a path too long for an address (a profile deep in a tree):
    through its directory, as the host bound it (``OSError`` where that cannot be)."""
    from robota.core.control import ControlError, socket_address  # noqa: PLC0415

    try:
        with socket_address(socket_path) as address:
            sock.connect(address)
    except ControlError as error:
        raise OSError(str(error)) from None


class HostRoute:
    """The host's ``print.run`` stream as the ``RouteHub`` of print mode's port."""

    def __init__(self, sock: socket.socket, leftover: list[bytes]) -> None:
        self.sock = sock
        self._lines = leftover
        self._send_lock = threading.Lock()
        self.link: RouteLink | None = None
        """The link this hub feeds, ended when the host closes the connection."""
        self._hearer: tuple[str, Callable[[object], None]] = ("", lambda _notice: None)

    def connect(self, route_key: str, deliver: Callable[[object], None]) -> None:
        self._hearer = (route_key, deliver)

    def start(self, link: RouteLink) -> None:
        """Read the host's stream into ``link`` (the one link ``connect`` was for)."""
        self.link = link
        reader = threading.Thread(
            target=self._read, args=self._hearer, name="robota-print-host", daemon=True
        )
        reader.start()

    def disconnect(self, route_key: str) -> None:
        del route_key
        self.close()

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()

    def tell(self, route_key: str, request: FrontEndRequest) -> None:
        from robota.core.protocol import encode_frame, request_to_frame  # noqa: PLC0415

        del route_key
        frame = request_to_frame(request)
        if frame is None:
            return  # the host chose the task itself
        try:
            with self._send_lock:
                self.sock.sendall(encode_frame(frame))
        except OSError:
            pass  # the host went away: the reader ends the link

    def _read(self, route_key: str, deliver: Callable[[object], None]) -> None:
        from robota.core.engine import RouteReply  # noqa: PLC0415
        from robota.core.protocol import MAX_FRAME, LineSplitter  # noqa: PLC0415

        splitter = LineSplitter(MAX_FRAME)
        lines: list[Any] = list(self._lines)
        try:
            while (problem := _deliver(lines, route_key, deliver)) is None:
                data = self.sock.recv(64 * 1024)
                if not data:
                    problem = "the host closed the connection"
                    break
                lines = splitter.feed(data)
        except OSError:
            return  # closed on this side: the run is over
        deliver(RouteReply(route_key, problem, "error"))
        if self.link is not None:
            self.link.end()


def _deliver(lines: list[Any], route_key: str, deliver: Callable[[object], None]) -> str | None:
    """Deliver the notices of ``lines`` (bytes, or an ``Overlong``); what is wrong with the
    stream, if anything."""
    from robota.core.engine import RouteReply  # noqa: PLC0415
    from robota.core.protocol import (  # noqa: PLC0415
        Overlong,
        ProtocolError,
        decode_frame,
        notice_from_json,
    )

    for line in lines:
        if isinstance(line, Overlong):
            return f"the host's stream is not the protocol's: a frame over {line.limit} bytes"
        try:
            frame = decode_frame(line)
            if frame["type"] == "notice":
                deliver(notice_from_json(frame.get("notice")))
        except ProtocolError as error:
            return f"the host's stream is not the protocol's: {error}"
        if frame["type"] == "protocol_error":
            deliver(RouteReply(route_key, str(frame.get("message")), "error"))
    return None


REQUEST_FIELDS = {
    "agent": "agent",
    "cwd": "cwd",
    "model": "model",
    "permission_mode": "permission_mode",
    "name": "name",
    "append_system_prompt": "append_system_prompt",
    "continue_": "continue_",
    "resume": "resume",
    "fork": "fork_session",
    "restricted": "restricted",
}
"""``print.run``'s fields (``robota.host.PrintTurns``) and the command line's options they are."""


def print_request(options: Mapping[str, Any]) -> dict[str, Any]:
    """``print.run``'s fields from the command line's options as typed (a relative ``--cwd``
    made absolute here, where it is relative to); unset ones left out."""
    fields = {name: options[option] for name, option in REQUEST_FIELDS.items()}
    if fields["cwd"] is not None:
        fields["cwd"] = str(Path(fields["cwd"]).resolve())
    return {k: v for k, v in fields.items() if v is not None and v is not False}


def _handshake(sock: socket.socket, fields: dict[str, Any]) -> tuple[Any, list[bytes]]:
    """Ask for ``print.run``; the host's first line (its hello frame or its refusal as a
    reply envelope, decoded) and the lines read behind it."""
    from robota.core.protocol import (  # noqa: PLC0415
        MAX_FRAME,
        LineSplitter,
        Overlong,
        encode_request,
        loads_strict,
    )

    sock.sendall(encode_request(1, "print.run", fields))
    splitter = LineSplitter(MAX_FRAME)
    lines: list[bytes] = []
    while not lines:
        data = sock.recv(64 * 1024)
        if not data:
            return None, []
        lines = [x for x in splitter.feed(data) if not isinstance(x, Overlong)]
    try:
        return loads_strict(lines[0]), lines[1:]
    except ValueError:
        return None, []


def print_on_host(
    options: Mapping[str, Any],
    prompt: str | None,
    sock: socket.socket,
    print_options: Callable[[], PrintOptions],
) -> int | str | None:
    """Run print mode's conversation on the host ``sock`` is connected to: the exit code,
    ``None`` when the host leaves it to this process, or the host's words when another live
    process owns the task (``owned``: the workspace's daemon may be that owner; it closes
    ``sock`` either way).
    ``options``: the command line's; ``prompt``: the text input's (``None``: stdin's
    stream-json lines); ``print_options``: them as ``PrintRun`` takes them (progress only)."""
    import sys  # noqa: PLC0415

    try:
        first, rest = _handshake(sock, print_request(options))
    except OSError:
        first, rest = None, []
    if not isinstance(first, dict) or first.get("type") != "hello":
        sock.close()
        error = first.get("error") if isinstance(first, dict) else None
        if isinstance(error, dict) and error.get("code") in ("refused", "usage"):
            sys.stderr.write(f"robota: {error.get('message')}\n")
            return 2
        if isinstance(error, dict) and error.get("code") == "owned":
            return str(error.get("message"))
        return None  # ``local``, an older host, a host stopping: print mode runs here
    sock.settimeout(None)
    agent = first.get("agent")
    agent = agent if isinstance(agent, str) else None
    await_task = first.get("await_task") is True
    if not (sys.stderr.isatty() and options["output_format"] == "text"):
        from ._print_relay import HostPrint  # noqa: PLC0415

        relay = HostPrint(
            sock,
            rest,
            agent=agent,
            await_task=await_task,
            output_format=options["output_format"],
            prompt=prompt if options["input_format"] == "text" else None,
            stdout=sys.stdout,
            stderr=sys.stderr,
            stdin=sys.stdin,
        )
        try:
            return relay.run()
        finally:
            sock.close()
    return _print_with_progress(sock, rest, agent, await_task, print_options())


def _print_with_progress(
    sock: socket.socket,
    rest: list[bytes],
    agent: str | None,
    await_task: bool,
    options: PrintOptions,
) -> int:
    """``PrintRun`` on the host's stream, for a run that draws progress on a terminal."""
    import sys  # noqa: PLC0415

    from robota.core import Terminated, run_main  # noqa: PLC0415
    from robota.core.frontend import FrontEndPort  # noqa: PLC0415
    from robota.host import TaskChoice  # noqa: PLC0415

    from ._print import PrintRun  # noqa: PLC0415

    hub = HostRoute(sock, rest)
    chosen = TaskChoice(None, agent, await_task=await_task)  # asked for by the host already
    try:
        run = PrintRun(
            None,
            options,
            port=FrontEndPort(hub),
            chosen=chosen,
            stdout=sys.stdout,
            stderr=sys.stderr,
            stdin=sys.stdin,
            progress=sys.stderr.isatty(),
        )
        hub.start(run.link)

        async def main() -> int:
            return await run.main()

        try:
            return run_main(main)
        except Terminated as terminated:
            return int(terminated.code or 1)
    finally:
        hub.close()
