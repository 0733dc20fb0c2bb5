"""robota.core.logs: structured logs that never carry a secret.

Each line of the profile's log file is one JSON object (``ts``, ``level``, ``logger``, ``msg``,
the ``extra=`` fields, and ``exc`` with type, message and traceback). Every known secret value
and every well-known token shape is replaced by ``***`` before a line is written; the file is
owner-only and rotated.

    configure_logging(config.logging.path, config.logging.level, secrets=config.secrets)

The facade is lazy (PEP 562): the redactor alone is what a runtime's spawn path needs before
print mode's agent starts, and the file handler (``logging.handlers``, ``socket``, ``pickle``)
would otherwise load on that path too.
"""

import typing

from ..kernel import lazy_attributes as _lazy_attributes

if typing.TYPE_CHECKING:
    from ._jsonlines import JsonLinesFormatter, PrivateRotatingFileHandler, configure_logging
    from ._redact import MASK, Redactor

__all__ = [
    "configure_logging",
    "JsonLinesFormatter",
    "PrivateRotatingFileHandler",
    "Redactor",
    "MASK",
]

_LAZY = {
    "configure_logging": "._jsonlines",
    "JsonLinesFormatter": "._jsonlines",
    "PrivateRotatingFileHandler": "._jsonlines",
    "Redactor": "._redact",
    "MASK": "._redact",
}

__getattr__, __dir__ = _lazy_attributes(__name__, _LAZY)
