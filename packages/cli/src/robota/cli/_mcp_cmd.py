"""``robota mcp serve``: robota's agents as the tools of any MCP client (``robota.mcp``).

This command is the composition: it takes stdin and stdout for the protocol first of all
(over stdio nothing else may ever reach stdout), loads the profile, passes the headless trust
gate of ``--serve`` (an untrusted workspace is refused, exit 2, unless ``--restricted``),
and hands ``robota.mcp`` what only the CLI knows (``ServeSetup``): how an engine is made,
how ``task list/status --json`` read the store, which folders are trusted. The tools act
through the profile's host when one runs, else through an engine of this process's own.

Exit codes: 0 the client closed, or a stop signal; 1 a start or transport failure; 2 refused
(configuration, trust, options).

This module imports only click at import time; ``robota.host``'s pieces (the engine's
composition, the trust gate, the store reads of ``task list/status``) load inside the command.
"""

from __future__ import annotations

import os
import sys
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from collections.abc import Callable

    from robota.core.config import Config, Profile
    from robota.mcp import Backend, ServeSetup

__all__ = ["mcp_group"]


@click.group("mcp")
def mcp_group() -> None:
    """The Model Context Protocol: serve robota's agents to MCP clients."""


@mcp_group.command("serve")
@click.option(
    "--cwd",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="Serve this folder's workspace (default: the working folder), for clients that start "
    "servers elsewhere.",
)
@click.option(
    "--restricted",
    is_flag=True,
    help="Run Restricted (project settings ignored, permission mode plan): the only way to "
    "serve an untrusted workspace.",
)
@click.option(
    "--http-port",
    type=click.IntRange(0, 65535),
    default=None,
    help="Serve streamable HTTP on http://127.0.0.1:PORT/mcp instead of stdio.",
)
@click.option(
    "--http-host",
    default="127.0.0.1",
    show_default=True,
    help="With --http-port: the loopback address to listen on (no other is allowed).",
)
@click.option(
    "--http-token-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="With --http-port: write the bearer token to this absolute path (must not exist; "
    "created 0600, removed at exit).",
)
def serve_command(
    cwd: Path | None,
    restricted: bool,
    http_port: int | None,
    http_host: str,
    http_token_file: Path | None,
) -> None:
    """Serve this workspace's agents over MCP (stdio, or HTTP with --http-port).

    Configure it in an MCP client as a command: {"command": "robota", "args": ["mcp", "serve",
    "--cwd", "/path/to/project"]} (or without --cwd, started in the project's folder).
    """
    from robota.mcp import HttpOptions, loopback, serve, take_stdio  # noqa: PLC0415

    stdio = None
    if http_port is None:
        if http_token_file is not None:
            raise click.UsageError("--http-token-file needs --http-port")
        stdio = take_stdio()  # first of all: stdout carries MCP frames only from here on
    elif http_token_file is None:
        raise click.UsageError("--http-port needs --http-token-file")
    elif not loopback(http_host):
        click.echo(
            f"robota: --http-host {http_host}: only a loopback address may be bound", err=True
        )
        sys.exit(2)
    if cwd is not None:
        # The served workspace is the process's working folder, for every part that reads it.
        os.chdir(cwd)
    setup = _setup(restricted)
    http = None
    cleanup = _nothing
    if http_port is not None:
        assert http_token_file is not None
        from robota.mcp import BadTokenFile, write_token_file  # noqa: PLC0415

        try:
            token = write_token_file(http_token_file)
        except BadTokenFile as error:
            click.echo(f"robota: {error}", err=True)
            sys.exit(2)
        http = HttpOptions(http_host, http_port, token)

        def cleanup() -> None:
            http_token_file.unlink(missing_ok=True)

    sys.exit(serve(setup, _backend(setup), stdio=stdio, http=http, cleanup=cleanup))


def _nothing() -> None:
    return None


def _backend(setup: ServeSetup) -> Callable[[], Backend]:
    from robota.mcp import EngineBackend, HostBackend, host_runs  # noqa: PLC0415

    socket = setup.profile.control_socket
    if host_runs(socket):
        return lambda: HostBackend(socket)
    return lambda: EngineBackend(setup)


def _setup(restricted: bool) -> ServeSetup:
    """The profile, the trust gate, and what the tools need from the CLI; exit 2 refused."""
    from robota.core import ConfigError  # noqa: PLC0415
    from robota.host import (  # noqa: PLC0415
        WorkspaceRefused,
        headless_workspace,
        open_engine,
        restricted_hook,
    )
    from robota.mcp import ServeSetup  # noqa: PLC0415

    from ._profile import load_profile  # noqa: PLC0415

    config, profile = load_profile()
    cwd = Path.cwd().resolve()
    try:
        workspace = headless_workspace(
            config, profile, cwd, restricted=restricted, mode="mcp serve"
        )
    except (WorkspaceRefused, ConfigError) as error:
        click.echo(f"robota: {error}", err=True)
        sys.exit(2)
    by_trust = restricted_hook(profile)
    return ServeSetup(
        config=workspace.config,
        profile=profile,
        workspace=workspace.root,
        restricted=workspace.restricted,
        open_engine=lambda: open_engine(
            workspace.config,
            profile,
            human_approves=False,
            recover=lambda _key: False,
            restricted=workspace.hook,
        ),
        list_tasks=lambda show_all: _list_tasks(config, show_all),
        task_status=lambda name: _task_status(config, profile, name),
        trusted=lambda path: not by_trust(path),
    )


def _list_tasks(config: Config, show_all: bool) -> list[dict[str, object]]:
    from robota.core.store import open_reader  # noqa: PLC0415
    from robota.host import task_rows  # noqa: PLC0415

    from ._task_cmd import LIST_LIMIT  # noqa: PLC0415

    path = config.storage.sqlite_path
    if not path.is_file():
        return []
    with closing(open_reader(path)) as db:
        return [row.to_json() for row in task_rows(db, limit=-1 if show_all else LIST_LIMIT)]


def _task_status(config: Config, _profile: Profile, name: str) -> dict[str, object]:
    """``task status --json`` of the task ``name`` names; ``LookupError`` when none."""
    from robota.core.frontend import TaskNotResolved  # noqa: PLC0415
    from robota.core.store import open_reader  # noqa: PLC0415
    from robota.host import pick_task, task_lookup, task_status  # noqa: PLC0415

    path = config.storage.sqlite_path
    if not path.is_file():
        raise LookupError(f"no task {name!r}: this profile has no tasks yet")
    with closing(open_reader(path)) as db:
        try:
            task = pick_task(name, task_lookup(db), {})
        except TaskNotResolved as error:
            raise LookupError(str(error)) from None
        return task_status(db, task)
