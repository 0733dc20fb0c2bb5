"""``robota mcp serve``'s errors, a branch of robota's one tree (``robota.core._errors``)."""

from __future__ import annotations

from robota.core import RobotaError

__all__ = ["McpError"]


class McpError(RobotaError):
    """``robota mcp serve`` (robota.mcp)."""
