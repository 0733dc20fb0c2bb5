"""The Feishu platform strategy and sink helpers: the final answer as ``post`` messages within
the request limit, the Stop button while a turn runs, Feishu's ``uuid`` from our keys."""

from __future__ import annotations

import json

from robota.core.events import TextDelta, TurnCompleted, TurnStarted
from robota.core.presentation import TurnView
from robota.transports.feishu._outbound import FINAL_BYTES, FeishuCards, idempotency_key


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
