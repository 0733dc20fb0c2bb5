"""``robota init``'s Feishu part as a user runs it: the real script against the fake platform's
registration endpoints on loopback (tests/support/fake_feishu_registration.py)."""

from __future__ import annotations

import json
import stat
import subprocess
from typing import Any

import pytest
import trio

from robota.core.config import dotenv_values, template_text
from robota.transports.feishu._init_step import credentials_of, plan

from ..support.fake_feishu import APP_ID, APP_SECRET
from ..support.fake_feishu_registration import (
    DENIED,
    LARK_SWITCH,
    OWNER,
    PENDING,
    SLOW_DOWN,
    FakeRegistration,
    fake_registration,
)
from ..support.robota import ROBOTA, Robota

REGISTERED_ACTIONS = ["init", "begin", "poll"]


async def run(
    robota: Robota, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """The real script, while this trio loop keeps serving the fake."""
    with trio.fail_after(60):
        return await trio.run_process(
            [str(ROBOTA), *args],
            env=robota.environment(env, ()),
            cwd=robota.root,
            stdin=b"",
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )


async def run_json(
    robota: Robota, *args: str, code: int = 0, env: dict[str, str] | None = None
) -> dict[str, Any]:
    completed = await run(robota, "init", "--json", *args, env=env)
    assert completed.returncode == code, completed.stderr.decode()
    result = json.loads(completed.stdout)  # stdout is the one object, whatever stderr says
    assert isinstance(result, dict)
    assert APP_SECRET not in (completed.stdout + completed.stderr).decode()
    return result


def with_feishu_section(robota: Robota, **keys: str) -> None:
    robota.home.mkdir(parents=True, exist_ok=True)
    lines = "".join(f"    {key}: {value}\n" for key, value in keys.items())
    (robota.home / "config.yaml").write_text(
        template_text("config.yaml").replace(
            "  console:\n    enabled: true\n",
            "  console:\n    enabled: true\n  feishu:\n" + lines,
        )
    )


def env_values(robota: Robota) -> dict[str, str]:
    return dotenv_values((robota.home / ".env").read_text())


async def test_registers_stores_0600_and_audits_then_keeps_the_app(robota: Robota) -> None:
    async with fake_registration() as reg:
        reg.polls.append(SLOW_DOWN)
        reg.interval = 0
        completed = await run(robota, "init", "--json", "--feishu", "--feishu-domain", reg.domain)
        assert completed.returncode == 0, completed.stderr.decode()
        result = json.loads(completed.stdout)
        stderr = completed.stderr.decode()
        assert APP_SECRET not in completed.stdout.decode() + stderr
        assert reg.actions == [*REGISTERED_ACTIONS, "poll"]

        feishu = result["feishu"]
        assert feishu["status"] == "registered"
        assert (feishu["appId"], feishu["userOpenId"]) == (APP_ID, OWNER)
        assert (feishu["brand"], feishu["domain"]) == ("feishu", reg.domain)
        assert feishu["audit"]["complete"] is True
        assert feishu["audit"]["version"] == "7301"
        assert result["ok"] is True
        assert result["config"] == {"ok": True, "error": None}  # the new section loads

        # The link and its QR code on stderr, stdout untouched by them.
        assert "user_code=WXYZ-1234" in stderr and "addons=" in stderr
        assert "█" in stderr
        assert "Registered the app cli_fake_app" in stderr
        assert "The server asked to poll more slowly." in stderr

        env_file = robota.home / ".env"
        assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
        values = env_values(robota)
        assert values["FEISHU_APP_ID"] == APP_ID
        assert values["FEISHU_APP_SECRET"] == APP_SECRET
        assert values["FEISHU_USER_OPEN_ID"] == OWNER
        assert env_file.read_text().startswith("# robota profile environment")  # kept
        assert not list(robota.home.glob(".*.tmp"))

        config = (robota.home / "config.yaml").read_text()
        assert APP_SECRET not in config
        section = config[config.index("  feishu:\n    appId") :]
        assert section.startswith(
            "  feishu:\n"
            "    appId: ${FEISHU_APP_ID}\n"
            "    appSecret: ${FEISHU_APP_SECRET}\n"
            "    userOpenId: ${FEISHU_USER_OPEN_ID}\n"
            "    respondToOwnerOnly: true\n"
            f"    domain: {reg.domain}\n"
        )

        # Complete credentials are kept: no second app, the audit runs again.
        again = await run_json(robota, "--feishu")
        assert again["feishu"]["status"] == "existing"
        assert again["feishu"]["domain"] == reg.domain  # read from config.yaml now
        assert again["feishu"]["audit"]["complete"] is True
        assert reg.actions == [*REGISTERED_ACTIONS, "poll"]

        # ...unless asked to start over.
        redone = await run_json(robota, "--reconfigure-feishu")
        assert redone["feishu"]["status"] == "registered"
        assert reg.actions == [*REGISTERED_ACTIONS, "poll", *REGISTERED_ACTIONS]
        assert (robota.home / "config.yaml").read_text() == config  # already there
        assert env_values(robota)["FEISHU_APP_ID"] == APP_ID
        assert (robota.home / ".env").read_text().count("FEISHU_APP_SECRET=") == 1


async def test_an_exported_old_app_is_named_and_not_audited(robota: Robota) -> None:
    old = {"FEISHU_APP_ID": "cli_old", "FEISHU_APP_SECRET": "old-secret-value"}
    async with fake_registration() as reg:
        result = await run_json(
            robota, "--reconfigure-feishu", "--feishu-domain", reg.domain, env=old
        )
    feishu = result["feishu"]
    assert feishu["status"] == "registered"
    assert feishu["audit"]["complete"] is True  # the new secret, not the exported one
    assert feishu["warnings"] == [
        f"{name} is set in the environment and wins over the new value in .env: unset it"
        for name in old
    ]
    assert "old-secret-value" not in json.dumps(result)


async def test_skip_feishu_touches_nothing(robota: Robota) -> None:
    async with fake_registration() as reg:
        with_feishu_section(robota, domain=reg.domain)
        result = await run_json(robota, "--skip-feishu")
        assert result["feishu"]["status"] == "skipped"
        assert reg.platform.requests == []
        completed = await run(robota, "init", "--skip-feishu", "--feishu")
        assert completed.returncode == 2
        assert b"--skip-feishu cannot be combined" in completed.stderr
        assert reg.platform.requests == []


async def test_without_a_terminal_a_section_is_reported_not_registered(robota: Robota) -> None:
    async with fake_registration() as reg:
        with_feishu_section(robota, appId="${FEISHU_APP_ID}", domain=reg.domain)
        result = await run_json(robota)
        assert result["feishu"]["status"] == "incomplete"
        assert reg.platform.requests == []
        human = await run(robota, "init")
        assert b"Feishu: credentials incomplete; run `robota init --feishu`" in human.stdout


async def test_on_a_terminal_a_section_without_credentials_registers(robota: Robota) -> None:
    async with fake_registration() as reg:
        reg.polls.append(PENDING)
        with_feishu_section(robota, appId="${FEISHU_APP_ID}", domain=reg.domain)
        answers = [("Install missing agents now?", "\n")]
        code, output = await trio.to_thread.run_sync(
            lambda: robota.run_in_terminal("init", answers=answers)
        )
        assert code == 0, output
        assert reg.actions == [*REGISTERED_ACTIONS, "poll"]
        assert f"Feishu: app {APP_ID} (registered, feishu), domain {reg.domain}" in output
        assert "every scope, event and callback is there" in output
        assert output.count("Waiting for the approval") == 1
        assert APP_SECRET not in output
        assert env_values(robota)["FEISHU_APP_SECRET"] == APP_SECRET


async def test_a_declined_registration_stores_nothing(robota: Robota) -> None:
    async with fake_registration() as reg:
        reg.polls.append(DENIED)
        result = await run_json(robota, "--feishu", "--feishu-domain", reg.domain, code=1)
    assert result["ok"] is False
    assert "declined" in result["error"]
    assert result["feishu"]["status"] == "failed"
    assert "FEISHU_APP_ID" not in env_values(robota)
    assert "\n  feishu:" not in (robota.home / "config.yaml").read_text()


async def test_a_lark_tenant_gets_larks_domain(robota: Robota) -> None:
    async with fake_registration() as feishu, fake_registration(brand="lark") as lark:
        feishu.polls.extend([LARK_SWITCH, DENIED])
        result = await run_json(
            robota, "--feishu", "--feishu-domain", feishu.domain, "--lark-domain", lark.domain
        )
        assert lark.actions == ["poll"]
        assert lark.platform.tokens  # the audit asked Lark
        assert feishu.platform.tokens == []
    assert (result["feishu"]["brand"], result["feishu"]["domain"]) == ("lark", lark.domain)
    assert f"    domain: {lark.domain}\n" in (robota.home / "config.yaml").read_text()


async def test_missing_scopes_are_listed_with_the_link_to_fix_them(robota: Robota) -> None:
    async with fake_registration() as reg:
        prepare(reg)
        completed = await run(robota, "init", "--feishu", "--feishu-domain", reg.domain)
        assert completed.returncode == 0, completed.stderr.decode()
        out = completed.stdout.decode()
        as_json = await run_json(robota, "--feishu")
    assert "  app version 7301 lacks:\n" in out
    assert "    core      im:message:send_as_bot" in out
    assert "    optional  im:message.reactions:write_only" in out
    assert (
        f"  fix: {reg.domain}/app/{APP_ID}/auth?q=im%3Amessage%3Asend_as_bot"
        "%2Cim%3Amessage.reactions%3Awrite_only&op_from=openapi&token_type=tenant\n" in out
    )
    assert f"  fix: {reg.domain}/app/{APP_ID}/event\n" in out
    audit = as_json["feishu"]["audit"]
    assert audit["complete"] is False
    assert [item["name"] for item in audit["missingCore"]] == [
        "im.message.receive_v1",
        "im:message:send_as_bot",
    ]
    assert [item["name"] for item in audit["missingOptional"]] == [
        "im:message.reactions:write_only"
    ]


def prepare(reg: FakeRegistration) -> None:
    reg.scopes.remove("im:message:send_as_bot")
    reg.scopes.remove("im:message.reactions:write_only")
    reg.events.remove("im.message.receive_v1")


# -- the decisions, as tables ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "section", "complete", "interactive", "expected"),
    [
        ({"skip": True}, True, False, True, "skip"),
        ({"reconfigure": True}, False, True, False, "register"),
        ({"setup": True}, False, False, False, "register"),
        ({"setup": True}, True, True, False, "audit"),
        ({}, False, False, True, "none"),
        ({}, False, True, True, "none"),
        ({}, True, False, False, "incomplete"),
        ({}, True, True, False, "unchecked"),
        ({}, True, False, True, "register"),
        ({}, True, True, True, "audit"),
    ],
)
def test_plan(
    flags: dict[str, bool], section: bool, complete: bool, interactive: bool, expected: str
) -> None:
    options = {"skip": False, "setup": False, "reconfigure": False, **flags}
    assert plan(**options, section=section, complete=complete, interactive=interactive) == expected


@pytest.mark.parametrize(
    ("section", "environ", "expected"),
    [
        (None, {}, (None, None, None)),
        (None, {"FEISHU_APP_ID": "a", "FEISHU_APP_SECRET": "s"}, ("a", "s", None)),
        ({"appId": "${MY_ID}", "appSecret": "${MY_SECRET}"}, {"MY_ID": "a"}, ("a", None, None)),
        (
            {"appId": "cli_lit", "appSecret": "lit", "userOpenId": "ou_1"},
            {},
            ("cli_lit", "lit", "ou_1"),
        ),
        ({"appId": "x${PART}"}, {"PART": "1", "FEISHU_APP_SECRET": "s"}, (None, "s", None)),
        ({"appId": 42}, {}, (None, None, None)),
        ({"appId": "${FEISHU_APP_ID}"}, {"FEISHU_APP_ID": ""}, (None, None, None)),
    ],
)
def test_credentials_of(
    section: dict[str, object] | None, environ: dict[str, str], expected: tuple[object, ...]
) -> None:
    found = credentials_of(section, environ)
    assert (found.app_id, found.app_secret, found.owner) == expected
    assert found.complete == (expected[0] is not None and expected[1] is not None)


async def test_a_domain_the_secret_may_not_travel_to_is_refused(robota: Robota) -> None:
    completed = await run(robota, "init", "--feishu", "--feishu-domain", "http://example.com")
    assert completed.returncode == 2
    assert (
        b"--feishu-domain: found 'http://example.com', expected the platform's base URL"
        in completed.stderr
    )
    with_feishu_section(robota, domain="ftp://127.0.0.1")
    completed = await run(robota, "init", "--feishu")
    assert completed.returncode == 2
    assert b"transports.feishu.domain: found 'ftp://127.0.0.1'" in completed.stderr
