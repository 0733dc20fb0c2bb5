"""The fake's group and resource answers are proven against the official SDK's REST client
(``lark-oapi``): it creates a chat and downloads a message's image from the fake, and parses
both answers as Feishu's. The SDK is synchronous, so it runs on a worker thread while the fake
serves on the trio loop."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from ...support.fake_feishu import APP_ID, APP_SECRET, fake_platform

# With the other tests that import lark_oapi (about 3 s of CPU) in one worker (test_frames.py).
pytestmark = pytest.mark.xdist_group("lark_sdk")


def sdk_calls(domain: str) -> dict[str, Any]:
    import lark_oapi as lark
    from lark_oapi.api.im.v1 import (
        CreateChatRequest,
        CreateChatRequestBody,
        GetMessageResourceRequest,
    )

    client = lark.Client.builder().app_id(APP_ID).app_secret(APP_SECRET).domain(domain).build()
    body = CreateChatRequestBody.builder().name("Project X").user_id_list(["ou_owner"]).build()
    request = (
        CreateChatRequest.builder()
        .user_id_type("open_id")
        .set_bot_manager(True)
        .uuid("u-1")
        .request_body(body)
        .build()
    )
    made = client.im.v1.chat.create(request)
    again = client.im.v1.chat.create(request)
    resource = client.im.v1.message_resource.get(
        GetMessageResourceRequest.builder()
        .message_id("om_1")
        .file_key("img_1")
        .type("image")
        .build()
    )
    missing = client.im.v1.message_resource.get(
        GetMessageResourceRequest.builder()
        .message_id("om_1")
        .file_key("img_x")
        .type("image")
        .build()
    )
    return {
        "made": (made.success(), made.data.chat_id if made.data else None, made.data.name),
        "again": again.data.chat_id if again.data else None,
        "resource": (resource.success(), resource.file.read() if resource.file else None),
        "missing": (missing.success(), missing.raw.status_code if missing.raw else None),
    }


async def test_the_official_sdk_creates_a_chat_and_downloads_a_resource_from_the_fake() -> None:
    async with fake_platform() as fake:
        fake.resources[("om_1", "img_1")] = ("image", b"\x89PNG fake bytes", "image/png")
        got = await trio.to_thread.run_sync(sdk_calls, fake.domain)
    assert got["made"] == (True, fake.chats[0]["data"]["chat_id"], "Project X")
    assert got["again"] == got["made"][1] and len(fake.chats) == 1, "the same uuid, one chat"
    assert fake.chats[0]["members"] == ["ou_owner"] and fake.chats[0]["bot_manager"]
    assert got["resource"] == (True, b"\x89PNG fake bytes")
    assert got["missing"] == (False, 400)
