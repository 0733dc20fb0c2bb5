"""Group channels' pure parts as tables (a channel's name by Slack's rules, the names tried
while taken, ``!newgroup`` / ``!forkgroup`` read), and ``SlackGroups`` against the fake Slack on
loopback: a private channel made and the person invited, a taken name tried again with a
suffix, every refusal a ``GroupRefused`` naming Slack's error (never a token), an invite
refused archiving the new channel."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import pytest

from robota.core.frontend import GroupChat, GroupRefused, welcome_text
from robota.transports.slack import SlackGroups, WebApi, channel_name, name_candidates
from robota.transports.slack._groups import slack_group_notes
from robota.transports.slack._inbound import GroupCommand, bang, group_command

from ...support.fake_slack import BOT_TOKEN, FakeSlack, fake_slack


@pytest.mark.parametrize(
    ("title", "name"),
    [
        ("Shop API", "shop-api"),
        ("shop-api", "shop-api"),
        ("  Shop   API  ", "shop-api"),
        ("a - b", "a-b"),
        ("Q3: plans & budget!", "q3-plans-budget"),
        ("snake_case_kept", "snake_case_kept"),
        ("Café résumé", "cafe-resume"),
        ("--edge--", "edge"),
        ("", "robota"),
        ("   ", "robota"),
        ("!!!", "robota"),
        ("项目", "robota"),
        ("x" * 100, "x" * 80),
        ("a" * 79 + " b", "a" * 79),  # cut at 80, and no hyphen left at the end
        ("Release 2.0", "release-2-0"),
    ],
)
def test_channel_name_follows_slacks_rules(title: str, name: str) -> None:
    assert channel_name(title) == name


@pytest.mark.parametrize(
    ("name", "tries", "candidates"),
    [
        ("shop-api", 4, ["shop-api", "shop-api-2", "shop-api-3", "shop-api-a1b2"]),
        ("shop-api", 2, ["shop-api", "shop-api-a1b2"]),
        ("x" * 80, 3, ["x" * 80, "x" * 78 + "-2", "x" * 75 + "-a1b2"]),
        ("y" * 77 + "-zz", 2, ["y" * 77 + "-zz", "y" * 75 + "-a1b2"]),
    ],
)
def test_name_candidates_fit_the_limit(name: str, tries: int, candidates: list[str]) -> None:
    made = name_candidates(name, "a1b2", tries)
    assert made == candidates
    assert all(len(n) <= 80 for n in made)


@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("!newgroup", GroupCommand(fork=False)),
        ("!newgroup Shop API", GroupCommand(fork=False, title="Shop API")),
        ("!ng  Shop   API", GroupCommand(fork=False, title="Shop API")),
        ("!forkgroup", GroupCommand(fork=True)),
        ("!FG try b", GroupCommand(fork=True, title="try b")),
        ("/newgroup x", GroupCommand(fork=False, title="x")),
        ("!newgroups", None),
        ("newgroup", None),
        ("please !newgroup", None),
        ("!new", None),
        ("", None),
    ],
)
def test_group_commands_are_read_after_bang(text: str, command: GroupCommand | None) -> None:
    names = {"newgroup", "ng", "forkgroup", "fg", "new"}
    assert group_command(bang(text, names)) == command


def test_the_notes_name_the_channel_and_the_welcome_the_task() -> None:
    notes = slack_group_notes("en")
    assert notes["made"].format(title="shop-api", chat="C0X") == (
        "Channel <#C0X> created: the task goes on there."
    )
    assert "频道" in slack_group_notes("zh_CN")["refused"]
    assert welcome_text(None, notes) == "New task  (?)"


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    async with fake_slack() as slack:
        yield slack


async def _nobody_greeted(group: GroupChat, task_id: str) -> None:
    raise AssertionError(f"{group} / {task_id}: not opened in these tests")


def groups(web: WebApi, invite: str | None = "U0ALICE") -> SlackGroups:
    return SlackGroups(web, invite=invite, opened=_nobody_greeted, salt=lambda: "beef")


def api(fake: FakeSlack) -> WebApi:
    return WebApi(api_url=fake.api_url, token=BOT_TOKEN, backoff=(0.0,))


async def test_a_private_channel_is_made_and_the_person_invited(fake: FakeSlack) -> None:
    async with api(fake) as web:
        maker = groups(web).inviting("U0BOB")
        made = await maker.new_group("Shop API")
    (channel,) = fake.channels.values()
    assert (channel["name"], channel["is_private"]) == ("shop-api", True)
    assert made == GroupChat(f"slack:{channel['id']}", channel["id"], "shop-api")
    assert maker.made == made
    assert fake.members[channel["id"]] == ["U0BOB"]


async def test_a_taken_name_is_tried_again_with_a_suffix(fake: FakeSlack) -> None:
    async with api(fake) as web:
        first = await groups(web).new_group("Shop API")
        second = await groups(web).new_group("shop api")
        fake.refuse("conversations.create", "name_taken", times=3)
        fourth = await groups(web).new_group("Shop API")
        fake.refuse("conversations.create", "name_taken", times=4)
        with pytest.raises(GroupRefused, match=r"#shop-api: name_taken \(tried 4 names\)"):
            await groups(web).new_group("Shop API")
    assert (first.title, second.title, fourth.title) == ("shop-api", "shop-api-2", "shop-api-beef")
    tried = [c.args["name"] for c in fake.calls_of("conversations.create")]
    assert tried[:5] == ["shop-api", "shop-api", "shop-api-2", "shop-api", "shop-api-2"]


async def test_an_invite_refused_archives_the_new_channel(
    fake: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    async with api(fake) as web:
        with pytest.raises(GroupRefused) as refused:
            await groups(web, "nobody").new_group("Shop API")
        assert str(refused.value) == "Slack refused to invite nobody to #shop-api: user_not_found"
        (channel,) = fake.channels.values()
        assert channel["is_archived"] and fake.members[channel["id"]] == []

        # The archive refused too: still the invite's refusal, the channel's fate logged.
        fake.refuse("conversations.invite", "restricted_action")
        fake.refuse("conversations.archive", "not_in_channel")
        with caplog.at_level(logging.WARNING), pytest.raises(GroupRefused, match="restricted"):
            await groups(web).new_group("second")
        assert "could not be archived" in caplog.text
        assert BOT_TOKEN not in caplog.text

        # Already in: the invite's purpose is met, the channel kept.
        fake.refuse("conversations.invite", "already_in_channel")
        kept = await groups(web).new_group("third")
        assert not fake.channels[kept.chat_id]["is_archived"]


async def test_every_refusal_names_slacks_error(fake: FakeSlack) -> None:
    async with api(fake) as web:
        with pytest.raises(GroupRefused, match=r"^nobody to invite: set transports.slack.userId$"):
            await groups(web, None).new_group("x")
        fake.refuse("conversations.create", "restricted_action")
        with pytest.raises(GroupRefused, match=r"create #x: restricted_action$"):
            await groups(web).new_group("x")
        fake.scripted["conversations.create"].append((200, {}, {"ok": True, "channel": {}}))
        with pytest.raises(GroupRefused, match="names no channel id"):
            await groups(web).new_group("x")
        fake.scripted["conversations.create"].append((200, {}, {"ok": True}))
        with pytest.raises(GroupRefused, match="names no channel id"):
            await groups(web).new_group("x")
        # A transient failure is not retried: a lost answer retried would make a second.
        fake.scripted["conversations.create"].append((500, {}, {"ok": False}))
        with pytest.raises(GroupRefused, match="HTTP 500"):
            await groups(web).new_group("x")
    assert fake.channels == {}
    assert len(fake.calls_of("conversations.create")) == 4
