"""``robota init``'s Feishu/Lark part: register the bot's app, store it, check what it may do.

The plugin's init step (``robota.core.config.SetsUpOnInit``: ``FeishuTransport.init_step``
calls ``init_step`` here): the CLI hands it the request made of init's Feishu flags and
reports the outcome; this module decides, talks to the platform and to the person (stderr).

When it runs (``plan``, a pure table):

* ``--skip-feishu``: never; the profile's Feishu settings are left as they are.
* ``--feishu``: set Feishu up: register a new app when the credentials are incomplete (no
  ``appId`` or ``appSecret`` after ``${NAME}`` expansion), then audit it.
* ``--reconfigure-feishu``: register a new app even when the credentials are complete.
* no flag: only when config.yaml has a ``transports.feishu`` section and init runs on a
  terminal (registering needs a person with a phone, and a script should not wait ten minutes
  for one, nor reach the network unasked); elsewhere the JSON says ``incomplete`` or
  ``unchecked`` and the report names the flag.

Registering is the device flow of ``robota.transports.feishu.register_app``: the link and its
QR code go to stderr (so ``--json`` keeps stdout one object), the server's interval and expiry
are honoured, a Lark tenant switches to Lark. The new ``FEISHU_APP_ID``, ``FEISHU_APP_SECRET``
and ``FEISHU_USER_OPEN_ID`` (the person who approved: the owner) are written into the
profile's .env in one atomic, owner-only (0600) replacement and read back; config.yaml gets the
``transports.feishu`` entries it lacks, as ``${FEISHU_*}`` references (plus ``domain`` for
Lark), through the comment-keeping merge. All of it happens under the profile's init lock, so
two inits cannot create two apps.

The secret is never printed, logged or put in argv or the JSON; it travels only to the .env
file and to the platform's token call.
"""

from __future__ import annotations

import io
import os
import re
import stat
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import click

from ._device_flow import LARK_DOMAIN
from ._errors import RegistrationFailed
from ._onboarding import Registered, audit_app, register_app
from ._settings import DEFAULT_DOMAIN, DOMAIN_EXPECTED, valid_domain

if TYPE_CHECKING:
    from robota.core.config import InitRequest, Profile

    from ._app_audit import AppAudit

__all__ = [
    "ENV_APP_ID",
    "ENV_APP_SECRET",
    "ENV_OWNER",
    "FeishuOutcome",
    "Plan",
    "Options",
    "credentials_of",
    "init_step",
    "plan",
    "report",
    "run_feishu",
]

ENV_APP_ID = "FEISHU_APP_ID"
ENV_APP_SECRET = "FEISHU_APP_SECRET"
ENV_OWNER = "FEISHU_USER_OPEN_ID"
_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")

Plan = Literal["skip", "none", "register", "audit", "incomplete", "unchecked"]


def plan(
    *,
    skip: bool,
    setup: bool,
    reconfigure: bool,
    section: bool,
    complete: bool,
    interactive: bool,
) -> Plan:
    """What init does about Feishu (see the module docstring)."""
    if skip:
        return "skip"
    if reconfigure or (setup and not complete):
        return "register"
    if setup:
        return "audit"
    if not section:
        return "none"
    if not interactive:
        return "unchecked" if complete else "incomplete"
    return "audit" if complete else "register"


@dataclass(frozen=True, slots=True)
class Credentials:
    app_id: str | None
    app_secret: str | None = field(repr=False)
    owner: str | None

    @property
    def complete(self) -> bool:
        return bool(self.app_id and self.app_secret)


def _resolve(value: object, environ: Mapping[str, str]) -> str | None:
    """A section value as robota would read it: a whole ``${NAME}`` from ``environ``, or a
    literal string; anything else (absent, a partial reference, not a string) is unknown."""
    if not isinstance(value, str) or not value:
        return None
    reference = _REFERENCE.fullmatch(value)
    if reference is not None:
        return environ.get(reference[1]) or None
    return None if "${" in value else value


def credentials_of(section: Mapping[str, object] | None, environ: Mapping[str, str]) -> Credentials:
    """The credentials in force: the section's values, or the ``FEISHU_*`` variables init
    would refer to when there is no section yet."""
    raw = section if section is not None else {}

    def value(key: str, variable: str) -> str | None:
        return _resolve(raw.get(key, f"${{{variable}}}"), environ)

    return Credentials(
        value("appId", ENV_APP_ID),
        value("appSecret", ENV_APP_SECRET),
        value("userOpenId", ENV_OWNER),
    )


@dataclass
class FeishuOutcome:
    """What the Feishu part did, for the report and the JSON (never the secret)."""

    status: str
    """``skipped``, ``not-configured``, ``registered``, ``existing``, ``incomplete``,
    ``unchecked`` or ``failed``."""
    app_id: str | None = None
    owner: str | None = None
    domain: str | None = None
    brand: str | None = None
    audit: AppAudit | None = None
    error: str | None = None
    warnings: list[str] = field(default_factory=list)

    def json(self) -> dict[str, Any]:
        audit = self.audit
        return {
            "status": self.status,
            "appId": self.app_id,
            "userOpenId": self.owner,
            "domain": self.domain,
            "brand": self.brand,
            "error": self.error,
            "warnings": self.warnings,
            "audit": None if audit is None else _audit_json(audit),
        }

    def report(self) -> None:
        """Its lines in ``robota init``'s report (``robota.core.config.InitOutcome``)."""
        report(self)


def _audit_json(audit: AppAudit) -> dict[str, Any]:
    def items(requirements: Any) -> list[dict[str, str]]:
        return [{"kind": r.kind, "name": r.name, "feature": r.feature} for r in requirements]

    return {
        "complete": audit.complete,
        "version": audit.version,
        "missingCore": items(audit.missing_core),
        "missingOptional": items(audit.missing_optional),
        "unverified": items(audit.unverified),
        "fixUrls": list(audit.fix_urls),
        "error": audit.error,
    }


def _progress(text: str) -> None:
    click.echo(text, err=True)


def qr_text(url: str) -> str | None:
    """The QR code of ``url`` drawn with half blocks, or ``None`` when stderr cannot show them."""
    encoding = (getattr(sys.stderr, "encoding", None) or "").lower().replace("-", "")
    if encoding not in ("utf8", "utf_8"):
        return None
    import segno  # noqa: PLC0415 (lazy: only a registration draws one)

    out = io.StringIO()
    segno.make(url, error="l").terminal(out=out, compact=True, border=2)
    return out.getvalue()


def _show_link(url: str, expires_in: float) -> None:
    minutes = max(1, round(expires_in / 60))
    _progress(
        "Create robota's Feishu/Lark bot app: scan this QR code with the Feishu or Lark app, "
        f"or open the link below (valid for {minutes} min)."
    )
    drawing = qr_text(url)
    if drawing is not None:
        _progress(drawing.rstrip("\n"))
    else:
        _progress("(no QR code: this terminal's encoding cannot draw one)")
    _progress(url)


class _Status:
    """Progress lines for the flow's status reports; waiting is said once."""

    def __init__(self) -> None:
        self.waiting = False

    def __call__(self, what: str) -> None:
        if what == "lark":
            _progress("Lark tenant: continuing the registration on Lark.")
        elif what == "slow_down":
            _progress("The server asked to poll more slowly.")
        elif what == "waiting" and not self.waiting:
            self.waiting = True
            _progress("Waiting for the approval (Ctrl-C to give up)...")


def _read_section(profile: Profile) -> tuple[bool, Mapping[str, object] | None]:
    """``(present, section)`` of ``transports.feishu`` in config.yaml, read as plain YAML."""
    from ruamel.yaml import YAML  # noqa: PLC0415 (lazy, see _init_cmd)

    try:
        data = YAML(typ="safe").load(profile.config_file.read_text(encoding="utf-8"))
    except Exception:  # an unreadable file is reported by the config check
        return False, None
    transports = data.get("transports") if isinstance(data, dict) else None
    if not isinstance(transports, dict) or "feishu" not in transports:
        return False, None
    section = transports["feishu"]
    return True, section if isinstance(section, dict) else {}


def _environment(profile: Profile) -> dict[str, str]:
    """The profile's .env under the process environment (which wins, as when robota runs)."""
    from robota.core.config import dotenv_values  # noqa: PLC0415

    values: dict[str, str] = {}
    if profile.env_file.exists():
        values = dotenv_values(
            profile.env_file.read_text(encoding="utf-8"), file=str(profile.env_file)
        )
    return {**values, **os.environ}


def _section_text(domain: str | None, owner: bool) -> str:
    lines = [
        "transports:",
        "  feishu:",
        f"    appId: ${{{ENV_APP_ID}}}",
        f"    appSecret: ${{{ENV_APP_SECRET}}}",
    ]
    if owner:
        lines.append(f"    userOpenId: ${{{ENV_OWNER}}}")
    lines.append("    respondToOwnerOnly: true")
    if domain is not None:
        lines.append(f"    domain: {domain}")
    return "\n".join(lines) + "\n"


def _merge_section(profile: Profile, *, domain: str | None, owner: bool) -> tuple[str, str]:
    """``(config.yaml's text, the text with the section's missing entries)``; raises
    ``ConfigError`` for a file the merge cannot keep intact."""
    from robota.core.config import merge_config_text  # noqa: PLC0415

    config_file = profile.config_file
    text = config_file.read_text(encoding="utf-8")
    section = _section_text(domain, owner)
    return text, merge_config_text(text, section, file=str(config_file))


def store(profile: Profile, registered: Registered, *, default_domain: str) -> list[str]:
    """Write the new app into .env and config.yaml; return warnings about values config.yaml
    keeps that would hide it."""
    from robota.core import ConfigError  # noqa: PLC0415
    from robota.core.config import atomic_write, dotenv_values, set_dotenv  # noqa: PLC0415

    grant = registered.grant
    values = {ENV_APP_ID: grant.app_id, ENV_APP_SECRET: grant.app_secret}
    if grant.owner_open_id is not None:
        values[ENV_OWNER] = grant.owner_open_id
    env_file = profile.env_file
    existing = env_file.read_text(encoding="utf-8") if env_file.exists() else ""
    atomic_write(env_file, set_dotenv(existing, values).encode("utf-8"))
    stored = dotenv_values(env_file.read_text(encoding="utf-8"), file=str(env_file))
    if any(stored.get(key) != value for key, value in values.items()):
        raise ConfigError(str(env_file), ENV_APP_ID, "other values after writing", "the new app")

    domain = None if registered.domain == default_domain else registered.domain
    text, merged = _merge_section(profile, domain=domain, owner=grant.owner_open_id is not None)
    if merged != text:
        atomic_write(
            profile.config_file,
            merged.encode("utf-8"),
            mode=stat.S_IMODE(profile.config_file.stat().st_mode),
        )
    _, section = _read_section(profile)
    return _hidden_by_config(section or {}, domain or default_domain, default_domain)


def _hidden_by_config(section: Mapping[str, object], domain: str, default: str) -> list[str]:
    warnings = []
    for key, variable in (
        ("appId", ENV_APP_ID),
        ("appSecret", ENV_APP_SECRET),
        ("userOpenId", ENV_OWNER),
    ):
        value = section.get(key)
        if value is not None and value != f"${{{variable}}}":
            warnings.append(
                f"transports.feishu.{key} in config.yaml is not ${{{variable}}}: "
                f"change it to ${{{variable}}} to use the new app"
            )
    configured = section.get("domain", default)
    if isinstance(configured, str) and configured.rstrip("/") != domain:
        warnings.append(
            f"transports.feishu.domain in config.yaml is not {domain}: the new app lives there"
        )
    return warnings


@dataclass(frozen=True, slots=True)
class Options:
    skip: bool
    setup: bool
    reconfigure: bool
    domain: str | None
    lark_domain: str | None
    interactive: bool


def init_step(
    profile: Profile, request: InitRequest, *, on_wait: Callable[[int | None], None]
) -> FeishuOutcome:
    """The plugin's init step: the request's flags as this module's options (``lark-domain``:
    the hidden ``--lark-domain``, Lark's Open Platform for tests)."""
    options = Options(
        skip=request.skip,
        setup=request.setup,
        reconfigure=request.reconfigure,
        domain=request.domain,
        lark_domain=request.options.get("lark-domain"),
        interactive=request.interactive,
    )
    return run_feishu(profile, options, on_wait=on_wait)


def run_feishu(
    profile: Profile,
    options: Options,
    *,
    on_wait: Callable[[int | None], None],
) -> FeishuOutcome:
    """The Feishu part of init; a failed registration is an outcome with ``error``."""
    present, section = _read_section(profile)
    credentials = credentials_of(section, _environment(profile))
    what = plan(
        skip=options.skip,
        setup=options.setup,
        reconfigure=options.reconfigure,
        section=present,
        complete=credentials.complete,
        interactive=options.interactive,
    )
    if what == "skip":
        return FeishuOutcome("skipped")
    if what == "none":
        return FeishuOutcome("not-configured")

    domain = _domain(profile, options, (section or {}).get("domain"))
    if what in ("incomplete", "unchecked"):
        return FeishuOutcome(
            what, app_id=credentials.app_id, owner=credentials.owner, domain=domain
        )
    all_groups = (section or {}).get("respondToAllGroupMessages") is True
    if what == "register":
        outcome, secret = _register(profile, options, domain, on_wait=on_wait)
        if secret is None:
            return outcome
        app_id = outcome.app_id
        domain = outcome.domain or domain
    else:
        outcome = FeishuOutcome(
            "existing", app_id=credentials.app_id, owner=credentials.owner, domain=domain
        )
        app_id, secret = credentials.app_id, credentials.app_secret
    assert app_id is not None and secret is not None
    outcome.audit = _audit(domain, app_id, secret, all_groups)
    return outcome


def _domain(profile: Profile, options: Options, configured: object) -> str:
    """The Open Platform to talk to: ``--feishu-domain``, else the section's, else Feishu's;
    a URL the credentials may not travel to is refused (``ConfigError``, exit 2)."""
    from robota.core import ConfigError  # noqa: PLC0415

    for where, value in (
        ("--lark-domain", options.lark_domain),
        ("--feishu-domain", options.domain),
    ):
        if value is not None and valid_domain(value) is None:
            raise ConfigError(None, where, repr(value), DOMAIN_EXPECTED)
    if options.domain is not None:
        return options.domain.rstrip("/")
    if configured is None or (isinstance(configured, str) and "${" in configured):
        return DEFAULT_DOMAIN  # a reference is the config check's to report
    domain = valid_domain(configured) if isinstance(configured, str) else None
    if domain is None:
        file = str(profile.config_file)
        raise ConfigError(file, "transports.feishu.domain", repr(configured), DOMAIN_EXPECTED)
    return domain


def _register(
    profile: Profile, options: Options, domain: str, *, on_wait: Callable[[int | None], None]
) -> tuple[FeishuOutcome, str | None]:
    """The outcome, and the new secret for the audit (``None`` when registering failed)."""
    import trio  # noqa: PLC0415

    from robota.core.config import init_lock  # noqa: PLC0415

    async def register() -> Registered:
        return await register_app(
            domain=domain,
            lark_domain=options.lark_domain or LARK_DOMAIN,
            on_link=_show_link,
            on_status=_Status(),
        )

    # A config.yaml the section cannot be merged into fails now, before an app is created.
    _merge_section(profile, domain=None, owner=True)
    # The lock spans the registration: two inits at once must not create two apps.
    with init_lock(profile.init_lock, on_wait=on_wait):
        try:
            registered = trio.run(register)
        except RegistrationFailed as error:
            return FeishuOutcome("failed", domain=domain, error=str(error)), None
        warnings = store(profile, registered, default_domain=DEFAULT_DOMAIN)
    grant = registered.grant
    _progress(f"Registered the app {grant.app_id}; its credentials are in {profile.env_file}.")
    # The environment wins over .env when robota runs: an exported old app would hide this one.
    warnings += [
        f"{name} is set in the environment and wins over the new value in .env: unset it"
        for name in (ENV_APP_ID, ENV_APP_SECRET, ENV_OWNER)
        if name in os.environ
    ]
    outcome = FeishuOutcome(
        "registered",
        app_id=grant.app_id,
        owner=grant.owner_open_id,
        domain=registered.domain,
        brand=grant.brand,
        warnings=warnings,
    )
    return outcome, grant.app_secret


def _audit(domain: str, app_id: str, secret: str, all_groups: bool) -> AppAudit:
    import trio  # noqa: PLC0415

    _progress(f"Checking the published version of {app_id}...")

    async def audit() -> AppAudit:
        return await audit_app(
            domain=domain, app_id=app_id, app_secret=secret, all_group_messages=all_groups
        )

    return trio.run(audit)


def report(outcome: FeishuOutcome) -> None:
    """The human-readable part of init's report (stdout)."""
    status = outcome.status
    if status == "skipped":
        click.echo("Feishu: skipped (--skip-feishu)")
        return
    if status == "not-configured":
        click.echo("Feishu: not set up; `robota init --feishu` registers a bot app")
        return
    if status == "incomplete":
        click.echo("Feishu: credentials incomplete; run `robota init --feishu` on a terminal")
        return
    if status == "unchecked":
        click.echo(f"Feishu: app {outcome.app_id} (not checked: run `robota init --feishu`)")
        return
    if status == "failed":
        click.echo(f"Feishu: registration failed: {outcome.error}")
        return
    brand = f", {outcome.brand}" if outcome.brand else ""
    click.echo(f"Feishu: app {outcome.app_id} ({status}{brand}), domain {outcome.domain}")
    click.echo(f"  owner open_id: {outcome.owner or 'unknown (set FEISHU_USER_OPEN_ID in .env)'}")
    for warning in outcome.warnings:
        click.echo(f"  warning: {warning}")
    audit = outcome.audit
    if audit is None:
        return
    if audit.error is not None:
        click.echo(f"  app check failed: {audit.error}")
    elif audit.version is None:
        click.echo("  no published version: publish one, then run `robota init --feishu` again")
    elif audit.complete:
        click.echo(f"  app version {audit.version}: every scope, event and callback is there")
    else:
        click.echo(f"  app version {audit.version} lacks:")
    if audit.version is not None or audit.error is None:
        for requirement in audit.missing_core:
            click.echo(f"    core      {requirement.name:<38} {requirement.feature}")
        for requirement in audit.missing_optional:
            click.echo(f"    optional  {requirement.name:<38} {requirement.feature}")
        for requirement in audit.unverified:
            click.echo(f"    unchecked {requirement.name:<38} {requirement.feature}")
    for url in audit.fix_urls:
        click.echo(f"  fix: {url}")
    if audit.missing_core or audit.missing_optional:
        click.echo("  then publish a new version of the app and run `robota init --feishu` again")
