"""Peer conversations' decisions (robota.mesh._talk): counting, the limits, what runs, and the
frames they travel in."""

from __future__ import annotations

import dataclasses

import pytest

from robota.core.store import MeshConversation
from robota.mesh import (
    PeerEnd,
    PeerReply,
    PeerSay,
    RefuseMessage,
    ReplyGoes,
    ReplyHeld,
    RunMessage,
    TalkLimits,
    began,
    ended,
    may_reply,
    received,
    take,
)
from robota.mesh._frames import BadFrame, decode, encode
from robota.mesh._link import Deliver, LinkGossip, Seqs

PEER = "AAAA-BBBB-CCCC-DDDD-EEEE-FFFF-GGGG-HHHH-IIII-JJJJ-KKKK-LLLL-MMMM"


def conversation(hops: int, replies: int, state: str = "open") -> MeshConversation:
    return dataclasses.replace(
        began(PEER, "c1", task_id="t1", me=True), hops=hops, replies=replies, state=state
    )


@pytest.mark.parametrize(
    ("hops", "replies", "state", "limits", "expected"),
    [
        # (hops, replies) after the decision, or the limit that held the reply back
        (1, 0, "open", TalkLimits(8, 4), (2, 1)),
        (6, 3, "open", TalkLimits(8, 4), (7, 4)),
        (7, 3, "open", TalkLimits(8, 4), (8, 4)),
        (8, 3, "open", TalkLimits(8, 4), "max-hops"),
        (7, 4, "open", TalkLimits(8, 4), "max-replies"),
        (8, 4, "open", TalkLimits(8, 4), "max-hops"),  # both crossed: hops is named
        (1, 0, "open", TalkLimits(1, 4), "max-hops"),
        (1, 0, "open", TalkLimits(8, 0), "max-replies"),
        (2, 1, "stopped", TalkLimits(8, 4), None),
        (2, 1, "ended", TalkLimits(8, 4), None),
    ],
)
def test_a_reply_goes_only_within_both_limits(
    hops: int, replies: int, state: str, limits: TalkLimits, expected: object
) -> None:
    decision = may_reply(conversation(hops, replies, state), limits)
    if expected is None:
        assert decision is None
    elif isinstance(expected, tuple):
        assert isinstance(decision, ReplyGoes)
        assert (decision.conversation.hops, decision.conversation.replies) == expected
        assert decision.conversation.state == "open"
    else:
        assert isinstance(decision, ReplyHeld)
        assert decision.reason == expected
        assert decision.conversation.state == "stopped"
        assert decision.conversation.reason == expected
        assert (decision.conversation.hops, decision.conversation.replies) == (hops, replies)


@pytest.mark.parametrize(
    ("row", "frame", "expected"),
    [
        (None, PeerSay("c1", "hi", "", "t9"), ("run", 1)),
        (conversation(1, 0), PeerSay("c1", "hi again", "", ""), ("refuse", "refused")),
        (None, PeerReply("c1", "an answer"), ("refuse", "unknown-conversation")),
        (conversation(1, 0), PeerReply("c1", "an answer"), ("run", 2)),
        (conversation(7, 3), PeerReply("c1", "an answer"), ("run", 8)),
        (conversation(8, 4), PeerReply("c1", "past the bound"), ("refuse", "max-hops")),
        (conversation(3, 1, "stopped"), PeerReply("c1", "late"), ("refuse", "refused")),
        (conversation(3, 1, "ended"), PeerReply("c1", "late"), ("refuse", "refused")),
    ],
)
def test_what_a_peer_sends_runs_only_in_its_conversation_and_bounds(
    row: MeshConversation | None, frame: PeerSay | PeerReply, expected: tuple[str, object]
) -> None:
    decision = take(PEER, row, frame, TalkLimits(8, 4))
    if expected[0] == "run":
        assert isinstance(decision, RunMessage)
        assert decision.conversation.hops == expected[1]
        assert decision.conversation.peer == PEER
    else:
        assert isinstance(decision, RefuseMessage)
        assert decision.reason == expected[1]


def test_a_new_conversation_is_the_proven_peers_with_the_sender_task_as_attribution() -> None:
    decision = take(PEER, None, PeerSay("c1", "hi", "build", "t9"), TalkLimits())
    assert isinstance(decision, RunMessage)
    row = decision.conversation
    assert (row.peer, row.id, row.began, row.peer_task, row.task_id) == (
        PEER,
        "c1",
        "peer",
        "t9",
        None,
    )


def test_two_sides_counting_alone_stop_at_the_limits() -> None:
    """A conversation where each side always answers: the sides' own counts end it after
    max_hops messages, never more, with neither side trusting the other's count."""
    limits = TalkLimits(8, 4)
    asker = began(PEER, "c1", task_id="ta", me=True)
    answerer: MeshConversation | None = None
    frame: PeerSay | PeerReply = PeerSay("c1", "hi", "", "ta")
    carried, turn = 1, "answerer"
    while True:
        row = answerer if turn == "answerer" else asker
        taken = take(PEER, row, frame, limits)
        assert isinstance(taken, RunMessage)
        decision = may_reply(taken.conversation, limits)
        assert decision is not None
        if turn == "answerer":
            answerer = decision.conversation
        else:
            asker = decision.conversation
        if isinstance(decision, ReplyHeld):
            break
        carried += 1
        frame = PeerReply("c1", f"reply {carried}")
        turn = "asker" if turn == "answerer" else "answerer"
    assert carried == 8
    assert answerer is not None
    assert (asker.hops, asker.replies, answerer.hops, answerer.replies) == (8, 3, 8, 4)
    assert {asker.state, answerer.state} == {"open", "stopped"}


def test_the_first_reason_to_end_stays() -> None:
    row = ended(ended(conversation(2, 1), "no-answer"), "refused")
    assert (row.state, row.reason) == ("ended", "no-answer")
    stopped = conversation(2, 1, "stopped")
    assert ended(stopped, "refused") is stopped
    assert received(conversation(2, 1)).hops == 3


@pytest.mark.parametrize(
    "frame",
    [PeerSay("c1", "hi\nthere", "", ""), PeerReply("c1", "ok"), PeerEnd("c1", "max-hops")],
)
def test_conversation_frames_round_trip(frame: PeerSay | PeerReply | PeerEnd) -> None:
    assert decode(encode(frame)) == frame


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"type":"peer.end","conversation":"c1","reason":"bored"}', "no reason"),
        ('{"type":"peer.reply","conversation":"","text":"x"}', "conversation id"),
        ('{"type":"peer.reply","conversation":"' + "c" * 65 + '","text":"x"}', "conversation id"),
        ('{"type":"peer.reply","conversation":"c1","text":"' + "x" * 262145 + '"}', "bound"),
        ('{"type":"peer.reply","conversation":"c1","text":"x","hops":3}', "fields"),
        ('{"type":"peer.say","conversation":"c1","text":"x","task":""}', "fields"),
        ('{"type":"peer.say","conversation":"c1","text":1,"task":"","sender_task":""}', "text"),
    ],
)
def test_bad_conversation_frames_are_refused(text: str, message: str) -> None:
    with pytest.raises(BadFrame, match=message):
        decode(text)


def test_an_open_link_hands_conversation_frames_on_and_a_new_one_closes() -> None:
    gossip = LinkGossip("ME", "me", PEER, Seqs(1, 1), {}, {})
    closed = gossip.receive(PeerSay("c1", "hi", "", ""))
    assert gossip.state == "closed" and "expected hello" in str(closed)
    gossip = LinkGossip("ME", "me", PEER, Seqs(1, 1), {}, {})
    gossip.receive(gossip.hello().__class__(PEER, "peer", 1, 1, ()))
    for frame in (PeerSay("c1", "hi", "", ""), PeerReply("c1", "x"), PeerEnd("c1", "refused")):
        assert gossip.receive(frame) == [Deliver(frame)]
