"""The App Server's structured error codes (``codexErrorInfo``), in robota's error categories.

Core's classifier (``robota.core.events.classify_failure``) weighs an agent's structured code
first, through the table its runtime plugin fills in: this one for the ``app-server`` kind
(``AppServerRuntime.error_codes``). ACP reports JSON-RPC codes only, which say nothing about
retrying, so its plugin has no table and its failures are classified on their text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # Types only: the plugin holds this table, and loading a plugin stays cheap (``_plugins``).
    from robota.core.events import ErrorCategory

__all__ = ["APP_SERVER_ERROR_CODES"]

APP_SERVER_ERROR_CODES: Mapping[str, ErrorCategory] = {
    "rateLimitExceeded": "rate_limit",
    "serverOverloaded": "overloaded",
    "flexUnavailable": "overloaded",
    "policyCapacityUnavailable": "overloaded",
    "internalServerError": "upstream_5xx",
    "httpConnectionFailed": "upstream_5xx",
    "responseStreamConnectionFailed": "stream_interrupted",
    "responseStreamDisconnected": "stream_interrupted",
    "responseTooManyFailedAttempts": "upstream_5xx",
    "unauthorized": "authentication",
    "usageLimitExceeded": "quota",
    "sessionBudgetExceeded": "quota",
    "contextWindowExceeded": "context_limit",
    "badRequest": "invalid_request",
    "modelNotFound": "unsupported_model",
    "cyberPolicy": "policy",
    "bioPolicy": "policy",
    "misalignmentPolicyViolation": "policy",
    "inferenceHookDenied": "policy",
    "tooManyDenials": "permission",
    "sandboxError": "tool",
    "threadRollbackFailed": "tool",
}
"""A code's category; a code not here (``other``...) leaves the decision to the text."""
