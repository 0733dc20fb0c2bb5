"""The top-level options that pick and shape a conversation: print mode (``-p``) and the TUI.

``robota`` with no command opens the TUI on a terminal; ``robota -p`` runs print mode. Both
take the same session options (``--agent``, ``--cwd``, ``-c``, ``-r``, ``--fork-session`` ...).
Only click is imported here; the engine is imported when a mode runs.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from ._prestart import Prestart
    from ._print import PrintOptions

__all__ = ["conversation_options", "run_conversation"]

F = TypeVar("F", bound=Callable[..., Any])

PERMISSION_MODES = ("default", "acceptEdits", "bypassPermissions", "plan")


def conversation_options(command: F) -> F:
    options = [
        click.option(
            "-p",
            "--print",
            "print_prompt",
            is_flag=False,
            flag_value="",
            default=None,
            metavar="[PROMPT]",
            help="Print mode: answer PROMPT (or stdin) and exit.",
        ),
        click.option(
            "--output-format",
            type=click.Choice(["text", "json", "stream-json"]),
            default="text",
            show_default=True,
            help="Print mode's output: the answer, one JSON result, or JSON lines as it runs.",
        ),
        click.option(
            "--input-format",
            type=click.Choice(["text", "stream-json"]),
            default="text",
            show_default=True,
            help='Print mode\'s input: the prompt, or {"type":"user","text":...} lines on stdin.',
        ),
        click.option("--agent", metavar="NAME", help="The configured agent for a new task."),
        click.option(
            "--cwd",
            type=click.Path(file_okay=False, path_type=Path),
            help="Working directory of a new task (default: the profile's).",
        ),
        click.option("--model", metavar="MODEL", help="Model of a new task."),
        click.option(
            "--permission-mode",
            type=click.Choice(PERMISSION_MODES),
            help="Permission mode of a new task.",
        ),
        click.option("--name", metavar="TITLE", help="Title of a new (or forked) task."),
        click.option(
            "--append-system-prompt",
            metavar="TEXT",
            help="Developer instructions for a new task (agents that take them).",
        ),
        click.option(
            "-c",
            "--continue",
            "continue_",
            is_flag=True,
            help="Continue the most recent task in the working directory (or start one).",
        ),
        click.option(
            "-r",
            "--resume",
            is_flag=False,
            flag_value="",
            default=None,
            metavar="[ID|NAME]",
            help="Resume a task by id or title (the TUI shows a picker without one).",
        ),
        click.option(
            "--attach",
            is_flag=True,
            help="Attach the TUI to this workspace's running daemon (robota daemon start).",
        ),
        click.option(
            "--restricted",
            is_flag=True,
            help="Run Restricted: the project's .robota/config.yaml ignored, permission mode "
            "plan (print mode runs in an untrusted workspace only so).",
        ),
        click.option(
            "--no-host",
            is_flag=True,
            help="Print mode: run in this process even when the profile's host runs (by "
            "default -p hands its turns to a running host, whose agent is already up).",
        ),
        click.option(
            "--serve",
            is_flag=True,
            help="Serve this workspace's sessions on a loopback WebSocket (headless; a "
            "per-launch token).",
        ),
        click.option(
            "--port",
            type=click.IntRange(0, 65535),
            default=0,
            help="With --serve: the port on 127.0.0.1 (default: any free one).",
        ),
        click.option(
            "--json",
            "json_",
            is_flag=True,
            help='With --serve: print {"type": "ready", "url": ...} once it accepts connections.',
        ),
        click.option(
            "--fork-session",
            is_flag=True,
            help="With -c or -r: a new task from that task's latest completed turn.",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def run_conversation(ctx: click.Context, options: dict[str, Any]) -> None:
    """Run print mode or the TUI for the group's options; exits with the mode's code."""
    prompt = options["print_prompt"]
    if options["serve"]:
        if prompt is not None or options["attach"]:
            raise click.UsageError("--serve cannot be combined with -p or --attach")
        from robota.host import run_serve  # noqa: PLC0415

        from ._parsed_text import parsed_cache_on  # noqa: PLC0415

        parsed_cache_on()  # --serve reads config.yaml through the script's cache (``_profile``)
        sys.exit(
            run_serve(
                options["cwd"],
                port=options["port"],
                json_=options["json_"],
                restricted=options["restricted"],
                agent=options["agent"],
            )
        )
    if options["port"] or options["json_"]:
        raise click.UsageError("--port and --json need --serve")
    if options["attach"]:
        _attach_daemon(prompt, options)
    if prompt is None:
        if options["output_format"] != "text" or options["input_format"] != "text":
            raise click.UsageError("--output-format and --input-format need -p")
        if options["no_host"]:
            raise click.UsageError("--no-host needs -p")
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            click.echo(ctx.get_help())
            sys.exit(0 if not sys.stdin.isatty() else 2)
        from ._tui import run_tui  # noqa: PLC0415 (Textual loads only for the TUI)

        sys.exit(run_tui(**_tui_arguments(options)))
    if options["resume"] == "":
        raise click.UsageError("print mode needs -r ID|NAME (there is no picker without a TUI)")
    from ._print_host import wants_host  # noqa: PLC0415

    if wants_host(no_host=options["no_host"], environ=os.environ):
        code, prompt = _print_on_host(options, prompt)
        if code is not None:
            sys.exit(code)
    from ._prestart import ctrl_c_deferred, prestart_agent  # noqa: PLC0415

    prestart = None
    try:
        # Before print mode and the engine load: the agent starts while they do. A Ctrl-C
        # meanwhile is raised once ``prestart`` holds it, so the ``finally`` ends the agent.
        with ctrl_c_deferred():
            prestart = prestart_agent(options["agent"])
        sys.exit(_run_print(options, prompt, prestart))
    finally:
        if prestart is not None:
            prestart.close()


def _print_on_host(options: dict[str, Any], prompt: str) -> tuple[int | None, str]:
    """Print mode on the profile's running host, else on this workspace's daemon
    (``_print_host``): its exit code, or ``None`` to run here; and the prompt, read from stdin
    if it was."""
    from robota.core.config import resolve_profile  # noqa: PLC0415

    from ._print_host import connect_host, daemon_socket  # noqa: PLC0415

    try:
        profile = resolve_profile()
    except (OSError, ValueError):
        return None, prompt  # print mode's own path reports a profile it cannot resolve
    read = False
    owned: str | None = None
    """The host's words for a task another live process owns."""
    for socket_path in (profile.control_socket, daemon_socket(profile, options["cwd"])):
        sock = connect_host(socket_path) if socket_path is not None else None
        if sock is None:
            continue
        # Only the protocol and the output from here: no engine (``_print_relay``).
        from ._print_host import print_on_host  # noqa: PLC0415
        from ._print_input import prompt_text  # noqa: PLC0415

        try:
            if options["input_format"] == "text" and not read:
                read = True
                try:
                    prompt = prompt_text(prompt or None, sys.stdin)
                except ValueError as error:
                    sys.stderr.write(f"robota: {error}\n")
                    return 2, prompt
            full = functools.partial(_print_options, options, prompt)  # only to draw progress
            code = print_on_host(options, prompt, sock, full)
        finally:
            sock.close()
        if isinstance(code, str):
            owned = code
        elif code is not None:
            return code, prompt
    if owned is not None:
        sys.stderr.write(f"robota: {owned}\n")
        return 1, prompt  # one owner per task: its session is not opened here too
    return None, prompt


def _attach_daemon(prompt: str | None, options: dict[str, Any]) -> None:
    """``robota --attach``: the TUI on the workspace's daemon, never a runtime of its own."""
    if prompt is not None:
        raise click.UsageError("--attach and -p cannot be combined")
    from robota.host import find_daemon, workspace_of  # noqa: PLC0415

    from ._profile import load_profile  # noqa: PLC0415
    from ._session_cmd import attach_session  # noqa: PLC0415

    profile = load_profile()[1]
    workspace = workspace_of(options["cwd"] or Path.cwd())
    daemon = find_daemon(profile, workspace)
    if daemon is None:
        click.echo(
            "robota: no daemon runs for this workspace; start one: robota daemon start", err=True
        )
        sys.exit(2)
    attach_session(daemon, observe=False)


def _run_print(options: dict[str, Any], prompt: str, prestart: Prestart | None) -> int:
    new_task = not (options["continue_"] or options["resume"])
    if prestart is not None and prompt and options["input_format"] == "text" and new_task:
        # Before print mode and the engine load: the agent opens the session while they do.
        # (A prompt still to come on stdin may never come: nothing is opened for it.)
        prestart.open_session(
            agent=options["agent"],
            cwd=options["cwd"],
            model=options["model"],
            permission_mode=options["permission_mode"],
            developer_instructions=options["append_system_prompt"],
            restricted=options["restricted"],
        )
    from ._print import run_print  # noqa: PLC0415

    return run_print(_print_options(options, prompt), prestart)


def _print_options(options: dict[str, Any], prompt: str) -> PrintOptions:
    from robota.host import PrintTask  # noqa: PLC0415

    from ._print import PrintOptions  # noqa: PLC0415

    task = PrintTask(
        agent=options["agent"],
        cwd=options["cwd"],
        model=options["model"],
        permission_mode=options["permission_mode"],
        name=options["name"],
        append_system_prompt=options["append_system_prompt"],
        continue_=options["continue_"],
        resume=options["resume"],
        fork=options["fork_session"],
    )
    return PrintOptions(
        prompt=prompt or None,
        output_format=options["output_format"],
        input_format=options["input_format"],
        task=task,
        restricted=options["restricted"],
    )


def _tui_arguments(options: dict[str, Any]) -> dict[str, Any]:
    return {
        "agent": options["agent"],
        "cwd": options["cwd"],
        "continue_": options["continue_"],
        "resume": options["resume"],
        "fork": options["fork_session"],
        "model": options["model"],
        "permission_mode": options["permission_mode"],
        "name": options["name"],
        "append_system_prompt": options["append_system_prompt"],
        "restricted": options["restricted"],
    }
