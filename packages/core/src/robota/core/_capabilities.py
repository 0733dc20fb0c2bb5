"""What an agent runtime can do, in the words of the decisions the engine takes on it.

Core never asks which protocol an agent speaks: it asks whether the agent can take input
mid-turn, list its threads, fork a conversation at a turn. Each runtime plugin declares what
its protocol offers at most (``RuntimePlugin.capabilities``); a session, once open, reports what
this agent actually does (``SessionOpened.capabilities``, a mapping in the same words), and
``refined`` lays that report over the declaration. So a third-party runtime plugin only has to
say what it can do, and the engine treats it like the plugins robota ships.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace

__all__ = ["AgentCapabilities"]


@dataclass(frozen=True, slots=True)
class AgentCapabilities:
    """Each field is a decision the engine takes; the default is the cautious answer."""

    steer: bool = False
    """Text typed during a turn reaches the running turn (else it is queued for after it)."""
    per_turn_settings: bool = False
    """Model and effort go with each turn, so a change applies from the next turn (else from
    the next time the session opens)."""
    list_sessions: bool = False
    """The agent lists its conversations, those other clients started too (``/sessions``)."""
    fork: bool = False
    """A new session can start from a copy of an existing one (``/fork``)."""
    fork_at_turn: bool = False
    """That copy can end at a chosen turn (``/turns reset``)."""
    images: bool = False
    """Prompts may carry images."""
    resume: bool = False
    """A session can be opened again by its id after the agent process ended."""
    import_history: bool = False
    """The runtime restores a conversation a task brought from another device on its own;
    else the task's first agent session is primed with its transcript before its prompt."""

    def refined(self, reported: Mapping[str, object]) -> AgentCapabilities:
        """These capabilities with what a session reported laid over them: a reported key
        that names a field decides it; other keys (the agent's own extras) are ignored."""
        changes = {f.name: bool(reported[f.name]) for f in fields(self) if f.name in reported}
        return replace(self, **changes) if changes else self
