"""Whether print mode looks for a warm host (``robota.cli._print_host``), and the check's
cost: no socket file means no connection tried; a host under a long path is found."""

from __future__ import annotations

import socket
from contextlib import closing
from pathlib import Path

import pytest

from robota.cli._print_host import connect_host, wants_host
from robota.core.control import socket_address


@pytest.mark.parametrize(
    ("no_host", "environ", "wanted"),
    [
        (False, {}, True),
        (True, {}, False),
        (False, {"ROBOTA_TASK_ID": "t1a2b3c4d5e6"}, False),
        (False, {"ROBOTA_TASK_ID": ""}, True),
        (False, {"CODEX_THREAD_ID": "x"}, True),
        (True, {"ROBOTA_TASK_ID": "t1a2b3c4d5e6"}, False),
    ],
)
def test_print_mode_looks_for_a_host_unless_told_not_or_inside_a_turn(
    no_host: bool, environ: dict[str, str], wanted: bool
) -> None:
    assert wants_host(no_host=no_host, environ=environ) is wanted


def test_no_socket_or_nobody_listening_is_no_host(tmp_path: Path) -> None:
    missing = tmp_path / "host.sock"
    assert connect_host(missing) is None
    missing.write_text("")  # a file where the socket would be, as a dead host leaves one
    assert connect_host(missing) is None


def test_a_host_under_a_long_path_is_found(tmp_path: Path) -> None:
    """A profile deep in a tree puts its control socket beyond a socket address's length: the
    host binds it through its directory, and print mode connects the same way."""
    deep = tmp_path.joinpath(*["a-rather-long-directory-name"] * 5)
    deep.mkdir(parents=True)
    path = deep / "control.sock"
    assert len(str(path)) > 108
    with closing(socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)) as listener:
        with socket_address(path) as address:
            listener.bind(address)
        listener.listen(1)
        sock = connect_host(path)
        assert sock is not None
        with closing(sock), closing(listener.accept()[0]) as served:
            sock.sendall(b"x")
            assert served.recv(1) == b"x"
