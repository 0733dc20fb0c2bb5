"""A transport plugin's part in ``robota init``: what it declares (``SetsUpOnInit``), what init
asks of it (``InitRequest``) and what it answers (``InitOutcome``).

``robota init`` creates the profile and checks the agents; a chat platform may need more (an
app registered, its credentials stored, its permissions checked), and only its plugin knows
how. The CLI hands the plugin the request made of init's flags for it and reports the outcome
(its JSON under the plugin's name in ``robota init --json``, its lines for a person). The step
writes the profile's files through this package's atomic writers under the init lock.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ._paths import Profile

__all__ = ["InitOutcome", "InitRequest", "SetsUpOnInit"]


@dataclass(frozen=True, slots=True)
class InitRequest:
    """What ``robota init`` was asked of one transport: ``--NAME`` (``setup``),
    ``--reconfigure-NAME``, ``--skip-NAME``, ``--NAME-domain`` and the plugin's own options."""

    skip: bool = False
    setup: bool = False
    reconfigure: bool = False
    domain: str | None = None
    interactive: bool = False
    """Whether a person is at the terminal (a step that needs one waits for nobody otherwise)."""
    options: Mapping[str, str | None] = field(default_factory=dict)
    """Values of the plugin's own options by name (tests' endpoints, say)."""


class InitOutcome(Protocol):
    """What a step did, never a secret."""

    @property
    def error(self) -> str | None:
        """Why the step failed (init then exits 1), or ``None``."""
        ...

    def json(self) -> dict[str, Any]:
        """Its object in ``robota init --json``."""
        ...

    def report(self) -> None:
        """Its lines for a person, on stdout."""
        ...


@runtime_checkable
class SetsUpOnInit(Protocol):
    """What a transport plugin (``robota.core.TransportPlugin``) declares, on its entry point
    object, of its part in ``robota init``."""

    name: str

    def init_step(
        self, profile: Profile, request: InitRequest, *, on_wait: Callable[[int | None], None]
    ) -> InitOutcome:
        """Do the plugin's part for ``profile``; ``on_wait(pid)`` when it waits for another
        init's lock. A ``ConfigError`` is a usage error (exit 2), ``InitLockTimeout`` exit 1."""
        ...
