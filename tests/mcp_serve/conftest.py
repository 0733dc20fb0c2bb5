"""Fixtures for ``robota mcp serve``'s tests: the CLI tests' sandboxed ``robota``, and the host
tests' root short enough for a Unix socket."""

from __future__ import annotations

from ..cli.conftest import robota
from ..host.conftest import short_root

__all__ = ["robota", "short_root"]
