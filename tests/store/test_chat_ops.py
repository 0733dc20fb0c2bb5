"""What chat transports remember of their chats: known conversations and their settings, and
the reactions the bot must replace later."""

from __future__ import annotations

import pytest

from robota.core.store import (
    ForgetReaction,
    NoteChat,
    RecordReaction,
    SetChatSetting,
    chat_context,
    chat_contexts,
    message_reactions,
    open_reader,
)


@pytest.fixture
def reader(store):
    db = open_reader(store.path)
    yield db
    db.close()


def test_chats_are_noted_and_keep_their_settings(store, reader) -> None:
    write = store.client.write_sync
    write(NoteChat("feishu:chat_id:oc_1", "feishu:p2p", at=1.0), timeout=5)
    write(
        SetChatSetting("feishu:chat_id:oc_2", "feishu:group", "mention_only", True, at=2.0),
        timeout=5,
    )
    write(NoteChat("feishu:chat_id:oc_2", "feishu:group", "Team", at=3.0), timeout=5)
    write(NoteChat("slack:C1", "slack:channel", at=4.0), timeout=5)
    group = chat_context(reader, "feishu:chat_id:oc_2")
    assert group is not None
    assert (group.kind, group.title, group.settings, group.updated_at) == (
        "feishu:group",
        "Team",
        {"mention_only": True},
        3.0,
    )
    write(SetChatSetting("feishu:chat_id:oc_2", "feishu:group", "mention_only", False), timeout=5)
    write(SetChatSetting("feishu:chat_id:oc_2", "feishu:group", "other", "x"), timeout=5)
    group = chat_context(reader, "feishu:chat_id:oc_2")
    assert group is not None and group.settings == {"mention_only": False, "other": "x"}
    assert group.title == "Team", "a setting never clears the title"
    listed = [c.chat_id for c in chat_contexts(reader, "feishu:")]
    assert listed[-1] == "feishu:chat_id:oc_1" and "slack:C1" not in listed
    assert chat_context(reader, "feishu:chat_id:nope") is None


def test_reactions_are_recorded_and_forgotten(store, reader) -> None:
    write = store.client.write_sync
    write(RecordReaction("om_1", "OnIt", "r1"), timeout=5)
    write(RecordReaction("om_1", "DONE", "r2"), timeout=5)
    assert message_reactions(reader, "om_1") == {"OnIt": "r1", "DONE": "r2"}
    assert write(ForgetReaction("om_1", "OnIt"), timeout=5) is True
    assert write(ForgetReaction("om_1", "OnIt"), timeout=5) is False
    assert message_reactions(reader, "om_1") == {"DONE": "r2"}
