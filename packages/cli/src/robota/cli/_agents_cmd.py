"""``robota agents list`` and ``robota agents check NAME``.

``list`` is instant and starts nothing: each configured agent with its protocol, the command it
resolves to on PATH and the version of the npm package it belongs to. ``check`` starts one agent
for real: handshake, open and close a session (an ephemeral thread for App Server agents), stop;
it reports each step's time and what the agent can do, and the last lines of its stderr (secrets
masked): always in ``--json`` (``stderr_tail``), in the text when the check failed.
"""

from __future__ import annotations

import json
import shutil
import sys
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from robota.core.config import Config, Profile

__all__ = ["agents_group", "load_profile"]


def load_profile() -> tuple[Config, Profile]:
    """The profile's config, or exit: 1 naming ``robota init`` when there is none, 2 when it is
    invalid (the message names the file and key)."""
    from robota.core import ConfigError  # noqa: PLC0415 (keeps --help fast)
    from robota.core.config import load_config, resolve_profile  # noqa: PLC0415

    profile = resolve_profile()
    try:
        return load_config(profile), profile
    except FileNotFoundError:
        raise click.ClickException(
            f"{profile.config_file} does not exist; run: robota init"
        ) from None
    except ConfigError as error:
        click.echo(f"robota: {error}", err=True)
        sys.exit(2)


@click.group("agents")
def agents_group() -> None:
    """The coding agents this profile can drive."""


@agents_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
def list_command(as_json: bool) -> None:
    """Configured agents: protocol, resolved command and installed version. Starts nothing."""
    from robota.core.config import detect_agents, known_agents  # noqa: PLC0415

    config, _ = load_profile()
    known = {k.command: k for k in known_agents()}
    wanted = [known[a.command] for a in config.agents.values() if a.command in known]
    versions = {s.agent.command: s.version for s in detect_agents(wanted)}
    rows: list[dict[str, Any]] = []
    for agent in config.agents.values():
        path = shutil.which(agent.command)
        rows.append(
            {
                "name": agent.name,
                "title": agent.title or agent.name,
                "protocol": agent.kind,
                "command": agent.command,
                "args": list(agent.args),
                "path": path,
                "installed": path is not None,
                "version": versions.get(agent.command) if path else None,
                "default": agent.name == config.defaults.agent,
                "installCommand": known[agent.command].install_command
                if agent.command in known
                else None,
            }
        )
    if as_json:
        click.echo(json.dumps({"agents": rows}, indent=2))
        return
    width = max(len(r["name"]) for r in rows)
    for row in rows:
        mark = "*" if row["default"] else " "
        where = row["path"] or f"not found: {row['installCommand'] or 'put it on PATH'}"
        version = row["version"] or "-"
        click.echo(
            f"{mark} {row['name'].ljust(width)}  {row['protocol']:<10}  {version:<9}  {where}"
        )
    click.echo("(* default agent)")


@agents_group.command("check")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1, max=600),
    default=60.0,
    show_default=True,
    help="Seconds the whole check may take.",
)
def check_command(name: str, as_json: bool, timeout: float) -> None:
    """Start NAME, shake hands, open and close a session, stop; report timings."""
    from robota.core import run_main, runtime_plugins  # noqa: PLC0415
    from robota.host import agent_launch  # noqa: PLC0415

    config, profile = load_profile()
    agent = config.agents.get(name)
    if agent is None:
        raise click.UsageError(
            f"no agent {name!r} in {config.file} (configured: {', '.join(config.agents)})"
        )
    plugins = runtime_plugins()
    if agent.kind not in plugins:
        raise click.ClickException(f"no runtime plugin for kind {agent.kind!r}")
    launch = agent_launch(agent, config, profile)
    report = run_main(lambda: plugins[agent.kind].probe(launch, timeout=timeout, session=True))
    if as_json:
        click.echo(
            json.dumps(
                {
                    "agent": report.agent,
                    "protocol": report.kind,
                    "ok": report.ok,
                    "detail": report.detail,
                    "version": report.version,
                    "seconds": round(report.seconds, 3),
                    "timings": {k: round(v, 3) for k, v in report.timings.items()},
                    "capabilities": dict(report.capabilities),
                    "stderr_tail": list(report.stderr_tail),
                },
                indent=2,
            )
        )
    else:
        verdict = "ok" if report.ok else "FAILED"
        click.echo(
            f"{report.agent} ({report.kind}) {report.version or ''}: {verdict}: {report.detail}"
        )
        for step in ("initialize", "session", "stop"):
            if step in report.timings:
                click.echo(f"  {step:<10} {report.timings[step] * 1000:8.0f} ms")
        for key, value in report.capabilities.items():
            shown = (", ".join(map(str, value)) or "none") if isinstance(value, list) else value
            click.echo(f"  {key:<10} {shown}")
        if not report.ok and report.stderr_tail:
            click.echo("  its stderr ended with:")
            for line in report.stderr_tail:
                click.echo(f"    {line}")
    sys.exit(0 if report.ok else 1)
