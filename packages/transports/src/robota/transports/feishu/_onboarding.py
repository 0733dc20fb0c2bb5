"""The I/O of ``robota init`` for Feishu: registering an app, auditing the published version.

Thin shells on httpx under trio around the pure ``_device_flow`` and ``_app_audit``. The
registration's HTTP is form-encoded POSTs to the accounts host (``accounts_url(domain)``); a
poll that fails on the network is retried after the interval, three times in a row at most.
``clock`` and ``sleep`` are parameters so that tests can check the waits the server asked for
without spending them.

The app secret appears only in the returned ``AppGrant`` and in the audit's token request;
nothing here logs, prints or raises with it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import trio

from ._app_audit import AppAudit, addons_manifest, assess, audit_failed
from ._device_flow import (
    LARK_DOMAIN,
    REGISTRATION_PATH,
    AppGrant,
    DeviceFlow,
    Stop,
    SwitchToLark,
    Wait,
    accounts_url,
    parse_begin,
    parse_init,
    verification_url,
)
from ._errors import ApiError, RegistrationFailed
from ._rest import RestClient

if TYPE_CHECKING:
    import httpx

__all__ = ["Registered", "audit_app", "register_app"]

_NETWORK_RETRIES = 3
_PERMISSION_CODES = frozenset({99991672, 99991679})
"""The platform's "the app lacks a scope for this call" codes."""


@dataclass(frozen=True, slots=True)
class Registered:
    grant: AppGrant
    domain: str
    """The app's Open Platform base URL: the one asked for, or Lark's after a brand switch."""


async def _post(http: httpx.AsyncClient, base: str, form: Mapping[str, str]) -> object:
    import httpx  # noqa: PLC0415 (lazy, see the facade)

    action = form["action"]
    try:
        response = await http.post(base + REGISTRATION_PATH, data=dict(form))
    except httpx.HTTPError as error:
        raise RegistrationFailed(
            "network", f"the registration's {action} call failed: {type(error).__name__}"
        ) from None
    # Errors come as HTTP 400 with an RFC 8628 error object: read the body whatever the status.
    try:
        return json.loads(response.content)
    except ValueError:
        raise RegistrationFailed(
            "invalid",
            f"the registration's {action} answer (HTTP {response.status_code}) is not JSON",
        ) from None


async def register_app(
    *,
    domain: str,
    on_link: Callable[[str, float], None],
    on_status: Callable[[str], None] | None = None,
    lark_domain: str = LARK_DOMAIN,
    source: str = "robota",
    timeout: float = 10.0,
    clock: Callable[[], float] = trio.current_time,
    sleep: Callable[[float], Awaitable[None]] = trio.sleep,
) -> Registered:
    """Run the device flow until the person approves; raise ``RegistrationFailed`` otherwise.

    ``on_link(url, expires_in)`` gets the link to show (as text and QR code); ``on_status``
    gets ``waiting``, ``slow_down`` and ``lark`` as they happen.
    """
    import httpx  # noqa: PLC0415 (lazy, see the facade)

    def status(what: str) -> None:
        if on_status is not None:
            on_status(what)

    base = accounts_url(domain)
    async with httpx.AsyncClient(timeout=timeout) as http:
        parse_init(await _post(http, base, {"action": "init"}))
        begin = parse_begin(
            await _post(
                http,
                base,
                {
                    "action": "begin",
                    "archetype": "PersonalAgent",
                    "auth_method": "client_secret",
                    "request_user_info": "open_id",
                },
            )
        )
        on_link(
            verification_url(
                begin.verification_uri_complete, source=source, addons=addons_manifest()
            ),
            begin.expires_in,
        )
        flow = DeviceFlow(begin, started=clock())
        failures = 0
        while True:
            try:
                answer = await _post(
                    http, base, {"action": "poll", "device_code": begin.device_code}
                )
            except RegistrationFailed as error:
                failures += 1
                if error.kind != "network" or failures > _NETWORK_RETRIES:
                    raise
                await sleep(flow.interval)
                continue
            failures = 0
            step = flow.on_poll(answer, clock())
            if isinstance(step, AppGrant):
                return Registered(step, lark_domain if step.brand == "lark" else domain)
            if isinstance(step, Stop):
                raise step.error
            if isinstance(step, SwitchToLark):
                base = accounts_url(lark_domain)
                status("lark")
                continue
            assert isinstance(step, Wait)
            status("slow_down" if step.slowed else "waiting")
            await sleep(step.seconds)


def _data(answer: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    data = answer.get("data")
    value = data.get(key) if isinstance(data, Mapping) else None
    return value if isinstance(value, Mapping) else None


async def audit_app(
    *,
    domain: str,
    app_id: str,
    app_secret: str,
    all_group_messages: bool,
    timeout: float = 10.0,
) -> AppAudit:
    """Read the app and its published version and check them; a failed read is reported in
    the result (``error``), never raised: the credentials are stored either way."""
    console = domain.rstrip("/")
    base = f"/open-apis/application/v6/applications/{app_id}"
    params = {"lang": "en_us"}
    try:
        async with RestClient(
            domain=domain, app_id=app_id, app_secret=app_secret, timeout=timeout, retries=1
        ) as rest:
            app = _data(await rest.call("GET", base, params=params), "app")
            if app is None:
                return audit_failed(
                    app_id, console, "the app's answer has no app", permission=False
                )
            online = app.get("online_version_id")
            if online in (None, "", 0, "0"):
                return assess(app, None, console=console, all_group_messages=all_group_messages)
            answer = await rest.call("GET", f"{base}/app_versions/{online}", params=params)
            version = _data(answer, "app_version")
            if version is None:
                return audit_failed(
                    app_id, console, "the version's answer has no app_version", permission=False
                )
    except ApiError as error:
        return audit_failed(
            app_id,
            console,
            f"reading the app failed: {error}",
            permission=error.code in _PERMISSION_CODES,
        )
    return assess(app, version, console=console, all_group_messages=all_group_messages)
