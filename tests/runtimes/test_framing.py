"""Newline-delimited JSON-RPC framing, sans-IO."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from robota.runtimes import LineDecoder, Malformed, Notification, Request, Response, encode


def test_shapes_are_classified_with_and_without_the_jsonrpc_field() -> None:
    lines = [
        b'{"id":0,"method":"item/commandExecution/requestApproval","params":{"a":1}}',
        b'{"jsonrpc":"2.0","id":"9f1c-uuid","method":"session/request_permission","params":{}}',
        b'{"method":"turn/started","params":{"turn":{}},"emittedAtMs":1}',
        b'{"id":0,"result":{"ok":true}}',
        b'{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"boom"}}',
    ]
    messages = LineDecoder().feed(b"\n".join(lines) + b"\n")
    assert messages == [
        Request(0, "item/commandExecution/requestApproval", {"a": 1}),
        Request("9f1c-uuid", "session/request_permission", {}),
        Notification("turn/started", {"turn": {}}),
        Response(0, {"ok": True}, None),
        Response(3, None, {"code": -32603, "message": "boom"}),
    ]


def test_bad_lines_are_reported_and_decoding_goes_on() -> None:
    data = b'not json\n[1,2]\n{"id":true,"result":1}\n{"x":1}\n{"id":1}\n{"id":1,"result":null}\n'
    messages = LineDecoder().feed(data)
    assert [type(m).__name__ for m in messages] == ["Malformed"] * 5 + ["Response"]
    assert messages[0].head == b"not json"  # type: ignore[union-attr]
    assert messages[-1] == Response(1, None, None)


def test_an_oversized_line_is_skipped_and_the_next_one_is_read() -> None:
    decoder = LineDecoder(max_line=1024)
    big = b'{"method":"x","params":"' + b"a" * 5000 + b'"}'
    out = decoder.feed(big[:3000]) + decoder.feed(big[3000:] + b'\n{"method":"next"}\n')
    assert isinstance(out[0], Malformed) and "longer than 1024" in out[0].reason
    assert out[1:] == [Notification("next", None)]


def test_a_560_kb_line_fits_the_default_limit() -> None:
    payload = {"method": "session/update", "params": {"blob": "x" * 560_000}}
    (message,) = LineDecoder().feed(encode(payload))
    assert isinstance(message, Notification) and len(message.params["blob"]) == 560_000


def test_encode_is_one_line_even_with_newlines_in_strings() -> None:
    line = encode({"id": 1, "method": "m", "params": {"text": "a\nb", "ü": "ß"}})
    assert line.count(b"\n") == 1 and line.endswith(b"\n")
    assert json.loads(line) == {"id": 1, "method": "m", "params": {"text": "a\nb", "ü": "ß"}}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=10,
)


@given(
    params=st.lists(json_values, min_size=1, max_size=8),
    cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=20),
)
def test_any_chunking_yields_the_same_messages(params: list[object], cuts: list[int]) -> None:
    stream = b"".join(encode({"method": "m", "params": p}) for p in params)
    points = sorted({c % (len(stream) + 1) for c in cuts})
    chunks = [stream[a:b] for a, b in zip([0, *points], [*points, len(stream)], strict=True)]
    decoder = LineDecoder()
    messages = [m for chunk in chunks for m in decoder.feed(chunk)]
    assert messages == [Notification("m", p) for p in params]
