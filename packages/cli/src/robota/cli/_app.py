"""The click application: global options and the command table.

Global options that change where robota reads from (``--profile``, ``--config``) are applied to
the process environment before any command runs, so every process a command starts inherits the
same profile.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from . import _gc
from ._modes import conversation_options, run_conversation

__all__ = ["cli", "main"]


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    # A callback rather than click's version_option, which looks the version up at import:
    # every start would pay for what only --version shows.
    if not value or ctx.resilient_parsing:
        return
    from robota.core import robota_version  # noqa: PLC0415

    click.echo(f"robota, version {robota_version()}")
    ctx.exit()


@click.group(
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    invoke_without_command=True,
)
@click.option(
    "--version",
    "-V",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version and exit.",
)
@click.option(
    "--profile",
    "profile",
    type=click.Path(file_okay=False, path_type=str),
    help="Use DIR as the profile (config.yaml, .env, data, logs) for this command and every "
    "process it starts. Clears inherited FEISHU_*/SLACK_* credentials first.",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=str),
    help="Read configuration from this file instead of the profile's config.yaml.",
)
@conversation_options
@click.pass_context
def cli(
    ctx: click.Context, /, profile: str | None, config_path: str | None, **conversation: Any
) -> None:
    """robota: drive real coding agents from a terminal, chat apps and your other machines.

    With no command: the interactive UI on a terminal, or print mode with -p.
    """
    if profile is not None and config_path is not None:
        raise click.UsageError("--profile and --config cannot be combined")
    ctx.obj = {"profile": profile, "config": config_path}
    from ._options import apply_profile_options  # noqa: PLC0415 (keeps --help fast)

    apply_profile_options(profile, config_path)
    if ctx.invoked_subcommand is None:
        run_conversation(ctx, conversation)
    else:
        _gc.settle()  # only the conversation modes are worth the pause


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``robota`` script."""
    _gc.pause()  # the conversation modes settle it once built; see _gc
    try:
        cli.main(args=argv, prog_name="robota")
    finally:
        _gc.settle()


# Command modules import only click at import time; their heavy imports live in their bodies.
from ._agents_cmd import agents_group  # noqa: E402
from ._cards_cmd import cards_group  # noqa: E402
from ._daemon_cmd import daemon_group  # noqa: E402
from ._doctor_cmd import doctor_command  # noqa: E402
from ._init_cmd import init_command  # noqa: E402
from ._server_cmd import server_group  # noqa: E402
from ._session_cmd import session_group  # noqa: E402
from ._skills_cmd import skills_group  # noqa: E402
from ._store_cmd import store_command  # noqa: E402
from ._task_cmd import task_group  # noqa: E402
from ._team_cmd import team_group  # noqa: E402

cli.add_command(init_command)
cli.add_command(doctor_command)
cli.add_command(agents_group)
cli.add_command(cards_group)
cli.add_command(store_command)
cli.add_command(server_group)
cli.add_command(session_group)
cli.add_command(daemon_group)
cli.add_command(task_group)
cli.add_command(team_group)
cli.add_command(skills_group)

if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
