"""Another user is refused by the control socket even when its file modes let them in.

The client runs as ``nobody`` in a forked child (the project's interpreter may not be
executable by ``nobody``, so the child runs no new program: it drops to uid 65534 and uses the
sockets already imported). Forking happens before this test's trio loop starts. Dropping
privileges needs root; elsewhere the test says why it cannot run, and
``test_server.py::test_another_uid_is_refused_even_with_loose_modes`` covers the same check
by telling the host it serves another uid.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import warnings
from pathlib import Path

import pytest
import trio

from robota.core.control import ControlClient

from ._serving import serving

NOBODY = 65534


def connect_as_nobody(socket_path: Path, go: int, result: int) -> None:
    """The child: become nobody, wait for the parent's go, send a request, report what came
    back (every byte until the host closed the connection)."""
    received = b""
    try:
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
        os.read(go, 1)
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.settimeout(20)
        client.connect(str(socket_path))
        try:
            client.sendall(b'{"id": 1, "type": "status"}\n')
        except BrokenPipeError:
            pass  # the host refused and hung up first (a loaded machine); its reply is still read
        while chunk := client.recv(65536):
            received += chunk
        report = {"uid": os.getuid(), "received": received.decode(), "closed": True}
    except ConnectionResetError:
        report = {"uid": os.getuid(), "received": received.decode(), "closed": True}
    except BaseException as error:
        report = {"uid": os.getuid(), "error": repr(error)}
    os.write(result, json.dumps(report).encode())
    os._exit(0)


def read_all(fd: int) -> bytes:
    data = b""
    while chunk := os.read(fd, 65536):
        data += chunk
    return data


@pytest.mark.skipif(os.geteuid() != 0, reason="running a client as another user needs root")
def test_a_client_running_as_nobody_is_refused_despite_loose_modes(short_dir: Path) -> None:
    short_dir.chmod(0o755)  # nobody may reach the directory...
    socket_path = short_dir / "run" / "control.sock"
    go_read, go_write = os.pipe()
    result_read, result_write = os.pipe()
    with warnings.catch_warnings():
        # Python 3.12+ warns when forking a process with threads (idle trio workers left by
        # earlier tests): the child only makes system calls before os._exit, no locks taken.
        warnings.simplefilter("ignore", DeprecationWarning)
        child = os.fork()
    if child == 0:
        connect_as_nobody(socket_path, go_read, result_write)
    os.close(go_read)
    os.close(result_write)

    async def host() -> tuple[dict[str, object], object]:
        async with serving(socket_path):
            socket_path.parent.chmod(0o755)  # ...and the runtime directory...
            socket_path.chmod(0o666)  # ...and connect to the socket: only the uid check is left
            assert stat.S_IMODE(socket_path.stat().st_mode) == 0o666
            os.write(go_write, b"g")
            report = json.loads(await trio.to_thread.run_sync(read_all, result_read))
            with ControlClient(socket_path) as own:  # the host's own user still gets in
                mine = await trio.to_thread.run_sync(own.call, "status")
        return report, mine

    try:
        report, mine = trio.run(host)
    finally:
        os.close(go_write)
        os.close(result_read)
        _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert report.get("uid") == NOBODY, report
    assert report.get("closed") is True, report
    received = str(report["received"])
    assert received.count("\n") == 1, received  # one reply, then the host hung up
    reply = json.loads(received)
    assert reply["id"] is None
    assert reply["ok"] is False
    assert reply["error"]["code"] == "forbidden"
    assert f"the peer runs as uid {NOBODY}, the host as uid 0" in reply["error"]["message"]
    assert mine == {"running": True}
