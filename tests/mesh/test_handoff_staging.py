"""The destination stages a handoff's payload on disk (issue 30 §3, robota.host._handoff_staging):
a folder of its own under the profile, owner-only; a partial file never under the staged name;
length then SHA-256 checked when the payload is read back; partial and orphaned files removed at
start. Through the host's driver on two real stores (``_handoff_pair``): a host that stops after
staging commits from its staged file when it starts again, into the folder its operator chose,
without asking the source; one that
stops between the rename and the ``staged`` transaction asks again from the first byte, the
orphan gone; a staged file changed on disk meanwhile abandons the handoff on both sides."""

from __future__ import annotations

import hashlib
import stat
from pathlib import Path

import pytest

from robota.core.store import (
    CommitHeldTask,
    StageHandoff,
    imported_transcript,
    staged_payloads,
    task_mobility,
)
from robota.host._handoff_staging import PARTIAL, STAGED, HandoffStaging, StagingFailed
from robota.host._mesh_handoff import MeshHandoffs

from ._handoff_pair import TURNS, Pair, Stopped, make_pair, phases, sealed_task

ID = "0123456789abcdef"
DATA = b'{"v":1}'


@pytest.fixture
def pair(tmp_path: Path) -> Pair:
    return make_pair(tmp_path)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _staged_once(tmp_path: Path, data: bytes = DATA) -> tuple[HandoffStaging, Path]:
    staging = HandoffStaging(tmp_path)
    staged = staging.begin(ID)
    staged.write(data[:3])
    assert [p.name for p in staging.folder.iterdir()] == [PARTIAL + ID]  # never the staged name
    staged.write(data[3:])
    return staging, staged.finish()


def test_a_payload_is_staged_owner_only_and_read_back_checked(tmp_path: Path) -> None:
    staging, path = _staged_once(tmp_path)
    assert path == staging.path_of(ID) == tmp_path / "handoffs" / (ID + STAGED)
    assert [p.name for p in staging.folder.iterdir()] == [ID + STAGED]
    assert (_mode(staging.folder), _mode(path)) == (0o700, 0o600)
    digest = hashlib.sha256(DATA).digest()
    assert staging.read(ID, str(path), length=len(DATA), sha256=digest) == DATA


@pytest.mark.parametrize(
    ("handoff", "where", "length", "sha256", "problem"),
    [
        (ID, "", len(DATA) + 1, hashlib.sha256(DATA).digest(), "length: 7 staged bytes"),
        (ID, "", len(DATA) - 1, hashlib.sha256(DATA).digest(), "length: 7 staged bytes"),
        (ID, "", len(DATA), hashlib.sha256(b"other").digest(), "digest:"),
        (ID, "/elsewhere/x.staged", len(DATA), hashlib.sha256(DATA).digest(), "recorded at"),
        ("fedcba9876543210", "", len(DATA), hashlib.sha256(DATA).digest(), "recorded at"),
        ("../x", "", len(DATA), hashlib.sha256(DATA).digest(), "not a handoff id"),
    ],
)
def test_a_staged_payload_that_does_not_match_is_refused_saying_why(
    tmp_path: Path, *, handoff: str, where: str, length: int, sha256: bytes, problem: str
) -> None:
    staging, path = _staged_once(tmp_path)
    with pytest.raises(StagingFailed, match=problem):
        staging.read(handoff, where or str(path), length=length, sha256=sha256)


def test_a_staged_payload_gone_is_refused(tmp_path: Path) -> None:
    staging, path = _staged_once(tmp_path)
    staging.discard(ID)
    assert list(staging.folder.iterdir()) == []
    with pytest.raises(StagingFailed, match="the staged payload is gone"):
        staging.read(ID, str(path), length=len(DATA), sha256=hashlib.sha256(DATA).digest())


def test_a_handoff_id_that_could_leave_the_folder_is_not_staged(tmp_path: Path) -> None:
    staging = HandoffStaging(tmp_path)
    for bad in ("../x", "ABCDEF0123456789", "0123", "0123456789abcdef/.."):
        with pytest.raises(StagingFailed, match="not a handoff id"):
            staging.begin(bad)
    assert list(staging.folder.iterdir()) == []


def test_the_sweep_keeps_only_what_a_staged_row_names(tmp_path: Path) -> None:
    staging, _path = _staged_once(tmp_path)
    orphan = staging.folder / ("fedcba9876543210" + STAGED)
    orphan.write_bytes(b"renamed, never recorded")
    (staging.folder / (PARTIAL + "aaaaaaaaaaaaaaaa")).write_bytes(b"half")
    assert staging.sweep({ID}) == 2
    assert [p.name for p in staging.folder.iterdir()] == [ID + STAGED]
    assert staging.sweep(set()) == 1
    assert list(staging.folder.iterdir()) == []
    assert HandoffStaging(tmp_path / "none").sweep(set()) == 0


def test_a_new_transfer_replaces_what_an_earlier_one_left(tmp_path: Path) -> None:
    staging, _path = _staged_once(tmp_path)
    again = staging.begin(ID)
    assert [p.name for p in staging.folder.iterdir()] == [PARTIAL + ID]
    again.abandon()
    assert list(staging.folder.iterdir()) == []


async def _accepted(pair: Pair, cwd: str | None = None) -> str:
    handoff = await pair.source.push("t-build", pair.dst, sealed_task())
    await pair.wire.pump()
    assert await pair.destination.answer(handoff, yes=True, cwd=cwd) == "transferring"
    return handoff


async def _stopped(pair: Pair, before: type) -> None:
    """The destination's host stops just before writing a ``before`` op; what was in flight
    is lost with it."""
    pair.dst_book.stop_before = before
    with pytest.raises(Stopped):
        await pair.wire.pump()  # HandoffAccepted, HandoffChunk, then the stop
    pair.wire.queue.clear()
    pair.dst_book.stop_before = None


async def _started(pair: Pair) -> MeshHandoffs:
    """The destination's host started again: a new driver on its store, resumed."""
    restarted = pair.restart("destination")
    await restarted.resume()
    return restarted


async def test_a_host_stopped_after_staging_commits_from_disk_without_asking_again(
    pair: Pair,
) -> None:
    handoff = await _accepted(pair, cwd="/here/p")
    await _stopped(pair, CommitHeldTask)
    assert await phases(pair, handoff) == ("transferring", "staged")
    staging = pair.destination.staging
    [path] = (await pair.dst_book.read(staged_payloads)).values()
    assert Path(path) == staging.path_of(handoff) and _mode(Path(path)) == 0o600

    await _started(pair)
    assert [type(frame).__name__ for _s, _p, frame in pair.wire.queue] == ["HandoffSaved"]
    assert await pair.wire.pump() == ["HandoffSaved", "HandoffReleased", "HandoffClosed"]
    assert await phases(pair, handoff) == ("committed", "committed")
    assert await pair.dst_book.read(lambda db: imported_transcript(db, "t-build")) == TURNS
    cwd = await pair.dst_book.read(
        lambda db: db.execute("SELECT cwd FROM tasks WHERE id = 't-build'").fetchone()[0]
    )
    assert cwd == "/here/p"  # the folder its operator chose, though the host stopped since
    assert list(staging.folder.iterdir()) == []  # the staged payload went with the commit
    assert "source let go t-build" in pair.happened


async def test_a_host_stopped_before_recording_staged_asks_again_from_the_first_byte(
    pair: Pair,
) -> None:
    handoff = await _accepted(pair)
    await _stopped(pair, StageHandoff)
    assert await phases(pair, handoff) == ("transferring", "transferring")
    staging = pair.destination.staging
    assert [p.name for p in staging.folder.iterdir()] == [handoff + STAGED]  # an orphan

    restarted = await _started(pair)
    assert list(staging.folder.iterdir()) == []
    assert pair.wire.queue == []
    await restarted.reconnected(pair.src)
    await pair.source.reconnected(pair.dst)
    assert (await pair.wire.pump())[:2] == ["HandoffAccepted", "HandoffChunk"]
    assert await phases(pair, handoff) == ("committed", "committed")
    assert await pair.dst_book.read(lambda db: imported_transcript(db, "t-build")) == TURNS


async def test_a_staged_payload_changed_on_disk_abandons_both_sides(pair: Pair) -> None:
    handoff = await _accepted(pair)
    await _stopped(pair, CommitHeldTask)
    path = pair.destination.staging.path_of(handoff)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 1
    path.write_bytes(bytes(data))

    restarted = await _started(pair)
    assert await pair.wire.pump() == ["HandoffAbandoned"]
    assert await phases(pair, handoff) == ("abandoned", "abandoned")
    assert "source unfroze t-build" in pair.happened
    assert await pair.src_book.read(lambda db: task_mobility(db, "t-build")) is None
    assert await pair.dst_book.read(lambda db: imported_transcript(db, "t-build")) is None
    assert list(restarted.staging.folder.iterdir()) == []
