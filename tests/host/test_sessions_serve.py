"""One background session, two kinds of surface: the workspace's daemon started with
``robota daemon start --json`` serves its loopback WebSocket (the ``--serve`` protocol) beside
its control endpoint, so a terminal attached over ``session.attach`` and a WebSocket client drive
and watch the same turns and answer the same approvals. Real processes: the real ``robota``
script, a real ACP agent against the fake model, trio-websocket as the client."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import trio
from trio_websocket import WebSocketConnection, open_websocket_url

from robota.core.config import Profile

from ..support.host import sandboxed
from ..support.model_server import FakeModel
from ..support.processes import kill_processes_with_home_under, processes_with_home_under
from ..support.real_agents import write_real_agents_config
from ..support.robota import Robota
from ..support.sessions import AGENT, Surface, notice, ok_json, registration, robota_cmd, workspace
from ._serve import handshake_status, model, receive, until

__all__ = ["model"]  # the fake model of the serve tests (_serve.py), a fixture here too


@pytest.fixture
def sandbox(short_root: Path, model: FakeModel) -> Iterator[tuple[Robota, Profile]]:
    robota, profile = sandboxed(short_root, model, AGENT)
    # Its agent asks before every command: the approvals below.
    write_real_agents_config(robota, [AGENT], model.url, ask=True)
    yield robota, profile
    kill_processes_with_home_under(short_root)


def files_under(*roots: Path) -> Iterator[Path]:
    for root in roots:
        for path in root.rglob("*"):
            if path.is_file() and not path.is_socket():
                yield path


async def on_terminal(surface: Surface, check: Callable[[dict[str, Any]], bool]) -> Any:
    with trio.fail_after(60):
        return await trio.to_thread.run_sync(surface.until, check)


def test_one_daemon_driven_from_an_attached_terminal_and_a_websocket_client(
    sandbox: tuple[Robota, Profile], short_root: Path
) -> None:
    robota, profile = sandbox
    project = workspace(robota)
    started = ok_json(robota, "daemon", "start", cwd=project)
    assert set(started) == {"id", "url", "started"} and started["started"] is True, started
    url = started["url"]
    assert url.startswith("ws://127.0.0.1:") and "?token=" in url, url
    token = url.split("token=", 1)[1]
    assert len(token) >= 32
    # A start handed the running daemon is told the same URL.
    assert ok_json(robota, "daemon", "start", cwd=project) == {**started, "started": False}
    # And so is its owner asking by id (`session url`), the way to a plain background session's.
    assert ok_json(robota, "session", "url", started["id"]) == {"id": started["id"], "url": url}
    assert handshake_status(url.replace(token, "x" * len(token))) == 401

    # The token is nowhere but in what this caller was printed: not on disk (registrations,
    # logs, the store), not in a listing, not in the daemon's or its agents' argv or env
    # (those once its agent runs, below).
    found = registration(profile, started["id"])
    listed = robota_cmd(robota, "session", "list", "--json").stdout
    status = robota_cmd(robota, "daemon", "status", "--json", cwd=project).stdout
    assert token not in listed + status
    for path in files_under(profile.sessions_dir, profile.log_dir, profile.data_dir):
        assert token.encode() not in path.read_bytes(), path
    terminal = Surface(profile, started["id"])
    assert terminal.first["type"] == "hello"

    async def main() -> None:
        async with open_websocket_url(url) as ws:
            hello = await receive(ws)
            assert (hello["type"], hello["session"], hello["task"]) == (
                "hello",
                started["id"],
                terminal.first["task"],
            )
            web = hello["surface"]
            await two_surfaces_one_turn(ws, terminal, web)
            await approvals_answered_from_either(ws, terminal, web)
            # One session per background session: no ``new``; the connection stays usable.
            await ws.send_message(json.dumps({"type": "command", "name": "new"}))
            refused = (await until(ws, "protocol_error"))[-1]
            assert refused["field"] == "command.name"

    trio.run(main)
    terminal.close()
    assert robota_cmd(robota, "session", "rename", started["id"], "web-daemon").returncode == 0

    async def hello_after_rename() -> None:
        async with open_websocket_url(url) as ws:
            assert (await receive(ws))["name"] == "web-daemon"

    trio.run(hello_after_rename)
    sandboxed_processes = processes_with_home_under(short_root)  # the daemon, its agents
    assert found.pid in sandboxed_processes and len(sandboxed_processes) > 1
    for pid in sandboxed_processes:
        for name in ("cmdline", "environ"):
            assert token.encode() not in Path(f"/proc/{pid}/{name}").read_bytes(), (pid, name)
    for path in files_under(profile.sessions_dir, profile.log_dir, profile.data_dir):
        assert token.encode() not in path.read_bytes(), path
    assert (project / "by-web.txt").exists() and (project / "by-terminal.txt").exists()
    assert robota_cmd(robota, "daemon", "stop", cwd=project).returncode == 0
    assert processes_with_home_under(short_root) == []
    assert not Path(found.socket).exists()


async def two_surfaces_one_turn(ws: WebSocketConnection, terminal: Surface, web: str) -> None:
    """A turn from either surface is seen by both, the WebSocket's seqs strictly increasing,
    each of its messages naming the surface that began it (``driverId``)."""
    await ws.send_message(json.dumps({"type": "submit", "prompt": "hello from the web"}))
    got = await until(ws, "complete")
    assert "ECHO: hello from the web" in (got[-1]["result"] or "")
    assert {m["driverId"] for m in got if m["type"] != "command_result"} == {web}
    assert [m["prompt"] for m in got if m["type"] == "user_message"] == ["hello from the web"]
    assert any(m["type"] == "text_delta" for m in got)
    seqs = [m["seq"] for m in got]
    assert seqs == sorted(set(seqs)), seqs
    finished = await on_terminal(terminal, notice("TurnFinished"))
    assert "ECHO: hello from the web" in (finished["notice"].get("final_text") or "")

    terminal.send({"type": "submit", "prompt": "hello from the terminal"})
    got = await until(ws, "complete")
    assert [m["prompt"] for m in got if m["type"] == "user_message"] == ["hello from the terminal"]
    assert "ECHO: hello from the terminal" in (got[-1]["result"] or "")
    assert {m["driverId"] for m in got} == {terminal.first["surface"]} != {web}
    assert got[0]["seq"] > seqs[-1]
    finished = await on_terminal(terminal, notice("TurnFinished"))
    assert "ECHO: hello from the terminal" in (finished["notice"].get("final_text") or "")


async def approvals_answered_from_either(
    ws: WebSocketConnection, terminal: Surface, web: str
) -> None:
    """One approval answered on the WebSocket (the terminal is told who answered), one on the
    terminal (the WebSocket client is told ``prompt_resolved``)."""
    terminal.send({"type": "submit", "prompt": "SHELL: touch by-web.txt && echo web-said-yes"})
    asked = (await until(ws, "permission_request"))[-1]
    on_tty = await on_terminal(terminal, notice("TurnUpdate", "approval_requested"))
    assert on_tty["notice"]["event"]["approval_id"] == asked["id"]
    await ws.send_message(
        json.dumps({"type": "permission-response", "id": asked["id"], "result": "accept"})
    )
    resolved = await on_terminal(terminal, notice("TurnUpdate", "approval_resolved"))
    assert resolved["notice"]["event"]["decision"] == "accept"
    assert resolved["notice"]["event"]["answerer"] == web
    got = await until(ws, "complete")
    said = [(m["id"], m["result"], m["answerer"]) for m in got if m["type"] == "prompt_resolved"]
    assert said == [(asked["id"], "accept", web)]
    assert "web-said-yes" in (got[-1]["result"] or "")
    await on_terminal(terminal, notice("TurnFinished"))

    await ws.send_message(
        json.dumps({"type": "submit", "prompt": "SHELL: touch by-terminal.txt && echo tty-yes"})
    )
    asked = (await until(ws, "permission_request"))[-1]
    await on_terminal(terminal, notice("TurnUpdate", "approval_requested"))
    terminal.send({"type": "permission-response", "id": asked["id"], "result": "accept"})
    resolved = (await until(ws, "prompt_resolved"))[-1]
    assert (resolved["id"], resolved["result"]) == (asked["id"], "accept")
    assert resolved["answerer"] == terminal.first["surface"]
    # The late answer from the WebSocket changes nothing: the terminal's answer won.
    await ws.send_message(
        json.dumps({"type": "permission-response", "id": asked["id"], "result": "decline"})
    )
    assert "tty-yes" in ((await until(ws, "complete"))[-1]["result"] or "")
    await on_terminal(terminal, notice("TurnFinished"))
