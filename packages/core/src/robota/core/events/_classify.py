"""Is a failed turn worth another attempt? A pure function of what the agent reported.

Transient (retry): rate limits, overload, upstream 5xx, timeouts, interrupted provider streams.
Terminal (never retry): authentication, quota, context limit, invalid request, unsupported
model, permission, policy, tool errors, and anything not recognised.

Evidence is weighed in this order, because agents report the same failure differently:

1. The agent's structured code when it has one and its runtime plugin's table knows it (the
   App Server's ``codexErrorInfo``, ``ClassifiesFailures.error_codes``): most precise.
2. Terminal phrases in the message: a 429 that says "exceeded your current quota" is a quota
   problem, not a rate limit, and retrying it only burns the budget.
3. An HTTP status, given or found in the message ("API Error: 400", "status code 503").
4. Transient phrases in the message.

Unknown failures are terminal: retrying something not understood risks repeating side effects.

The mechanism is core's and names no agent: the codes a protocol reports are its runtime
plugin's to map (``codes=``), so a third-party runtime classifies its own codes the same way.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from ._model import ErrorCategory, TurnError

__all__ = ["NO_CODES", "RETRYABLE", "ClassifiesFailures", "classify_failure"]

RETRYABLE: frozenset[ErrorCategory] = frozenset(
    {"rate_limit", "overloaded", "upstream_5xx", "timeout", "stream_interrupted"}
)

NO_CODES: Mapping[str, ErrorCategory] = {}
"""A protocol whose codes say nothing about retrying (JSON-RPC's): its text decides."""


@runtime_checkable
class ClassifiesFailures(Protocol):
    """What a runtime plugin (``robota.core.RuntimePlugin``) declares of its agents' failures,
    on its entry point object: its protocol's structured error codes in robota's categories.
    ``classify_failure`` is the whole decision, with that table (``codes=error_codes``)."""

    error_codes: Mapping[str, ErrorCategory]
    """A code's category; a code not in it leaves the decision to the message."""

    def classify_failure(
        self, message: str, *, code: Any = None, http_status: int | None = None
    ) -> TurnError:
        """``classify_failure(message, code=, http_status=, codes=self.error_codes)``."""
        ...


_Table = tuple[tuple[ErrorCategory, str], ...]
"""Categories and their patterns, compiled on first use (``_compiled``): every start imports
this module, and only a failed turn needs the patterns (compiling them costs milliseconds)."""


def _table(*rows: tuple[ErrorCategory, str]) -> _Table:
    return rows


@functools.cache
def _compiled(table: _Table) -> tuple[tuple[ErrorCategory, re.Pattern[str]], ...]:
    return tuple((category, re.compile(pattern, re.IGNORECASE)) for category, pattern in table)


_TERMINAL_PHRASES = _table(
    (
        "quota",
        r"insufficient_quota|exceeded your current quota|quota (?:has been )?exceeded"
        r"|usage limit|credit balance is too low|billing|out of credits",
    ),
    (
        "context_limit",
        r"context[ _-]?(?:length|window)|maximum context|prompt is too long"
        r"|too many tokens|input is too long|reduce the length",
    ),
    (
        "authentication",
        r"unauthori[sz]ed|invalid[ _-]?(?:api[ _-]?)?key|incorrect api key"
        r"|api key not valid|authentication|invalid x-api-key|not logged in"
        r"|login required",
    ),
    (
        "unsupported_model",
        r"model[_ ]not[_ ]found|model .{0,80}(?:does not exist|not found"
        r"|is not supported|unsupported)|unsupported model|unknown model",
    ),
    (
        "policy",
        r"content (?:policy|filter)|safety|violat\w* .{0,40}polic|usage polic"
        r"|flagged|moderation",
    ),
    ("permission", r"permission denied|forbidden|not permitted|rejected by user"),
)

_TRANSIENT_PHRASES = _table(
    ("rate_limit", r"rate[ _-]?limit|too many requests|resource[_ ](?:has been )?exhausted"),
    (
        "overloaded",
        r"overloaded|high demand|at capacity|temporarily unavailable"
        r"|service unavailable|try again later",
    ),
    ("timeout", r"timed? ?out|deadline exceeded|etimedout"),
    (
        "stream_interrupted",
        r"stream disconnected|error decoding response body|connection reset"
        r"|econnreset|socket hang up|premature(?:ly)? clos|unexpected eof"
        r"|stream (?:ended|closed|was cut)|terminated|network error"
        r"|connection (?:was )?(?:closed|aborted|error|refused|lost)|fetch failed"
        r"|cannot connect to api",
    ),
    ("upstream_5xx", r"internal server error|bad gateway|server error|upstream"),
    ("invalid_request", r"invalid[_ ]request|bad request|invalid argument|malformed"),
    ("tool", r"tool (?:call |execution )?(?:error|failed)"),
)

_STATUS_IN_TEXT = re.compile(
    r"(?:\b(?:status|code|http|error)\b[^0-9\n]{0,12}|^|\bapi error:?\s*)([45]\d\d)\b",
    re.IGNORECASE,
)


def _status_category(status: int) -> ErrorCategory | None:
    if status == 429:
        return "rate_limit"
    if status in (401, 407):
        return "authentication"
    if status == 403:
        return "permission"
    if status == 404:
        return "unsupported_model"
    if status in (408, 504):
        return "timeout"
    if status in (503, 529):
        return "overloaded"
    if 500 <= status <= 599:
        return "upstream_5xx"
    if status == 413:
        return "context_limit"
    if 400 <= status <= 499:
        return "invalid_request"
    return None


def _code_category(
    code: Any, codes: Mapping[str, ErrorCategory]
) -> tuple[ErrorCategory | None, str | None]:
    """Category and printable code from a structured code (a string or a one-key object whose
    detail may carry the provider's ``httpStatusCode``), by the protocol's ``codes``."""
    if isinstance(code, str):
        return codes.get(code), code
    if isinstance(code, Mapping) and len(code) == 1:
        ((name, detail),) = code.items()
        category = codes.get(str(name))
        if isinstance(detail, Mapping):
            status = detail.get("httpStatusCode")
            if isinstance(status, int) and (by_status := _status_category(status)) is not None:
                return by_status, f"{name}:{status}"
        return category, str(name)
    if isinstance(code, int) and not isinstance(code, bool):
        return None, str(code)
    return None, None


def classify_failure(
    message: str,
    *,
    code: Any = None,
    http_status: int | None = None,
    codes: Mapping[str, ErrorCategory] = NO_CODES,
) -> TurnError:
    """Classify a failed turn. ``code`` is the agent's structured code (the App Server's
    ``codexErrorInfo``, a JSON-RPC error code), read with ``codes``, its runtime plugin's table
    (``ClassifiesFailures``); ``http_status`` the provider's status when known."""
    category, printable = _code_category(code, codes)
    # "other" and generic JSON-RPC codes say nothing: fall through to the text.
    if category is None:
        category = _first(_TERMINAL_PHRASES, message)
    if category is None:
        status = http_status
        if status is None:
            match = _STATUS_IN_TEXT.search(message)
            status = int(match.group(1)) if match else None
        if status is not None:
            category = _status_category(status)
            printable = printable or str(status)
    if category is None:
        category = _first(_TRANSIENT_PHRASES, message)
    if category is None:
        category = "unknown"
    return TurnError(
        message=message.strip() or "the agent reported a failure without a message",
        category=category,
        retryable=category in RETRYABLE,
        code=printable,
    )


def _first(table: _Table, message: str) -> ErrorCategory | None:
    for category, pattern in _compiled(table):
        if pattern.search(message):
            return category
    return None
