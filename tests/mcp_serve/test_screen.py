"""Which of a stdio client's lines reach the SDK, and what the others are answered: a table."""

from __future__ import annotations

from typing import Any

import pytest

from robota.mcp import INVALID_REQUEST, PARSE_ERROR, screen_line

PASSED = [
    '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    '{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x"}}',
    '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    '{"jsonrpc":"2.0","method":"notifications/initialized","params":null}',
    '{"jsonrpc":"2.0","id":3,"result":{}}',
    '{"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":"no"}}',
    '  {"jsonrpc":"2.0","id":1,"method":"ping"}  ',
    '{"jsonrpc":"2.0","id":2,"method":"no/such"}',  # the SDK's to answer: Method not found
]


@pytest.mark.parametrize("line", PASSED)
def test_a_message_goes_to_the_sdk(line: str) -> None:
    assert screen_line(line) == "pass"


@pytest.mark.parametrize("line", ["", "   ", "\t", "\r"])
def test_a_blank_line_is_skipped(line: str) -> None:
    assert screen_line(line) == "skip"


@pytest.mark.parametrize(
    ("line", "code", "answered_id", "said"),
    [
        ("garbage", PARSE_ERROR, None, "not JSON (Expecting value)"),
        ('{"jsonrpc":"2.0","id":1', PARSE_ERROR, None, "not JSON"),
        ("[1, 2]", INVALID_REQUEST, None, "an array (batches are not supported)"),
        ('"text"', INVALID_REQUEST, None, "one JSON object"),
        ("5", INVALID_REQUEST, None, "one JSON object"),
        ('{"id":4,"method":"ping"}', INVALID_REQUEST, 4, "'jsonrpc' must be \"2.0\""),
        ('{"jsonrpc":"1.0","id":4,"method":"ping"}', INVALID_REQUEST, 4, "'jsonrpc'"),
        ('{"jsonrpc":"2.0","id":5,"method":7}', INVALID_REQUEST, 5, "'method' must be a string"),
        ('{"jsonrpc":"2.0","id":6,"method":"m","params":[1]}', INVALID_REQUEST, 6, "'params'"),
        ('{"jsonrpc":"2.0","id":true,"method":"m"}', INVALID_REQUEST, None, "'id' must be"),
        ('{"jsonrpc":"2.0","id":1.5,"method":"m"}', INVALID_REQUEST, None, "'id' must be"),
        ('{"jsonrpc":"2.0","id":7}', INVALID_REQUEST, 7, "exactly one of 'result' and 'error'"),
        ('{"jsonrpc":"2.0","id":"x","result":1,"error":{}}', INVALID_REQUEST, "x", "exactly one"),
        ('{"jsonrpc":"2.0"}', INVALID_REQUEST, None, "no 'method'"),
        ('{"jsonrpc":"2.0","id":[1],"result":{}}', INVALID_REQUEST, None, "'id' must be"),
    ],
)
def test_what_is_no_message_is_answered_naming_why(
    line: str, code: int, answered_id: Any, said: str
) -> None:
    answer = screen_line(line)
    assert isinstance(answer, dict)
    assert (answer["jsonrpc"], answer["id"], answer["error"]["code"]) == ("2.0", answered_id, code)
    assert said in answer["error"]["message"]


def test_the_answer_never_quotes_the_line() -> None:
    answer = screen_line('{"jsonrpc":"2.0","id":1,"method":7,"token":"sk-secret-value"}')
    assert isinstance(answer, dict) and "sk-secret" not in str(answer)
