"""``robota doctor``: check the profile, the config, the store, the logs and every agent.

Agents are probed for real, concurrently: each is started with its scrubbed environment, shakes
hands in its own protocol, reports its version, and is stopped again; an agent that fails is
shown with the last lines it wrote on stderr (secrets masked; ``stderr_tail`` in ``--json``).
Nothing is changed on disk. Exit code 0 when nothing failed (warnings included), 1 when
something did.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from robota.core import ProbeReport, RuntimePlugin
    from robota.core.config import Config, Profile

    from ._doctor import Check

__all__ = ["doctor_command"]

_MARK = {"ok": "ok  ", "warn": "warn", "fail": "FAIL"}


@click.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1, max=600),
    default=30.0,
    show_default=True,
    help="Seconds each agent may take to start and answer the handshake.",
)
@click.option(
    "--agent",
    "only",
    multiple=True,
    metavar="NAME",
    help="Probe only this configured agent (repeatable). Default: every agent.",
)
def doctor_command(as_json: bool, timeout: float, only: tuple[str, ...]) -> None:
    """Check config, store, paths and each configured agent, and say what to fix."""
    from robota.core import ConfigError  # noqa: PLC0415 (keeps --help fast)
    from robota.core.config import load_config, resolve_profile  # noqa: PLC0415

    from ._doctor import (  # noqa: PLC0415
        Check,
        check_config_file,
        check_logs,
        check_private,
        check_store,
        describe_profile,
        summary,
    )

    profile = resolve_profile()
    checks: list[Check] = [check_private("profile", profile.home, directory=True)]
    if profile.env_file.exists():
        checks.append(check_private(".env", profile.env_file, directory=False))
    try:
        config = load_config(profile)
    except ConfigError as error:
        checks.append(Check("config", "fail", str(error), f"edit {error.file or 'config.yaml'}"))
        config = None
    except FileNotFoundError:
        checks.append(
            Check("config", "fail", f"{profile.config_file} does not exist", "run: robota init")
        )
        config = None
    if config is not None:
        unknown = sorted(set(only) - set(config.agents))
        if unknown:
            raise click.UsageError(
                f"--agent {', '.join(unknown)}: not configured "
                f"(configured: {', '.join(config.agents)})"
            )
        _configure_logs(config)
        checks.append(check_config_file(config))
        checks.append(check_store(config.storage.sqlite_path, _latest_schema()))
        checks.append(check_logs(config.logging.path))
        checks.extend(_check_agents(config, profile, only, timeout))

    status = summary(checks)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "ok": status != "fail",
                    "status": status,
                    "profile": describe_profile(profile),
                    "checks": [c.as_json() for c in checks],
                },
                indent=2,
            )
        )
    else:
        click.echo(f"robota doctor: profile {profile.home}")
        width = max(len(c.name) for c in checks)
        for check in checks:
            click.echo(f"  {_MARK[check.status]}  {check.name.ljust(width)}  {check.detail}")
            indent = f"        {' ' * width}  "
            if check.stderr_tail:
                click.echo(f"{indent}its stderr ended with:")
                for line in check.stderr_tail:
                    click.echo(f"{indent}  {line}")
            if check.fix and check.status != "ok":
                click.echo(f"{indent}fix: {check.fix}")
        verdict = {"ok": "all good", "warn": "usable, with warnings", "fail": "problems found"}
        click.echo(f"{verdict[status]}")
    sys.exit(1 if status == "fail" else 0)


def _latest_schema() -> int:
    from robota.core.store import MIGRATIONS  # noqa: PLC0415

    return max(m.version for m in MIGRATIONS)


def _configure_logs(config: Config) -> None:
    from robota.core.logs import configure_logging  # noqa: PLC0415

    try:
        configure_logging(config.logging.path, config.logging.level, secrets=config.secrets)
    except OSError:
        pass  # check_logs reports an unwritable log directory; doctor still runs


def _check_agents(
    config: Config, profile: Profile, only: tuple[str, ...], timeout: float
) -> list[Check]:
    import trio  # noqa: PLC0415

    from robota.core import AgentLaunch, run_main, runtime_plugins  # noqa: PLC0415
    from robota.core.config import known_agents  # noqa: PLC0415
    from robota.host import agent_launch  # noqa: PLC0415

    from ._doctor import check_agent_command, from_probe  # noqa: PLC0415

    plugins: dict[str, RuntimePlugin] = runtime_plugins()
    hints = {known.command: known.install_command for known in known_agents()}
    agents = [a for a in config.agents.values() if not only or a.name in only]
    results: dict[str, Check] = {}
    launches: list[tuple[AgentLaunch, str | None]] = []
    for agent in agents:
        hint = hints.get(agent.command)
        problem = check_agent_command(agent, plugins, hint)
        if problem is not None:
            results[agent.name] = problem
            continue
        launches.append((agent_launch(agent, config, profile), hint))

    async def probe_all() -> None:
        async def probe(launch: AgentLaunch, hint: str | None) -> None:
            report: ProbeReport = await plugins[launch.kind].probe(launch, timeout=timeout)
            results[launch.name] = from_probe(report, hint)

        async with trio.open_nursery() as nursery:
            for launch, hint in launches:
                nursery.start_soon(probe, launch, hint)

    if launches:
        run_main(probe_all)
    return [results[a.name] for a in agents]
