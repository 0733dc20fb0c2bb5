"""Fixtures for ``robota mcp serve``'s tests: the CLI tests' sandboxed ``robota``, and the host
tests' root short enough for a Unix socket."""

from __future__ import annotations

from ..support.host import short_root
from ..support.robota import robota

__all__ = ["robota", "short_root"]
