"""robota.core.logs: structured logs that never carry a secret.

Each line of the profile's log file is one JSON object (``ts``, ``level``, ``logger``, ``msg``,
the ``extra=`` fields, and ``exc`` with type, message and traceback). Every known secret value
and every well-known token shape is replaced by ``***`` before a line is written; the file is
owner-only and rotated.

    configure_logging(config.logging.path, config.logging.level, secrets=config.secrets)
"""

from ._jsonlines import JsonLinesFormatter, PrivateRotatingFileHandler, configure_logging
from ._redact import MASK, Redactor

__all__ = [
    "configure_logging",
    "JsonLinesFormatter",
    "PrivateRotatingFileHandler",
    "Redactor",
    "MASK",
]
