"""``robota mcp serve --http-port``: streamable HTTP on loopback behind a bearer token, driven
by the official ``mcp`` client's streamable HTTP transport."""

from __future__ import annotations

import re
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from ..support.model_server import FakeModel
from ..support.processes import processes_with_home_under
from ..support.real_agents import write_real_agents_config
from ..support.robota import ROBOTA, Robota

# The SDK's streamable HTTP client (the oracle) leaves httpx2's response and SSE generators to
# the garbage collector when a session ends, which trio reports: theirs, not the server's.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Exception ignored in. <async_generator object "
    "(EventSource|HTTP11ConnectionByteStream|Response|ByteStream):"
    "pytest.PytestUnraisableExceptionWarning"
)

READY = re.compile(r"serving MCP on (http://127\.0\.0\.1:\d+)/mcp")


@pytest.fixture
def model() -> Iterator[FakeModel]:
    with FakeModel() as fake:
        yield fake


class Served:
    def __init__(self, process: subprocess.Popen[str], url: str, token_file: Path) -> None:
        self.process = process
        self.url = url
        self.token_file = token_file
        self.stderr: list[str] = []

    @property
    def token(self) -> str:
        return self.token_file.read_text().strip()


@pytest.fixture
def served(robota: Robota, model: FakeModel) -> Iterator[Served]:
    write_real_agents_config(robota, ["codex"], model.url, model_catalog=True)
    token_file = robota.root / "run" / "mcp.token"
    token_file.parent.mkdir()
    process = subprocess.Popen(
        [
            str(ROBOTA),
            "mcp",
            "serve",
            "--http-port",
            "0",
            "--http-token-file",
            str(token_file),
        ],
        env=robota.environment(None, ()),
        cwd=robota.root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert process.stderr is not None
    seen: list[str] = []
    url = None
    deadline = time.monotonic() + 60
    while url is None and time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line:
            break
        seen.append(line)
        found = READY.search(line)
        if found:
            url = found[1] + "/mcp"
    assert url is not None, "".join(seen)
    serving = Served(process, url, token_file)
    serving.stderr = seen
    try:
        yield serving
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()


@asynccontextmanager
async def client(served: Served) -> AsyncIterator[ClientSession]:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {served.token}"})
    async with (
        http,
        streamable_http_client(served.url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def test_a_client_with_the_token_runs_a_prompt_and_continues_the_task(
    served: Served,
) -> None:
    assert served.token_file.stat().st_mode & 0o777 == 0o600
    async with client(served) as session:
        tools = await session.list_tools()
        assert "robota_run" in {t.name for t in tools.tools}
        moves: list[str | None] = []

        async def progress(_done: float, _total: float | None, message: str | None) -> None:
            moves.append(message)

        first = await session.call_tool(
            "robota_run", {"prompt": "remember pears"}, progress_callback=progress
        )
        assert not first.is_error
        assert first.structured_content["answer"] == "ECHO: remember pears"
        assert moves
        again = await session.call_tool(
            "robota_run", {"prompt": "HISTORY", "task": first.structured_content["task"]}
        )
        assert again.structured_content["answer"] == "HISTORY: remember pears | HISTORY"


async def test_a_request_without_the_token_is_refused_and_logged_without_it(
    served: Served, robota: Robota
) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    async with httpx2.AsyncClient() as http:
        bare = await http.post(served.url, json=body)
        wrong = await http.post(served.url, json=body, headers={"Authorization": "Bearer nope"})
    assert (bare.status_code, wrong.status_code) == (401, 401)
    log = (robota.home / "logs" / "robota.log").read_text()
    assert "no Authorization header" in log and "wrong bearer token" in log
    assert served.token not in log


def test_sigterm_ends_it_with_0_removes_the_token_and_leaves_no_agent(
    served: Served, robota: Robota
) -> None:
    token = served.token
    served.process.send_signal(signal.SIGTERM)
    out, err = served.process.communicate(timeout=60)
    assert served.process.returncode == 0, err
    assert not served.token_file.exists()
    assert out == ""
    assert token not in err + "".join(served.stderr)
    assert processes_with_home_under(robota.root / "agents") == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--http-port", "0", "--http-token-file", "relative.token"], "not an absolute path"),
        (
            ["--http-port", "0", "--http-host", "0.0.0.0", "--http-token-file", "/nonexistent/x"],
            "only a loopback address",
        ),
        (["--http-port", "0"], "--http-port needs --http-token-file"),
    ],
)
def test_refused_options_exit_2(
    robota: Robota, model: FakeModel, args: list[str], message: str
) -> None:
    write_real_agents_config(robota, ["codex"], model.url)
    done = robota.run("mcp", "serve", *args)
    assert done.returncode == 2
    assert message in done.stderr
    assert done.stdout == ""


def test_an_existing_token_file_is_refused(robota: Robota, model: FakeModel) -> None:
    write_real_agents_config(robota, ["codex"], model.url)
    there = robota.root / "there.token"
    there.write_text("keep me\n")
    done = robota.run("mcp", "serve", "--http-port", "0", "--http-token-file", str(there))
    assert done.returncode == 2 and "already exists" in done.stderr
    assert there.read_text() == "keep me\n"
