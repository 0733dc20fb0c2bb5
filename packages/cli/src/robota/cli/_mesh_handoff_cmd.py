"""``robota mesh handoffs [--json]``: the session handoffs this device takes part in, either
side, through this profile's host (``robota.host._mesh_handoff``): ``id``, ``task``, ``from``,
``to`` (device ids), ``phase`` (offered, transferring, staged, committed, abandoned) and
``updatedAt`` (seconds since the epoch), newest first.
"""

from __future__ import annotations

import json

import click

from ._task_cmd import _call

__all__ = ["handoffs_command"]

_CALL_TIMEOUT = 120.0


@click.command("handoffs")
@click.option("--json", "as_json", is_flag=True, help="Print the handoffs as JSON.")
def handoffs_command(as_json: bool) -> None:
    """The session handoffs this device pushed or was offered, newest first."""
    from robota.mesh import iso_time  # noqa: PLC0415

    answer = _call("handoffs", "mesh.handoffs", {}, _CALL_TIMEOUT, group="mesh")
    items = (answer.get("handoffs") if isinstance(answer, dict) else None) or []
    if as_json:
        click.echo(json.dumps(items, indent=2, ensure_ascii=False))
        return
    if not items:
        click.echo("no handoffs")
    for item in items:
        click.echo(
            f"{item['id']}  task {item['task']}  from {item['from'] or 'this device'}"
            f"  to {item['to'] or 'this device'}  {item['phase']}"
            f"  {iso_time(float(item['updatedAt']))}"
        )
