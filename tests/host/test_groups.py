"""``task.newgroup`` and ``task.forkgroup``: the host drives a transport's ``GroupMaker`` in
its protocol's steps, around the engine's own ``NewTask``/``ForkTask``; without one, both are
refused with ``unsupported``. In-process, with a real ACP agent against the fake model; the
maker is a stand-in (no platform), offered the way a transport offers it."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from robota.core.control import HandlerError, HostRefused
from robota.core.engine import TaskSettings
from robota.core.frontend import GroupChat, GroupRefused
from robota.core.store import open_reader, route_binding
from robota.host import Host, TaskNewGroup
from robota.host._groups import group_settings, pick_maker

from ..support.host import ask, running_host, sandboxed
from ..support.model_server import FakeModel
from ..support.records import make_task


class StandInMaker:
    """Makes 'groups' whose routes are ``cli`` ones (a kind every host serves), and records
    what the host asked in which order."""

    def __init__(self, host: Host, *, refuse: str | None = None) -> None:
        self.host = host
        self.refuse = refuse
        self.steps: list[tuple[str, Any]] = []

    async def new_group(self, title: str) -> GroupChat:
        if self.refuse is not None:
            raise GroupRefused(self.refuse)
        number = len(self.steps) + 1
        self.steps.append(("new_group", title))
        return GroupChat(f"cli:group-{number}", f"oc_{number}", title)

    async def group_opened(self, group: GroupChat, task_id: str) -> None:
        # By now the task is current on the group's route, in the store.
        with closing(open_reader(self.host.engine.db_path)) as db:
            binding = route_binding(db, group.route_key)
        assert binding is not None and binding.current_task_id == task_id
        self.steps.append(("group_opened", (group.route_key, task_id)))


async def test_groups_go_through_the_offered_maker(short_root: Path, model: FakeModel) -> None:
    _, profile = sandboxed(short_root, model, "claude-agent-acp")
    makers: list[StandInMaker] = []

    def offer(host: Host) -> None:
        maker = StandInMaker(host)
        makers.append(maker)
        host.transports.makers["standin"] = maker

    async with running_host(profile, offer) as (socket, stopped):
        source = await ask(socket, "task.new", {"title": "source"})
        source_id = source["task"]["id"]
        await ask(socket, "task.send", {"task": source_id, "text": "remember pears", "wait": True})

        made = await ask(socket, "task.newgroup", {"task": source_id, "title": "team"})
        assert made["transport"] == "standin"
        assert made["chat"] == {"route": "cli:group-1", "chat_id": "oc_1", "title": "team"}
        assert made["source"]["id"] == source_id
        assert (made["task"]["agent"], made["task"]["cwd"]) == (
            source["task"]["agent"],
            source["task"]["cwd"],
        )
        assert made["task"]["id"] != source_id and made["task"]["forked_from"] is None

        forked = await ask(socket, "task.forkgroup", {"task": source_id})
        fork_id = forked["task"]["id"]
        assert forked["task"]["forked_from"] == source_id
        assert forked["chat"]["title"] == "source"  # the source's title names the group
        # The fork carries the conversation, and answers on the group's route.
        sent = await ask(socket, "task.send", {"task": fork_id, "text": "HISTORY", "wait": True})
        assert sent["route"] == forked["chat"]["route"]
        assert sent["turns"][-1]["final"].startswith("HISTORY: remember pears")

        assert makers[0].steps == [
            ("new_group", "team"),
            ("group_opened", ("cli:group-1", made["task"]["id"])),
            ("new_group", "source"),
            ("group_opened", (forked["chat"]["route"], fork_id)),
        ]

        # A fork with no completed turn to fork from: refused before any chat is made.
        fresh = await ask(socket, "task.new", {"title": "fresh"})
        with pytest.raises(HostRefused) as refused:
            await ask(socket, "task.forkgroup", {"task": fresh["task"]["id"]})
        assert "no completed turn to fork from" in refused.value.message
        assert len(makers[0].steps) == 4

        makers[0].refuse = "the bot may not create chats"
        with pytest.raises(HostRefused) as refused:
            await ask(socket, "task.newgroup", {})
        assert refused.value.code == "refused"
        assert "standin: the bot may not create chats" in refused.value.message

        await ask(socket, "server.stop")
        await stopped.wait()


async def test_without_a_maker_groups_are_unsupported(short_root: Path, model: FakeModel) -> None:
    _, profile = sandboxed(short_root, model, "codex-acp")
    async with running_host(profile) as (socket, stopped):
        for type_name, fields in (("task.newgroup", {}), ("task.forkgroup", {"task": "x"})):
            with pytest.raises(HostRefused) as refused:
                await ask(socket, type_name, fields)
            assert refused.value.code in ("unsupported", "not_found")
        with pytest.raises(HostRefused) as refused:
            await ask(socket, "task.newgroup", {})
        assert refused.value.code == "unsupported"
        assert "can create group chats" in refused.value.message
        await ask(socket, "server.stop")
        await stopped.wait()


SOURCE = make_task("ab12cd34ef56", title="src")


@pytest.mark.parametrize(
    ("request_", "source", "expected"),
    [
        (TaskNewGroup(), None, TaskSettings()),
        (TaskNewGroup(title="t", agent="claude"), None, TaskSettings(agent="claude", title="t")),
        # The source's agent, directory and settings by default.
        (TaskNewGroup(task=SOURCE.id), SOURCE, TaskSettings(agent="codex", cwd=Path("/w"))),
        # Another agent keeps the directory and takes its own default settings.
        (
            TaskNewGroup(task=SOURCE.id, agent="claude"),
            SOURCE,
            TaskSettings(agent="claude", cwd=Path("/w")),
        ),
        (
            TaskNewGroup(task=SOURCE.id, nodir=True),
            SOURCE,
            TaskSettings(agent="codex", nodir=True),
        ),
        (
            TaskNewGroup(task=SOURCE.id, cwd="/elsewhere"),
            SOURCE,
            TaskSettings(agent="codex", cwd=Path("/elsewhere")),
        ),
    ],
)
def test_group_settings(request_: TaskNewGroup, source: Any, expected: TaskSettings) -> None:
    assert group_settings(request_, source) == expected


@pytest.mark.parametrize(
    ("request_", "code"),
    [(TaskNewGroup(cwd="/a", nodir=True), "bad_request"), (TaskNewGroup(cwd="rel"), "bad_request")],
)
def test_group_settings_refused(request_: TaskNewGroup, code: str) -> None:
    with pytest.raises(HandlerError) as refused:
        group_settings(request_, None)
    assert refused.value.code == code


def test_pick_maker() -> None:
    one, two = object(), object()
    assert pick_maker({"a": one}, None) == ("a", one)  # type: ignore[dict-item]
    assert pick_maker({"a": one, "b": two}, "b") == ("b", two)  # type: ignore[dict-item]
    for makers, wanted, code in (
        ({}, None, "unsupported"),
        ({"a": one}, "b", "unsupported"),
        ({"a": one, "b": two}, None, "bad_request"),
    ):
        with pytest.raises(HandlerError) as refused:
            pick_maker(makers, wanted)  # type: ignore[arg-type]
        assert refused.value.code == code
