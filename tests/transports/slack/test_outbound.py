"""``restart_blocks``: a note updated in place gets new ``block_id`` values whenever its
content changes (Slack clients may keep a block's old state under an unchanged id); the sink's
final chunks, posted once with their keys in Slack's metadata and found again by them."""

from __future__ import annotations

from typing import Any

import pytest

from robota.core.cards import TransientSendError
from robota.transports.slack import WebApi
from robota.transports.slack._outbound import SlackSink, restart_blocks

from ...support.fake_slack import BOT_TOKEN, fake_slack


def ids(blocks: Any) -> list[str]:
    return [b["block_id"] for b in blocks]


BASE = ("The host restarted while this turn ran.", "Cancel", "tok-1")


@pytest.mark.parametrize(
    ("changed", "same_section", "same_action"),
    [
        (BASE, True, True),  # the same content: the same ids (no needless churn)
        (("The turn was cancelled.", "Cancel", "tok-1"), False, True),  # the settled text
        ((BASE[0], "Cancel", "tok-2"), True, False),  # a new token behind the button
        ((BASE[0], "Annuler", "tok-1"), True, False),  # another label
    ],
)
def test_block_ids_follow_the_content(
    changed: tuple[str, str, str], same_section: bool, same_action: bool
) -> None:
    before, after = ids(restart_blocks(*BASE)), ids(restart_blocks(*changed))
    assert len(before) == len(after) == 2
    assert (before[0] == after[0]) is same_section
    assert (before[1] == after[1]) is same_action
    assert all(len(i) <= 255 for i in before + after)


def test_a_settled_note_without_a_button_has_a_new_section_id() -> None:
    live = restart_blocks(BASE[0], "Cancel", "tok-1")
    settled = restart_blocks("Continued after the restart.", "", None)
    assert [b["type"] for b in settled] == ["section"]
    assert settled[0]["block_id"] != live[0]["block_id"]
    assert len(set(ids(live))) == 2, "the section and the button row differ in one message"


def test_another_action_id_is_another_block() -> None:
    a = restart_blocks(*BASE)
    b = restart_blocks(*BASE, action_id="queue_cancel")
    assert a[1]["block_id"] != b[1]["block_id"] and a[0]["block_id"] == b[0]["block_id"]


# -- the final's chunks: posted once, found again by their keys ---------------------------------


async def test_a_final_carries_its_keys_and_is_found_by_them_in_its_thread() -> None:
    async with fake_slack() as fake, WebApi(api_url=fake.api_url, token=BOT_TOKEN) as web:
        sink = SlackSink(web)
        sink.anchors["a1:slack"] = "1796015967.000001"
        keys = ["a1:slack:final:0", "a1:slack:final:1", "a1:slack:final:2"]
        chunks = [{"text": "one", "blocks": [{"type": "markdown", "text": "one"}]}] * 2
        sent = await sink.send_final("slack:D0ALICE", chunks, keys=keys[:2])
        await web.post_message(
            "D0ALICE", text="a reply in the thread", thread_ts="1796015967.000001"
        )
        found = await sink.sent_finals("slack:D0ALICE", keys)
        assert found == dict(zip(keys[:2], sent, strict=True))
        (replies,) = fake.calls_of("conversations.replies")
        assert replies.args["include_all_metadata"] == "true"
        # A turn whose answer goes to the channel itself is looked up in its history.
        await sink.send_final("slack:D0ALICE", chunks[:1], keys=["a2:slack:final:0"])
        assert list(await sink.sent_finals("slack:D0ALICE", ["a2:slack:final:0"])) == [
            "a2:slack:final:0"
        ]
        assert fake.calls_of("conversations.history")


async def test_a_final_with_no_answer_is_not_posted_again_by_the_client() -> None:
    """The card renderer asks ``sent_finals`` before its retry: Slack may have kept it."""
    async with (
        fake_slack() as fake,
        WebApi(api_url=fake.api_url, token=BOT_TOKEN, timeout=0.3, backoff=(0.01,)) as web,
    ):
        fake.hold_finals = True
        chunk = {"text": "one", "blocks": [{"type": "markdown", "text": "one"}]}
        with pytest.raises(TransientSendError):
            await SlackSink(web).send_final("slack:D0ALICE", [chunk], keys=["a1:slack:final:0"])
        assert len(fake.calls_of("chat.postMessage")) == 1
        assert fake.held == ["None"]
        found = await SlackSink(web).sent_finals("slack:D0ALICE", ["a1:slack:final:0"])
        assert list(found) == ["a1:slack:final:0"]
