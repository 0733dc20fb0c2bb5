"""A team group on the fake Feishu platform: a host serving ``teams.web``, the group's events,
and what the operator and the store see of it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, closing
from pathlib import Path
from typing import Any

from robota.core.config import resolve_profile
from robota.core.policy import scheduler_from_json
from robota.core.store import open_reader, team_row

from .fake_feishu import Sent, fake_platform
from .feishu import (
    BOUND,
    Served,
    configure,
    host_process,
    message_event,
)
from .host import sandboxed
from .model_server import FakeModel
from .real_agents import write_real_agents_config
from .trust import trust_workspace

ADMIN = "ou_admin"


CHAT = "oc_team"


def team_event(n: int, text: str, sender: str, *, root: str = "") -> dict[str, Any]:
    event = message_event(n, text, sender=sender, chat_id=CHAT, chat_type="group")
    if root:  # a message in the request's thread: Feishu names its root and the thread
        event["event"]["message"]["root_id"] = root
        event["event"]["message"]["thread_id"] = f"omt_{root}"
    return event


@asynccontextmanager
async def team_host(
    root: Path, model: FakeModel, *, ask: bool = False
) -> AsyncIterator[tuple[Team, Any, Path]]:
    robota, profile = sandboxed(root, model, "codex-acp")
    if ask:  # the agent asks before it runs a command
        write_real_agents_config(robota, ["codex-acp"], model.url, ask=True)
    project = root / "project"
    project.mkdir()
    # The developer trusts the project (else every team turn ran Restricted, in plan mode,
    # and a member's plan mode would prove nothing).
    trust_workspace(robota.home, project)
    async with fake_platform() as fake:
        configure(robota.home, fake.domain)
        add_team(robota.home, project)
        async with host_process(robota, fake, root / "host.log") as process:
            yield Team(fake, model, profile.control_socket), robota, project
    assert process.returncode == 0, (root / "host.log").read_text()[-4000:]


def running_senders(robota: Any) -> list[str]:
    with closing(open_reader(store_path(robota))) as db:
        row = team_row(db, "web")
    if row is None:
        return []
    return [r.request.sender for r in scheduler_from_json(row.scheduler_json).running]


def add_team(home: Path, project: Path, **settings: Any) -> None:
    config = json.loads((home / "config.yaml").read_text())
    config["teams"] = {
        "web": {
            **settings,
            "transport": "feishu",
            "chat": CHAT,
            "project": str(project),
            "admins": [ADMIN],
            "members": "all",
            "respondToAllMessages": True,
            "intents": {
                "deploy": {"description": "deploy to production", "prompt": "deploy {args}"},
                "release": {"description": "cut a release", "prompt": "release {args} now"},
            },
            "intentPermissions": {"release": "admin-confirm"},
        }
    }
    (home / "config.yaml").write_text(json.dumps(config, indent=2))


class Team(Served):
    def replies_to(self, message_id: str, msg_type: str = "text") -> list[Sent]:
        return [
            m for m in self.fake.messages if m.reply_to == message_id and m.msg_type == msg_type
        ]

    def notes(self) -> list[str]:
        return [
            m.content.get("text", "")
            for m in self.fake.messages
            if m.receive_id == CHAT and m.msg_type == "text"
        ]

    async def replied(self, message_id: str, words: str) -> Sent:
        def found() -> Sent | None:
            for sent in self.replies_to(message_id):
                if words in sent.content.get("text", ""):
                    return sent
            return None

        await self.fake.wait_until(found, timeout=BOUND)
        sent = found()
        assert sent is not None
        return sent

    async def noted(self, words: str) -> None:
        await self.fake.wait_until(lambda: any(words in n for n in self.notes()), timeout=BOUND)


def store_path(robota: Any) -> Path:
    return Path(resolve_profile({"ROBOTA_HOME": str(robota.home)}).data_dir) / "robota.sqlite"
