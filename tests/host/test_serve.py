"""``robota --serve`` on real processes: the real ``robota`` script serving a workspace on a
loopback WebSocket, a real ACP agent against the fake model, trio-websocket as the client."""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import trio
from trio_websocket import (
    ConnectionClosed,
    open_websocket_url,
    wrap_client_stream,
)

from robota.core.config import Profile

from ..support.host import BOUND, sandboxed
from ..support.model_server import FakeModel
from ..support.processes import kill_processes_with_home_under, processes_with_home_under
from ..support.real_agents import write_real_agents_config
from ..support.robota import ROBOTA, Robota
from ..support.sessions import workspace
from ._serve import handshake_status, model, receive, until

__all__ = ["model"]  # the fixture, from _serve.py

AGENT = "codex-acp"


@pytest.fixture
def sandbox(short_root: Path, model: FakeModel) -> Iterator[tuple[Robota, Profile]]:
    robota, profile = sandboxed(short_root, model, AGENT)
    yield robota, profile
    kill_processes_with_home_under(short_root)


class Served:
    """A running ``robota --serve --json`` and the URL of its ready line."""

    def __init__(self, process: subprocess.Popen[str], url: str) -> None:
        self.process = process
        self.url = url

    @property
    def token(self) -> str:
        return self.url.split("token=", 1)[1]

    def stop(self) -> tuple[int, str]:
        self.process.send_signal(signal.SIGTERM)
        _out, err = self.process.communicate(timeout=BOUND)
        return self.process.returncode, err


def serve(
    robota: Robota, cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    environment = robota.environment(None, ())
    environment.update(env or {})
    return subprocess.Popen(
        [str(ROBOTA), "--serve", "--json", *args],
        env=environment,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture
def served(sandbox: tuple[Robota, Profile]) -> Iterator[Served]:
    yield from start_served(sandbox[0])


@pytest.fixture
def served_asking(sandbox: tuple[Robota, Profile], model: FakeModel) -> Iterator[Served]:
    """Its agent asks before every command."""
    write_real_agents_config(sandbox[0], [AGENT], model.url, ask=True)
    yield from start_served(sandbox[0])


def start_served(robota: Robota) -> Iterator[Served]:
    process = serve(robota, workspace(robota))
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        ready = json.loads(line)
        assert set(ready) == {"type", "url"} and ready["type"] == "ready", line
        assert ready["url"].startswith("ws://127.0.0.1:")
        yield Served(process, ready["url"])
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.communicate(timeout=BOUND)


def run(test: Any) -> None:
    trio.run(test)


def test_a_submit_is_answered_with_increasing_seqs_ending_in_complete(served: Served) -> None:
    async def main() -> None:
        async with open_websocket_url(served.url) as ws:
            hello = await receive(ws)
            assert (hello["type"], hello["session"], hello["seq"]) == ("hello", "s1", 0)
            await ws.send_message(json.dumps({"type": "submit", "prompt": "say hi"}))
            got = await until(ws, "complete")
            seqs = [m["seq"] for m in got if m["type"] != "command_result"]
            assert seqs == sorted(set(seqs)) and seqs[0] >= 1
            published = [m["seq"] for m in got]
            assert published == sorted(published)
            kinds = [m["type"] for m in got]
            assert "user_message" in kinds and "text_delta" in kinds
            assert got[-1]["result"]  # the fake model's answer
            await ws.send_message(json.dumps({"type": "get-messages"}))
            messages = await until(ws, "messages")
            roles = [m["role"] for m in messages[-1]["messages"]]
            assert roles == ["user", "assistant"]

    run(main)


def test_a_wrong_or_missing_token_is_refused_at_the_handshake(served: Served) -> None:
    base = served.url.split("?", 1)[0]
    for url in (base, base + "?token=wrong", base + "?token=" + served.token + "x"):
        assert handshake_status(url) == 401
    assert handshake_status(served.url) == 101  # the same handshake with the token is taken


def test_a_garbage_frame_gets_protocol_error_and_the_connection_still_works(
    served: Served,
) -> None:
    async def main() -> None:
        async with open_websocket_url(served.url) as ws:
            await receive(ws)
            await ws.send_message("{not json")
            # What the session published before this first frame comes first (its task's note).
            error = (await until(ws, "protocol_error"))[-1]
            assert (error["type"], error["message"]) == ("protocol_error", "the frame is not JSON")
            await ws.send_message(json.dumps({"type": "dance"}))
            unknown = await receive(ws)
            assert unknown["type"] == "protocol_error" and "dance" in unknown["message"]
            await ws.send_message(json.dumps({"type": "get-pending"}))
            assert (await receive(ws))["type"] == "pending"

    run(main)


def test_an_oversized_frame_closes_only_that_connection(served: Served) -> None:
    async def main() -> None:
        async with open_websocket_url(served.url) as other:
            await receive(other)
            # Its own TCP stream, closed here: trio-websocket leaves the socket of a connection
            # closed under a send open (a ResourceWarning later in the run).
            url = urlsplit(served.url)
            stream = await trio.open_tcp_stream(url.hostname or "", url.port or 0)
            async with stream, trio.open_nursery() as nursery:
                big = await wrap_client_stream(
                    nursery, stream, url.hostname or "", f"{url.path}?{url.query}"
                )
                await receive(big)
                with pytest.raises(ConnectionClosed) as closed:
                    # The host closes it while the frame still arrives: the send may see it.
                    await big.send_message("x" * (2 * 1024 * 1024))
                    with trio.fail_after(BOUND):
                        while True:
                            await big.get_message()
                assert closed.value.reason.code == 1009
                nursery.cancel_scope.cancel()
            await other.send_message(json.dumps({"type": "get-pending"}))
            assert (await until(other, "pending"))[-1]["approvals"] == []

    run(main)


def test_a_disconnect_mid_turn_then_resume_delivers_exactly_the_rest(served: Served) -> None:
    async def main() -> None:
        first: list[dict[str, Any]] = []
        async with open_websocket_url(served.url) as ws:
            await receive(ws)
            await ws.send_message(json.dumps({"type": "submit", "prompt": "SLOW resume me"}))
            while len([m for m in first if m["type"] == "text_delta"]) < 5:
                first.append(await receive(ws))
        last = first[-1]["seq"]
        await trio.sleep(0.5)  # the turn goes on while nobody is connected
        async with open_websocket_url(served.url) as ws:
            hello = await receive(ws)
            assert hello["seq"] > last  # published while away
            await ws.send_message(json.dumps({"type": "resume", "lastSeq": last}))
            rest = await until(ws, "complete")
        seqs = [m["seq"] for m in first + rest]
        assert seqs == list(range(seqs[0], seqs[-1] + 1)), "none twice, none missing"
        text = "".join(m["text"] for m in first + rest if m["type"] == "text_delta")
        assert text == "".join(f"slow-{n:02d} " for n in range(60))  # once, whole, in order
        assert rest[-1]["type"] == "complete"

    run(main)


def test_sigterm_ends_it_and_its_agents(
    sandbox: tuple[Robota, Profile], served: Served, short_root: Path
) -> None:
    async def main() -> None:
        async with open_websocket_url(served.url) as ws:
            await receive(ws)
            await ws.send_message(json.dumps({"type": "submit", "prompt": "hello"}))
            await until(ws, "complete")

    run(main)
    assert processes_with_home_under(short_root)  # robota and its agent run
    code, err = served.stop()
    assert code == 0, err
    assert served.token not in err
    assert processes_with_home_under(short_root) == []


def test_an_untrusted_workspace_is_refused_unless_restricted(
    sandbox: tuple[Robota, Profile],
) -> None:
    robota, _profile = sandbox
    untrusted = robota.root / "elsewhere"
    untrusted.mkdir()
    (untrusted / ".git").mkdir()
    (untrusted / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    refused = serve(robota, untrusted)
    _out, err = refused.communicate(timeout=BOUND)
    assert refused.returncode == 2
    assert "robota trust --yes" in err
    restricted = serve(robota, untrusted, "--restricted")
    try:
        assert restricted.stdout is not None
        ready = json.loads(restricted.stdout.readline())
        assert ready["type"] == "ready"
    finally:
        restricted.send_signal(signal.SIGTERM)
        restricted.communicate(timeout=BOUND)
    assert restricted.returncode == 0


def test_a_launchers_token_is_used_and_never_inherited(
    sandbox: tuple[Robota, Profile], short_root: Path
) -> None:
    robota, _profile = sandbox
    token = "launcher-token-0123456789abcdef"
    process = serve(robota, workspace(robota), env={"ROBOTA_SERVE_TOKEN": token})
    try:
        assert process.stdout is not None
        ready = json.loads(process.stdout.readline())
        assert ready["url"].endswith("?token=" + token)

        async def main() -> None:
            async with open_websocket_url(ready["url"]) as ws:
                await receive(ws)
                await ws.send_message(json.dumps({"type": "submit", "prompt": "hello"}))
                await until(ws, "complete")

        run(main)
        agents = [pid for pid in processes_with_home_under(short_root) if pid != process.pid]
        assert agents
        for pid in [process.pid, *agents]:
            assert token.encode() not in Path(f"/proc/{pid}/cmdline").read_bytes()
        for pid in agents:  # the host's own /proc environ is its exec's, before the removal
            environ = Path(f"/proc/{pid}/environ").read_bytes()
            assert b"ROBOTA_SERVE_TOKEN" not in environ and token.encode() not in environ
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=BOUND)


def test_two_clients_one_approval_the_first_answer_wins(
    served_asking: Served, short_root: Path
) -> None:
    served = served_asking

    async def main() -> None:
        async with (
            open_websocket_url(served.url) as one,
            open_websocket_url(served.url) as two,
        ):
            first = await receive(one)
            second = await receive(two)
            await two.send_message(json.dumps({"type": "ack", "seq": 0}))
            await one.send_message(
                json.dumps({"type": "submit", "prompt": "SHELL: touch made.txt && echo from-ws"})
            )
            asked = (await until(one, "permission_request"))[-1]
            heard = await until(two, "permission_request")
            assert heard[-1]["id"] == asked["id"]
            # Every message of the turn names the client whose submit began it, to both.
            began = [m for m in heard if m["type"] == "user_message"]
            assert [m["driverId"] for m in began] == [first["surface"]] != [second["surface"]]
            assert asked["driverId"] == heard[-1]["driverId"] == first["surface"]
            await two.send_message(json.dumps({"type": "get-pending"}))
            pending = (await until(two, "pending"))[-1]
            assert [a["id"] for a in pending["approvals"]] == [asked["id"]]
            accept = {"type": "permission-response", "id": asked["id"], "result": "accept"}
            await two.send_message(json.dumps(accept))
            resolved = (await until(one, "prompt_resolved"))[-1]
            assert (resolved["id"], resolved["result"]) == (asked["id"], "accept")
            assert resolved["answerer"] == second["surface"]  # by whom
            # The late answer changes nothing: the question is already resolved.
            await one.send_message(json.dumps({**accept, "result": "decline"}))
            done = (await until(one, "complete"))[-1]
            assert "from-ws" in (done["result"] or "")
            rest = await until(two, "complete")
            assert [m["result"] for m in rest if m["type"] == "prompt_resolved"] == ["accept"]
            assert done["driverId"] == rest[-1]["driverId"] == first["surface"]

    run(main)
    made = list(short_root.rglob("made.txt"))
    assert made, "the accepted command ran"


def test_the_last_client_leaving_declines_a_pending_approval(
    served_asking: Served, short_root: Path
) -> None:
    served = served_asking

    async def main() -> None:
        async with open_websocket_url(served.url) as ws:
            await receive(ws)
            await ws.send_message(
                json.dumps({"type": "submit", "prompt": "SHELL: touch other.txt && echo left"})
            )
            asked = (await until(ws, "permission_request"))[-1]
            last = asked["seq"]
        async with open_websocket_url(served.url) as ws:
            await receive(ws)
            await ws.send_message(json.dumps({"type": "resume", "lastSeq": last}))
            rest: list[dict[str, Any]] = []
            while not rest or rest[-1]["type"] not in ("complete", "interrupted", "error"):
                rest.append(await receive(ws))
            resolved = [m for m in rest if m["type"] == "prompt_resolved"]
            # codex-acp's only refusal ends the turn; either way nobody accepted it
            assert all(m["result"] == "decline" for m in resolved)
            await ws.send_message(json.dumps({"type": "get-pending"}))
            assert (await until(ws, "pending"))[-1]["approvals"] == []

    run(main)
    assert list(short_root.rglob("other.txt")) == [], "the declined command never ran"
