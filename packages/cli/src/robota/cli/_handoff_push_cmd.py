"""What ``robota task push`` and ``robota session push`` print (issue 30 §3): the handoff
offered, and what stays on this device (uncommitted and untracked files); ``--json`` the
host's answer (``handoff``, ``task``, ``to``, ``inventory``, ``sourceLocal``, ``origin``,
``head``). The commands live with their groups; the push is the host's (``mesh.push``).
"""

from __future__ import annotations

import json
from typing import Any

import click

__all__ = ["say_pushed"]


def say_pushed(answer: Any, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(answer, indent=2, ensure_ascii=False))
        return
    task = answer["task"]
    click.echo(
        f"task {task['id']}: offered to {answer['to']} (handoff {answer['handoff']}); "
        "it takes no input here until the handoff ends"
    )
    staying = answer.get("sourceLocal") or []
    if staying:
        click.echo(f"stays on this device ({len(staying)} uncommitted or untracked):")
        for path in staying:
            click.echo(f"  {path}")
