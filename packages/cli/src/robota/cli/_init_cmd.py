"""``robota init``: create or update the profile, then report which agents are installed.

Nothing is ever installed without asking: on a terminal the user picks which missing agents to
install; anywhere else (CI, a provisioning script, ``--json`` piped into jq with no terminal)
the exact npm commands are printed and nothing runs. With ``--json``, stdout carries exactly one
JSON object and everything meant for a person goes to stderr.

A chat transport's part (Feishu/Lark: registering the bot's app, checking what it may do) is
its plugin's init step (``robota.core.config.SetsUpOnInit``; Feishu's docstring,
``robota.transports.feishu._init_step``, says when it runs): init hands it the request made of
its flags and reports what it did.

Only click is imported at module level; the config machinery (ruamel, the kernel) is imported
when the command runs, so ``robota --help`` stays fast.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

import click

if TYPE_CHECKING:
    from robota.core.config import AgentStatus, InitOutcome, InitRequest, InitResult, Profile

__all__ = ["init_command", "parse_selection"]

_PROMPT = "Install missing agents now? [list numbers/all/empty=skip]"


def parse_selection(answer: str, count: int) -> list[int] | None:
    """Indexes (0-based) chosen by an answer like ``1,3``, ``2 4``, ``all`` or nothing.

    ``None`` means the answer is not understood, so the caller asks again instead of guessing.
    """
    text = answer.strip().lower()
    if not text:
        return []
    if text in ("all", "a"):
        return list(range(count))
    chosen: list[int] = []
    for part in text.replace(",", " ").split():
        if not part.isdigit() or not 1 <= int(part) <= count:
            return None
        if int(part) - 1 not in chosen:
            chosen.append(int(part) - 1)
    return chosen


def _interactive() -> bool:
    return sys.stdin.isatty() and sys.stderr.isatty()


def _fail(message: str, *, as_json: bool, code: int) -> NoReturn:
    if as_json:
        click.echo(json.dumps({"ok": False, "error": message}))
    click.echo(f"robota init: {message}", err=True)
    sys.exit(code)


def _agent_json(status: AgentStatus) -> dict[str, Any]:
    return {
        "name": status.agent.command,
        "package": status.agent.package,
        "installed": status.installed,
        "version": status.version,
        "path": str(status.path) if status.path else None,
        "installCommand": status.agent.install_command,
    }


def _check_config(profile: Profile) -> tuple[str | None, str | None]:
    """``(default agent, problem)`` of the profile as robota would load it now."""
    from robota.core import ConfigError  # noqa: PLC0415 (see the module docstring)
    from robota.core.config import load_config  # noqa: PLC0415

    try:
        # A copy: checking must not load the profile's .env into this process.
        config = load_config(profile, environ=dict(os.environ))
    except ConfigError as error:
        return None, str(error)
    return config.defaults.agent, None


def _report(
    result: InitResult,
    default_agent: str | None,
    problem: str | None,
    agents: Sequence[AgentStatus],
) -> None:
    profile = result.profile
    where = "ROBOTA_HOME" if profile.pinned else "platform directories"
    click.echo(f"robota profile: {profile.home} ({where})")
    rows = [
        ("config.yaml", result.config),
        (".env", result.env),
        ("data", result.data_dir),
        ("logs", result.log_dir),
    ]
    for label, outcome in rows:
        click.echo(f"  {outcome.status:<10} {label:<12} {outcome.path}")
    if result.backup is not None:
        click.echo(f"  {'backup':<10} {'':<12} {result.backup}")
    if problem is None:
        click.echo(f"Config: ok, default agent {default_agent}")
    else:
        click.echo(f"Config: {problem}")
    click.echo("Agents:")
    for status in agents:
        name = status.agent.command
        if status.installed:
            version = status.version or "version unknown"
            click.echo(f"  {name:<18} installed ({version})")
        else:
            click.echo(f"  {name:<18} missing: {status.agent.install_command}")


def _install(missing: Sequence[AgentStatus]) -> bool:
    """Ask which missing agents to install and install them; return whether any npm ran."""
    click.echo("Missing agents:", err=True)
    for number, status in enumerate(missing, start=1):
        click.echo(
            f"  {number}. {status.agent.command:<18} {status.agent.install_command}", err=True
        )
    while True:
        answer = click.prompt(_PROMPT, default="", show_default=False, err=True)
        chosen = parse_selection(answer, len(missing))
        if chosen is not None:
            break
        click.echo(f"Answer with numbers from 1 to {len(missing)}, 'all', or nothing.", err=True)
    if not chosen:
        return False
    npm = shutil.which("npm")
    if npm is None:
        click.echo("npm is not on PATH: install Node.js, then run the commands above.", err=True)
        return False
    for index in chosen:
        agent = missing[index].agent
        click.echo(f"$ {agent.install_command}", err=True)
        # npm's output goes to stderr so that stdout stays the report (or the JSON object).
        completed = subprocess.run(
            [npm, "install", "-g", agent.package],
            stdin=subprocess.DEVNULL,
            stdout=sys.stderr.fileno(),
            check=False,
        )
        if completed.returncode != 0:
            click.echo(f"{agent.install_command} failed (exit {completed.returncode})", err=True)
    return True


def _result_json(
    result: InitResult,
    default_agent: str | None,
    problem: str | None,
    agents: Sequence[AgentStatus],
    feishu: InitOutcome,
) -> dict[str, Any]:
    profile = result.profile

    def file(outcome: Any) -> dict[str, str]:
        return {"path": str(outcome.path), "status": outcome.status}

    return {
        "ok": feishu.error is None,
        "error": feishu.error,
        "profile": {
            "home": str(profile.home),
            "pinned": profile.pinned,
            "configFile": str(profile.config_file),
            "envFile": str(profile.env_file),
            "dataDir": str(profile.data_dir),
            "logDir": str(profile.log_dir),
        },
        "files": {
            "config": file(result.config),
            "env": file(result.env),
            "dataDir": file(result.data_dir),
            "logDir": file(result.log_dir),
        },
        "backup": str(result.backup) if result.backup else None,
        "config": {"ok": problem is None, "error": problem},
        "defaultAgent": default_agent,
        "agents": [_agent_json(status) for status in agents],
        "feishu": feishu.json(),
    }


def _transport_step(
    name: str,
    profile: Profile,
    request: InitRequest,
    *,
    as_json: bool,
    on_wait: Callable[[int | None], None],
) -> InitOutcome:
    """The init step of transport plugin ``name`` (``SetsUpOnInit``)."""
    from robota.core import ConfigError, PluginError, transport_plugin  # noqa: PLC0415
    from robota.core.config import InitLockTimeout, SetsUpOnInit  # noqa: PLC0415

    try:
        plugin = transport_plugin(name)
    except (KeyError, PluginError) as error:
        _fail(f"the {name} transport plugin cannot set up: {error}", as_json=as_json, code=1)
    if not isinstance(plugin, SetsUpOnInit):
        _fail(f"the {name} transport plugin has no init step", as_json=as_json, code=1)
    try:
        return plugin.init_step(profile, request, on_wait=on_wait)
    except ConfigError as error:
        _fail(str(error), as_json=as_json, code=2)
    except InitLockTimeout as error:
        _fail(str(error), as_json=as_json, code=1)


def _refresh_skill() -> dict[str, Any]:
    """Install or refresh the managed agent skill (``robota skills``); never fails init."""
    from robota.core import robota_version  # noqa: PLC0415

    from ._skills import SkillError, refresh, skills_dir  # noqa: PLC0415

    try:
        root = skills_dir(None, os.environ)
        return {**refresh(root, robota_version()).to_json(), "error": None}
    except SkillError as error:
        return {"state": "error", "path": None, "error": str(error)}


@click.command("init")
@click.option(
    "--reset",
    is_flag=True,
    help="Move the existing config.yaml, .env, data and logs to "
    "<home>/.reset-backups/<timestamp>/ first, then create fresh ones.",
)
@click.option("--yes", "-y", is_flag=True, help="Confirm --reset without asking.")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print one JSON object on stdout; prompts and progress go to stderr.",
)
@click.option(
    "--feishu",
    "setup_feishu",
    is_flag=True,
    help="Set up the Feishu/Lark bot: register a new app (QR code and link on stderr) "
    "unless the profile has complete credentials, then check its scopes and events.",
)
@click.option(
    "--reconfigure-feishu",
    is_flag=True,
    help="Register a new Feishu/Lark app even though the profile has credentials.",
)
@click.option(
    "--skip-feishu", is_flag=True, help="Leave Feishu/Lark alone: no registration, no check."
)
@click.option(
    "--feishu-domain",
    metavar="URL",
    help="The Open Platform to register with and check against "
    "(default: transports.feishu.domain, else https://open.feishu.cn).",
)
@click.option("--lark-domain", metavar="URL", hidden=True, help="Lark's Open Platform (tests).")
def init_command(
    *,
    reset: bool,
    yes: bool,
    as_json: bool,
    setup_feishu: bool,
    reconfigure_feishu: bool,
    skip_feishu: bool,
    feishu_domain: str | None,
    lark_domain: str | None,
) -> None:
    """Create the profile, or merge newer templates into it, and check the installed agents.

    Safe to run again: your values, comments and agents are kept, and files that are already
    up to date are left untouched.
    """
    from robota.core import ConfigError  # noqa: PLC0415 (see the module docstring)
    from robota.core.config import (  # noqa: PLC0415
        InitLockTimeout,
        InitRequest,
        detect_agents,
        init_profile,
        resolve_profile,
    )

    interactive = _interactive()
    request = InitRequest(
        skip=skip_feishu,
        setup=setup_feishu,
        reconfigure=reconfigure_feishu,
        domain=feishu_domain,
        interactive=interactive,
        options={"lark-domain": lark_domain},
    )
    if skip_feishu and (setup_feishu or reconfigure_feishu):
        _fail(
            "--skip-feishu cannot be combined with --feishu or --reconfigure-feishu",
            as_json=as_json,
            code=2,
        )
    profile = resolve_profile()
    if reset and not yes:
        if not interactive:
            _fail(
                "--reset moves the current profile to a backup; add --yes to confirm "
                "when not running on a terminal",
                as_json=as_json,
                code=2,
            )
        click.confirm(
            f"Move {profile.config_file.name}, .env, data and logs of {profile.home} to "
            f"{profile.backups_dir}/ and start afresh?",
            abort=True,
            err=True,
        )

    def waiting(pid: int | None) -> None:
        holder = f"process {pid}" if pid else "another process"
        click.echo(f"Waiting for {holder} to finish `robota init` on this profile...", err=True)

    try:
        result = init_profile(profile, reset=reset, on_wait=waiting)
    except ConfigError as error:
        _fail(str(error), as_json=as_json, code=2)
    except InitLockTimeout as error:
        _fail(str(error), as_json=as_json, code=1)
    feishu = _transport_step("feishu", profile, request, as_json=as_json, on_wait=waiting)
    default_agent, problem = _check_config(profile)
    skill = _refresh_skill()
    agents = detect_agents()
    if not as_json:
        _report(result, default_agent, problem, agents)
        feishu.report()
    missing = [status for status in agents if not status.installed]
    if missing and not interactive and not as_json:
        click.echo("Install an agent with the npm command shown; on a terminal, init offers to.")
    if missing and interactive and _install(missing):
        agents = detect_agents()
        if not as_json:
            newly = {status.agent for status in missing}
            for status in agents:
                if status.installed and status.agent in newly:
                    version = status.version or "version unknown"
                    click.echo(f"  {status.agent.command:<18} installed ({version})")
    if not as_json:
        click.echo(f"Skill: {skill['error'] or skill['state'] + ' ' + skill['path']}")
    if as_json:
        summary = _result_json(result, default_agent, problem, agents, feishu)
        click.echo(json.dumps({**summary, "skill": skill}))
    if feishu.error is not None:
        if not as_json:
            click.echo(f"robota init: {feishu.error}", err=True)
        sys.exit(1)
