"""The transient-failure classifier, table-tested on the texts agents and providers produce."""

from __future__ import annotations

import pytest

from robota.core.events import RETRYABLE
from robota.runtimes import app_server

classify_failure = app_server.classify_failure
"""The App Server plugin's classification: core's mechanism with the plugin's error codes."""

# (message, code, http_status, category). Texts are verbatim from the agents (see the
# reference notes on App Server errors and tests/transcripts) and from provider error bodies.
CASES = [
    # Codex App Server: HTTP 500 from the provider, reported with Codex's own text and code.
    (
        "We're currently experiencing high demand, which may cause temporary errors.",
        "internalServerError",
        None,
        "upstream_5xx",
    ),
    # Codex: the SSE stream cut before response.completed.
    (
        "stream disconnected before completion: Transport error: network error: error decoding "
        "response body",
        "other",
        None,
        "stream_interrupted",
    ),
    (
        "Rate limit reached for gpt-5 in organization org-x on tokens per min.",
        "rateLimitExceeded",
        None,
        "rate_limit",
    ),
    (
        "Your input exceeds the context window of this model.",
        "contextWindowExceeded",
        None,
        "context_limit",
    ),
    ("unauthorized", "unauthorized", None, "authentication"),
    ("You've hit your usage limit.", "usageLimitExceeded", None, "quota"),
    ("model is not available", "modelNotFound", None, "unsupported_model"),
    ("bad request", "badRequest", None, "invalid_request"),
    ("connection failed", {"httpConnectionFailed": {"httpStatusCode": 502}}, None, "upstream_5xx"),
    (
        "connection failed",
        {"httpConnectionFailed": {"httpStatusCode": 401}},
        None,
        "authentication",
    ),
    (
        "stream failed",
        {"responseStreamDisconnected": {"httpStatusCode": None}},
        None,
        "stream_interrupted",
    ),
    # OpenAI-style bodies surfaced by ACP agents.
    (
        "You exceeded your current quota, please check your plan and billing details.",
        None,
        429,
        "quota",
    ),
    ("Rate limit exceeded. Please retry after 20s.", None, 429, "rate_limit"),
    ("This model's maximum context length is 128000 tokens.", None, 400, "context_limit"),
    ("Incorrect API key provided: fake-key.", None, 401, "authentication"),
    (
        "The model `gpt-9` does not exist or you do not have access to it.",
        None,
        404,
        "unsupported_model",
    ),
    ("Your request was rejected as a result of our safety system.", None, 400, "policy"),
    # Anthropic / Claude agents.
    (
        'API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"bad"}}',
        None,
        None,
        "invalid_request",
    ),
    (
        'API Error: 529 {"type":"error","error":{"type":"overloaded_error",'
        '"message":"Overloaded"}}',
        None,
        None,
        "overloaded",
    ),
    ("API Error: 500 Internal server error", None, None, "upstream_5xx"),
    ("prompt is too long: 210000 tokens > 200000 maximum", None, None, "context_limit"),
    ("Credit balance is too low", None, None, "quota"),
    ("Invalid API key · Please run /login", None, None, "authentication"),
    # Gemini.
    (
        "[API Error: got status: 503 Service Unavailable. The model is overloaded.]",
        None,
        None,
        "overloaded",
    ),
    ("[API Error: Resource has been exhausted (e.g. check quota).]", None, None, "rate_limit"),
    ("API key not valid. Please pass a valid API key.", None, 400, "authentication"),
    # Recorded from the real agents against the fake model (tests/transcripts).
    (
        "Internal error: API Error: Connection to the API was lost (ECONNRESET). This is usually "
        "temporary \u2014 try again.",
        None,
        None,
        "stream_interrupted",
    ),
    ("Internal error: Connection reset by server", None, None, "stream_interrupted"),
    (
        "Internal error: Cannot connect to API: The socket connection was closed unexpectedly.",
        None,
        None,
        "stream_interrupted",
    ),
    ("terminated", None, 500, "upstream_5xx"),
    (
        '{"type": "error", "error": {"message": "fake invalid request", "type": '
        '"invalid_request_error", "param": null, "code": "invalid_request_error"}}',
        "other",
        None,
        "invalid_request",
    ),
    ("Internal error: 400 fake invalid request", -32603, None, "invalid_request"),
    # Network and timeouts.
    ("Request timed out.", None, None, "timeout"),
    ("fetch failed", None, None, "stream_interrupted"),
    ("read ECONNRESET", None, None, "stream_interrupted"),
    ("Gateway Timeout", None, 504, "timeout"),
    # Tools and permissions.
    (
        'exec_command failed: CreateProcess { message: "Rejected(\\"rejected by user\\")" }',
        None,
        None,
        "permission",
    ),
    ("sandbox denied the write", "sandboxError", None, "tool"),
    # A JSON-RPC code says nothing about retrying; the text decides.
    ("Internal error", -32603, None, "unknown"),
    ("", None, None, "unknown"),
    ("the line 400 of the file is odd", None, None, "unknown"),
]


@pytest.mark.parametrize(("message", "code", "status", "category"), CASES)
def test_classification(message: str, code: object, status: int | None, category: str) -> None:
    error = classify_failure(message, code=code, http_status=status)
    assert error.category == category
    assert error.retryable == (category in RETRYABLE)


def test_retryable_is_exactly_the_transient_set() -> None:
    assert {
        "rate_limit",
        "overloaded",
        "upstream_5xx",
        "timeout",
        "stream_interrupted",
    } == RETRYABLE


def test_message_and_code_are_kept() -> None:
    error = classify_failure("  boom  ", code="internalServerError")
    assert (error.message, error.code) == ("boom", "internalServerError")
    assert classify_failure("").message == "the agent reported a failure without a message"
