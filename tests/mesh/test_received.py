"""Where an accepted file lands (robota.mesh._received): the kept name cannot leave the device's
folder, replace anything or follow a link; a clash gets a suffix; owner-only; the length then
the SHA-256 checked; a partial copy is never visible under a kept name and is removed on
failure and at start."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import pytest

from robota.mesh._received import PEERS, ReceiveFailed, Receiving, remove_partials

DEVICE = "AAAA-BBBB-CCCC-DDDD-EEEE-FFFF-GGGG-HHHH-IIII-JJJJ-KKKK-LLLL-MMMM"
BODY = b"the file's bytes\n" * 100


def receive(data: Path, name: str, body: bytes = BODY, offer: str = "0123abcd") -> Path:
    copy = Receiving(data, DEVICE, offer, size=len(body), sha256=hashlib.sha256(body).hexdigest())
    copy.write(body[:700])
    copy.write(body[700:])
    return copy.finish(name)


def test_a_file_is_kept_owner_only_in_the_devices_folder(tmp_path: Path) -> None:
    kept = receive(tmp_path, "report.txt")
    assert kept == tmp_path / PEERS / DEVICE / "report.txt"
    assert kept.read_bytes() == BODY
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / PEERS / DEVICE).stat().st_mode) == 0o700
    assert sorted(p.name for p in kept.parent.iterdir()) == ["report.txt"]


@pytest.mark.parametrize("hostile", ["../x", "../../x", "/tmp/x", "..\\x", "sub/../../x"])
def test_a_hostile_name_stays_in_the_folder(tmp_path: Path, hostile: str) -> None:
    kept = receive(tmp_path, hostile)
    assert kept == tmp_path / PEERS / DEVICE / "x"
    assert not (tmp_path / "x").exists() and not (tmp_path / PEERS / "x").exists()


def test_a_planted_link_is_never_followed_nor_replaced(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("mine")
    folder = tmp_path / PEERS / DEVICE
    folder.mkdir(parents=True)
    (folder / "notes.txt").symlink_to(outside)
    kept = receive(tmp_path, "notes.txt")
    assert kept == folder / "notes (2).txt"
    assert outside.read_text() == "mine"
    assert (folder / "notes.txt").is_symlink()


def test_a_planted_partial_link_makes_the_copy_fail_not_follow(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("mine")
    folder = tmp_path / PEERS / DEVICE
    folder.mkdir(parents=True)
    (folder / ".partial-0123abcd").symlink_to(outside)
    with pytest.raises(ReceiveFailed, match="cannot start"):
        receive(tmp_path, "a.txt")
    assert outside.read_text() == "mine"


def test_a_linked_device_folder_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / PEERS).mkdir()
    (tmp_path / PEERS / DEVICE).symlink_to(elsewhere)
    with pytest.raises(ReceiveFailed, match="not a folder of its own"):
        receive(tmp_path, "a.txt")
    assert list(elsewhere.iterdir()) == []


def test_a_clash_gets_a_suffix_and_replaces_nothing(tmp_path: Path) -> None:
    first = receive(tmp_path, "a.txt", b"one", offer="00000001")
    second = receive(tmp_path, "a.txt", b"two", offer="00000002")
    third = receive(tmp_path, "../a.txt", b"three", offer="00000003")
    assert [first.name, second.name, third.name] == ["a.txt", "a (2).txt", "a (3).txt"]
    assert [p.read_bytes() for p in (first, second, third)] == [b"one", b"two", b"three"]


@pytest.mark.parametrize(
    ("sent", "size", "digest_of", "message"),
    [
        (BODY[:-1], len(BODY), BODY, "bytes arrived"),
        (BODY[:-1] + b"X", len(BODY), BODY, "SHA-256"),
        (BODY + b"more", len(BODY), BODY, "more than"),
    ],
)
def test_a_copy_that_does_not_match_is_removed(
    tmp_path: Path, sent: bytes, size: int, digest_of: bytes, message: str
) -> None:
    copy = Receiving(
        tmp_path, DEVICE, "0123abcd", size=size, sha256=hashlib.sha256(digest_of).hexdigest()
    )
    with pytest.raises(ReceiveFailed, match=message):
        copy.write(sent)
        copy.finish("a.txt")
    assert list((tmp_path / PEERS / DEVICE).iterdir()) == []


def test_a_partial_copy_is_never_under_a_kept_name_and_is_removed_at_start(
    tmp_path: Path,
) -> None:
    copy = Receiving(tmp_path, DEVICE, "0123abcd", size=len(BODY), sha256="0" * 64)
    copy.write(BODY[:10])
    folder = tmp_path / PEERS / DEVICE
    assert [p.name for p in folder.iterdir()] == [".partial-0123abcd"]
    # The host was killed here; the next start removes what it left.
    os.close(copy._fd)
    (folder / "kept.txt").write_text("kept")
    assert remove_partials(tmp_path) == 1
    assert [p.name for p in folder.iterdir()] == ["kept.txt"]
    assert remove_partials(tmp_path / "nowhere") == 0


@pytest.mark.parametrize(
    ("device", "offer"), [("..", "0123abcd"), (DEVICE, "../x"), ("a/b", "0123abcd")]
)
def test_a_bad_device_or_offer_id_is_refused(tmp_path: Path, device: str, offer: str) -> None:
    with pytest.raises(ReceiveFailed, match="not an offer"):
        Receiving(tmp_path, device, offer, size=1, sha256="0" * 64)
