"""One-click app registration (the device flow of ``/oauth/v1/app/registration``), pure.

The flow is RFC 8628 in Feishu's dialect, with form-encoded POSTs to the accounts host:
``action=init`` (the answer must offer ``client_secret``), ``action=begin`` (a device code, the
link the person opens or scans, the poll ``interval`` and ``expires_in``), then ``action=poll``
every ``interval`` seconds until one of:

* ``authorization_pending``: poll again after ``interval``;
* ``slow_down``: ``interval`` grows by 5 s for the rest of the flow, then poll again;
* ``access_denied`` / ``expired_token``: the person said no, or the code ran out;
* ``client_id`` + ``client_secret``: the new app's credentials, with ``user_info.open_id`` (the
  person who approved: robota's owner) and ``user_info.tenant_brand``.

An answer without credentials whose ``user_info.tenant_brand`` is ``lark`` means the person's
tenant lives on Lark: the flow switches to Lark's accounts host once and polls there at once,
and the app's API domain is Lark's.

``DeviceFlow`` decides each step from the answers and the clock it is given; ``_onboarding``
does the HTTP and the sleeping. Nothing here holds or prints a secret except the ``AppGrant``
it returns (whose ``repr`` hides it).
"""

from __future__ import annotations

import base64
import gzip
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ._errors import RegistrationFailed

__all__ = [
    "ACCOUNTS_FEISHU",
    "ACCOUNTS_LARK",
    "LARK_DOMAIN",
    "REGISTRATION_PATH",
    "SLOW_DOWN_STEP",
    "AppGrant",
    "Begin",
    "parse_init",
    "Brand",
    "DeviceFlow",
    "Poll",
    "Stop",
    "SwitchToLark",
    "Wait",
    "accounts_url",
    "encode_addons",
    "parse_begin",
    "verification_url",
]

REGISTRATION_PATH = "/oauth/v1/app/registration"
ACCOUNTS_FEISHU = "https://accounts.feishu.cn"
ACCOUNTS_LARK = "https://accounts.larksuite.com"
LARK_DOMAIN = "https://open.larksuite.com"
"""Lark's Open Platform (REST and the long connection's endpoint call)."""
SLOW_DOWN_STEP = 5.0
"""What ``slow_down`` adds to the interval (RFC 8628 s.3.5)."""
DEFAULT_INTERVAL = 5.0
DEFAULT_EXPIRES_IN = 600.0
_MAX_INTERVAL = 60.0
"""An interval above this is a broken answer: a person would wait minutes for nothing."""

Brand = Literal["feishu", "lark"]


def accounts_url(domain: str) -> str:
    """The accounts host that goes with an Open Platform base URL.

    ``https://open.feishu.cn`` -> ``https://accounts.feishu.cn``, likewise Lark's and any other
    ``open.`` host; anything else (a local test server) serves both itself.
    """
    parts = urlsplit(domain)
    host = parts.hostname or ""
    if host.startswith("open."):
        netloc = "accounts." + parts.netloc.removeprefix("open.")
        return urlunsplit((parts.scheme, netloc, "", "", "")).rstrip("/")
    return domain.rstrip("/")


def encode_addons(addons: Mapping[str, object]) -> str:
    """The ``addons`` query value: base64url (unpadded) of the gzipped compact JSON."""
    payload = json.dumps(addons, ensure_ascii=False, separators=(",", ":")).encode()
    # mtime=0: the same manifest always gives the same link.
    return base64.urlsafe_b64encode(gzip.compress(payload, mtime=0)).decode().rstrip("=")


def verification_url(
    complete_uri: str, *, source: str = "robota", addons: Mapping[str, object] | None = None
) -> str:
    """The link (and QR code) the person opens: ``verification_uri_complete`` plus what tells
    the page who asks and which scopes, events and callbacks to add to the new app."""
    parts = urlsplit(complete_uri)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)]
    query += [("from", "sdk"), ("tp", "sdk"), ("source", source)]
    if addons is not None:
        query.append(("addons", encode_addons(addons)))
    return urlunsplit(parts._replace(query=urlencode(query)))


@dataclass(frozen=True, slots=True)
class Begin:
    """What ``action=begin`` answered (validated)."""

    device_code: str = field(repr=False)
    verification_uri_complete: str
    interval: float
    expires_in: float


def _number(answer: Mapping[str, object], key: str, default: float) -> float:
    value = answer.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise RegistrationFailed("invalid", f"the registration's {key} is not a number")
    return float(value)


def _error_of(answer: object) -> tuple[str, str]:
    if not isinstance(answer, Mapping):
        return "", ""
    error, description = answer.get("error"), answer.get("error_description")
    return (
        error if isinstance(error, str) else "",
        description if isinstance(description, str) else "",
    )


def parse_init(answer: object) -> None:
    """Check ``action=init``'s answer: the server must offer the ``client_secret`` method."""
    methods = answer.get("supported_auth_methods") if isinstance(answer, Mapping) else None
    if not isinstance(methods, list) or "client_secret" not in methods:
        raise RegistrationFailed(
            "unsupported",
            "the registration server does not offer client_secret apps "
            "(supported_auth_methods lacks client_secret)",
        )


def parse_begin(answer: object) -> Begin:
    """Validate ``action=begin``'s answer."""
    if not isinstance(answer, Mapping):
        raise RegistrationFailed("invalid", "the registration's begin answer is not an object")
    error, description = _error_of(answer)
    if error:
        raise RegistrationFailed(
            "invalid", f"the registration refused to begin: {error} {description}".strip()
        )
    code, uri = answer.get("device_code"), answer.get("verification_uri_complete")
    if not isinstance(code, str) or not code:
        raise RegistrationFailed("invalid", "the registration's begin answer has no device_code")
    if not isinstance(uri, str) or urlsplit(uri).scheme not in ("http", "https"):
        raise RegistrationFailed(
            "invalid", "the registration's begin answer has no verification_uri_complete URL"
        )
    interval = _number(answer, "interval", DEFAULT_INTERVAL)
    expires_in = _number(answer, "expires_in", DEFAULT_EXPIRES_IN)
    if not 0 <= interval <= _MAX_INTERVAL:
        raise RegistrationFailed(
            "invalid", f"the registration's interval {interval:g} s is not within 0..60 s"
        )
    if expires_in <= 0:
        raise RegistrationFailed("invalid", "the registration's expires_in is not positive")
    return Begin(code, uri, interval, expires_in)


@dataclass(frozen=True, slots=True)
class AppGrant:
    """The new app: what robota stores in the profile's .env."""

    app_id: str
    app_secret: str = field(repr=False)
    owner_open_id: str | None
    """The person who approved (``user_info.open_id``): the bot's owner."""
    brand: Brand


@dataclass(frozen=True, slots=True)
class Wait:
    """Sleep ``seconds``, then poll again."""

    seconds: float
    slowed: bool = False
    """The server asked to slow down: the interval grew."""


@dataclass(frozen=True, slots=True)
class SwitchToLark:
    """Poll Lark's accounts host from now on, at once."""


@dataclass(frozen=True, slots=True)
class Stop:
    error: RegistrationFailed


Poll = Wait | SwitchToLark | AppGrant | Stop


class DeviceFlow:
    """The polling half of the flow: one decision per poll answer."""

    def __init__(self, begin: Begin, *, started: float) -> None:
        self.interval = begin.interval
        self.deadline = started + begin.expires_in
        self.expires_in = begin.expires_in
        self.brand: Brand = "feishu"

    def _expired(self) -> Stop:
        return Stop(
            RegistrationFailed(
                "expired",
                f"the registration link expired ({self.expires_in:g} s) before it was approved; "
                "run the command again for a new one",
            )
        )

    def on_poll(self, answer: object, now: float) -> Poll:
        """What to do after a poll answered ``answer`` at time ``now``."""
        if isinstance(answer, Mapping):
            grant = self._grant(answer)
            if grant is not None:
                return grant
            user = answer.get("user_info")
            brand = user.get("tenant_brand") if isinstance(user, Mapping) else None
            if brand == "lark" and self.brand == "feishu":
                self.brand = "lark"
                return SwitchToLark()
        error, description = _error_of(answer)
        detail = f" ({description})" if description else ""
        if error == "access_denied":
            return Stop(RegistrationFailed("denied", f"the app registration was declined{detail}"))
        if error == "expired_token":
            return self._expired()
        if error == "slow_down":
            self.interval = min(self.interval + SLOW_DOWN_STEP, _MAX_INTERVAL)
        elif error != "authorization_pending":
            what = f"error {error}{detail}" if error else "an answer without credentials"
            return Stop(RegistrationFailed("invalid", f"the registration failed: {what}"))
        if now + self.interval >= self.deadline:
            return self._expired()
        return Wait(self.interval, slowed=error == "slow_down")

    def _grant(self, answer: Mapping[str, object]) -> AppGrant | None:
        app_id, secret = answer.get("client_id"), answer.get("client_secret")
        if not (isinstance(app_id, str) and app_id and isinstance(secret, str) and secret):
            return None
        user = answer.get("user_info")
        owner = user.get("open_id") if isinstance(user, Mapping) else None
        brand = user.get("tenant_brand") if isinstance(user, Mapping) else None
        return AppGrant(
            app_id=app_id,
            app_secret=secret,
            owner_open_id=owner if isinstance(owner, str) and owner else None,
            brand="lark" if brand == "lark" or self.brand == "lark" else "feishu",
        )
