"""The Feishu platform strategy and sink helpers: the final answer as ``post`` messages within
the request limit, the Stop button while a turn runs, Feishu's ``uuid`` from our keys (a
progress card's post carries it too, so a repeat after a crash is the same card)."""

from __future__ import annotations

import json

import pytest

from robota.core.events import TextDelta, TurnCompleted, TurnStarted
from robota.core.presentation import TurnView
from robota.transports.feishu import RestClient
from robota.transports.feishu._outbound import (
    FINAL_BYTES,
    FeishuCards,
    FeishuSink,
    Messenger,
    idempotency_key,
)

from ...support.fake_feishu import APP_ID, APP_SECRET, fake_platform


def test_a_long_answer_is_split_into_posts_within_the_limit() -> None:
    text = "\n\n".join(f"paragraph {n}: " + "词" * 900 for n in range(40))
    chunks = FeishuCards(agent="codex").final_chunks(text)
    assert len(chunks) > 1
    for chunk in chunks:
        (node,) = chunk["zh_cn"]["content"][0]
        assert node["tag"] == "md" and len(node["text"].encode()) <= FINAL_BYTES
        body = json.dumps({"content": json.dumps(chunk, ensure_ascii=False)}, ensure_ascii=False)
        assert len(body.encode()) <= 30 * 1024
    joined = "\n\n".join(c["zh_cn"]["content"][0][0]["text"] for c in chunks)
    assert joined.split() == text.split()
    assert FeishuCards(agent="codex").final_chunks("  \n") == []


def stop_buttons(card: dict[str, object]) -> list[str]:
    body = card["body"]
    assert isinstance(body, dict)
    return [
        e["behaviors"][0]["value"]["token"]
        for e in body["elements"]
        if e.get("element_id") == "turn_stop"
    ]


def test_the_stop_button_shows_while_the_turn_runs_only() -> None:
    cards = FeishuCards(agent="codex", stop_token="tok")
    view = TurnView()
    view.apply(TurnStarted("t1"))
    view.apply(TextDelta("i1", "working on it"))
    assert stop_buttons(cards.render(view, elapsed=1.0, approval_tokens={})) == ["tok"]
    view.apply(TurnCompleted("t1", "completed", final_text="done"))
    assert stop_buttons(cards.render(view, elapsed=2.0, approval_tokens={})) == []
    plain = FeishuCards(agent="codex")
    assert stop_buttons(plain.render(TurnView(), elapsed=None, approval_tokens={})) == []


def test_the_idempotency_key_is_stable_and_short() -> None:
    key = idempotency_key("a" * 40 + ":feishu:final:0")
    assert key == idempotency_key("a" * 40 + ":feishu:final:0") and len(key) <= 50
    assert key != idempotency_key("a" * 40 + ":feishu:final:1")


@pytest.mark.parametrize("anchored", [True, False])
async def test_a_cards_post_carries_its_key_as_uuid_so_a_repeat_is_the_same_card(
    anchored: bool,
) -> None:
    """A card claimed and never recorded (its run killed after Feishu made it) is sent again
    under the same key: the platform answers with the card it made, never a second one, as
    a reply to the person's message or as a message to the chat (a recovered turn's)."""
    async with (
        fake_platform() as fake,
        RestClient(domain=fake.domain, app_id=APP_ID, app_secret=APP_SECRET) as rest,
    ):
        sink = FeishuSink(Messenger(rest))
        if anchored:
            sink.anchors["a1:feishu"] = "om_user1"
        card = {"schema": "2.0", "body": {"elements": []}}
        first = await sink.send_card("feishu:chat_id:oc_p2p1", card, key="a1:feishu:card")
        again = await sink.send_card("feishu:chat_id:oc_p2p1", card, key="a1:feishu:card")
        other = await sink.send_card("feishu:chat_id:oc_p2p1", card, key="a2:feishu:card")
    assert first == again != other
    assert [m.uuid for m in fake.messages] == [
        idempotency_key("a1:feishu:card"),
        idempotency_key("a2:feishu:card"),
    ]
    assert [m.reply_to for m in fake.messages] == (["om_user1", None] if anchored else [None] * 2)
