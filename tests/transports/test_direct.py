"""The httpcore shell's pure parts against httpx's: the request's default headers and the JSON
body's bytes, over tables; and a call nobody answers raising ``Unanswered`` by httpx's name."""

from __future__ import annotations

import socket

import httpcore
import pytest
import trio

from robota.transports._direct import AsyncHttp, Http, Unanswered, json_bytes, request_headers


@pytest.mark.parametrize(
    ("url", "method", "content", "host", "length"),
    [
        ("https://open.feishu.cn/open-apis/x", "GET", b"", b"open.feishu.cn", None),
        ("https://open.feishu.cn:443/x", "GET", b"", b"open.feishu.cn", None),
        ("https://slack.com:8443/api/", "GET", b"", b"slack.com:8443", None),
        ("http://127.0.0.1:8080/api/a", "POST", b"{}", b"127.0.0.1:8080", b"2"),
        ("http://127.0.0.1:80/api/a", "POST", b"", b"127.0.0.1", b"0"),
        ("http://[::1]:8080/x", "PATCH", b"abc", b"[::1]:8080", b"3"),
    ],
)
def test_the_default_headers_are_httpxs(
    url: str, method: str, content: bytes, host: bytes, length: bytes | None
) -> None:
    import httpx  # here, not at collection: the oracle of these tests alone

    ours = dict(request_headers(httpcore.URL(url), {"X-A": "1"}, content, method))
    theirs = httpx.Request(method, url, content=content or None, headers={"X-A": "1"}).headers
    assert ours[b"Host"] == host == theirs["host"].encode()
    assert ours.get(b"Content-Length") == length
    assert theirs.get("content-length", "").encode() == (length or b"")
    assert ours[b"X-A"] == b"1" and ours[b"Accept"] == b"*/*"
    assert ours[b"User-Agent"] == b"robota" and ours[b"Accept-Encoding"] == b"identity"


@pytest.mark.parametrize(
    "body", [{}, {"a": 1, "b": [True, None, 1.5]}, {"text": '飞书 ✓ "q" \\ \n'}, [1, "x"]]
)
def test_the_json_body_is_httpxs(body: object) -> None:
    import httpx

    assert json_bytes(body) == httpx.Request("POST", "http://x", json=body).content


def test_a_nan_is_refused_as_httpx_refuses_it() -> None:
    with pytest.raises(ValueError):
        json_bytes({"x": float("nan")})


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_a_call_nobody_answers_is_unanswered_by_the_errors_name() -> None:
    url = f"http://127.0.0.1:{closed_port()}/api/x"
    async with AsyncHttp(timeout=5.0, proxied=False) as http:
        with pytest.raises(Unanswered) as raised:
            await http.request("POST", url, headers={}, content=b"{}")
    assert raised.value.name == "ConnectError"
    with Http(url, timeout=5.0) as blocking, pytest.raises(Unanswered) as again:
        await trio.to_thread.run_sync(lambda: blocking.request("GET", url, headers={}))
    assert again.value.name == "ConnectError"
