"""Sessions opened ahead: what one agent process keeps ready for the next one-shot run.

A new session in a warm agent is not free (claude-agent-acp takes 0.5-1 s for ``session/new``:
it loads its settings, tools and the directory's context). A route whose spec says
``open_ahead`` (print mode's routes on a warm host, ``SessionSpec.open_ahead``) takes a session
this process opened before the route asked, and the process opens the next one like it in the
background. ``SparePool`` is the decision, pure and on the trio thread (tested with tables); the
process service (``_agent_process``) does the opening and closing it asks for.

The rules, each a guard against a session reaching a run it must not:

* a spare is keyed by everything its opening was made of (``spare_key``: the spec without the
  task's id and ``open_ahead``; one pool per agent process, so the agent and its MCP servers are
  the process's own): a route whose directory, permission mode, model, effort, instructions or
  restriction (which takes the MCP servers away) differs never gets it;
* one spare per key, handed out once (``take`` removes it), so two runs never share a session;
  a run that finds none (another took it, it is still opening) opens its own as before;
* a spare has never run a turn: it carries no history from the run before it;
* a spare older than ``MAX_AGE`` is closed rather than handed out (the agent read the
  directory's context when it opened the session), and at most ``MAX_SPARES`` wait per process,
  the oldest closed first;
* only a new session is ever served ahead: a resumed or forked one has its own history.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from robota.core import replace
from robota.core.agents import SessionSpec

__all__ = ["MAX_AGE", "MAX_SPARES", "SparePool", "spare_key"]

MAX_AGE = 300.0
"""Seconds a spare waits before it is closed unused: what the agent read of the directory when
it opened the session (its instructions files, say) may have changed since."""
MAX_SPARES = 4
"""Spares kept per agent process, across settings: each holds the agent's memory."""


def spare_key(spec: SessionSpec, resume_id: str | None) -> SessionSpec | None:
    """What a spare for ``spec`` must have been opened with; ``None``: none serves it (not a
    route that takes spares, or a session to resume or fork)."""
    if not spec.open_ahead or resume_id is not None or spec.resume_id is not None:
        return None
    if spec.fork_from is not None:
        return None
    return replace(spec, task_id=None, open_ahead=False)


@dataclass
class _Spare:
    session_id: str
    opened_at: float


@dataclass
class SparePool:
    """The spares of one agent process (module docstring); ``now`` is a monotonic clock."""

    spares: dict[SessionSpec, _Spare] = field(default_factory=dict)
    opening: set[SessionSpec] = field(default_factory=set)
    """Keys whose spare is being opened: one at a time per key."""

    def take(self, key: SessionSpec, now: float) -> tuple[str | None, list[str]]:
        """The spare for ``key`` (removed), or ``None``; and the sessions to close (stale)."""
        stale = self._expire(now)
        spare = self.spares.pop(key, None)
        return (spare.session_id if spare is not None else None), stale

    def wants(self, key: SessionSpec) -> bool:
        """Whether a spare for ``key`` should be opened now (none waits nor is opening); if
        so, the key counts as opening until ``opened`` or ``failed``."""
        if key in self.spares or key in self.opening:
            return False
        self.opening.add(key)
        return True

    def opened(self, key: SessionSpec, session_id: str, now: float) -> list[str]:
        """Keep the spare just opened; the sessions to close (stale, or over the limit)."""
        self.opening.discard(key)
        closed = self._expire(now)
        self.spares[key] = _Spare(session_id, now)
        while len(self.spares) > MAX_SPARES:
            oldest = min(self.spares, key=lambda k: self.spares[k].opened_at)
            closed.append(self.spares.pop(oldest).session_id)
        return closed

    def failed(self, key: SessionSpec) -> None:
        self.opening.discard(key)

    def _expire(self, now: float) -> list[str]:
        stale = [k for k, s in self.spares.items() if now - s.opened_at > MAX_AGE]
        return [self.spares.pop(k).session_id for k in stale]
