"""JSON-lines log files: one self-describing object per line, secrets masked, rotated.

Redaction runs on the structured record (every string, keys included, the traceback too) and
then once more on the finished line. If that last pass still finds something, say a secret split
across JSON syntax, the line is masked as text and checked to be valid JSON; if it is not, the
record is replaced by a notice. A log line may lose detail; it never carries a secret and never
breaks the one-object-per-line format that tools rely on.
"""

from __future__ import annotations

import io
import json
import logging
import logging.handlers
import os
import traceback
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ._redact import Redactor

__all__ = [
    "DEFAULT_BACKUP_COUNT",
    "DEFAULT_MAX_BYTES",
    "JsonLinesFormatter",
    "PrivateRotatingFileHandler",
    "configure_logging",
]

DEFAULT_MAX_BYTES = 10 * 1024 * 1024
DEFAULT_BACKUP_COUNT = 3

# Attributes every LogRecord has; anything else came from ``extra=``.
_STANDARD = frozenset(vars(logging.LogRecord("", logging.INFO, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "taskName",
}
_RESERVED = ("ts", "level", "logger", "msg", "exc", "stack")


def _plain(value: Any) -> Any:
    """JSON-ready data; anything else becomes its ``repr`` (before redaction sees it)."""
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(item) for item in value]
    if isinstance(value, Path):
        return str(value)
    return repr(value)


class JsonLinesFormatter(logging.Formatter):
    """Formats a record as one JSON object: ts, level, logger, msg, extras, exc."""

    def __init__(self, redactor: Redactor | None = None) -> None:
        super().__init__()
        self.redactor = redactor or Redactor()

    def _entry(self, record: logging.LogRecord) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key in _STANDARD or key.startswith("_"):
                continue
            entry[f"extra.{key}" if key in _RESERVED else key] = _plain(value)
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            entry["exc"] = {
                "type": f"{type(error).__module__}.{type(error).__qualname__}",
                "message": str(error),
                "traceback": "".join(traceback.format_exception(error)),
            }
        if record.stack_info:
            entry["stack"] = record.stack_info
        return entry

    def format(self, record: logging.LogRecord) -> str:
        entry = self.redactor.redact_value(self._entry(record))
        line = json.dumps(entry, ensure_ascii=False)
        if not self.redactor.leaks(line):
            return line
        masked = self.redactor.redact(line)
        try:
            json.loads(masked)
        except ValueError:
            notice = {
                "ts": entry["ts"],
                "level": entry["level"],
                "logger": entry["logger"],
                "msg": "log record withheld: it could not be redacted safely",
            }
            return json.dumps(notice, ensure_ascii=False)
        return masked


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """A rotating file handler whose files are owner-only (0600) from the first byte."""

    def _open(self) -> io.TextIOWrapper:
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        os.fchmod(fd, 0o600)
        # Always append: rotation starts a new file by renaming, never by truncating.
        return open(fd, "a", encoding=self.encoding, errors=self.errors)  # noqa: PTH123


def _level(level: str | int) -> int:
    if isinstance(level, int):
        return level
    value = logging.getLevelNamesMapping().get(level.upper())
    if value is None:
        raise ValueError(f"unknown log level: {level!r}")
    return value


def configure_logging(
    path: Path,
    level: str | int = "info",
    *,
    secrets: Iterable[str] = (),
    max_bytes: int = DEFAULT_MAX_BYTES,
    backup_count: int = DEFAULT_BACKUP_COUNT,
    logger: str = "",
) -> PrivateRotatingFileHandler:
    """Send ``logger`` (default: the root logger) to JSON lines in ``path``, rotated.

    Replaces a handler installed by an earlier call, so reconfiguring (after a config reload,
    or in tests) does not write every line twice. Returns the handler, to remove it later.
    """
    if not path.parent.is_dir():
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    handler = PrivateRotatingFileHandler(
        path, maxBytes=max_bytes, backupCount=backup_count, encoding="utf-8"
    )
    handler.setFormatter(JsonLinesFormatter(Redactor(secrets)))
    target = logging.getLogger(logger or None)
    for previous in list(target.handlers):
        if isinstance(previous, PrivateRotatingFileHandler):
            target.removeHandler(previous)
            previous.close()
    target.addHandler(handler)
    target.setLevel(_level(level))
    return handler
