"""The sealed handoff payload: refused while busy, staged in order, length then digest."""

from __future__ import annotations

import hashlib
import json

import pytest

from robota.mesh import (
    BUSY_STATES,
    INVENTORY_CATEGORIES,
    HandoffBusy,
    PayloadMismatch,
    SourceCheckout,
    Staging,
    read_payload,
    seal,
)

TASK = {"id": "t1", "agent": "codex", "title": "fix the build"}
TURNS = [{"prompt": "HELLO", "answer": "hi"}, {"prompt": "again", "answer": "hé"}]
CHECKOUT = SourceCheckout(
    "/home/me/repo", "git@example.org:me/repo.git", "abc123", ("src/a.py", "notes.txt")
)


def _sealed() -> tuple[bytes, int, bytes]:
    sealed = seal(TASK, TURNS, ["queued one"], CHECKOUT, busy=None)
    return sealed.payload, sealed.manifest.length, sealed.manifest.sha256


@pytest.mark.parametrize("busy", BUSY_STATES)
def test_a_busy_task_is_not_sealed_and_the_refusal_names_why(busy: str) -> None:
    with pytest.raises(HandoffBusy) as refused:
        seal(TASK, TURNS, [], CHECKOUT, busy=busy)  # type: ignore[arg-type]
    assert refused.value.busy == busy
    words = {"turn-running": "turn", "prompt-queued": "queued", "approval-waiting": "approval"}
    assert words[busy] in str(refused.value)


def test_the_manifest_states_the_payload_and_every_inventory_category() -> None:
    sealed = seal(TASK, TURNS, ["queued one"], CHECKOUT, busy=None)
    manifest = sealed.manifest
    assert manifest.length == len(sealed.payload)
    assert manifest.sha256 == hashlib.sha256(sealed.payload).digest()
    assert set(manifest.inventory) == set(INVENTORY_CATEGORIES)
    assert manifest.inventory["source-local"] == ("src/a.py", "notes.txt")
    assert "2 turns" in manifest.inventory["transferred"]
    assert any("credentials" in item for item in manifest.inventory["never-transferred"])
    assert (manifest.origin, manifest.head) == (CHECKOUT.origin, CHECKOUT.head)
    # Canonical: the same task seals to the same bytes, whatever order its dict was built in.
    again = seal(dict(reversed(TASK.items())), TURNS, ["queued one"], CHECKOUT, busy=None)
    assert again.payload == sealed.payload


def test_a_payload_staged_in_chunks_reads_back_as_the_task() -> None:
    payload, length, digest = _sealed()
    staging = Staging(length, digest)
    for offset in range(0, length, 7):
        staging.feed(offset, payload[offset : offset + 7])
    assert staging.complete
    staging.finish()
    read = read_payload(payload)
    assert read.task == TASK and list(read.turns) == TURNS and read.queue == ("queued one",)
    assert read.checkout.origin == CHECKOUT.origin and read.checkout.cwd == CHECKOUT.cwd


@pytest.mark.parametrize(
    ("case", "what"),
    [
        ("a chunk after a gap", "order"),
        ("a chunk sent twice", "order"),
        ("a byte more than stated", "length"),
        ("a byte short", "length"),
        ("a flipped byte", "digest"),
        ("a flipped byte and a byte short", "length"),
    ],
)
def test_a_payload_that_is_not_the_manifests_is_refused(case: str, what: str) -> None:
    payload, length, digest = _sealed()
    staging = Staging(length, digest)
    with pytest.raises(PayloadMismatch) as refused:
        if case == "a chunk after a gap":
            staging.feed(0, payload[:10])
            staging.feed(11, payload[11:])
        elif case == "a chunk sent twice":
            staging.feed(0, payload[:10])
            staging.feed(0, payload[:10])
        elif case == "a byte more than stated":
            staging.feed(0, payload + b" ")
        elif case == "a byte short":
            staging.feed(0, payload[:-1])
            staging.finish()
        elif case == "a flipped byte":
            staging.feed(0, payload[:5] + bytes([payload[5] ^ 1]) + payload[6:])
            staging.finish()
        else:
            staging.feed(0, payload[:5] + bytes([payload[5] ^ 1]) + payload[6:-1])
            staging.finish()
    assert refused.value.what == what


@pytest.mark.parametrize(
    "document",
    [
        b"not json",
        b"\xff\xfe",
        json.dumps([1, 2]).encode(),
        json.dumps({"v": 2, "task": {}, "turns": [], "queue": [], "checkout": {}}).encode(),
        json.dumps({"v": 1, "task": {}, "turns": [], "queue": []}).encode(),
        json.dumps(
            {"v": 1, "task": {}, "turns": [], "queue": [], "checkout": {"cwd": "/"}, "x": 1}
        ).encode(),
        json.dumps(
            {"v": 1, "task": [], "turns": [], "queue": [], "checkout": {"cwd": "/"}}
        ).encode(),
        json.dumps(
            {"v": 1, "task": {}, "turns": [1], "queue": [], "checkout": {"cwd": "/"}}
        ).encode(),
        json.dumps(
            {"v": 1, "task": {}, "turns": [], "queue": [3], "checkout": {"cwd": "/"}}
        ).encode(),
        json.dumps({"v": 1, "task": {}, "turns": [], "queue": [], "checkout": {}}).encode(),
        json.dumps(
            {"v": 1, "task": {}, "turns": [], "queue": [], "checkout": {"cwd": "/", "head": 5}}
        ).encode(),
    ],
)
def test_content_that_no_source_seals_is_refused(document: bytes) -> None:
    with pytest.raises(PayloadMismatch) as refused:
        read_payload(document)
    assert refused.value.what == "content"
