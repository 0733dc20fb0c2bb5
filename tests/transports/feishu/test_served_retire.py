"""A quiet chat retired, end to end (issue 28 s.3): a real host with codex-acp against the fake
model and the fake Feishu, the quiet a chat is let go after shortened to a second
(``ROBOTA_TEST_RETIRE_AFTER``). The chat speaks, goes quiet until the engine forgot its route
and released its agent session, and speaks again: the agent remembers the first turn (the
resumed session's request to the model carries it) and the person sees what they always see."""

from __future__ import annotations

import json
from contextlib import closing
from pathlib import Path

import trio

from robota.core.frontend._chat_retire import RETIRE_ENV
from robota.core.store import open_reader, tasks

from ...support.fake_feishu import fake_platform
from ...support.feishu import BOUND, Served, configure, host_process, message_event
from ...support.feishu_team import store_path
from ...support.host import sandboxed
from ...support.model_server import FakeModel, extract, strip_context
from ...support.processes import processes_with_home_under

# ``model`` and ``short_root``: tests/transports/conftest.py


def _logged(root: Path, text: str) -> bool:
    return any(text in log.read_text() for log in root.rglob("robota*.log"))


def _task_ids(robota: object) -> list[str]:
    with closing(open_reader(store_path(robota))) as db:
        return [task.id for task in tasks(db)]


def _prompts_of_the_request_for(model: FakeModel, text: str) -> list[str]:
    """The user's prompts, oldest first, in the model request that asked about ``text``."""
    (request,) = [r for r in model.model_requests() if r.prompt == text]
    prompts = extract(request.api, request.body).prompts
    return [p for p in map(strip_context, prompts) if p]


async def test_a_chat_retired_while_quiet_continues_its_conversation(
    short_root: Path, model: FakeModel
) -> None:
    robota, profile = sandboxed(short_root, model, "codex-acp")
    robota.env[RETIRE_ENV] = "1"
    log = short_root / "host.log"
    async with fake_platform() as fake:
        configure(robota.home, fake.domain)
        async with host_process(robota, fake, log) as process:
            bot = Served(fake, model, profile.control_socket, robota)
            await fake.push_event(message_event(1, "remember the word kiwi"))
            await bot.answered("om_user1")

            # Let go by the transport after a second, forgotten by the engine once its route
            # passivated (5 s quiet): the log says so.
            with trio.fail_after(BOUND):
                while not _logged(short_root, "route feishu:chat_id:oc_p2p1 retired"):
                    await trio.sleep(0.2)

            # Its agent session too (the agent process runs on): the next turn resumes it.
            (task_id,) = await trio.to_thread.run_sync(_task_ids, robota)
            with trio.fail_after(BOUND):
                while not _logged(short_root, f"the session of {task_id} released"):
                    await trio.sleep(0.2)

            await fake.push_event(message_event(2, "which word did I ask you to remember"))
            await bot.answered("om_user2")
            prompts = _prompts_of_the_request_for(model, "which word did I ask you to remember")
            assert prompts == ["remember the word kiwi", "which word did I ask you to remember"]

            # What the person sees of the second message is what the first got: one card,
            # one final, DONE.
            assert len(bot.cards_for("om_user2")) == 1
            (final,) = bot.finals_for("om_user2")
            assert "ECHO: which word" in json.dumps(final.content, ensure_ascii=False)
            await fake.wait_until(lambda: fake.reactions_on("om_user2") == ["DONE"])
            assert bot.prompts("remember the word kiwi") == 1, "the first turn ran once"
    assert process.returncode == 0, log.read_text()[-4000:]
    assert processes_with_home_under(short_root / "agents") == []
