"""A handoff's offer carries the task's title (issue 30 §3, the Contract's ``name`` a person
recognises): ``offer_title`` bounds it, ``seal`` puts it in the manifest, the offer frame carries
it through the codec, the grant signs it (an offer whose title was changed on the way is refused
as for another handoff), the store's manifest keeps it and ``mesh offers`` lists it as ``name``,
the task's id when it has none."""

from __future__ import annotations

from dataclasses import replace

import pytest

from robota.host._mesh_take import handoff_name
from robota.mesh import (
    MAX_TITLE,
    GrantRefused,
    channel_fingerprint,
    issue_grant,
    new_key,
    offer_title,
    public_bytes,
    verify_grant,
)
from robota.mesh._frames import BadFrame, decode, encode
from robota.mesh._handoff import Handoff
from robota.mesh._handoff_frames import HandoffOffer
from robota.mesh._handoff_wire import (
    OFFER_SECONDS,
    Unwired,
    manifest_document,
    manifest_of,
    offer_event,
    offer_frame,
)
from robota.mesh._manifest import Sealed, SourceCheckout, seal

NOW = 1_800_000_000
SOURCE = new_key()
CHANNEL = channel_fingerprint(b"dialler", b"answerer", b"nonces")
ID = "0123456789abcdef"


@pytest.mark.parametrize(
    ("title", "carried"),
    [
        ("fix the login page", "fix the login page"),
        ("  two\tspaces\n and a line  ", "two spaces and a line"),
        ("bell\x07 and delete\x7f", "bell and delete"),
        ("é 日本 🙂", "é 日本 🙂"),
        ("x" * (MAX_TITLE + 50), "x" * MAX_TITLE),
        ("", ""),
        (None, ""),
        (42, ""),
    ],
)
def test_an_offer_title_is_printable_and_bounded(title: object, carried: str) -> None:
    assert offer_title(title) == carried


def _sealed(title: str | None) -> Sealed:
    return seal(
        {"id": "t-build", "agent": "codex", "title": title},
        [{"prompt": "HELLO", "answer": "hi"}],
        [],
        SourceCheckout("/work/p"),
        busy=None,
    )


def _offer(title: str | None) -> HandoffOffer:
    sealed = _sealed(title)
    return offer_frame(
        SOURCE,
        user="USER",
        me="SRC",
        handoff=Handoff(ID, "t-build", "DST", "offered"),
        manifest=sealed.manifest,
        channel=CHANNEL,
        nonce=bytes(16),
        now=NOW,
        expires_at=NOW + OFFER_SECONDS,
    )


def _arrive(frame: object) -> object:
    assert isinstance(frame, HandoffOffer)
    return offer_event(
        frame,
        source_key=public_bytes(SOURCE),
        user="USER",
        me="DST",
        channel=CHANNEL,
        now=NOW + 5,
        nonce_seen=frozenset[bytes](),
    )


def test_the_title_is_sealed_offered_signed_and_kept() -> None:
    sealed = _sealed("fix\nthe login page")
    assert sealed.manifest.title == "fix the login page"
    frame = decode(encode(_offer("fix\nthe login page")))
    assert isinstance(frame, HandoffOffer)
    assert frame.title == "fix the login page"
    assert frame.manifest().title == "fix the login page"
    arrived = _arrive(frame)
    assert isinstance(arrived, tuple)
    assert arrived[1].title == "fix the login page"
    document = manifest_document(frame.manifest())
    assert document["title"] == "fix the login page"
    assert manifest_of(frame.length, frame.sha256, document) == frame.manifest()
    assert handoff_name(document, "t-build") == "fix the login page"


def test_an_offer_whose_title_was_changed_on_the_way_is_refused() -> None:
    frame = _offer("fix the login page")
    tampered = replace(frame, title="delete everything")
    result = _arrive(decode(encode(tampered)))
    assert isinstance(result, Unwired)
    assert "wrong-handoff" in result.reason and "title" in result.reason


def test_a_task_with_no_title_is_offered_under_its_id() -> None:
    frame = decode(encode(_offer(None)))
    assert isinstance(frame, HandoffOffer)
    assert frame.title == ""
    assert isinstance(_arrive(frame), tuple)
    document = manifest_document(frame.manifest())
    assert handoff_name(document, "t-build") == "t-build"


@pytest.mark.parametrize(
    ("manifest", "name"),
    [
        ({"title": "fix the login page"}, "fix the login page"),
        ({"title": ""}, "t-build"),
        ({"title": None}, "t-build"),
        ({"title": 3}, "t-build"),
        ({}, "t-build"),  # a row recorded before offers carried titles
    ],
)
def test_a_handoff_is_named_by_its_title_else_its_task(
    manifest: dict[str, object], name: str
) -> None:
    assert handoff_name(manifest, "t-build") == name


@pytest.mark.parametrize(
    ("title", "problem"),
    [
        ("x" * (MAX_TITLE + 1), "a title of at most"),
        ("two\nlines", "a title of at most"),
    ],
)
def test_an_offer_with_a_title_out_of_bounds_is_a_bad_frame(title: str, problem: str) -> None:
    frame = replace(_offer("ok"), title=title)
    with pytest.raises(BadFrame, match=problem):
        decode(encode(frame))


def test_a_grant_signs_its_title() -> None:
    claims: dict[str, object] = {
        "user": "USER",
        "source": "SRC",
        "destination": "DST",
        "handoff": ID,
        "session": "t-build",
        "nonce": bytes(16),
        "channel": CHANNEL,
        "issued_at": NOW,
        "expires_at": NOW + 300,
    }
    blob = issue_grant(SOURCE, title="the login page", **claims).blob  # type: ignore[arg-type]
    check: dict[str, object] = {
        "source_key": public_bytes(SOURCE),
        "user": "USER",
        "me": "DST",
        "handoff": ID,
        "session": "t-build",
        "channel": CHANNEL,
        "now": NOW + 1,
        "nonce_seen": frozenset[bytes](),
    }
    assert verify_grant(blob, title="the login page", **check).title == "the login page"  # type: ignore[arg-type]
    with pytest.raises(GrantRefused) as refused:
        verify_grant(blob, title="another page", **check)  # type: ignore[arg-type]
    assert refused.value.reason == "wrong-handoff"
    with pytest.raises(ValueError, match="printable"):
        issue_grant(SOURCE, title="x" * (MAX_TITLE + 1), **claims)  # type: ignore[arg-type]
