"""``robota mesh offer | offers | accept | decline``: files between devices, through this
profile's host (``robota.host._mesh_offers``).

``offer DEVICE PATH [--task TASK]``: from the operator's terminal (a controlling terminal, and
no agent's process among this one's ancestors) any readable file (``mesh.offer.operator``, which
the host refuses to an agent's descendant in any case); otherwise, as an agent, only a file of
its own task's working folder (the task robota started it for) that does not look like a
secret (``mesh.offer``). TASK names the task on DEVICE whose conversation is told of the file
once it is kept. ``offers [--json]`` lists the offers waiting here (``id``,
``kind``, ``from``, ``name``, ``size``, ``sha256``, ``expiresAt``). ``accept ID`` asks the
operator on ``/dev/tty`` (refused without one and to an agent's descendant), then waits for the
copy and prints where it was kept, its size and SHA-256. ``decline ID``. A task another
device pushes is listed and answered the same way (``kind`` ``handoff``; ``accept ID --dir
PATH`` the folder it works in here, ``robota.host._mesh_take``).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click

from ._task_cmd import _call

__all__ = ["accept_command", "decline_command", "offer_command", "offers_command"]

_CALL_TIMEOUT = 120.0
_ACCEPT_TIMEOUT = 700.0


def _operator_at_terminal() -> bool:
    """A controlling terminal, and no agent's process among this one's ancestors."""
    from robota.core.control import caller_refusal  # noqa: PLC0415

    return caller_refusal(os.getpid()) is None and _has_terminal()


def _has_terminal() -> bool:
    try:
        os.close(os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY))
    except OSError:
        return False
    return True


def _as_dict(answer: Any) -> dict[str, Any]:
    return answer if isinstance(answer, dict) else {}


@click.command("offer")
@click.argument("device", metavar="DEVICE")
@click.argument("path", metavar="PATH", type=click.Path(path_type=Path))
@click.option("--task", metavar="TASK", help="The task on DEVICE told of the file once it is kept.")
def offer_command(device: str, path: Path, task: str | None) -> None:
    """Offer the file at PATH to DEVICE; its operator accepts or declines it (10 minutes)."""
    from robota.host import ENV_NAMES  # noqa: PLC0415

    fields: dict[str, object] = {"device": device, "path": str(Path.cwd() / path)}
    if task is not None:
        fields["task"] = task
    caller = {n: os.environ[n] for n in ENV_NAMES if os.environ.get(n, "").strip()}
    if caller:
        fields["caller"] = caller
    request = "mesh.offer.operator" if _operator_at_terminal() else "mesh.offer"
    result = _as_dict(_call("offer", request, fields, _CALL_TIMEOUT, group="mesh"))
    click.echo(
        f"offered {result.get('name')} ({result.get('size')} bytes, sha256"
        f" {result.get('sha256')}) to {result.get('device')}: offer {result.get('id')},"
        f" until {result.get('expiresAt')}"
    )


@click.command("offers")
@click.option("--json", "as_json", is_flag=True, help="Print the offers as JSON.")
def offers_command(as_json: bool) -> None:
    """The files and tasks other devices offer this one, waiting for an answer."""
    offers = _as_dict(_call("offers", "mesh.offers", {}, _CALL_TIMEOUT, group="mesh"))
    items = offers.get("offers") or []
    if as_json:
        click.echo(json.dumps(items, indent=2, ensure_ascii=False))
        return
    if not items:
        click.echo("no offers")
    for item in items:
        click.echo(
            f"{item['id']}  {'task ' if item.get('kind') == 'handoff' else ''}{item['name']}"
            f"  {item['size']} bytes  from {item['from']}"
            f"  sha256 {item['sha256']}  until {item['expiresAt']}"
        )


@click.command("accept")
@click.argument("offer", metavar="ID")
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, exists=True, resolve_path=True, path_type=Path),
    help="For a task (kind handoff): the folder it works in here (default: the source's).",
)
def accept_command(offer: str, directory: Path | None) -> None:
    """Accept the offer ID, asked on this terminal: a file is kept under the profile's
    data/peers/<device id>/; a task (kind handoff) is saved here and continues here."""
    from ._trust_ask import ask_terminal  # noqa: PLC0415

    if not _has_terminal():
        # Said first: without a terminal no answer can ever be given, whatever waits.
        click.echo(
            "robota: mesh accept: the operator answers on this process's terminal (/dev/tty),"
            " and it has none: run robota mesh accept in a terminal",
            err=True,
        )
        sys.exit(2)
    listed = _as_dict(_call("accept", "mesh.offers", {}, _CALL_TIMEOUT, group="mesh"))
    items = [i for i in listed.get("offers") or [] if str(i.get("id", "")).startswith(offer)]
    if len(items) != 1:
        click.echo(f"robota: mesh accept: no one waiting offer {offer!r} (mesh offers)", err=True)
        sys.exit(2)
    item = items[0]
    handoff = item.get("kind") == "handoff"
    what = f"task {item['name']}" if handoff else repr(item["name"])
    answer = ask_terminal(
        f"{'Take' if handoff else 'Keep'} {what} ({item['size']} bytes, sha256 {item['sha256']})"
        f" from {item['from']}? [y/N] "
    )
    if answer != "y":
        click.echo("robota: mesh accept: not accepted (answer y on this terminal)", err=True)
        sys.exit(2)
    fields: dict[str, object] = {"offer": item["id"]}
    if handoff and directory is not None:
        fields["dir"] = str(directory)
    result = _as_dict(_call("accept", "mesh.accept", fields, _ACCEPT_TIMEOUT, group="mesh"))
    if handoff:
        _say_taken(result)
        return
    kept = result.get("offer") or {}
    click.echo(
        f"kept {kept.get('name')} ({kept.get('size')} bytes, sha256 {kept.get('sha256')}):"
        f" {result.get('path')}"
    )


def _say_taken(result: dict[str, Any]) -> None:
    click.echo(
        f"task {result.get('task')} saved here from {result.get('from')}, working in"
        f" {result.get('cwd')}; it starts once its source let it go"
    )
    for warning in result.get("warnings") or []:
        click.echo(f"robota: warning: {warning}", err=True)
    staying = result.get("sourceLocal") or []
    if staying:
        click.echo(f"stayed on {result.get('from')} (uncommitted or untracked):")
        for path in staying:
            click.echo(f"  {path}")


@click.command("decline")
@click.argument("offer", metavar="ID")
def decline_command(offer: str) -> None:
    """Decline the offer ID."""
    _call("decline", "mesh.decline", {"offer": offer}, _CALL_TIMEOUT, group="mesh")
    click.echo(f"declined {offer}")
