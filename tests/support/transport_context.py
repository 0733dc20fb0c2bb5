"""A chat transport's ``TransportContext`` with nothing behind it: no port, store or profile,
for tests that build a transport's service from its settings and never run it."""

from __future__ import annotations

from pathlib import Path

from robota.core.frontend import TransportContext


def unserved_context(name: str, settings: object) -> TransportContext:
    """The context ``name``'s service factory takes, with only ``settings``."""
    return TransportContext(
        name=name,
        settings=settings,
        port=None,  # type: ignore[arg-type]  # nothing here reaches the engine
        store=None,  # type: ignore[arg-type]
        db_path=Path("/nowhere.sqlite"),
        config=None,  # type: ignore[arg-type]
        profile=None,  # type: ignore[arg-type]
        report=lambda _status: None,
        started_at=0.0,
        teams={},
    )
