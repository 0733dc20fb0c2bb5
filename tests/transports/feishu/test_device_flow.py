"""The device flow's and the app audit's decisions, as tables (no I/O)."""

from __future__ import annotations

from typing import Any

import pytest

from robota.transports.feishu import (
    REQUIREMENTS,
    AppGrant,
    DeviceFlow,
    RegistrationFailed,
    accounts_url,
    addons_manifest,
    assess,
)
from robota.transports.feishu._device_flow import Begin, Stop, SwitchToLark, Wait, parse_begin

BEGIN = Begin("dc", "https://accounts.feishu.cn/v?user_code=A", interval=5, expires_in=60)
LARK = {"user_info": {"tenant_brand": "lark"}}
URI = {"device_code": "d", "verification_uri_complete": "https://a"}
GRANT = {"client_id": "cli_1", "client_secret": "s3cr3t", "user_info": {"open_id": "ou_1"}}


@pytest.mark.parametrize(
    ("answers", "expected"),
    [
        ([{"error": "authorization_pending"}], Wait(5)),
        ([{"error": "slow_down"}], Wait(10, slowed=True)),
        ([{"error": "slow_down"}, {"error": "authorization_pending"}], Wait(10)),
        ([{"error": "slow_down"}, {"error": "slow_down"}], Wait(15, slowed=True)),
        (
            [{"error": "authorization_pending", "user_info": {"tenant_brand": "lark"}}],
            SwitchToLark(),
        ),
        # switched once only: the next lark answer is a plain pending poll
        (
            [
                {"user_info": {"tenant_brand": "lark"}},
                {"error": "authorization_pending", "user_info": {"tenant_brand": "lark"}},
            ],
            Wait(5),
        ),
        ([GRANT], AppGrant("cli_1", "s3cr3t", "ou_1", "feishu")),
        (
            [{**GRANT, "user_info": {"open_id": "ou_1", "tenant_brand": "lark"}}],
            AppGrant("cli_1", "s3cr3t", "ou_1", "lark"),
        ),
        (
            [{"user_info": {"tenant_brand": "lark"}}, {**GRANT, "user_info": {}}],
            AppGrant("cli_1", "s3cr3t", None, "lark"),
        ),
    ],
)
def test_poll_decisions(answers: list[Any], expected: object) -> None:
    flow = DeviceFlow(BEGIN, started=0)
    steps = [flow.on_poll(answer, now=1) for answer in answers]
    assert steps[-1] == expected


@pytest.mark.parametrize(
    ("answer", "kind", "words"),
    [
        ({"error": "access_denied"}, "denied", "declined"),
        ({"error": "expired_token"}, "expired", "expired (60 s)"),
        ({"error": "invalid_grant", "error_description": "bad"}, "invalid", "invalid_grant (bad)"),
        ({}, "invalid", "an answer without credentials"),
        ("not an object", "invalid", "an answer without credentials"),
        ({"client_id": "cli_1", "client_secret": ""}, "invalid", "without credentials"),
    ],
)
def test_poll_failures(answer: object, kind: str, words: str) -> None:
    step = DeviceFlow(BEGIN, started=0).on_poll(answer, now=1)
    assert isinstance(step, Stop)
    assert step.error.kind == kind
    assert words in str(step.error)


def test_a_wait_that_would_end_past_the_expiry_is_an_expiry() -> None:
    flow = DeviceFlow(BEGIN, started=100)
    assert flow.on_poll({"error": "authorization_pending"}, now=154) == Wait(5)
    step = flow.on_poll({"error": "authorization_pending"}, now=155)
    assert isinstance(step, Stop) and step.error.kind == "expired"


def test_the_grant_hides_its_secret() -> None:
    assert "s3cr3t" not in repr(AppGrant("cli_1", "s3cr3t", "ou_1", "feishu"))


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        ({"verification_uri_complete": "https://a/v"}, "no device_code"),
        ({"device_code": "d"}, "no verification_uri_complete"),
        ({"device_code": "d", "verification_uri_complete": "javascript:x"}, "no verification"),
        (
            {"device_code": "d", "verification_uri_complete": "https://a", "interval": "5"},
            "interval",
        ),
        ({"device_code": "d", "verification_uri_complete": "https://a", "interval": 600}, "0..60"),
        (
            {"device_code": "d", "verification_uri_complete": "https://a", "expires_in": 0},
            "positive",
        ),
        ({"error": "invalid_client"}, "refused to begin: invalid_client"),
        ([], "not an object"),
    ],
)
def test_begin_answers_are_validated(answer: object, words: str) -> None:
    with pytest.raises(RegistrationFailed) as failed:
        parse_begin(answer)
    assert words in str(failed.value)


def test_begin_defaults_follow_the_sdk() -> None:
    begin = parse_begin({"device_code": "d", "verification_uri_complete": "https://a/v"})
    assert (begin.interval, begin.expires_in) == (5.0, 600.0)
    assert "d" not in repr(begin).replace("device", "").replace("Begin", "")


@pytest.mark.parametrize(
    ("domain", "accounts"),
    [
        ("https://open.feishu.cn", "https://accounts.feishu.cn"),
        ("https://open.larksuite.com/", "https://accounts.larksuite.com"),
        ("https://open.feishu-boe.cn:8443", "https://accounts.feishu-boe.cn:8443"),
        ("http://127.0.0.1:8123", "http://127.0.0.1:8123"),
    ],
)
def test_accounts_url(domain: str, accounts: str) -> None:
    assert accounts_url(domain) == accounts


# -- the audit ------------------------------------------------------------------------------

CONSOLE = "https://open.feishu.cn"
APP = {"app_id": "cli_1"}


def version(scopes: list[str], events: list[str]) -> dict[str, object]:
    return {"version_id": 9, "scopes": [{"scope": s} for s in scopes], "events": events}


EVERY_SCOPE = [r.name for r in REQUIREMENTS if r.kind == "scope"]
EVERY_EVENT = [r.name for r in REQUIREMENTS if r.kind == "event"]
NO_GROUPS = [s for s in EVERY_SCOPE if s != "im:message.group_msg"]


@pytest.mark.parametrize(
    ("scopes", "all_groups", "core", "optional"),
    [
        (EVERY_SCOPE, True, [], []),
        ([s for s in EVERY_SCOPE if s != "im:message.group_msg"], False, [], []),
        (
            [s for s in EVERY_SCOPE if s != "im:message.group_msg"],
            True,
            ["im:message.group_msg"],
            [],
        ),
        # the broader im:message covers sending and reading
        (
            [
                "im:message",
                *(
                    s
                    for s in EVERY_SCOPE
                    if s not in ("im:message:send_as_bot", "im:message:readonly")
                ),
            ],
            True,
            [],
            [],
        ),
        (
            ["application:application:self_manage"],
            False,
            ["im:message:send_as_bot"],
            [
                "im:chat:create",
                "im:chat:read",
                "im:message.reactions:write_only",
                "im:message:readonly",
                "im:resource",
            ],
        ),
    ],
)
def test_assess_scopes(
    scopes: list[str], all_groups: bool, core: list[str], optional: list[str]
) -> None:
    audit = assess(
        APP, version(scopes, EVERY_EVENT), console=CONSOLE, all_group_messages=all_groups
    )
    assert [r.name for r in audit.missing_core] == core
    assert [r.name for r in audit.missing_optional] == optional
    # callbacks are not in a version: unverified without the app's callback object
    assert [r.name for r in audit.unverified] == ["card.action.trigger"]
    assert audit.version == "9"


def test_assess_events_and_callbacks() -> None:
    app = {**APP, "callback": {"subscribed_callbacks": []}}
    audit = assess(app, version(EVERY_SCOPE, []), console=CONSOLE, all_group_messages=True)
    assert [r.name for r in audit.missing_core] == ["im.message.receive_v1"]
    assert [r.name for r in audit.missing_optional] == ["im.chat.updated_v1", "card.action.trigger"]
    assert audit.fix_urls == (f"{CONSOLE}/app/cli_1/event",)
    assert audit.unverified == ()


def test_the_manifest_asks_for_everything_one_click_can_add() -> None:
    manifest = addons_manifest()
    asked = {
        *manifest["scopes"]["tenant"],  # type: ignore[index]
        *manifest["events"]["items"]["tenant"],  # type: ignore[index]
        *manifest["callbacks"]["items"],  # type: ignore[index]
    }
    assert asked == {r.name for r in REQUIREMENTS} - {"im:message.group_msg"}
