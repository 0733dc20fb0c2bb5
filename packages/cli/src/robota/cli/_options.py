"""Applying the global ``--profile``/``--config`` options to the process environment.

The options are turned into ``ROBOTA_HOME``/``ROBOTA_CONFIG`` in ``os.environ`` rather than
passed around, so every process robota starts (agents, helpers, a re-executed ``robota``)
resolves the same profile without being told.
"""

from __future__ import annotations

import os

__all__ = ["apply_profile_options"]


def apply_profile_options(profile: str | None, config: str | None) -> None:
    """Rewrite ``os.environ`` for ``--profile DIR`` or ``--config FILE`` (at most one)."""
    if profile is None and config is None:
        return
    from robota.core.config import profile_environment  # noqa: PLC0415 (keeps --help fast)

    wanted = profile_environment(os.environ, profile=profile, config=config)
    for name in [name for name in os.environ if name not in wanted]:
        del os.environ[name]
    os.environ.update(wanted)
