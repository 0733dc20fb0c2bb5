"""The classifier's structured codes come from the runtime plugin: core's table is empty.

``classify_failure`` weighs a code only through the table it is given (``codes=``); a runtime
plugin declares its protocol's (``ClassifiesFailures``). The texts and statuses are core's and
decide alike for every plugin.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import pytest

from robota.core.events import NO_CODES, ClassifiesFailures, ErrorCategory, classify_failure
from robota.runtimes import APP_SERVER_ERROR_CODES, acp, app_server

TABLE: MappingProxyType[str, ErrorCategory] = MappingProxyType(
    {"slowDown": "rate_limit", "noMoney": "quota"}
)
"""A third-party protocol's codes."""


@pytest.mark.parametrize(
    ("message", "code", "codes", "category", "printable"),
    [
        # a code in the table decides, whatever the text says
        ("something odd", "slowDown", TABLE, "rate_limit", "slowDown"),
        ("rate limit reached", "noMoney", TABLE, "quota", "noMoney"),
        # a one-key object: its name in the table, or its detail's HTTP status first
        ("odd", {"slowDown": None}, TABLE, "rate_limit", "slowDown"),
        ("odd", {"noMoney": {"httpStatusCode": 503}}, TABLE, "overloaded", "noMoney:503"),
        # a code not in the table leaves the decision to the text
        ("something odd", "other", TABLE, "unknown", "other"),
        ("rate limit reached", "other", TABLE, "rate_limit", "other"),
        # without a table no code decides: the same codes read as text
        ("something odd", "slowDown", NO_CODES, "unknown", "slowDown"),
        ("something odd", "rateLimitExceeded", NO_CODES, "unknown", "rateLimitExceeded"),
        ("odd", {"noMoney": {"httpStatusCode": 503}}, NO_CODES, "overloaded", "noMoney:503"),
        ("API Error: 429", -32603, NO_CODES, "rate_limit", "-32603"),
    ],
)
def test_a_code_is_read_through_the_table_given(
    message: str, code: Any, codes: Any, category: str, printable: str
) -> None:
    error = classify_failure(message, code=code, codes=codes)
    assert (error.category, error.code) == (category, printable)


def test_core_knows_no_code_by_default() -> None:
    assert classify_failure("something odd", code="rateLimitExceeded").category == "unknown"
    assert classify_failure("something odd", code="slowDown").category == "unknown"


@pytest.mark.parametrize(("plugin", "category"), [(app_server, "rate_limit"), (acp, "unknown")])
def test_each_runtime_plugin_classifies_with_its_own_codes(plugin: object, category: str) -> None:
    assert isinstance(plugin, ClassifiesFailures)
    error = plugin.classify_failure("something odd", code="rateLimitExceeded")
    assert error.category == category
    # the text and the status are core's, the same for every plugin
    assert plugin.classify_failure("overloaded_error", http_status=None).category == "overloaded"


def test_the_app_server_plugin_declares_its_table() -> None:
    assert app_server.error_codes is APP_SERVER_ERROR_CODES
    assert dict(acp.error_codes) == {}
    assert APP_SERVER_ERROR_CODES["contextWindowExceeded"] == "context_limit"
