"""What chat transports remember of their chats: known conversations and their settings, and
the reactions the bot must replace later."""

from __future__ import annotations

import pytest

from robota.core.store import (
    AnchorTurnAttempt,
    FinishTurnAttempt,
    ForgetReaction,
    InsertTurnAttempt,
    NoteChat,
    RecordFinalDelivery,
    RecordProgressCard,
    RecordReaction,
    SetChatSetting,
    chat_context,
    chat_contexts,
    message_reactions,
    open_reader,
    turn_of_chat_message,
    unsettled_chat_turns,
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


def test_a_transports_unsettled_turns_are_those_its_ledger_has_no_answer_for(store, reader) -> None:
    write = store.client.write_sync
    for attempt_id, route in [
        ("a1", "feishu:chat_id:oc_1"),
        ("a2", "feishu:chat_id:oc_1"),
        ("a3", "feishu:chat_id:oc_1"),
        ("a4", "slack:C1"),
        ("a0", "feishu:chat_id:oc_1"),
    ]:
        at = 50.0 if attempt_id == "a0" else 100.0 + int(attempt_id[1])
        write(InsertTurnAttempt(attempt_id, "t1", route, f"prompt {attempt_id}", at=at), timeout=5)
    assert write(AnchorTurnAttempt("a1", "om_1"), timeout=5) is True
    assert write(AnchorTurnAttempt("nope", "om_1"), timeout=5) is False
    write(RecordProgressCard("a1:feishu", "om_card1", "h1"), timeout=5)
    write(FinishTurnAttempt("a2", "completed", final_text="done"), timeout=5)
    write(RecordFinalDelivery("a3:feishu", ("om_final",)), timeout=5)
    unsettled = unsettled_chat_turns(reader, "feishu:", ":feishu", since=60.0)
    assert [(a.id, a.anchor_message_id, a.status, card) for a, card in unsettled] == [
        ("a1", "om_1", "accepted", "om_card1"),
        ("a2", None, "completed", None),
    ]


def test_a_chat_message_names_its_turn_by_anchor_card_or_answer(store, reader) -> None:
    write = store.client.write_sync
    for attempt_id in ("a1", "a2", "a3"):
        write(InsertTurnAttempt(attempt_id, "t1", "feishu:chat_id:oc_1", "p", at=1.0), timeout=5)
    write(AnchorTurnAttempt("a1", "om_asked"), timeout=5)
    write(RecordProgressCard("a2:feishu", "om_card", "h"), timeout=5)
    write(RecordFinalDelivery("a3:feishu", ("om_part1", "om_part2")), timeout=5)
    write(RecordFinalDelivery("a1:slack", ("om_other",)), timeout=5)
    found = {
        message: getattr(turn_of_chat_message(reader, message, ":feishu"), "id", None)
        for message in ("om_asked", "om_card", "om_part2", "om_other", "om_nobody")
    }
    assert found == {
        "om_asked": "a1",
        "om_card": "a2",
        "om_part2": "a3",
        "om_other": None,  # another transport's answer
        "om_nobody": None,
    }
