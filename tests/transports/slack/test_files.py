"""Shared files' decisions by tables (``_files``), and ``WebApi.download`` against the fake
Slack: the token required, redirects only on the Slack host, a sign-in page refused, limits."""

from __future__ import annotations

from typing import Any

import pytest

from robota.core.frontend import FILE_BYTES, IMAGE_BYTES, Refused, media_notes
from robota.transports.slack._errors import ApiError, TooLarge
from robota.transports.slack._files import (
    MAX_FILES,
    SlackFile,
    allowed_url,
    parse_files,
    plan_files,
)
from robota.transports.slack._inbound import (
    Admit,
    InboundMessage,
    Screen,
    parse_envelope,
    screen,
)
from robota.transports.slack._web import WebApi

from ...support.fake_slack import BOT_TOKEN, events_api, fake_slack, file_share

EN = media_notes("en")
API = "https://slack.com/api/"


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("https://files.slack.com/files-pri/T1-F1/download/a.png", True),
        ("https://slack.com/files-pri/T1-F1/a.png", True),
        ("https://acme.slack.com/?redirect=x", True),
        ("http://files.slack.com/files-pri/T1-F1/a.png", False),  # another scheme
        ("https://files.slack.com:8443/a.png", False),  # another port
        ("https://evilslack.com/a.png", False),  # not under the host
        ("https://slack.com.evil.example/a.png", False),
        ("https://user:pw@files.slack.com/a.png", False),
        ("https://[::1/a.png", False),  # not a URL
        ("/files-pri/T1-F1/a.png", False),
    ],
)
def test_the_token_goes_only_to_the_slack_host(url: str, allowed: bool) -> None:
    assert allowed_url(url, API) is allowed


def test_a_loopback_api_allows_its_own_host_and_port_only() -> None:
    api = "http://127.0.0.1:4000/api/"
    assert allowed_url("http://127.0.0.1:4000/files-pri/x", api)
    assert not allowed_url("http://127.0.0.1:4001/files-pri/x", api)
    assert not allowed_url("http://localhost:4000/files-pri/x", api)


@pytest.mark.parametrize(
    ("files", "wrong"),
    [
        ("a file", "not a list"),
        ([{"name": "x"}], "with an id"),
        (["F1"], "with an id"),
        ([{"id": "F1", "size": -1}], "non-negative"),
        ([{"id": "F1", "size": True}], "non-negative"),
        ([{"id": "F1", "size": "12"}], "non-negative"),
        ([{"id": f"F{n}"} for n in range(MAX_FILES + 1)], "more than"),
    ],
)
def test_malformed_files_drop_the_event_with_the_reason(files: object, wrong: str) -> None:
    reason = parse_files(files)
    assert isinstance(reason, str) and wrong in reason
    event = file_share("hi", [], ts="1796015967.000001") | {"files": files}
    parsed = parse_envelope("events_api", events_api(event)["payload"])
    assert getattr(parsed, "reason", "") == reason


def test_a_file_share_message_is_a_persons_message_with_its_files() -> None:
    entry = {"id": "F1", "name": "a.csv", "mimetype": "TEXT/CSV", "size": 3}
    entry["url_private_download"] = "https://files.slack.com/x"
    event = file_share("", [entry, {"id": "F2", "title": "untitled"}])
    parsed = parse_envelope("events_api", events_api(event)["payload"])
    assert isinstance(parsed, InboundMessage)
    assert parsed.files == (
        SlackFile("F1", "a.csv", "text/csv", "", 3, "https://files.slack.com/x"),
        SlackFile("F2", "untitled", "", "", 0, None),
    )
    decided = screen(parsed, Screen(owner="U0ALICE"))
    assert isinstance(decided, Admit) and decided.text == ""


def _file(mimetype: str, size: int, url: str | None = "https://files.slack.com/x") -> SlackFile:
    return SlackFile("F1", "name", mimetype, "", size, url)


@pytest.mark.parametrize(
    ("file", "kind", "refused"),
    [
        (_file("image/png", IMAGE_BYTES), "image", None),
        (_file("image/jpeg", 10), "image", None),
        (_file("image/svg+xml", 10), "file", None),  # not a format robota reads: a file
        (_file("image/png", IMAGE_BYTES + 1), None, "image is too large: 20.0 MB"),
        (_file("text/csv", FILE_BYTES), "file", None),
        (_file("text/csv", FILE_BYTES + 1), None, "file is too large: 50.0 MB"),
        (_file("text/csv", 1, url=None), None, "name cannot be downloaded"),
    ],
)
def test_what_a_file_is_and_what_is_refused_before_any_download(
    file: SlackFile, kind: str | None, refused: str | None
) -> None:
    planned = plan_files([file], EN)
    if refused is not None:
        assert isinstance(planned, Refused) and refused in planned.reason
    else:
        assert not isinstance(planned, Refused) and [p.kind for p in planned] == [kind]


async def test_the_download_needs_the_token_and_stays_on_the_slack_host() -> None:
    async with fake_slack() as fake:
        entry: dict[str, Any] = fake.share("a.txt", b"hello", "text/plain", "text")
        url = entry["url_private_download"]
        async with WebApi(api_url=fake.api_url, token=BOT_TOKEN) as web:
            assert await web.download(url, limit=5) == b"hello"
            with pytest.raises(TooLarge):
                await web.download(url, limit=4)
            fake.redirects[url.removeprefix(fake.base_url)] = f"{fake.base_url}/elsewhere"
            with pytest.raises(ApiError, match="HTTP 404"):  # followed on the host
                await web.download(url, limit=5)
            fake.redirects[url.removeprefix(fake.base_url)] = "http://localhost:9/a.txt"
            with pytest.raises(ApiError, match="not on the Slack host"):
                await web.download(url, limit=5)
            with pytest.raises(ApiError, match="not on the Slack host"):
                await web.download("http://localhost:9/a.txt", limit=5)
        del fake.redirects[url.removeprefix(fake.base_url)]
        # A wrong token: Slack redirects to its sign-in page, which is not the file.
        async with WebApi(api_url=fake.api_url, token="xoxb-wrong") as web:
            with pytest.raises(ApiError, match="sign-in page") as raised:
                await web.download(url, limit=1000)
            assert "xoxb-wrong" not in str(raised.value)
        assert [d.method for d in fake.downloads[-2:]] == [url.removeprefix(fake.base_url), "/"]
        assert fake.downloads[-2].headers["authorization"] == "Bearer xoxb-wrong"
