"""Fixtures for the CLI tests: a sandboxed ``robota`` (see ``tests/support/robota.py``)."""

from __future__ import annotations

from ..support.robota import robota

__all__ = ["robota"]
