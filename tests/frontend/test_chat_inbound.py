"""The chat transports' shared inbound steps, by table: the owner filter, the stale guard and
the durable claim of a message (``robota.core.frontend._inbound``)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from robota.core.frontend import STALE_AFTER, Ignore, freshness, inbound_claims, owner_filter
from robota.core.store import ClaimInboundEvent, Together

NO_OWNER = "set an owner"


@pytest.mark.parametrize(
    ("sender", "owner", "owner_only", "expected"),
    [
        ("u1", "u1", True, None),
        ("u2", "u1", True, "the sender is not the owner (respondToOwnerOnly)"),
        ("u2", "u1", False, None),
        ("u1", None, True, NO_OWNER),
        ("u1", None, False, None),
    ],
)
def test_the_owner_filter(
    sender: str, owner: str | None, owner_only: bool, expected: str | None
) -> None:
    found = owner_filter(sender, owner, owner_only=owner_only, no_owner=NO_OWNER)
    assert (found.reason if isinstance(found, Ignore) else None) == expected


@dataclass(frozen=True)
class Message:
    created_at: float


START = 1_000_000.0


@pytest.mark.parametrize(
    ("created_at", "now", "expected"),
    [
        (START + 5, START + 10, "run"),  # after the start
        (START - 10, START + 10, "run"),  # before the start, but recent
        (START - STALE_AFTER, START + 1, "stale"),  # before the start and old
        (START - 1, START + STALE_AFTER - 1, "run"),  # exactly at the bound: still run
        (START - 1, START + STALE_AFTER + 2, "stale"),
        (START + 1, START + 10 * STALE_AFTER, "run"),  # old, but after the start: ours
    ],
)
def test_the_stale_guard(created_at: float, now: float, expected: str) -> None:
    assert freshness(Message(created_at), now=now, started_at=START) == expected


def test_the_claim_is_one_write_of_the_event_and_the_message() -> None:
    assert inbound_claims("ev-1", "chat-message:m1") == Together(
        (ClaimInboundEvent("ev-1", "message"), ClaimInboundEvent("chat-message:m1", "message"))
    )
    claims = inbound_claims("ev-1", "m1", message_kind="message_id")
    assert claims.ops[1] == ClaimInboundEvent("m1", "message_id")
