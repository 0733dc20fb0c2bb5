"""Print mode's relay to a warm host (``robota.cli._print_relay``) against a scripted host on a
socket pair: what it sends, and how it ends when the host's stream ends or breaks. (The output
of every format beside the run in print mode's own process: tests/host/test_print_host.py.)"""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import threading
from collections.abc import Callable
from typing import Any

import pytest

from robota.cli._print_relay import HostPrint

TASK = {"route_key": "print:1", "task_id": "t1", "attempt_id": "a1"}


def notice(kind: str, **fields: Any) -> bytes:
    frame = {"type": "notice", "notice": {"kind": kind, **TASK, **fields}}
    return json.dumps(frame).encode() + b"\n"


OPENED = notice("TaskOpened", agent="codex", cwd="/w", remote_id="r1", resumed=False)
FINISHED = notice("TurnFinished", status="completed", final_text="ECHO: hi", duration_ms=3)
IDLE = notice("RouteIdle", inputs=1)


def relay(
    host: Callable[[socket.socket], None],
    *,
    output_format: str = "text",
    prompt: str | None = "hi",
    stdin: str = "",
    await_task: bool = False,
) -> tuple[int, str, str]:
    """Run a relay against ``host`` (run on a thread with the host's end of the pair); the
    exit code, stdout and stderr."""
    ours, theirs = socket.socketpair()

    def serve() -> None:
        try:
            host(theirs)
        except OSError:
            pass  # the relay left first: what it printed says whether it should have

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    stdout, stderr = io.StringIO(), io.StringIO()
    run = HostPrint(
        ours,
        [],
        agent="codex",
        await_task=await_task,
        output_format=output_format,
        prompt=prompt,
        stdout=stdout,
        stderr=stderr,
        stdin=io.StringIO(stdin),
    )
    try:
        code = run.run()
    finally:
        ours.close()
    thread.join(timeout=10)
    theirs.close()
    return code, stdout.getvalue(), stderr.getvalue()


def frames_from(sock: socket.socket, count: int) -> list[dict[str, Any]]:
    reader = sock.makefile("rb")
    return [json.loads(reader.readline()) for _ in range(count)]


def test_the_prompt_goes_out_and_the_answer_comes_back() -> None:
    heard: list[dict[str, Any]] = []

    def host(sock: socket.socket) -> None:
        heard.extend(frames_from(sock, 1))
        sock.sendall(OPENED + FINISHED + IDLE)

    assert relay(host) == (0, "ECHO: hi\n", "")
    assert heard == [{"type": "submit", "prompt": "hi"}]


@pytest.mark.parametrize(
    ("sent", "said"),
    [
        (b"", "robota: the host closed the connection\n"),
        (b"not json\n", "robota: the host's stream is not the protocol's: the frame is not JSON\n"),
        (
            b'{"type": "notice", "notice": 3}\n',
            "robota: the host's stream is not the protocol's: a notice without its kind\n",
        ),
        (b'{"type": "protocol_error", "message": "bad submit"}\n', "robota: bad submit\n"),
    ],
)
def test_a_stream_that_ends_or_breaks_ends_the_run_failed(sent: bytes, said: str) -> None:
    def host(sock: socket.socket) -> None:
        frames_from(sock, 1)
        sock.sendall(OPENED + sent)
        sock.shutdown(socket.SHUT_WR)  # a protocol error alone would leave it waiting

    code, out, err = relay(host)
    assert (code, out) == (1, "")
    assert err.startswith(said)


def test_stream_json_input_skips_bad_lines_and_ends_when_idle_after_the_last() -> None:
    heard: list[dict[str, Any]] = []

    def host(sock: socket.socket) -> None:
        heard.extend(frames_from(sock, 2))
        second = {**TASK, "attempt_id": "a2"}
        done = {"kind": "TurnFinished", **second, "status": "completed", "final_text": "two"}
        sock.sendall(
            OPENED
            + FINISHED
            + json.dumps({"type": "notice", "notice": done}).encode()
            + b"\n"
            + notice("RouteIdle", inputs=2)
        )

    lines = '{"type": "user", "text": "one"}\nnot json\n\n{"type": "user", "text": "two"}\n'
    code, out, err = relay(host, output_format="stream-json", prompt=None, stdin=lines)
    assert code == 0, err
    assert heard == [{"type": "submit", "prompt": "one"}, {"type": "submit", "prompt": "two"}]
    objects = [json.loads(line) for line in out.splitlines()]
    assert [o["type"] for o in objects] == ["error", "session_started", "result", "result"]
    assert [o["result"] for o in objects if o["type"] == "result"] == ["ECHO: hi", "two"]
    assert err == "robota: input line 2: not JSON (Expecting value)\n"


def test_no_input_at_all_is_a_usage_error() -> None:
    def host(sock: socket.socket) -> None:
        sock.sendall(OPENED)
        sock.makefile("rb").read()

    code, out, err = relay(host, output_format="stream-json", prompt=None, stdin="")
    assert code == 2
    assert err == "robota: no input: stdin ended before any user message\n"
    assert "result" not in out


def test_a_forked_task_gets_its_prompt_once_it_opened_or_fails_when_it_cannot() -> None:
    heard: list[dict[str, Any]] = []

    def host(sock: socket.socket) -> None:
        sock.sendall(OPENED)  # nothing may come before the task opened
        heard.extend(frames_from(sock, 1))
        sock.sendall(FINISHED + IDLE)

    assert relay(host, await_task=True) == (0, "ECHO: hi\n", "")
    assert heard == [{"type": "submit", "prompt": "hi"}]

    def refusing(sock: socket.socket) -> None:
        sock.sendall(notice("RouteReply", text="cannot fork that", level="error"))
        sock.makefile("rb").read()

    assert relay(refusing, await_task=True) == (1, "", "robota: cannot fork that\n")


def test_ctrl_c_sends_abort_and_exits_130_once_the_turn_ended() -> None:
    heard: list[dict[str, Any]] = []

    def host(sock: socket.socket) -> None:
        heard.extend(frames_from(sock, 1))
        sock.sendall(OPENED + notice("TurnBegan", prompt="hi"))
        os.kill(os.getpid(), signal.SIGINT)  # the relay's handler, on the main thread
        heard.extend(frames_from(sock, 1))
        sock.sendall(notice("TurnFinished", status="interrupted", final_text=None))

    assert relay(host) == (130, "", "")
    assert heard == [{"type": "submit", "prompt": "hi"}, {"type": "abort"}]
