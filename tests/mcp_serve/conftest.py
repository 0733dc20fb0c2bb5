"""Fixtures for ``robota mcp serve``'s tests: the CLI tests' sandboxed ``robota``."""

from __future__ import annotations

from ..cli.conftest import robota

__all__ = ["robota"]
