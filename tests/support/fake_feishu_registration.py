"""The fake platform's one-click registration and app self-inspection endpoints.

Added to a ``FakePlatform`` as an extra route: the device flow at
``/oauth/v1/app/registration`` (form-encoded POSTs, RFC 8628 errors as HTTP 400, as the
accounts host does) and, behind the fake's bearer tokens, the application and app-version
reads that ``robota init`` audits. A fake serves both the accounts host and the Open Platform:
``accounts_url`` maps a loopback domain to itself.

    async with fake_registration() as reg:   # reg.platform is the FakePlatform
        reg.polls.append(PENDING)             # one pending poll, then the grant
        ...register_app(domain=reg.domain, ...)
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from .fake_feishu import APP_ID, APP_SECRET, Answer, FakePlatform, Request, fake_platform

REGISTRATION = "/oauth/v1/app/registration"
APPS = "/open-apis/application/v6/applications/"
OWNER = "ou_fake_owner"
DEVICE_CODE = "dev-code-fake-77"
VERIFY = "https://accounts.example.test/verify?user_code=WXYZ-1234"
VERSION_ID = "7301"

PENDING: dict[str, Any] = {"error": "authorization_pending"}
SLOW_DOWN: dict[str, Any] = {"error": "slow_down"}
DENIED: dict[str, Any] = {"error": "access_denied", "error_description": "the user declined"}
EXPIRED: dict[str, Any] = {"error": "expired_token"}
LARK_SWITCH: dict[str, Any] = {
    "error": "authorization_pending",
    "user_info": {"tenant_brand": "lark"},
}

# Everything a fully configured robota app has (written out here, not imported from the code
# under test, so a requirement dropped by mistake there still shows up as a difference).
ALL_SCOPES = [
    "im:message:send_as_bot",
    "application:application:self_manage",
    "im:chat:create",
    "im:chat:read",
    "im:message.reactions:write_only",
    "im:message:readonly",
    "im:resource",
]
ALL_EVENTS = ["im.message.receive_v1", "im.chat.updated_v1"]
ALL_CALLBACKS = ["card.action.trigger"]


@dataclass
class FakeRegistration:
    platform: FakePlatform
    brand: str = "feishu"
    interval: float = 0
    expires_in: float = 600
    init_answer: dict[str, Any] = field(
        default_factory=lambda: {"supported_auth_methods": ["client_secret"]}
    )
    polls: deque[dict[str, Any]] = field(default_factory=deque)
    """Answers of the next polls; once empty, polls grant the app."""
    forms: list[dict[str, str]] = field(default_factory=list)
    scopes: list[str] = field(default_factory=lambda: list(ALL_SCOPES))
    events: list[str] = field(default_factory=lambda: list(ALL_EVENTS))
    callbacks: list[str] | None = field(default_factory=lambda: list(ALL_CALLBACKS))
    """``None``: the app answer carries no ``callback`` object."""
    published: bool = True
    self_manage: bool = True
    """Without it, reading the app answers 99991672 (no permission)."""

    @property
    def domain(self) -> str:
        return self.platform.domain

    @property
    def actions(self) -> list[str]:
        return [form.get("action", "") for form in self.forms]

    def route(self, request: Request) -> Answer | None:
        if request.path == REGISTRATION:
            return self._registration(request)
        if request.path.startswith(APPS):
            return self._inspection(request)
        return None

    def _registration(self, request: Request) -> Answer:
        if request.method != "POST":
            return 405, {}, {"error": "invalid_request"}
        if "application/x-www-form-urlencoded" not in request.headers.get("content-type", ""):
            return 400, {}, {"error": "invalid_request", "error_description": "not a form"}
        form = dict(parse_qsl(request.body.decode()))
        self.forms.append(form)
        action = form.get("action")
        if action == "init":
            return 200, {}, self.init_answer
        if action == "begin":
            expected = {
                "archetype": "PersonalAgent",
                "auth_method": "client_secret",
                "request_user_info": "open_id",
            }
            if any(form.get(k) != v for k, v in expected.items()):
                return 400, {}, {"error": "invalid_request"}
            return (
                200,
                {},
                {
                    "device_code": DEVICE_CODE,
                    "user_code": "WXYZ-1234",
                    "verification_uri": VERIFY.split("?", maxsplit=1)[0],
                    "verification_uri_complete": VERIFY,
                    "interval": self.interval,
                    "expires_in": self.expires_in,
                },
            )
        if action == "poll":
            if form.get("device_code") != DEVICE_CODE:
                return 400, {}, {"error": "invalid_grant"}
            if self.polls:
                return 400, {}, self.polls.popleft()
            return (
                200,
                {},
                {
                    "client_id": APP_ID,
                    "client_secret": APP_SECRET,
                    "user_info": {"open_id": OWNER, "tenant_brand": self.brand},
                },
            )
        return 400, {}, {"error": "invalid_request"}

    def _inspection(self, request: Request) -> Answer:
        auth = request.headers.get("authorization", "").removeprefix("Bearer ")
        if auth not in self.platform.tokens or auth in self.platform.revoked:
            return 400, {}, {"code": 99991663, "msg": "Invalid access token for authorization."}
        if "lang=" not in request.query:
            return 400, {}, {"code": 99992402, "msg": "field validation failed: lang"}
        if not self.self_manage:
            return 400, {}, {"code": 99991672, "msg": "Access denied: app has no permission"}
        rest = request.path.removeprefix(APPS)
        if rest == APP_ID:
            app: dict[str, Any] = {
                "app_id": APP_ID,
                "online_version_id": VERSION_ID if self.published else "",
            }
            if self.callbacks is not None:
                app["callback"] = {
                    "callback_type": "websocket",
                    "subscribed_callbacks": self.callbacks,
                }
            return 200, {}, {"code": 0, "msg": "success", "data": {"app": app}}
        if rest == f"{APP_ID}/app_versions/{VERSION_ID}" and self.published:
            version = {
                "app_id": APP_ID,
                "version_id": VERSION_ID,
                "scopes": [{"scope": s, "token_types": ["tenant"]} for s in self.scopes],
                "events": self.events[:1],
                "event_infos": [{"event_type": e} for e in self.events[1:]],
            }
            return 200, {}, {"code": 0, "msg": "success", "data": {"app_version": version}}
        return 404, {}, {"code": 404, "msg": f"no app {rest}"}


@asynccontextmanager
async def fake_registration(**options: Any) -> AsyncIterator[FakeRegistration]:
    async with fake_platform() as platform:
        registration = FakeRegistration(platform, **options)
        platform.routes.append(registration.route)
        yield registration
