"""A team channel on Slack end to end: a real host process with a real agent against the fake
model, serving ``teams.web`` on the fake Slack. A member's ``!deploy`` is refused in its thread
and never reaches the agent; a member's plain question becomes its own task in the team's
project, in plan mode, answered in the question's thread; the channel is told the bot is
online, and offline when the host stops."""

from __future__ import annotations

import json
from contextlib import closing
from pathlib import Path
from typing import Any

from robota.core.config import resolve_profile
from robota.core.store import open_reader

from ...support.fake_slack import dm, fake_slack
from ...support.host import sandboxed
from ...support.model_server import FakeModel
from ...support.slack import BOUND, Served, configure, host_process, now_ts, words

TEAM_CHANNEL = "C0TEAM"
MEMBER = "U0BOB"


def team_message(text: str, ts: str, *, thread_ts: str | None = None) -> dict[str, Any]:
    event = {**dm(text, user=MEMBER, ts=ts), "channel": TEAM_CHANNEL, "channel_type": "channel"}
    if thread_ts is not None:
        event["thread_ts"] = thread_ts
    return event


def add_team(home: Path, project: Path) -> None:
    config = json.loads((home / "config.yaml").read_text())
    config["teams"] = {
        "web": {
            "transport": "slack",
            "chat": TEAM_CHANNEL,
            "project": str(project),
            "members": "all",
            "respondToAllMessages": True,
            "intents": {"deploy": {"description": "deploy", "prompt": "deploy {args}"}},
        }
    }
    (home / "config.yaml").write_text(json.dumps(config, indent=2))


async def test_a_team_channel_refuses_answers_in_threads_and_notes(
    short_root: Path, model: FakeModel
) -> None:
    robota, profile = sandboxed(short_root, model, "codex-acp")
    project = short_root / "project"
    project.mkdir()

    def channel_notes() -> list[str]:
        return [
            words(m)
            for (c, _), m in sorted(fake.messages.items())
            if c == TEAM_CHANNEL and "thread_ts" not in m
        ]

    async with fake_slack() as fake:
        configure(robota.home, fake.api_url)
        add_team(robota.home, project)
        async with host_process(robota, fake, short_root / "host.log") as process:
            bot = Served(fake, model, profile.control_socket)
            await fake.wait_until(lambda: any("online" in n for n in channel_notes()), BOUND)

            refused = now_ts()
            await bot.push(team_message("!deploy prod", refused), event_id="EvT1")
            await fake.wait_until(
                lambda: any(
                    "administrator" in words(m) for m in bot.replies(refused, TEAM_CHANNEL)
                ),
                timeout=BOUND,
            )
            assert bot.prompts("deploy prod") == 0

            asked = now_ts()
            await bot.push(team_message("what is in the project?", asked), event_id="EvT2")
            await bot.answered(asked, TEAM_CHANNEL)
            thread = bot.replies(asked, TEAM_CHANNEL)
            assert any("echo: what is in the project?" in words(m) for m in thread), thread
            assert bot.prompts("what is in the project?") == 1

    assert process.returncode == 0, (short_root / "host.log").read_text()[-4000:]
    assert any("offline" in n for n in channel_notes()), channel_notes()
    store = resolve_profile({"ROBOTA_HOME": str(robota.home)}).data_dir / "robota.sqlite"
    with closing(open_reader(store)) as db:
        rows = list(db.query("SELECT cwd, permission_mode FROM tasks"))
    assert [(r["cwd"], r["permission_mode"]) for r in rows] == [(str(project), "plan")]
