"""The exceptions robota raises, in one tree.

    RobotaError                      every error robota raises on purpose
    ├── KernelError                  the actor kernel
    │   ├── SupervisorFailed         restart intensity tripped; escalates to the parent
    │   ├── RequestTimeout           a request across the bridge got no reply in time
    │   └── CrashRequested           raised inside an actor by ``testing.crash()``
    ├── ConfigError                  bad config.yaml/.env/paths: file, key, found, expected
    └── StoreError                   the SQLite store cannot be opened or migrated

Exceptions raised by user code inside an actor are never wrapped: they travel as they are, either as
the crash reason a supervisor logs, or as the failed reply of a request.
"""

from __future__ import annotations

__all__ = [
    "RobotaError",
    "KernelError",
    "SupervisorFailed",
    "RequestTimeout",
    "CrashRequested",
    "ConfigError",
    "StoreError",
]


class RobotaError(Exception):
    """Base class of every error robota raises on purpose."""


class KernelError(RobotaError):
    """An error of the actor kernel."""


class SupervisorFailed(KernelError):
    """A supervisor saw more failures than its intensity allows within its period.

    Its children have been stopped; the parent treats this as the supervisor's crash.
    """

    def __init__(self, supervisor: str, failures: int, period: float, last: BaseException | None):
        self.supervisor = supervisor
        self.failures = failures
        self.period = period
        self.last = last
        super().__init__(
            f"supervisor {supervisor!r} gave up: {failures} failures within {period:g} s"
            + (f" (last: {type(last).__name__}: {last})" if last is not None else "")
        )


class RequestTimeout(KernelError, TimeoutError):
    """A request sent across the bridge got no reply within its timeout."""


class CrashRequested(KernelError):
    """Raised inside an actor on purpose, by ``robota.core.testing.crash``."""


class ConfigError(RobotaError):
    """Configuration is invalid. The message names the file, the key path, what was found and
    what was expected, so a user can fix it without reading code."""

    def __init__(
        self,
        file: str | None,
        key: str,
        found: str,
        expected: str,
    ) -> None:
        self.file = file
        self.key = key
        self.found = found
        self.expected = expected
        where = f"{file}: " if file else ""
        super().__init__(f"{where}{key}: found {found}, expected {expected}")


class StoreError(RobotaError):
    """The store cannot be opened, migrated or written."""
