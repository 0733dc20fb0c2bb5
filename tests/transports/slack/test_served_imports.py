"""A real host serving Slack never imports httpx (nor, through it, click's, pygments' and
rich's share of its command-line client): its Web API calls go on httpcore (see
robota.transports._direct). The host reports its own imports (``-X importtime``, see
tests/support/imports.py) while it starts, connects and serves a turn."""

from __future__ import annotations

from pathlib import Path

from ...support.fake_slack import dm, fake_slack
from ...support.host import sandboxed
from ...support.imports import IMPORT_LOG, imported
from ...support.model_server import FakeModel
from ...support.processes import processes_with_home_under
from ...support.slack import Served, configure, host_process, now_ts


async def test_a_host_serving_slack_never_imports_httpx(short_root: Path, model: FakeModel) -> None:
    robota, profile = sandboxed(short_root, model, "codex-acp")
    robota.env.update(IMPORT_LOG)
    log = short_root / "host.log"
    async with fake_slack() as fake:
        configure(robota.home, fake.api_url)
        async with host_process(robota, fake, log) as process:
            bot = Served(fake, model, profile.control_socket, profile.default_log_path)
            ts = now_ts()
            envelope = await bot.push(dm("hello slack", ts=ts), event_id="EvDM1")
            await bot.acked(envelope)
            await bot.answered(ts)
    assert process.returncode == 0, log.read_text()[-4000:]
    assert processes_with_home_under(short_root / "agents") == []
    modules = imported(log.read_text())
    # The report is there and covers the transport's calls: httpcore made them.
    assert {"robota.transports.slack._web", "httpcore", "trio_websocket"} <= modules
    assert "httpx" not in modules
    # A profile with no mesh: its mesh folder is read without the keys' library (8 MB).
    assert "robota.mesh._keyfile" in modules and "cryptography" not in modules
