"""``robota server start`` with a Feishu transport that cannot connect (a real host process, a
real agent against the fake model, the fake platform on loopback): a wrong app secret, a
refused WebSocket handshake (403) and an endpoint on a port nobody listens on. The start
returns within seconds with exit 0 (the host serves), names the transport and its reason (no
secret in it), ``server status --json`` shows it ``failed`` or ``connecting`` with its
detail, and ``task send --wait`` answers meanwhile."""

from __future__ import annotations

import socket
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest
import trio

from ...support.fake_feishu import APP_SECRET, SERVICE_ID, FakePlatform, fake_platform
from ...support.feishu import configure
from ...support.host import sandboxed
from ...support.json_http import Answer
from ...support.json_http import HttpRequest as Request
from ...support.model_server import FakeModel
from ...support.processes import kill_processes_with_home_under, processes_with_home_under
from ...support.served_start import start_serve_and_stop

WRONG_SECRET = "wrong-secret-5c1e77a0d4"


def dead_port() -> int:
    """A loopback port nobody listens on (bound, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wrong_secret(fake: FakePlatform, home: Path) -> None:
    (home / ".env").write_text(f"FEISHU_APP_SECRET={WRONG_SECRET}\n")


def _forbidden_handshake(fake: FakePlatform, _home: Path) -> None:
    fake.handshake_refusals.append((403, {}))


def _dead_port(fake: FakePlatform, _home: Path) -> None:
    url = f"ws://127.0.0.1:{dead_port()}/ws?device_id=dead&service_id={SERVICE_ID}"

    def endpoint(request: Request) -> Answer | None:
        if request.path != "/callback/ws/endpoint":
            return None
        config = {**fake.client_config, "ReconnectInterval": 1}
        return 200, {}, {"code": 0, "msg": "ok", "data": {"URL": url, "ClientConfig": config}}

    fake.routes.append(endpoint)


FAULTS: dict[str, tuple[Callable[[FakePlatform, Path], None], str, str]] = {
    # name: (set the fault up, the state, what the detail says)
    "wrong secret": (_wrong_secret, "failed", "app secret invalid"),
    "403 handshake": (_forbidden_handshake, "failed", "status 403"),
    "dead port": (_dead_port, "connecting", "WebSocket handshake failed: OSError; next attempt"),
}


@pytest.mark.parametrize("fault", list(FAULTS))
async def test_server_start_returns_at_once_and_names_a_feishu_transport_that_cannot_connect(
    short_root: Path, model: FakeModel, fault: str
) -> None:
    arrange, state, reason = FAULTS[fault]
    robota, profile = sandboxed(short_root, model, "codex-acp")
    try:
        async with fake_platform() as fake:
            configure(robota.home, fake.domain)
            arrange(fake, robota.home)
            secrets = (WRONG_SECRET, APP_SECRET)
            human = fault == "403 handshake"  # one as a person reads it, the others --json
            await trio.to_thread.run_sync(
                partial(start_serve_and_stop, human=human), robota, "feishu", state, reason, secrets
            )
            if fault == "dead port":
                assert fake.connections == [], "nothing listens there"
        text = "\n".join(p.read_text() for p in profile.log_dir.glob("*.log*"))
        assert reason.split(";")[0] in text, "the host's log says why"
        assert WRONG_SECRET not in text and APP_SECRET not in text, "no secret in the logs"
        assert processes_with_home_under(short_root) == []
    finally:
        kill_processes_with_home_under(short_root)
