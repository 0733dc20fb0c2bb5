"""``restart_blocks``: a note updated in place gets new ``block_id`` values whenever its
content changes (Slack clients may keep a block's old state under an unchanged id); the sink's
progress cards and final chunks, posted once with their keys in Slack's metadata and found
again by them, read from the send's claim on (less the clock skew) within a bounded number of
pages."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from robota.core.cards import CardLookup, FinalLookup, TransientSendError
from robota.transports.slack import WebApi
from robota.transports.slack._outbound import (
    CLOCK_SKEW,
    LOOKUP_PAGES,
    SlackSink,
    restart_blocks,
)

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


# -- the progress card: posted once with its key, found again by it -------------------------------


async def test_a_card_carries_its_key_and_is_found_by_it_not_posted_twice() -> None:
    """A card whose post Slack kept and whose answer never came (the host killed before its
    record, or the answer lost) is found by its key and adopted: no second progress message."""
    async with (
        fake_slack() as fake,
        WebApi(api_url=fake.api_url, token=BOT_TOKEN, timeout=0.3, backoff=(0.01,)) as web,
    ):
        sink = SlackSink(web)
        assert isinstance(sink, CardLookup) and isinstance(sink, FinalLookup)
        sink.anchors["a1:slack"] = "1796015967.000001"
        claimed = time.time()
        card = await sink.send_card("slack:D0ALICE", {"text": "working"}, key="a1:slack:card")
        (post,) = fake.calls_of("chat.postMessage")
        assert json_of(post.args["metadata"]) == {
            "event_type": "robota_card",
            "event_payload": {"key": "a1:slack:card"},
        }
        await sink.send_final(
            "slack:D0ALICE", [{"text": "done", "blocks": []}], keys=["a1:slack:final:0"]
        )
        assert await sink.sent_card("slack:D0ALICE", "a1:slack:card", since=claimed) == card
        assert await sink.sent_card("slack:D0ALICE", "a2:slack:card", since=claimed) is None
        # Its post taken and never answered: not made again by the client itself.
        fake.scripted["chat.postMessage"].append((200, {}, Ellipsis))
        with pytest.raises(TransientSendError):
            await sink.send_card("slack:D0ALICE", {"text": "working"}, key="a3:slack:card")
        assert len(fake.calls_of("chat.postMessage")) == 3


@pytest.mark.parametrize(
    ("since", "found"),
    [
        (None, True),  # no claim time: the whole thread
        (-1.0, True),  # claimed, then posted
        (0.0, True),  # posted at the claim
        (CLOCK_SKEW - 5, True),  # the host's clock ahead of Slack's, within the skew
        (CLOCK_SKEW + 5, False),  # a claim later than the post by more than the skew
    ],
)
async def test_a_lookup_reads_from_the_claim_less_the_skew(
    since: float | None, found: bool
) -> None:
    """``since`` is given as seconds after the post here (the claim's time on the host's
    clock); the lookup asks Slack for messages after ``since - CLOCK_SKEW``."""
    async with fake_slack() as fake, WebApi(api_url=fake.api_url, token=BOT_TOKEN) as web:
        sink = SlackSink(web)
        sink.anchors["a1:slack"] = "1796015967.000001"
        card = await sink.send_card("slack:D0ALICE", {"text": "working"}, key="a1:slack:card")
        at = float(card.partition(":")[2])
        claim = None if since is None else at + since
        expected = card if found else None
        assert await sink.sent_card("slack:D0ALICE", "a1:slack:card", since=claim) == expected
        (read,) = fake.calls_of("conversations.replies")
        if claim is None:
            assert "oldest" not in read.args
        else:
            assert float(read.args["oldest"]) == pytest.approx(claim - CLOCK_SKEW, abs=1e-6)


async def test_a_long_thread_is_read_from_the_claim_in_a_bounded_number_of_pages() -> None:
    """Hundreds of replies before the claim are not read; without it, at most LOOKUP_PAGES
    pages (a key past them is not found: the card renderer posts it, as for a platform that
    cannot tell)."""
    async with fake_slack() as fake, WebApi(api_url=fake.api_url, token=BOT_TOKEN) as web:
        sink = SlackSink(web)
        sink.anchors["a1:slack"] = "1796015967.000001"
        for n in range(700):
            fake.messages["D0ALICE", f"1796000000.{n:06d}"] = {
                "type": "message",
                "text": f"old {n}",
                "ts": f"1796000000.{n:06d}",
                "thread_ts": "1796015967.000001",
            }
        claimed = time.time()
        keys = [f"a1:slack:final:{n}" for n in range(2)]
        chunks = [{"text": str(n), "blocks": []} for n in range(2)]
        sent = await sink.send_final("slack:D0ALICE", chunks, keys=keys)
        assert await sink.sent_finals("slack:D0ALICE", keys, since=claimed) == dict(
            zip(keys, sent, strict=True)
        )
        assert fake.pages_read == 1, "the 700 older replies were not read"
        fake.pages_read = 0
        assert list(await sink.sent_finals("slack:D0ALICE", keys)) == [], "past the pages"
        assert fake.pages_read == LOOKUP_PAGES


def json_of(value: Any) -> Any:
    """A form field carrying JSON, parsed."""
    return json.loads(value) if isinstance(value, str) else value
