"""Pending approvals of one agent connection, shared by both protocol clients.

A request for approval waits here until a human (or policy) decides, or until the process goes
away, which resolves everything still pending to ``cancel``. Each resolution is emitted as an
``ApprovalResolved`` event for the thread or session the approval belongs to.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import trio

from robota.core.events import ApprovalDecision, ApprovalResolved, RuntimeEvent

__all__ = ["ApprovalRegistry", "DecidedBy"]

DecidedBy = Literal["user", "policy"]


@dataclass
class _Pending:
    owner: str
    decided: trio.Event
    decision: ApprovalDecision = "cancel"


class ApprovalRegistry:
    """Approval ids are unique per connection; ``owner`` is the thread or session id."""

    def __init__(self, emit: Callable[[str, RuntimeEvent], None]) -> None:
        self._emit = emit
        self._pending: dict[str, _Pending] = {}
        self._ids = itertools.count()

    def next_id(self) -> str:
        return f"a{next(self._ids)}"

    def expect(self, approval_id: str, owner: str) -> _Pending:
        """Register ``approval_id`` before it is announced: a decision may come back at once,
        within the announcement itself (policy answers on the same thread)."""
        pending = _Pending(owner, trio.Event())
        self._pending[approval_id] = pending
        return pending

    @staticmethod
    async def wait(pending: _Pending) -> ApprovalDecision:
        """Block the request handler until the approval is decided (or cancelled)."""
        await pending.decided.wait()
        return pending.decision

    def decide(
        self, approval_id: str, decision: ApprovalDecision, *, by: DecidedBy = "user"
    ) -> bool:
        """Answer a pending approval. ``False`` when it is unknown or already answered."""
        pending = self._pending.pop(approval_id, None)
        if pending is None:
            return False
        pending.decision = decision
        pending.decided.set()
        self._emit(pending.owner, ApprovalResolved(approval_id, decision, by=by))
        return True

    def pending_for(self, owner: str) -> list[str]:
        return [aid for aid, pending in self._pending.items() if pending.owner == owner]

    def cancel_all(self) -> None:
        """The process went away: every pending approval resolves to ``cancel``."""
        pending, self._pending = self._pending, {}
        for approval_id, waiting in pending.items():
            waiting.decided.set()
            self._emit(waiting.owner, ApprovalResolved(approval_id, "cancel", by="runtime"))
