"""Registering an app and auditing it, against the fake's registration endpoints on loopback.

The waits the server asks for are recorded by a stand-in ``sleep`` that advances a stand-in
clock: the tests check the intervals and the expiry without spending them.
"""

from __future__ import annotations

import base64
import gzip
import json
from urllib.parse import parse_qs, urlsplit

import pytest

from robota.transports.feishu import (
    AppAudit,
    Registered,
    RegistrationFailed,
    audit_app,
    register_app,
)

from ...support.fake_feishu import APP_ID, APP_SECRET
from ...support.fake_feishu_registration import (
    DENIED,
    DEVICE_CODE,
    EXPIRED,
    LARK_SWITCH,
    OWNER,
    PENDING,
    SLOW_DOWN,
    FakeRegistration,
    fake_registration,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def time(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


class Run:
    """One registration's link and status reports."""

    def __init__(self) -> None:
        self.links: list[tuple[str, float]] = []
        self.statuses: list[str] = []

    async def register(
        self, reg: FakeRegistration, clock: Clock, lark_domain: str = "https://lark.invalid"
    ) -> Registered:
        result = await register_app(
            domain=reg.domain,
            lark_domain=lark_domain,
            on_link=lambda url, expires: self.links.append((url, expires)),
            on_status=self.statuses.append,
            clock=clock.time,
            sleep=clock.sleep,
        )
        assert len(self.links) == 1
        return result


async def register(reg: FakeRegistration, clock: Clock) -> Registered:
    return await Run().register(reg, clock)


async def test_success_after_pending_polls_waits_the_servers_interval() -> None:
    async with fake_registration(interval=3, expires_in=300) as reg:
        reg.polls.extend([PENDING, PENDING])
        clock, run = Clock(), Run()
        registered = await run.register(reg, clock)
    assert reg.actions == ["init", "begin", "poll", "poll", "poll"]
    assert reg.forms[1] == {
        "action": "begin",
        "archetype": "PersonalAgent",
        "auth_method": "client_secret",
        "request_user_info": "open_id",
    }
    assert reg.forms[2] == {"action": "poll", "device_code": DEVICE_CODE}
    assert clock.sleeps == [3.0, 3.0]
    grant = registered.grant
    assert (grant.app_id, grant.app_secret, grant.owner_open_id, grant.brand) == (
        APP_ID,
        APP_SECRET,
        OWNER,
        "feishu",
    )
    assert registered.domain == reg.domain
    assert APP_SECRET not in repr(registered)
    url, expires = run.links[0]
    assert expires == 300
    query = parse_qs(urlsplit(url).query)
    assert query["user_code"] == ["WXYZ-1234"]
    assert (query["from"], query["tp"], query["source"]) == (["sdk"], ["sdk"], ["robota"])
    padded = query["addons"][0] + "=" * (-len(query["addons"][0]) % 4)
    addons = json.loads(gzip.decompress(base64.urlsafe_b64decode(padded)))
    assert "im:message:send_as_bot" in addons["scopes"]["tenant"]
    assert "im:message.group_msg" not in addons["scopes"]["tenant"]  # one-click cannot add it
    assert addons["events"]["items"]["tenant"] == ["im.message.receive_v1", "im.chat.updated_v1"]
    assert addons["callbacks"]["items"] == ["card.action.trigger"]


async def test_slow_down_adds_five_seconds_for_the_rest_of_the_flow() -> None:
    async with fake_registration(interval=2) as reg:
        reg.polls.extend([PENDING, SLOW_DOWN, PENDING, SLOW_DOWN])
        clock, run = Clock(), Run()
        await run.register(reg, clock)
    assert clock.sleeps == [2.0, 7.0, 7.0, 12.0]
    assert run.statuses == ["waiting", "slow_down", "waiting", "slow_down"]


async def test_a_declined_registration_fails_saying_so() -> None:
    async with fake_registration() as reg:
        reg.polls.extend([PENDING, DENIED])
        with pytest.raises(RegistrationFailed) as failed:
            await register(reg, Clock())
    assert failed.value.kind == "denied"
    assert "declined (the user declined)" in str(failed.value)


async def test_the_servers_expired_token_ends_the_flow() -> None:
    async with fake_registration() as reg:
        reg.polls.append(EXPIRED)
        with pytest.raises(RegistrationFailed) as failed:
            await register(reg, Clock())
    assert failed.value.kind == "expired"
    assert "run the command again" in str(failed.value)


async def test_expires_in_bounds_the_polling_without_the_servers_word() -> None:
    async with fake_registration(interval=4, expires_in=10) as reg:
        reg.polls.extend([PENDING] * 50)
        clock = Clock()
        with pytest.raises(RegistrationFailed) as failed:
            await register(reg, clock)
    assert failed.value.kind == "expired"
    assert clock.sleeps == [4.0, 4.0]  # a third wait would end past the 10 s
    assert reg.actions.count("poll") == 3


async def test_a_lark_tenant_switches_to_larks_hosts() -> None:
    async with fake_registration() as feishu, fake_registration(brand="lark") as lark:
        feishu.polls.extend([LARK_SWITCH, DENIED])  # DENIED: what a client that stays gets
        lark.polls.append(PENDING)
        clock, run = Clock(), Run()
        registered = await run.register(feishu, clock, lark_domain=lark.domain)
    assert feishu.actions == ["init", "begin", "poll"]
    assert lark.actions == ["poll", "poll"]
    assert clock.sleeps == [0.0]  # the switch itself polls again at once
    assert registered.grant.brand == "lark"
    assert registered.domain == lark.domain
    assert run.statuses == ["lark", "waiting"]


async def test_a_server_without_client_secret_apps_is_refused() -> None:
    async with fake_registration() as reg:
        reg.init_answer = {"supported_auth_methods": ["private_key_jwt"]}
        with pytest.raises(RegistrationFailed) as failed:
            await register_app(domain=reg.domain, on_link=lambda *_: None)
    assert failed.value.kind == "unsupported"
    assert reg.actions == ["init"]


async def test_network_failures_are_named() -> None:
    with pytest.raises(RegistrationFailed) as failed:
        await register_app(domain="http://127.0.0.1:9", on_link=lambda *_: None, timeout=5)
    assert failed.value.kind == "network"
    assert "init call failed" in str(failed.value)


# -- the audit ------------------------------------------------------------------------------


async def audit(reg: FakeRegistration, *, all_groups: bool = False) -> AppAudit:
    return await audit_app(
        domain=reg.domain, app_id=APP_ID, app_secret=APP_SECRET, all_group_messages=all_groups
    )


async def test_a_fully_configured_app_passes() -> None:
    async with fake_registration() as reg:
        result = await audit(reg)
    assert result.complete, result
    assert result.version == "7301"
    assert result.unverified == ()


async def test_missing_scopes_and_events_are_reported_with_their_links() -> None:
    async with fake_registration() as reg:
        reg.scopes.remove("im:message:send_as_bot")
        reg.scopes.remove("im:chat:create")
        reg.events.remove("im.chat.updated_v1")
        reg.callbacks = None
        result = await audit(reg, all_groups=True)
    core = [r.name for r in result.missing_core]
    optional = [r.name for r in result.missing_optional]
    assert core == ["im:message:send_as_bot", "im:message.group_msg"]
    assert optional == ["im:chat:create", "im.chat.updated_v1"]
    assert [r.name for r in result.unverified] == ["card.action.trigger"]
    assert result.fix_urls == (
        f"{reg.domain}/app/{APP_ID}/auth?q=im%3Amessage%3Asend_as_bot%2Cim%3Amessage.group_msg"
        "%2Cim%3Achat%3Acreate&op_from=openapi&token_type=tenant",
        f"{reg.domain}/app/{APP_ID}/event",
    )
    assert APP_SECRET not in repr(result)


async def test_an_app_that_may_not_read_itself_gets_the_scope_link() -> None:
    async with fake_registration() as reg:
        reg.self_manage = False
        result = await audit(reg)
    assert result.error is not None and "99991672" in result.error
    assert result.fix_urls == (
        f"{reg.domain}/app/{APP_ID}/auth?q=application%3Aapplication%3Aself_manage"
        "&op_from=openapi&token_type=tenant",
    )
    assert not result.complete


async def test_an_unpublished_app_lacks_everything() -> None:
    async with fake_registration() as reg:
        reg.published = False
        result = await audit(reg)
    assert result.version is None and result.error is None
    assert "im.message.receive_v1" in [r.name for r in result.missing_core]


async def test_wrong_credentials_are_an_audit_error_not_a_crash() -> None:
    async with fake_registration() as reg:
        result = await audit_app(
            domain=reg.domain, app_id=APP_ID, app_secret="wrong", all_group_messages=False
        )
    assert result.error is not None and "10014" in result.error
    assert "wrong" not in result.error
