"""What a turn's card needs to outlive a crash: its snapshot and its approval-button tokens.

**Snapshots.** ``SaveTurnSnapshot`` stores a turn view's JSON snapshot (``TurnView.to_json()``,
encoded by the caller so the shared writer thread never spends time on it) in
``turn_snapshots``. The snapshot's ``version`` only grows, so the op refuses an older one: a save
from an incarnation that died late can never roll back what its successor stored.

**Card action tokens.** A button on a card carries an opaque random token and nothing else; what
the button means (turn, approval, decision) stays here, in ``card_action_bindings``, bound to the
message that shows the button and to the route that message lives on. ``ClaimCardAction`` is the
only way to learn a token's meaning, and it succeeds once:

* a token nobody bound is ``unknown``;
* a token presented from another message or route (a forwarded card, a replayed callback) is
  ``foreign``;
* a token already claimed is ``used``; once one button of an approval is claimed, its siblings
  are ``resolved``, in the same savepoint, so two racing clicks decide the approval once;
* ``RetireCardActions`` makes the still unclaimed tokens of an approval ``resolved`` (it was
  answered elsewhere: the terminal, a policy) or of a whole turn ``turn_ended``; a turn whose
  final answer is in the delivery ledger is ``turn_ended`` too, retired or not;
* a token past its ``expires_at`` is ``expired``.

Retirement is recorded in the row itself (``used_at`` plus a ``retired`` reason inside
``payload_json``), so the table needs no column beyond what its migration created.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias, cast

from ._database import Database
from ._records import dump_json, stamp

__all__ = [
    "CLAIM_REFUSALS",
    "ActionBinding",
    "BindCardActions",
    "CardAction",
    "ClaimCardAction",
    "ClaimRefusal",
    "Claimed",
    "Refused",
    "RetireCardActions",
    "SaveTurnSnapshot",
    "TurnSnapshot",
    "card_actions",
    "turn_snapshot",
]


# -- turn snapshots ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TurnSnapshot:
    """A turn view's last saved snapshot, decoded (a ``TurnView.from_json`` argument)."""

    turn_id: str
    task_id: str
    snapshot: dict[str, object]
    updated_at: float

    @property
    def version(self) -> int:
        version = self.snapshot.get("version")
        return version if isinstance(version, int) else 0


@dataclass(frozen=True, slots=True)
class SaveTurnSnapshot:
    """Store a turn's snapshot (JSON text); ``False`` when a newer version is already stored.

    ``version`` is the snapshot's own ``"version"``; it is passed beside the text so the
    guard needs no parsing of the new text, only of the stored one.
    """

    turn_id: str
    task_id: str
    snapshot_json: str
    version: int
    at: float | None = None

    def apply(self, db: Database, /) -> bool:
        cursor = db.execute(
            "INSERT INTO turn_snapshots (turn_id, task_id, activities_json, updated_at) "
            "VALUES (?, ?, ?, ?) "
            "ON CONFLICT (turn_id) DO UPDATE SET "
            "task_id = excluded.task_id, activities_json = excluded.activities_json, "
            "updated_at = excluded.updated_at "
            "WHERE coalesce(json_extract(turn_snapshots.activities_json, '$.version'), -1) <= ?",
            (self.turn_id, self.task_id, self.snapshot_json, stamp(self.at), self.version),
        )
        return cursor.rowcount == 1


def turn_snapshot(db: Database, turn_id: str) -> TurnSnapshot | None:
    """The snapshot last saved for ``turn_id``, or ``None``."""
    row = db.execute(
        "SELECT turn_id, task_id, activities_json, updated_at FROM turn_snapshots "
        "WHERE turn_id = ?",
        (turn_id,),
    ).fetchone()
    if row is None:
        return None
    snapshot = json.loads(str(row[2]))
    if not isinstance(snapshot, dict):
        raise TypeError(f"turn snapshot of {turn_id!r} is not a JSON object")
    return TurnSnapshot(str(row[0]), str(row[1]), snapshot, float(row[3]))


# -- card action tokens ------------------------------------------------------------------------

ClaimRefusal: TypeAlias = Literal["unknown", "foreign", "used", "resolved", "turn_ended", "expired"]
"""Why a token was refused; ``Refused.message`` says it in words a person can read."""

CLAIM_REFUSALS: Mapping[ClaimRefusal, str] = {
    "unknown": "This button is not known (it may be from an older robota).",
    "foreign": "This button belongs to another message.",
    "used": "This button was already used.",
    "resolved": "This request was already answered.",
    "turn_ended": "The task this button belongs to has ended.",
    "expired": "This button has expired.",
}

_RETIREMENTS = ("resolved", "turn_ended")


@dataclass(frozen=True, slots=True)
class CardAction:
    """What a button means: a decision on one approval of one turn."""

    turn_id: str
    approval_id: str
    decision: str

    def to_json(self) -> dict[str, str]:
        return {
            "turn_id": self.turn_id,
            "approval_id": self.approval_id,
            "decision": self.decision,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> CardAction:
        return cls(str(data["turn_id"]), str(data["approval_id"]), str(data["decision"]))


@dataclass(frozen=True, slots=True)
class ActionBinding:
    """One token and what it stands for; ``expires_at`` (epoch seconds) or never."""

    token: str
    action: CardAction
    expires_at: float | None = None


@dataclass(frozen=True, slots=True)
class Claimed:
    """The token was valid and is now used: act on ``action``."""

    action: CardAction


@dataclass(frozen=True, slots=True)
class Refused:
    reason: ClaimRefusal

    @property
    def message(self) -> str:
        return CLAIM_REFUSALS[self.reason]


@dataclass(frozen=True, slots=True)
class BindCardActions:
    """Bind tokens to the message that shows them; returns how many were new.

    Binding a token again is a no-op (its first binding stands), so a card update may carry
    every live token of the card each time without bookkeeping.
    """

    message_id: str
    route_key: str
    bindings: tuple[ActionBinding, ...]
    at: float | None = None

    def apply(self, db: Database, /) -> int:
        now = stamp(self.at)
        bound = 0
        for binding in self.bindings:
            cursor = db.execute(
                "INSERT INTO card_action_bindings "
                "(token, message_id, route_key, payload_json, created_at, expires_at) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (token) DO NOTHING",
                (
                    binding.token,
                    self.message_id,
                    self.route_key,
                    dump_json(binding.action.to_json()),
                    now,
                    binding.expires_at,
                ),
            )
            bound += cursor.rowcount
        return bound


@dataclass(frozen=True, slots=True)
class ClaimCardAction:
    """Claim a button's token as presented by ``message_id`` on ``route_key`` at ``at``.

    ``Claimed(action)`` exactly once per approval; every other presentation is ``Refused`` with
    the first reason that applies, in the order of the module docstring.
    """

    token: str
    message_id: str
    route_key: str
    at: float | None = None

    def apply(self, db: Database, /) -> Claimed | Refused:
        now = stamp(self.at)
        row = db.execute(
            "SELECT message_id, route_key, payload_json, expires_at, used_at "
            "FROM card_action_bindings WHERE token = ?",
            (self.token,),
        ).fetchone()
        if row is None:
            return Refused("unknown")
        message_id, route_key, payload_json, expires_at, used_at = row
        if message_id != self.message_id or route_key != self.route_key:
            return Refused("foreign")
        payload = json.loads(str(payload_json))
        if used_at is not None:
            retired = payload.get("retired")
            return Refused(cast(ClaimRefusal, retired) if retired in _RETIREMENTS else "used")
        action = CardAction.from_json(payload)
        delivered = db.execute(
            "SELECT 1 FROM final_deliveries WHERE turn_id = ? AND final_delivered_at IS NOT NULL",
            (action.turn_id,),
        ).fetchone()
        if delivered is not None:
            return Refused("turn_ended")
        if expires_at is not None and float(expires_at) <= now:
            return Refused("expired")
        db.execute("UPDATE card_action_bindings SET used_at = ? WHERE token = ?", (now, self.token))
        # The other buttons of this approval are on the same message: retire them now, so a
        # second click, even one already on its way, finds the approval resolved.
        _retire(
            db,
            now,
            "resolved",
            turn_id=action.turn_id,
            approval_id=action.approval_id,
            message_id=self.message_id,
        )
        return Claimed(action)


@dataclass(frozen=True, slots=True)
class RetireCardActions:
    """Make a turn's unclaimed tokens stale: those of ``approval_id`` (``resolved``: it was
    answered elsewhere), or all of the turn's (``turn_ended``). Returns how many were retired."""

    turn_id: str
    approval_id: str | None = None
    reason: Literal["resolved", "turn_ended"] = "turn_ended"
    at: float | None = None

    def apply(self, db: Database, /) -> int:
        if self.reason not in _RETIREMENTS:
            raise ValueError(f"unknown retirement {self.reason!r}; expected one of {_RETIREMENTS}")
        return _retire(
            db, stamp(self.at), self.reason, turn_id=self.turn_id, approval_id=self.approval_id
        )


def _retire(
    db: Database,
    now: float,
    reason: str,
    *,
    turn_id: str,
    approval_id: str | None,
    message_id: str | None = None,
) -> int:
    """Retire the unclaimed tokens of one approval, or of the whole turn (``approval_id``
    ``None``)."""
    # No index covers the payload (the migration predates this use); claims and retirements
    # are human-rate events, and ``message_id`` narrows the scan when it is known.
    clauses = ["used_at IS NULL", "json_extract(payload_json, '$.turn_id') = ?"]
    params: list[object] = [turn_id]
    if message_id is not None:
        clauses.append("message_id = ?")
        params.append(message_id)
    if approval_id is not None:
        clauses.append("json_extract(payload_json, '$.approval_id') = ?")
        params.append(approval_id)
    cursor = db.execute(
        "UPDATE card_action_bindings SET used_at = ?, "
        "payload_json = json_set(payload_json, '$.retired', ?) WHERE " + " AND ".join(clauses),
        (now, reason, *params),
    )
    return cursor.rowcount


def card_actions(db: Database, turn_id: str) -> list[tuple[str, ActionBinding]]:
    """The turn's live (unclaimed, unretired) tokens as ``(message_id, binding)``, oldest
    first: what a restarted card renderer puts back on its buttons."""
    rows = db.execute(
        "SELECT token, message_id, payload_json, expires_at FROM card_action_bindings "
        "WHERE used_at IS NULL AND json_extract(payload_json, '$.turn_id') = ? "
        "ORDER BY created_at, token",
        (turn_id,),
    ).fetchall()
    out: list[tuple[str, ActionBinding]] = []
    for token, message_id, payload_json, expires_at in rows:
        action = CardAction.from_json(json.loads(str(payload_json)))
        expiry = None if expires_at is None else float(expires_at)
        out.append((str(message_id), ActionBinding(str(token), action, expiry)))
    return out
