"""A team group on Feishu end to end: a real host process with a real agent against the fake
model, serving ``teams.web`` on the fake platform. Members and admins write in the group; the
door decides (refusals, confirmations, plain questions in plan mode), every request is answered
in its own thread (``reply_in_thread``), and the operator pauses and resumes the team from the
CLI while the host runs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
import trio

from robota.core.store import open_reader, team_row

from ...support.fake_feishu import FakePlatform, fake_platform
from ...support.feishu import (
    BOUND,
    OWNER,
    _buttons,
    click_event,
    configure,
    host_process,
    message_event,
)
from ...support.feishu_team import (
    ADMIN,
    Team,
    add_team,
    running_senders,
    store_path,
    team_event,
    team_host,
)
from ...support.host import sandboxed
from ...support.model_server import FakeModel
from ...support.processes import processes_with_home_under

MEMBER = "ou_member"

STORE_POLL = 0.05
"""How often a wait on the host's store looks again (no change of the fake announces it)."""


def held(robota: Any) -> int:
    with closing(open_reader(store_path(robota))) as db:
        row = team_row(db, "web")
    return 0 if row is None else row.held_count


async def test_a_team_group_decides_answers_in_threads_and_pauses(
    short_root: Path, model: FakeModel
) -> None:
    async with team_host(short_root, model) as (bot, robota, project):
        fake: FakePlatform = bot.fake
        await bot.noted("已上线")  # the online note went to the group

        # A member's /deploy (a risky name: admin only) is refused in its thread, never run.
        await fake.push_event(team_event(1, "/deploy prod", MEMBER))
        refusal = await bot.replied("om_user1", "管理员")
        assert refusal.in_thread
        assert bot.prompts("deploy prod") == 0

        # An admin's admin-confirm intent asks first, and runs after 确认 in the thread.
        await fake.push_event(team_event(2, "/release v2", ADMIN))
        question = await bot.replied("om_user2", "确认")
        assert question.in_thread and bot.prompts("release v2 now") == 0
        await fake.push_event(team_event(3, "确认", ADMIN, root="om_user2"))
        await bot.answered("om_user3")
        assert bot.prompts("release v2 now") == 1
        (final,) = bot.finals_for("om_user3")
        assert final.in_thread and "ECHO: release v2 now" in json.dumps(final.content)

        # A member's plain question is its own task in the team's project, in plan mode, and
        # its answer is in its thread.
        await fake.push_event(team_event(4, "what does the project do?", MEMBER))
        await bot.answered("om_user4")
        (answer,) = bot.finals_for("om_user4")
        assert answer.in_thread
        assert "ECHO: what does the project do?" in json.dumps(answer.content)
        assert all(card.in_thread for card in bot.cards_for("om_user4"))
        with closing(open_reader(store_path(robota))) as db:
            modes = [
                row["permission_mode"]
                for row in db.query(
                    "SELECT permission_mode FROM tasks WHERE cwd = ? ORDER BY created_at",
                    (str(project),),
                )
            ]
        # The admin's release: the task default; the member's question: memberPermissionMode.
        assert modes == ["default", "plan"], modes

        # Paused from the operator's terminal: the group is told; a message is claimed and
        # counted, gets no reaction and no turn; resuming says how many arrived.
        paused = await trio.to_thread.run_sync(robota.run, "team", "pause", "web")
        assert paused.returncode == 0, paused.stderr
        await bot.noted("已下线")
        await fake.push_event(team_event(5, "are you there?", MEMBER))
        await fake.wait_until(lambda: held(robota) == 1, timeout=BOUND, every=STORE_POLL)
        resumed = await trio.to_thread.run_sync(robota.run, "team", "resume", "web")
        assert resumed.returncode == 0, resumed.stderr
        assert "1 messages arrived" in resumed.stdout
        await bot.noted("暂停期间收到 1 条消息")
        # The agent has run by now: the online note names its protocol-reported version.
        await bot.noted("codex-acp v0.")
        assert fake.reactions_on("om_user5") == [] and bot.prompts("are you there?") == 0
        assert bot.replies_to("om_user5") == [] and bot.cards_for("om_user5") == []

        # The owner's ordinary chat still works beside the team.
        await fake.push_event(message_event(6, "hello owner", sender=OWNER))
        await bot.answered("om_user6")
    # The host stopped: the group was told it went offline (after the pause's note).
    assert sum("已下线" in note for note in bot.notes()) == 2, bot.notes()


@pytest.fixture
def slow_model() -> Iterator[FakeModel]:
    """``SLOW`` streams for minutes: the operator's turn runs until the test stops it."""
    with FakeModel(slow_deltas=4000, slow_delay=0.05) as fake:
        yield fake


async def test_the_operators_turn_on_the_project_holds_a_write_slot(
    short_root: Path, slow_model: FakeModel
) -> None:
    async with team_host(short_root, slow_model) as (bot, robota, project):
        fake: FakePlatform = bot.fake
        await bot.noted("已上线")
        new = await trio.to_thread.run_sync(
            robota.run, "task", "new", "--dir", str(project), "--json"
        )
        assert new.returncode == 0, new.stderr
        task = json.loads(new.stdout)["task"]["id"]
        sent = await trio.to_thread.run_sync(
            robota.run, "task", "send", task, "SLOW the operator's own work"
        )
        assert sent.returncode == 0, sent.stderr
        # The host sees the terminal's turn on the project and gives it a slot.
        await fake.wait_until(
            lambda: running_senders(robota) == ["operator"], timeout=BOUND, every=STORE_POLL
        )

        # A member's question only reads: it runs beside the operator.
        await fake.push_event(team_event(1, "what is going on?", MEMBER))
        await bot.answered("om_user1")
        # An admin's request writes the project: it waits for the operator, told once.
        await fake.push_event(team_event(2, "fix the build", ADMIN))
        await bot.replied("om_user2", "已排队")
        assert bot.prompts("fix the build") == 0

        stopped = await trio.to_thread.run_sync(robota.run, "task", "stop", task)
        assert stopped.returncode == 0, stopped.stderr
        # The operator's turn ended: the admin's request starts by itself.
        await bot.answered("om_user2")
        assert bot.prompts("fix the build") == 1
        assert running_senders(robota) == []


async def test_approvals_in_a_team_thread_are_answered_by_admins_only(
    short_root: Path, model: FakeModel
) -> None:
    async with team_host(short_root, model, ask=True) as (bot, _, project):
        fake: FakePlatform = bot.fake
        await fake.push_event(team_event(1, "SHELL: touch made.txt && echo made", ADMIN))
        await fake.wait_until(lambda: bot.cards_for("om_user1"), timeout=BOUND)
        card = bot.cards_for("om_user1")[0]
        assert card.in_thread
        await fake.wait_until(lambda: "Allow once" in _buttons(fake, card), timeout=BOUND)
        token = _buttons(fake, card)["Allow once"]

        member = await fake.push_event(click_event(1, token, card.message_id, operator=MEMBER))
        await fake.wait_until(lambda: any(a.header("message_id") == member for a in fake.acks))
        toast = fake.ack_answer(member)["data"]["toast"]
        assert toast["type"] == "error" and "管理员" in toast["content"]
        admin = await fake.push_event(click_event(2, token, card.message_id, operator=ADMIN))
        await fake.wait_until(lambda: any(a.header("message_id") == admin for a in fake.acks))
        assert fake.ack_answer(admin)["data"]["toast"]["type"] == "success"
        await bot.answered("om_user1")
        assert (project / "made.txt").exists(), "the admin's approval ran the command"


async def test_four_requests_at_three_slots_the_fourth_waits_and_then_runs(
    short_root: Path, slow_model: FakeModel
) -> None:
    async with team_host(short_root, slow_model) as (bot, _, _project):
        fake: FakePlatform = bot.fake
        await bot.noted("已上线")
        members = ["ou_m1", "ou_m2", "ou_m3", "ou_m4"]
        for n, member in enumerate(members, 1):
            await fake.push_event(team_event(n, f"SLOW question {n}", member))
        # Each request has its own lane: which one comes fourth is theirs to decide. Three run
        # (a card each, in its thread); the fourth is told it waits, and has no card.
        ids = [f"om_user{n}" for n in (1, 2, 3, 4)]

        def waiting() -> list[str]:
            return [i for i in ids if any("已排队" in m.content["text"] for m in bot.replies_to(i))]

        await fake.wait_until(waiting, timeout=BOUND)
        (queued,) = waiting()
        running = [i for i in ids if i != queued]
        for message_id in running:
            await fake.wait_until(lambda m=message_id: bot.cards_for(m), timeout=BOUND)
        assert bot.cards_for(queued) == []

        # An admin stops one (the Stop button of a team thread is an admin's): the fourth
        # starts by itself.
        card = bot.cards_for(running[0])[0]
        # Once the card was updated the service knows it as the thread's (a click on a card
        # it has not heard of yet is an ordinary chat's, the owner's only).
        await fake.wait_until(
            lambda: any(p.message_id == card.message_id for p in fake.patched), timeout=BOUND
        )
        await fake.wait_until(lambda: "Stop" in _buttons(fake, card), timeout=BOUND)
        stop = await fake.push_event(
            click_event(1, _buttons(fake, card)["Stop"], card.message_id, operator=ADMIN)
        )
        await fake.wait_until(lambda: any(a.header("message_id") == stop for a in fake.acks))
        assert fake.ack_answer(stop)["data"]["toast"]["type"] == "info"
        await fake.wait_until(lambda: bot.cards_for(queued), timeout=BOUND)
        n = queued.removeprefix("om_user")
        await fake.wait_until(lambda: bot.prompts(f"SLOW question {n}") == 1, timeout=BOUND)


async def test_a_host_killed_with_a_queue_of_two_runs_both_after_its_restart_once_in_order(
    short_root: Path, slow_model: FakeModel
) -> None:
    robota, profile = sandboxed(short_root, slow_model, "codex-acp")
    project = short_root / "project"
    project.mkdir()
    log = short_root / "host.log"
    async with fake_platform() as fake:
        configure(robota.home, fake.domain)
        add_team(robota.home, project, slots=1)
        bot = Team(fake, slow_model, profile.control_socket)
        async with host_process(robota, fake, log) as first:
            await bot.noted("已上线")
            await fake.push_event(team_event(1, "SLOW the first request", "ou_m1"))
            await fake.wait_until(lambda: bot.prompts("SLOW the first request") == 1)
            # One slot: the next two wait, each told once, in the order they came.
            await fake.push_event(team_event(2, "the second request", "ou_m2"))
            await bot.replied("om_user2", "已排队(第 1 位)")
            await fake.push_event(team_event(3, "the third request", "ou_m3"))
            await bot.replied("om_user3", "已排队(第 2 位)")
            first.kill()  # SIGKILL: nothing is said, nothing is flushed
            await first.wait()
        assert bot.prompts("the second request") == bot.prompts("the third request") == 0

        slow_model.slow_deltas = 20  # the first request's continued turn now ends soon
        async with host_process(robota, fake, log) as second:
            # The engine's recovery continues the first request; when it ends, the queue runs
            # by itself: the second, then the third, each in its own thread, once.
            await bot.answered("om_user2")
            await bot.answered("om_user3")
            asked = [
                r.prompt
                for r in slow_model.model_requests()
                if r.prompt in ("the second request", "the third request")
            ]
            assert asked == ["the second request", "the third request"]
            for message_id in ("om_user2", "om_user3"):
                (final,) = bot.finals_for(message_id)
                assert final.in_thread
                queued = [m for m in bot.replies_to(message_id) if "已排队" in m.content["text"]]
                assert len(queued) == 1  # told once, before the restart; never again
            await fake.wait_until(
                lambda: running_senders(robota) == [], timeout=BOUND, every=STORE_POLL
            )
        assert second.returncode == 0, log.read_text()[-4000:]
    assert processes_with_home_under(short_root / "agents") == []


async def test_a_members_plain_text_edit_is_not_made_in_plan_mode(
    short_root: Path, model: FakeModel
) -> None:
    """``memberPermissionMode: plan`` on codex-acp (which has no plan mode: robota picks its
    ``read-only``): a member's request that would write a file asks for approval, which a
    member cannot give, and the file is never written."""
    async with team_host(short_root, model) as (bot, _, project):
        fake: FakePlatform = bot.fake
        await bot.noted("已上线")
        await fake.push_event(team_event(1, "WRITE: made.txt written by a member", MEMBER))
        await fake.wait_until(lambda: bot.cards_for("om_user1"), timeout=BOUND)
        card = bot.cards_for("om_user1")[0]
        # The agent may not write on its own: it asks, and only an admin may answer.
        await fake.wait_until(lambda: "Allow once" in _buttons(fake, card), timeout=BOUND)
        assert not (project / "made.txt").exists()
        token = _buttons(fake, card)["Allow once"]
        member = await fake.push_event(click_event(1, token, card.message_id, operator=MEMBER))
        await fake.wait_until(lambda: any(a.header("message_id") == member for a in fake.acks))
        assert fake.ack_answer(member)["data"]["toast"]["type"] == "error"
        decline = _buttons(fake, card)["Decline"]
        admin = await fake.push_event(click_event(2, decline, card.message_id, operator=ADMIN))
        await fake.wait_until(lambda: any(a.header("message_id") == admin for a in fake.acks))
        assert fake.ack_answer(admin)["data"]["toast"]["type"] == "success"
        # The declined edit ends the turn: OnIt replaced, the card shows the edit declined.
        await fake.wait_until(
            lambda: fake.reactions_on("om_user1") and "OnIt" not in fake.reactions_on("om_user1"),
            timeout=BOUND,
        )
        await fake.wait_until(
            lambda: any("declined" in json.dumps(p.content) for p in fake.patched), timeout=BOUND
        )
        assert not (project / "made.txt").exists(), "a member's plain text wrote the project"
