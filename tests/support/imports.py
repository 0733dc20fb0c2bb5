"""What a Python process imported, read from its own ``-X importtime`` report.

``PYTHONPROFILEIMPORTTIME=1`` in a process's environment makes the interpreter write a line
per module it imports to its stderr (``import time: self | cumulative | name``, nested
modules indented), whoever imports it and however late: a real host's log then shows whether
a module was ever loaded, with no hook in the host itself."""

from __future__ import annotations

__all__ = ["IMPORT_LOG", "imported"]

IMPORT_LOG = {"PYTHONPROFILEIMPORTTIME": "1"}
"""The environment that makes a Python process report its imports."""


def imported(log: str) -> set[str]:
    """The modules an ``-X importtime`` report in ``log`` names (other lines ignored)."""
    return {
        line.rpartition("|")[2].strip()
        for line in log.splitlines()
        if line.startswith("import time:") and "|" in line and "cumulative" not in line
    }
