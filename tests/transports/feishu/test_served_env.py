"""The agents' environment on a profile's first start: a real host process with a real agent
against the fake platform. The bot's open_id is read before the agents' launch environment is
fixed, so the first run's agent process has it (read from ``/proc/<pid>/environ``)."""

from __future__ import annotations

from pathlib import Path

from ...support.fake_feishu import APP_ID, APP_SECRET
from ...support.feishu import BOT, OWNER, message_event, served
from ...support.model_server import FakeModel
from ...support.processes import live_processes


async def test_the_first_starts_agent_has_the_bots_open_id(
    short_root: Path, model: FakeModel
) -> None:
    async with served(short_root, model) as bot:
        await bot.fake.push_event(message_event(1, "hello"))
        await bot.answered("om_user1")  # the agent runs now
        marker = f"HOME={short_root / 'agents'}".encode()
        agents = live_processes(lambda environ: any(v.startswith(marker) for v in environ))
        assert agents, "the agent process is alive"
        environ = (Path("/proc") / str(agents[0]) / "environ").read_bytes().split(b"\0")
        ids = {
            name: value
            for name, _, value in (entry.decode().partition("=") for entry in environ)
            if name.startswith("ROBOTA_LARK_")
        }
        assert ids == {
            "ROBOTA_LARK_APP_ID": APP_ID,
            "ROBOTA_LARK_USER_OPEN_ID": OWNER,
            "ROBOTA_LARK_BOT_OPEN_ID": BOT,
        }
        assert not any(APP_SECRET.encode() in entry for entry in environ)
