"""The click application: global options and the command table.

Global options that change where robota reads from (``--profile``, ``--config``) are applied to
the process environment before any command runs, so every process a command starts inherits the
same profile.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from . import _cache_files, _gc
from ._modes import conversation_options, run_conversation

__all__ = ["cli", "main"]

COMMANDS: dict[str, str] = {
    "init": "._init_cmd:init_command",
    "doctor": "._doctor_cmd:doctor_command",
    "agents": "._agents_cmd:agents_group",
    "cards": "._cards_cmd:cards_group",
    "store": "._store_cmd:store_command",
    "server": "._server_cmd:server_group",
    "session": "._session_cmd:session_group",
    "daemon": "._daemon_cmd:daemon_group",
    "task": "._task_cmd:task_group",
    "team": "._team_cmd:team_group",
    "skills": "._skills_cmd:skills_group",
    "trust": "._trust_cmd:trust_group",
    "mcp": "._mcp_cmd:mcp_group",
    "mesh": "._mesh_cmd:mesh_group",
}
"""The command table: each command's name and where its click object lives
(``module:attribute``, relative to this package). A command's module is imported only when
that command runs or help lists it, so ``robota task send`` loads no other command's module.
A new command is one line here; its module imports only click at import time."""


class _LazyGroup(click.Group):
    """A click group whose commands in ``COMMANDS`` load on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        home = COMMANDS.get(cmd_name)
        if home is not None and cmd_name not in self.commands:
            module, attribute = home.split(":")
            command = getattr(importlib.import_module(module, __package__), attribute)
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    # A callback rather than click's version_option, which looks the version up at import:
    # every start would pay for what only --version shows.
    if not value or ctx.resilient_parsing:
        return
    from robota.core import robota_version  # noqa: PLC0415

    click.echo(f"robota, version {robota_version()}")
    ctx.exit()


@click.group(
    cls=_LazyGroup,
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
    """robota: drive real coding agents from a terminal, chat apps and a local WebSocket.

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
    _cache_files.script_started()  # the start-up caches serve the script, never a library use
    try:
        cli.main(args=argv, prog_name="robota")
    finally:
        _gc.settle()


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
