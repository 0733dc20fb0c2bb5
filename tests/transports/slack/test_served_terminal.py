"""A prompt from the terminal (``robota task send``) to a DM's task is answered in that DM, as
if its owner had typed it there: a real host process with an ACP agent against the fake model
and the fake Slack, and the DM's route not yet spoken to in this host's run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...support.fake_slack import dm, fake_slack
from ...support.host import ask, sandboxed
from ...support.model_server import FakeModel
from ...support.processes import processes_with_home_under
from ...support.slack import BOUND, CHANNEL, Served, configure, host_process, now_ts, words


async def test_a_prompt_from_the_terminal_is_answered_in_its_dm_after_a_restart(
    short_root: Path, model: FakeModel
) -> None:
    robota, profile = sandboxed(short_root, model, "codex-acp")
    log = short_root / "host.log"

    async with fake_slack() as fake:
        configure(robota.home, fake.api_url)
        bot = Served(fake, model, profile.control_socket)
        async with host_process(robota, fake, log):
            ts = now_ts()
            await bot.push(dm("hello from the dm", ts=ts), event_id="EvFirst")
            await bot.answered(ts)

        async with host_process(robota, fake, log) as second:
            before = set(fake.messages)
            wanted = {"task": "1", "text": "from the terminal", "wait": True}
            sent = await ask(profile.control_socket, "task.send", wanted)
            assert sent["route"].startswith("slack:"), sent
            assert [t["final"] for t in sent["turns"]] == ["ECHO: from the terminal"]

            def finals() -> list[dict[str, Any]]:
                return [
                    m
                    for key, m in fake.messages.items()
                    if key not in before
                    and "echo: from the terminal" in words(m)
                    and any(b.get("type") == "markdown" for b in m.get("blocks", []))
                ]

            # Its final answer, in the DM the task belongs to, and its progress message done.
            await fake.wait_until(finals, timeout=BOUND)
            new = {key: m for key, m in fake.messages.items() if key not in before}
            assert {channel for channel, _ in new} == {CHANNEL}, new
            await fake.wait_until(
                lambda: any(
                    "✅" in words(m) for key, m in fake.messages.items() if key not in before
                ),
                timeout=BOUND,
            )
        assert second.returncode == 0, log.read_text()[-4000:]
        # Once: the DM's answer and the desk's are the same turn's.
        assert len(finals()) == 1
        assert bot.prompts("from the terminal") == 1
    assert processes_with_home_under(short_root / "agents") == []
