"""Background sessions' registrations: parsing, liveness by pid plus process start time, the
listing's state decision and its content-free row (tables, no processes but this one's)."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from robota.core.control import (
    BadRegistration,
    Registration,
    list_state,
    listing_row,
    own_process_start,
    owner_verified,
    parse_registration,
    process_start_ticks,
    read_registrations,
)

GOOD = Registration(
    id="0123456789ab",
    name="alpha",
    pid=os.getpid(),
    process_start=own_process_start(),
    generation="f" * 32,
    started_at="2026-12-02T11:00:00+00:00",
    agent="codex-acp",
    daemon=False,
    restricted=False,
    workspace="/somewhere/project",
    socket="/somewhere/run/sessions/0123456789ab.sock",
)


def test_a_registration_round_trips() -> None:
    assert parse_registration(GOOD.to_json()) == GOOD


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"pid": "12"}, "field 'pid' must be int, found str"),
        ({"daemon": 1}, "field 'daemon' must be bool, found int"),
        ({"pid": True}, "field 'pid' must be int, found bool"),
        ({"id": "../../etc"}, "field 'id' is not a session id"),
        ({"generation": ""}, "out of range"),
        ({"pid": 0}, "out of range"),
    ],
)
def test_a_damaged_registration_names_what_is_wrong(
    change: dict[str, object], message: str
) -> None:
    obj = {**json.loads(GOOD.to_json()), **change}
    with pytest.raises(BadRegistration, match=message):
        parse_registration(json.dumps(obj))


def test_not_json_and_missing_fields_are_refused() -> None:
    with pytest.raises(BadRegistration, match="not JSON"):
        parse_registration("{")
    with pytest.raises(BadRegistration, match="not a JSON object"):
        parse_registration("[]")
    obj = json.loads(GOOD.to_json())
    del obj["generation"]
    with pytest.raises(BadRegistration, match="found nothing"):
        parse_registration(json.dumps(obj))


def test_the_owner_is_verified_by_pid_and_start_time() -> None:
    assert owner_verified(GOOD)
    # Same pid, another start (a recycled pid): not verified.
    assert not owner_verified(dataclasses.replace(GOOD, process_start=GOOD.process_start + 1))
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)  # fmt: skip
    gone = int(child.stdout)
    assert process_start_ticks(gone) is None
    assert not owner_verified(dataclasses.replace(GOOD, pid=gone))


@pytest.mark.parametrize(
    ("verified", "reported", "state"),
    [
        (True, "idle", "idle"),
        (True, "working", "working"),
        (True, "needs-input", "needs-input"),
        (True, "stopped", "stopped"),
        (True, None, "unknown"),  # a missing control response
        (True, "unknown", "unknown"),  # starting or stopping
        (True, "dancing", "unknown"),  # an answer outside the vocabulary
        (True, 3, "unknown"),
        (False, "idle", "unknown"),  # an unverified owner's word is not taken
        (False, None, "unknown"),
    ],
)
def test_the_listed_state_is_never_a_guess(verified: bool, reported: object, state: str) -> None:
    assert list_state(verified=verified, reported=reported) == state


def test_a_row_is_content_free() -> None:
    row = listing_row(GOOD, session_id=GOOD.id, state="idle")
    assert set(row) == {"id", "name", "state", "started_at", "agent", "daemon"}
    text = json.dumps(row)
    for private in (GOOD.generation, GOOD.workspace, GOOD.socket, str(GOOD.pid)):
        assert private not in text
    damaged = listing_row(None, session_id="0123456789ab", state="idle", problem="not JSON")
    assert (damaged["state"], damaged["unavailable"]) == ("unknown", "not JSON")


def test_reading_the_directory_keeps_damaged_registrations(tmp_path: Path) -> None:
    (tmp_path / f"{GOOD.id}.json").write_bytes(GOOD.to_json())
    (tmp_path / "aaaaaaaaaaaa.json").write_text("{")
    (tmp_path / "bbbbbbbbbbbb.json").write_bytes(GOOD.to_json())  # its id is not its name
    (tmp_path / f"{GOOD.id}.sock").write_text("")  # other files are not registrations
    found = read_registrations(tmp_path)
    assert [(i, r is not None) for i, r, _ in found] == [
        (GOOD.id, True),
        ("aaaaaaaaaaaa", False),
        ("bbbbbbbbbbbb", False),
    ]
    assert "its id is not its name" in (found[2][2] or "")
    assert read_registrations(tmp_path / "none") == []
