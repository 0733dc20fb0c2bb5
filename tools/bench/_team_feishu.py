"""The fake-Feishu part of ``teams.py``: the issue's load through a real host, event to reply.

A real host (``robota server start``) with one real agent (default codex-acp, offline against the
fake model) serves ``teams.bench`` on the fake Open Platform of the tests (loopback HTTP and the
long connection). ``senders`` members each post ``per_sender`` plain requests to the group at
the same moment; the team has 3 slots and room in its queue for all of them. **Admission** is,
on the fake's clock, from just before a message's event frame is written until the platform
received the bot's first answer to it: the ``OnIt`` reaction (the request started) or the
queued reply in its thread (``已排队``). Every request must then be answered once (its final
``post``), in its thread.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import trio
from _real import Sandbox
from tests.support.fake_feishu import APP_ID, APP_SECRET, FakePlatform, fake_platform
from tests.support.feishu import OWNER, message_event

__all__ = ["feishu_admissions"]

CHAT = "oc_bench_team"
BOUND = 600.0


def _robota(sandbox: Sandbox, *args: str) -> str:
    done = subprocess.run(
        sandbox.robota(*args),
        env=sandbox.env,
        cwd=sandbox.cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"robota {' '.join(args)}: exit {done.returncode}: {done.stderr[-800:]}")
    return done.stdout


def _configure(sandbox: Sandbox, domain: str, project: Path, requests: int) -> None:
    path = sandbox.home / "config.yaml"
    config = json.loads(path.read_text())
    config["transports"] = {
        "feishu": {
            "appId": APP_ID,
            "appSecret": "${FEISHU_APP_SECRET}",
            "userOpenId": OWNER,
            "domain": domain,
        }
    }
    config["teams"] = {
        "bench": {
            "transport": "feishu",
            "chat": CHAT,
            "project": str(project),
            "members": "all",
            "respondToAllMessages": True,
            "slots": 3,
            "queueLimit": requests,
        }
    }
    path.write_text(json.dumps(config, indent=2))
    env = sandbox.home / ".env"
    env.write_text(f"FEISHU_APP_SECRET={APP_SECRET}\n")
    env.chmod(0o600)


def _admitted(fake: FakePlatform, message_id: str) -> float | None:
    times = [
        r.at
        for r in fake.reactions
        if r.message_id == message_id and r.emoji == "OnIt" and r.op == "add"
    ]
    times += [
        m.at
        for m in fake.messages
        if m.reply_to == message_id and m.msg_type == "text" and "已排队" in str(m.content)
    ]
    return min(times) if times else None


def _answered(fake: FakePlatform, message_id: str) -> list[Any]:
    return [m for m in fake.messages if m.reply_to == message_id and m.msg_type == "post"]


async def _bench(sandbox: Sandbox, senders: int, per_sender: int) -> tuple[list[float], str]:
    project = sandbox.root / "project"
    project.mkdir(exist_ok=True)
    total = senders * per_sender
    async with fake_platform() as fake:
        _configure(sandbox, fake.domain, project, total)
        await trio.to_thread.run_sync(_robota, sandbox, "server", "start")
        try:
            await fake.wait_until(
                lambda: any(m.receive_id == CHAT for m in fake.messages), timeout=BOUND
            )  # the online note: the team's door is attached
            pushed: dict[str, float] = {}
            n = 0
            for index in range(per_sender):
                for sender in range(senders):
                    n += 1
                    event = message_event(
                        n,
                        f"request {index} of member {sender}",
                        sender=f"ou_member{sender}",
                        chat_id=CHAT,
                        chat_type="group",
                    )
                    pushed[f"om_user{n}"] = trio.current_time()
                    await fake.push_event(event)
            await fake.wait_until(
                lambda: all(_admitted(fake, i) is not None for i in pushed), timeout=BOUND
            )
            samples = [(_admitted(fake, i) or 0.0) - at for i, at in pushed.items()]
            started = trio.current_time()
            await fake.wait_until(
                lambda: all(_answered(fake, i) for i in pushed), timeout=BOUND * 2
            )
            doubled = sum(1 for i in pushed if len(_answered(fake, i)) != 1)
            threaded = all(m.in_thread for i in pushed for m in _answered(fake, i))
            line = (
                f"  all {total} answered ({doubled} not exactly once, in their threads: "
                f"{threaded}) {trio.current_time() - started:.1f} s after the last admission"
            )
            return samples, line
        finally:
            await trio.to_thread.run_sync(_robota, sandbox, "server", "stop")


def feishu_admissions(
    root: Path, model_url: str, agent: str, senders: int, per_sender: int
) -> tuple[list[float], str]:
    """Admission times (s) of ``senders`` x ``per_sender`` requests, and a line about their end."""
    sandbox = Sandbox(root, model_url, [agent], tap=False)
    return trio.run(_bench, sandbox, senders, per_sender)
