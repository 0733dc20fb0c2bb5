"""``robota task``: the profile's tasks, and driving them through the running host.

``list`` and ``status`` read the store directly (a read-only connection), so they work whether
or not a host runs; they resolve TASK themselves (``_task_names``). Every other command
changes state and is a request to the host's control endpoint (``robota.host``'s
``task.*`` requests); with no host running it says so and exits 2. Those pass TASK on as typed
and the host resolves it with the same decision, so they load neither the configuration nor
the store: a ``task send`` is a profile's path, the control client and one request. Inside an
agent robota started, TASK may be omitted (``ROBOTA_TASK_ID``, ``CODEX_THREAD_ID``, passed on
as the request's ``caller``).

Exit codes: 0 done; 1 the host refused or failed, or (``send --wait``) the turn did not
complete, as print mode exits; 2 a usage error: a TASK naming no one task, no host running,
no transport that can create groups.

This module imports only click at import time (``robota --help`` stays fast); the store, the
control client and the host's reads load inside the commands.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

if TYPE_CHECKING:
    from robota.core.config import Profile
    from robota.core.store import Database, Task

__all__ = ["task_group"]

LIST_LIMIT = 20
"""Tasks ``task list`` shows without ``--all``."""
CALL_TIMEOUT = 180.0
"""Seconds a request that starts no turn may take (opening a fork's session included)."""
USAGE_CODES = frozenset({"bad_request", "not_found", "unsupported"})
"""The host's refusals that are the caller's mistake: exit 2, like a usage error."""

_TASK_OPTION = click.option(
    "--task",
    "task_option",
    metavar="TASK",
    help="The task (list number, id or id prefix); the same as the leading TASK argument.",
)

PUSH_TIMEOUT = 120.0
"""Seconds a push may take: the task read, git asked about its folder, the offer sent."""

_JSON_OPTION = click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout.")


def _dir_options(command: Any) -> Any:
    """``--dir PATH | --nodir``: where a new task works."""
    command = click.option(
        "--nodir", is_flag=True, help="No project: today's folder of the workspace."
    )(command)
    return click.option(
        "--dir",
        "directory",
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        help="The new task's working directory.",
    )(command)


def _directory_fields(directory: Path | None, nodir: bool) -> dict[str, object]:
    if directory is not None and nodir:
        _fail("--dir and --nodir exclude each other")
    fields: dict[str, object] = {"nodir": nodir}
    if directory is not None:
        fields["cwd"] = str(directory.resolve())
    return fields


def _fail(message: str, code: int = 2) -> NoReturn:
    click.echo(f"robota: {message}", err=True)
    sys.exit(code)


def _profile() -> tuple[Path, Profile]:
    """The store's path and the profile (``list`` and ``status``: the configuration says where
    the store is)."""
    from ._profile import load_profile  # noqa: PLC0415 (keeps --help fast)

    config, profile = load_profile()
    return config.storage.sqlite_path, profile


def _reader(path: Path) -> Database | None:
    """A read-only connection to the store, ``None`` when there is none yet."""
    from robota.core import StoreError  # noqa: PLC0415
    from robota.core.store import open_reader  # noqa: PLC0415

    if not path.is_file():
        return None
    try:
        return open_reader(path)
    except StoreError as error:
        _fail(str(error), 1)


def _resolve(db: Database | None, wanted: str | None) -> Task:
    """The task ``wanted`` names (or the environment, when omitted); exit 2 when none."""
    from robota.core.frontend import TaskNotResolved  # noqa: PLC0415
    from robota.host import pick_task, task_lookup  # noqa: PLC0415

    if db is None:
        _fail("no tasks yet: this profile has no store (robota creates it on first start)")
    try:
        return pick_task(wanted, task_lookup(db), os.environ)
    except TaskNotResolved as error:
        _fail(str(error))


def _named(wanted: str | None) -> dict[str, object]:
    """How a request names its task: TASK as typed (the host resolves it), or omitted, the
    caller's environment; exit 2, asking nothing, when neither names one."""
    if wanted is not None and wanted.strip():
        return {"task": wanted}
    from robota.host import ENV_NAMES, NoTaskGiven  # noqa: PLC0415

    caller = {name: os.environ[name] for name in ENV_NAMES if os.environ.get(name, "").strip()}
    if not caller:
        _fail(str(NoTaskGiven()))
    return {"caller": caller}


def _one_task(argument: str | None, option: str | None) -> str | None:
    if argument is not None and option is not None and argument != option:
        _fail(f"TASK given twice: {argument!r} and --task {option!r}")
    return option if option is not None else argument


def _call(
    what: str, type_name: str, fields: dict[str, object], timeout: float, *, group: str = "task"
) -> Any:
    """Ask the host; exit 2 when none runs, 1 (2 for a usage refusal) when it refuses.
    ``group`` and ``what`` name the command in messages (``robota mesh send`` asks too)."""
    from robota.core.config import resolve_profile  # noqa: PLC0415
    from robota.core.control import (  # noqa: PLC0415
        ControlClient,
        HostRefused,
        HostUnreachable,
        NoHostRunning,
    )

    profile = resolve_profile()
    try:
        with ControlClient(profile.control_socket, timeout=timeout) as client:
            return client.call(type_name, fields)
    except NoHostRunning:
        _fail(
            f"`robota {group} {what}` needs a running host and none runs for this profile "
            f"({profile.home}); start one: robota server start"
        )
    except HostRefused as refused:
        _fail(f"{group} {what}: {refused.message}", 2 if refused.code in USAGE_CODES else 1)
    except HostUnreachable as error:
        _fail(f"{group} {what}: {error}", 1)


def _echo_json(value: object) -> None:
    click.echo(json.dumps(value, indent=2, ensure_ascii=False))


def _when(stamp: object) -> str:
    if not isinstance(stamp, int | float):
        return "-"
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp))


def _describe(task: dict[str, Any]) -> str:
    title = f" ({task['title']})" if task.get("title") else ""
    return f"task {task['id']}{title}: {task['agent']} in {task['cwd']}"


def _replies(result: dict[str, Any]) -> bool:
    """Print the route's replies; whether one was an error."""
    failed = False
    for reply in result.get("replies") or ():
        error = reply.get("level") == "error"
        failed = failed or error
        click.echo(reply.get("text", ""), err=error)
    return failed


@click.group("task")
def task_group() -> None:
    """The profile's tasks: list them, and drive them through the running host.

    TASK is a number from `robota task list`, a task id or a unique id prefix; inside an
    agent robota started it may be omitted (ROBOTA_TASK_ID, or CODEX_THREAD_ID for Codex).
    """


@task_group.command("list")
@_JSON_OPTION
@click.option(
    "--all", "show_all", is_flag=True, help=f"Every task, not only the {LIST_LIMIT} newest."
)
def list_command(as_json: bool, show_all: bool) -> None:
    """Tasks, newest first (works without a host)."""
    from robota.host import task_rows  # noqa: PLC0415

    path, _ = _profile()
    db = _reader(path)
    if db is None:
        rows = []
    else:
        with closing(db):
            rows = task_rows(db, limit=-1 if show_all else LIST_LIMIT)
    if as_json:
        _echo_json([row.to_json() for row in rows])
        return
    if not rows:
        click.echo("no tasks yet")
        return
    head = ("#", "id", "title", "agent", "state", "route", "last activity", "directory")
    table = [
        (
            str(row.number),
            row.task.id,
            row.task.title or "-",
            row.task.agent,
            row.state if row.moved_to is None else f"moved to {row.moved_to}",
            row.route_kind or "-",
            _when(row.task.updated_at),
            row.task.cwd,
        )
        for row in rows
    ]
    widths = [max(len(line[i]) for line in (head, *table)) for i in range(len(head) - 1)]
    for line in (head, *table):
        cells = [cell.ljust(width) for cell, width in zip(line, widths, strict=False)]
        click.echo("  ".join([*cells, line[-1]]).rstrip())


@task_group.command("status")
@click.argument("task", required=False)
@_TASK_OPTION
@_JSON_OPTION
def status_command(task: str | None, task_option: str | None, as_json: bool) -> None:
    """One task: its state, routes, queue and latest turn (works without a host)."""
    from robota.host import task_status  # noqa: PLC0415

    path, _ = _profile()
    db = _reader(path)
    found = _resolve(db, _one_task(task, task_option))
    assert db is not None  # _resolve exits without a store
    with closing(db):
        status: dict[str, Any] = task_status(db, found)
    if as_json:
        _echo_json(status)
        return
    click.echo(_describe(status))
    state = status["state"] + (f" to {status['movedTo']}" if "movedTo" in status else "")
    click.echo(f"state {state}; last activity {_when(status['last_activity'])}")
    for route in status["routes"]:
        queued = status["queued"].get(route, 0)
        click.echo(f"route {route}" + (f", {queued} queued" if queued else ""))
    if status["forked_from"]:
        click.echo(f"forked from {status['forked_from']}")
    turn = status["last_turn"]
    if turn is not None:
        click.echo(f"last turn {turn['id'][:8]} {turn['status']}")
        if turn["final"]:
            click.echo(turn["final"])


@task_group.command("send")
@click.argument("words", nargs=-1, required=True, metavar="[TASK] TEXT")
@_TASK_OPTION
@click.option("--wait", is_flag=True, help="Wait for the answer, print it, exit as -p does.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=1, max=86400),
    default=1800,
    show_default=True,
    help="With --wait: seconds to wait for the turn (it goes on after).",
)
@_JSON_OPTION
def send_command(
    words: Sequence[str], task_option: str | None, wait: bool, timeout: float, as_json: bool
) -> None:
    """Send TEXT to the task as if its owner typed it: it steers, queues or starts a turn.

    The answer goes where the task's route sends answers (a chat, or nowhere for a `cli`
    route); --wait also prints it: exit 0 when the turn completed, 1 when not.
    """
    if len(words) > 2:
        _fail("give TASK and TEXT (quote TEXT when it has spaces)")
    task, text = (None, words[0]) if len(words) == 1 else (words[0], words[1])
    fields: dict[str, object] = {**_named(_one_task(task, task_option)), "text": text}
    fields["wait"] = wait
    if wait:
        fields["timeout"] = timeout
    result = _call("send", "task.send", fields, timeout + 60 if wait else CALL_TIMEOUT)
    if as_json:
        _echo_json(result)
    if not wait:
        if not as_json:
            _say_outcome(result)
        return
    failed = _replies(result) if not as_json else False
    turns = result.get("turns") or []
    if not turns:
        sys.exit(1 if failed or any(r.get("level") == "error" for r in result["replies"]) else 0)
    last = turns[-1]
    if not as_json:
        if last.get("final"):
            click.echo(last["final"])
        if last["status"] != "completed":
            why = f": {last['error']}" if last.get("error") else ""
            click.echo(f"robota: turn {last['status']}{why}", err=True)
    sys.exit(0 if last["status"] == "completed" else 1)


def _say_outcome(result: dict[str, Any]) -> None:
    outcome = result.get("outcome") or {}
    kind = outcome.get("kind")
    if kind == "replied":
        reply = outcome["reply"]
        click.echo(reply["text"], err=reply["level"] == "error")
        if reply["level"] == "error":
            sys.exit(1)
        return
    said = {
        "started": "started a turn",
        "queued": f"queued as {outcome.get('prompt_id')} ({outcome.get('ahead')} ahead)",
        "steered": "steered the running turn",
    }.get(str(kind), "sent")
    click.echo(f"task {result['task']['id']}: {said} (route {result['route']})")


@task_group.command("stop")
@click.argument("task", required=False)
@_TASK_OPTION
@_JSON_OPTION
def stop_command(task: str | None, task_option: str | None, as_json: bool) -> None:
    """Interrupt the task's running turn (queued prompts stay queued)."""
    result = _call("stop", "task.stop", _named(_one_task(task, task_option)), CALL_TIMEOUT)
    replies = result.get("replies") or ()
    if as_json:
        _echo_json(result)
    elif any(reply.get("level") == "error" for reply in replies):
        _replies(result)
        sys.exit(1)
    else:  # the route's own "no turn is running" is what this line says, naming the task
        stopped = "stopped" if result["stopped"] else "no turn was running"
        click.echo(f"task {result['task']['id']}: {stopped}")


@task_group.command("new")
@click.option("--agent", help="The configured agent to use (default: the profile's).")
@_dir_options
@click.option("--title", help="The task's title.")
@click.option("--route", help="A route of the host to make it current on (default: its own).")
@_JSON_OPTION
def new_command(
    *,
    agent: str | None,
    directory: Path | None,
    nodir: bool,
    title: str | None,
    route: str | None,
    as_json: bool,
) -> None:
    """A new task on a `cli` route of its own (or on --route)."""
    fields = {"agent": agent, "title": title, "route": route, **_directory_fields(directory, nodir)}
    result = _call("new", "task.new", fields, CALL_TIMEOUT)
    if as_json:
        _echo_json(result)
    else:
        click.echo(f"{_describe(result['task'])} (route {result['route']})")


@task_group.command("fork")
@click.argument("task", required=False)
@_TASK_OPTION
@click.option("--title", help="The fork's title.")
@_JSON_OPTION
def fork_command(
    task: str | None, task_option: str | None, title: str | None, as_json: bool
) -> None:
    """A new task from the task's latest completed turn (a running turn goes on)."""
    fields = {**_named(_one_task(task, task_option)), "title": title}
    result = _call("fork", "task.fork", fields, CALL_TIMEOUT)
    if as_json:
        _echo_json(result)
    else:
        source, route = result["source"]["id"], result["route"]
        click.echo(f"{_describe(result['task'])}, forked from {source} (route {route})")


@task_group.command("queue")
@click.argument("words", nargs=-1, metavar="[TASK] [cancel N]")
@_TASK_OPTION
@_JSON_OPTION
def queue_command(words: Sequence[str], task_option: str | None, as_json: bool) -> None:
    """The prompts queued on the task's route; `cancel N` removes the one numbered N."""
    rest = list(words)
    cancel: int | None = None
    if len(rest) >= 2 and rest[-2] == "cancel":
        if not rest[-1].isdigit():
            _fail(f"cancel needs the number /queue shows, not {rest[-1]!r}")
        cancel = int(rest[-1])
        rest = rest[:-2]
    if len(rest) > 1 or (rest and rest[0] == "cancel"):
        _fail("usage: robota task queue [TASK] [cancel N]")
    fields = {**_named(_one_task(rest[0] if rest else None, task_option)), "cancel": cancel}
    result = _call("queue", "task.queue", fields, CALL_TIMEOUT)
    if as_json:
        _echo_json(result)
    elif _replies(result):
        sys.exit(1)


@task_group.command("rename")
@click.argument("words", nargs=-1, required=True, metavar="[TASK] TITLE")
@_TASK_OPTION
@_JSON_OPTION
def rename_command(words: Sequence[str], task_option: str | None, as_json: bool) -> None:
    """Give the task a new title."""
    if len(words) > 2:
        _fail("give TASK and TITLE (quote TITLE when it has spaces)")
    task, title = (None, words[0]) if len(words) == 1 else (words[0], words[1])
    fields = {**_named(_one_task(task, task_option)), "title": title}
    result = _call("rename", "task.rename", fields, CALL_TIMEOUT)
    if as_json:
        _echo_json(result)
    elif _replies(result):
        sys.exit(1)


def _print_group(result: dict[str, Any]) -> None:
    chat = result["chat"]
    click.echo(f"group {chat['title']!r} ({result['transport']} {chat['chat_id']})")
    click.echo(f"{_describe(result['task'])} (route {chat['route']})")


@task_group.command("newgroup")
@click.argument("task", required=False)
@_TASK_OPTION
@click.option("--title", help="The group's name and the task's title.")
@click.option("--agent", help="Another configured agent (keeps the source's directory).")
@_dir_options
@click.option("--transport", help="The chat transport to use when several can make groups.")
@_JSON_OPTION
def newgroup_command(
    *,
    task: str | None,
    task_option: str | None,
    title: str | None,
    agent: str | None,
    directory: Path | None,
    nodir: bool,
    transport: str | None,
    as_json: bool,
) -> None:
    """A new group chat with a new task, set up as TASK is (or as the profile's default).

    Needs a chat transport that can create group chats; the profile's owner is invited.
    """
    where = _directory_fields(directory, nodir)
    wanted = _one_task(task, task_option)
    source = _named(wanted) if wanted is not None or _inside_agent() else {}
    fields = {**source, "title": title, "agent": agent, "transport": transport, **where}
    result = _call("newgroup", "task.newgroup", fields, CALL_TIMEOUT)
    if as_json:
        _echo_json(result)
    else:
        _print_group(result)


@task_group.command("forkgroup")
@click.argument("task", required=False)
@_TASK_OPTION
@click.option("--title", help="The group's name and the fork's title.")
@click.option("--transport", help="The chat transport to use when several can make groups.")
@_JSON_OPTION
def forkgroup_command(
    task: str | None,
    task_option: str | None,
    title: str | None,
    transport: str | None,
    as_json: bool,
) -> None:
    """A new group chat whose task is a fork of TASK (its latest completed turn)."""
    fields = {**_named(_one_task(task, task_option)), "title": title, "transport": transport}
    result = _call("forkgroup", "task.forkgroup", fields, CALL_TIMEOUT)
    if as_json:
        _echo_json(result)
    else:
        _print_group(result)


def _inside_agent() -> bool:
    from robota.host import ENV_NAMES  # noqa: PLC0415

    return any(os.environ.get(name, "").strip() for name in ENV_NAMES)


@task_group.command("push")
@click.argument("task", required=False)
@_TASK_OPTION
@click.option(
    "--to", "to", required=True, metavar="DEVICE", help="The device (id, prefix or name)."
)
@_JSON_OPTION
def push_command(task: str | None, task_option: str | None, to: str, as_json: bool) -> None:
    """Move TASK to another of your devices (it must be idle); it takes no input here from
    then on. What stays on this device (uncommitted and untracked files) is printed."""
    from ._handoff_push_cmd import say_pushed  # noqa: PLC0415

    fields = {**_named(_one_task(task, task_option)), "to": to}
    say_pushed(_call("push", "mesh.push", fields, PUSH_TIMEOUT), as_json)
