"""File offers' decisions (robota.mesh._offers): what an agent may offer, the name a received
file is kept under, and an offer's phases."""

from __future__ import annotations

from pathlib import PurePosixPath

import pytest

from robota.mesh._frames import BadFrame, decode, encode
from robota.mesh._offers import (
    MAX_NAME_BYTES,
    FileChunk,
    OfferEvent,
    OfferOutcome,
    OfferPhase,
    PeerOffer,
    advance,
    clash_name,
    kept_name,
    offer_refusal,
    secret_reason,
)

TASK = PurePosixPath("/work/project")
PROFILE = PurePosixPath("/home/me/.config/robota")


@pytest.mark.parametrize(
    ("relative", "secret"),
    [
        ("notes.md", None),
        ("src/app.py", None),
        ("report.pdf", None),
        ("envoy.yaml", None),
        ("keys.md", None),
        (".env", ".env*"),
        (".env.local", ".env*"),
        ("deploy/.ENV.production", ".env*"),
        ("id_rsa", "id_*"),
        ("id_ed25519.pub", "id_*"),
        (".netrc", "credentials"),
        (".npmrc", "credentials"),
        (".pypirc", "credentials"),
        (".git-credentials", "credentials"),
        ("server.pem", ".pem"),
        ("tls/server.key", ".key"),
        ("ca.CRT", ".crt"),
        ("bundle.p12", ".p12"),
        ("store.jks", ".jks"),
        ("backup.tar.gpg", ".gpg"),
        (".ssh/config", ".ssh"),
        ("home/.gnupg/pubring.kbx", ".gnupg"),
        (".aws/credentials", ".aws"),
    ],
)
def test_what_looks_like_a_secret(relative: str, secret: str | None) -> None:
    reason = secret_reason(PurePosixPath(relative))
    if secret is None:
        assert reason is None
    else:
        assert reason is not None and secret in reason


@pytest.mark.parametrize(
    ("path", "operator", "task_dir", "refused"),
    [
        ("/work/project/notes.md", False, TASK, None),
        ("/work/project/sub/data.csv", False, TASK, None),
        ("/work/project/.env", False, TASK, ".env*"),
        ("/work/project/certs/site.pem", False, TASK, ".pem"),
        ("/work/other/notes.md", False, TASK, "outside the task's folder"),
        ("/work/projectx/notes.md", False, TASK, "outside the task's folder"),
        ("/etc/passwd", False, TASK, "outside the task's folder"),
        ("/work/project/notes.md", False, None, "no task was named"),
        ("/home/me/.config/robota/config.yaml", False, PurePosixPath("/home/me"), "profile"),
        ("/etc/passwd", True, None, None),
        ("/work/project/.env", True, TASK, None),
        ("/home/me/.config/robota/config.yaml", True, None, None),
    ],
)
def test_an_agent_offers_only_non_secret_files_of_its_tasks_folder(
    path: str, operator: bool, task_dir: PurePosixPath | None, refused: str | None
) -> None:
    reason = offer_refusal(
        PurePosixPath(path), operator=operator, task_dir=task_dir, profile=PROFILE
    )
    if refused is None:
        assert reason is None
    else:
        assert reason is not None and refused in reason


@pytest.mark.parametrize(
    ("offered", "kept"),
    [
        ("report.pdf", "report.pdf"),
        ("../x", "x"),
        ("../../etc/passwd", "passwd"),
        ("/etc/shadow", "shadow"),
        ("..\\..\\win.ini", "win.ini"),
        ("..", "file"),
        (".", "file"),
        ("", "file"),
        ("dir/", "file"),
        ("a\x00b\nc.txt", "abc.txt"),
        (".partial-1234", "_.partial-1234"),
        (".bashrc", ".bashrc"),
        ("  spaced.txt  ", "spaced.txt"),
        ("e\u0301.txt", "\u00e9.txt"),
    ],
)
def test_the_name_a_received_file_is_kept_under(offered: str, kept: str) -> None:
    assert kept_name(offered) == kept


def test_a_long_name_is_shortened_keeping_its_extension() -> None:
    kept = kept_name("x" * 300 + ".tar")
    assert kept.endswith(".tar") and len(kept.encode()) == MAX_NAME_BYTES
    assert len(kept_name("\u00e9" * 300).encode()) <= MAX_NAME_BYTES


@pytest.mark.parametrize(
    ("name", "attempt", "expected"),
    [
        ("report.pdf", 0, "report.pdf"),
        ("report.pdf", 1, "report (2).pdf"),
        ("report.pdf", 4, "report (5).pdf"),
        ("README", 1, "README (2)"),
        (".bashrc", 1, ".bashrc (2)"),
        ("a.tar.gz", 1, "a.tar (2).gz"),
    ],
)
def test_a_clash_gets_a_suffix(name: str, attempt: int, expected: str) -> None:
    assert clash_name(name, attempt) == expected


def test_a_clash_suffix_keeps_a_long_name_within_the_bound() -> None:
    assert len(clash_name("y" * MAX_NAME_BYTES, 12).encode()) <= MAX_NAME_BYTES


@pytest.mark.parametrize(
    ("phase", "event", "now", "after"),
    [
        ("offered", "accept", 10.0, "accepted"),
        ("offered", "decline", 10.0, "declined"),
        ("offered", "expire", 700.0, "expired"),
        ("offered", "accept", 600.0, None),  # too late: it can only expire
        ("offered", "decline", 601.0, None),
        ("offered", "complete", 10.0, None),
        ("accepted", "complete", 10.0, "done"),
        ("accepted", "fail", 10.0, "failed"),
        ("accepted", "complete", 900.0, "done"),  # a transfer under way may end after the ttl
        ("accepted", "accept", 10.0, None),
        ("accepted", "decline", 10.0, None),
        ("done", "fail", 10.0, None),
        ("failed", "complete", 10.0, None),
        ("declined", "accept", 10.0, None),
        ("expired", "accept", 10.0, None),
    ],
)
def test_an_offers_phases(
    phase: OfferPhase, event: OfferEvent, now: float, after: OfferPhase | None
) -> None:
    assert advance(phase, event, now=now, expires_at=600.0) == after


@pytest.mark.parametrize(
    "frame",
    [
        PeerOffer("0123abcd", "a.txt", 3, "ab" * 32, ""),
        PeerOffer("0123abcd", "../x", 0, "ab" * 32, "build"),
        OfferOutcome("0123abcd", "done", "a.txt"),
        FileChunk("0123abcd", 262144, b"\x00\xff" * 10),
    ],
)
def test_offer_frames_round_trip(frame: PeerOffer | OfferOutcome | FileChunk) -> None:
    assert decode(encode(frame)) == frame


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        (PeerOffer("0123ABCD", "a", 1, "ab" * 32, ""), "offer id"),
        (PeerOffer("0123", "a", 1, "ab" * 32, ""), "offer id"),
        (PeerOffer("../../x0", "a", 1, "ab" * 32, ""), "offer id"),
        (PeerOffer("0123abcd", "a", 1, "AB" * 32, ""), "sha256"),
        (PeerOffer("0123abcd", "a", 1, "ab" * 31, ""), "sha256"),
        (PeerOffer("0123abcd", "x" * 1025, 1, "ab" * 32, ""), "name"),
        (OfferOutcome("0123abcd", "stolen", ""), "no outcome"),
        (FileChunk("0123abcd", 0, b"x" * (256 * 1024 + 1)), "over"),
    ],
)
def test_bad_offer_frames_are_refused(
    frame: PeerOffer | OfferOutcome | FileChunk, message: str
) -> None:
    with pytest.raises(BadFrame, match=message):
        decode(encode(frame))
