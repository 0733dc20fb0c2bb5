"""``_wire.wire_request`` against httpx's ``build_request`` for the same calls: the request
bytes the httpcore path sends are the ones httpx would (but for the two headers it means to
differ in: ``Accept-Encoding`` identity, robota's ``User-Agent``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx
import pytest

from robota.transports.feishu._wire import USER_AGENT, wire_request

Call = tuple[str, str, str, object, Mapping[str, str] | None, str | None]
CALLS: list[Call] = [
    # method, domain, path, json body, params, token
    ("POST", "http://127.0.0.1:8080", "/open-apis/auth/v3/tenant_access_token/internal",
     {"app_id": "cli_x", "app_secret": "s"}, None, None),
    ("POST", "http://127.0.0.1:8080", "/open-apis/im/v1/messages/om_1/reactions",
     {"reaction_type": {"emoji_type": "OnIt"}}, None, "t-abc"),
    ("DELETE", "https://open.feishu.cn", "/open-apis/im/v1/messages/om_1/reactions/r_1",
     None, None, "t-abc"),
    ("POST", "https://open.larksuite.com", "/open-apis/im/v1/messages/om_1/reply",
     {"msg_type": "interactive", "content": '{"a": "卡片 é \\n"}', "uuid": "u-1"}, None, "t"),
    ("POST", "http://localhost:9", "/open-apis/im/v1/messages",
     {"receive_id": "oc_1", "msg_type": "text", "content": "{}"},
     {"receive_id_type": "chat_id"}, "t"),
    ("PATCH", "http://127.0.0.1:8080", "/open-apis/im/v1/messages/om_2",
     {"content": '{"elements": [1.5, true, null]}'}, None, "t"),
    ("GET", "http://127.0.0.1:8080", "/open-apis/bot/v3/info", None, None, "t"),
    ("GET", "http://127.0.0.1:8080", "/open-apis/im/v1/chats",
     None, {"page_size": "50", "q": "a b/c&d=é"}, "t"),
    ("POST", "http://127.0.0.1:8080", "/open-apis/im/v1/chats", None, None, "t"),
    ("POST", "http://127.0.0.1:8080", "/open-apis/im/v1/chats", {}, {"set_bot_manager": "true"},
     "t"),
]  # fmt: skip
OWN = {b"accept-encoding": b"identity", b"user-agent": USER_AGENT}
"""The headers the wire request means to differ in, and what it sends instead."""


@pytest.mark.parametrize("call", CALLS)
def test_the_wire_request_is_what_httpx_would_send(call: Call) -> None:
    method, domain, path, body, params, token = call
    client = httpx.Client(base_url=domain)
    kwargs: dict[str, Any] = {"json": body, "params": params}
    if token is not None:
        kwargs["headers"] = {"Authorization": f"Bearer {token}"}
    expected = client.build_request(method, path, **kwargs)
    wire = wire_request(method, domain, path, json_body=body, params=params, token=token)
    assert wire.method == expected.method.encode()
    assert wire.url == str(expected.url).encode()
    assert wire.body == expected.read()
    theirs = [(k, OWN.get(k.lower(), v)) for k, v in expected.headers.raw]
    assert wire.headers == theirs


@pytest.mark.parametrize("call", CALLS)
def test_the_target_is_the_urls_path_and_query(call: Call) -> None:
    """``_rest`` sends ``target`` with the domain's origin (``httpcore.URL`` parts): it must be
    what httpx would put on the request line."""
    method, domain, path, body, params, token = call
    expected = httpx.Client(base_url=domain).build_request(method, path, params=params)
    wire = wire_request(method, domain, path, json_body=body, params=params, token=token)
    assert wire.target == expected.url.raw_path
    assert wire.url == domain.encode() + wire.target
