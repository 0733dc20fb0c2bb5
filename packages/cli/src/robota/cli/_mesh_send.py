"""``robota mesh send DEVICE TEXT``: a message to another device's task, through this profile's
host (``mesh.send``, ``robota.host._mesh_talk``).

TEXT runs on DEVICE as a turn of ``--task REMOTE`` there (default: a new task on its default
agent and folder, on a route of its own named for this device). Its answer comes back: printed
with ``--wait``, and delivered to ``--from TASK`` (inside an agent robota started, its own task
by default) as a message in that task's conversation, whose answer goes back in turn, until
``mesh.limits`` stops the conversation. Exit 0 when sent (with ``--wait``: when a reply came),
1 when the host refused or no reply came, 2 when no host runs or the request was wrong.
"""

from __future__ import annotations

import json
import os
import sys

import click

from ._task_cmd import _call

__all__ = ["send_command"]

_CALL_TIMEOUT = 60.0


@click.command("send")
@click.argument("device", metavar="DEVICE")
@click.argument("text", metavar="TEXT")
@click.option("--task", "remote", metavar="REMOTE", help="The task on DEVICE (default: a new one).")
@click.option(
    "--from",
    "from_task",
    metavar="TASK",
    help="This device's task the answers go to (inside an agent's turn: its own task).",
)
@click.option("--wait", is_flag=True, help="Wait for the reply and print it.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=1, max=86400),
    default=1800,
    show_default=True,
    help="With --wait: seconds to wait for the reply.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def send_command(
    *,
    device: str,
    text: str,
    remote: str | None,
    from_task: str | None,
    wait: bool,
    timeout: float,
    as_json: bool,
) -> None:
    """Send TEXT to DEVICE (an id, a unique id prefix or a name) to run there as a turn; its
    answer comes back (printed with --wait, delivered to --from TASK)."""
    from robota.host import ENV_NAMES  # noqa: PLC0415

    fields: dict[str, object] = {"device": device, "text": text, "wait": wait}
    if remote is not None:
        fields["task"] = remote
    if from_task is not None:
        fields["from_task"] = from_task
    caller = {name: os.environ[name] for name in ENV_NAMES if os.environ.get(name, "").strip()}
    if caller:
        fields["caller"] = caller
    if wait:
        fields["timeout"] = timeout
    answer = _call(
        "send", "mesh.send", fields, timeout + 60 if wait else _CALL_TIMEOUT, group="mesh"
    )
    result = answer if isinstance(answer, dict) else {}
    if as_json:
        click.echo(json.dumps(result, indent=2, ensure_ascii=False))
    elif not wait:
        click.echo(
            f"sent to {result.get('device')} ({result.get('name')}):"
            f" conversation {result.get('conversation')}"
        )
    elif "reply" in result:
        click.echo(str(result["reply"]))
    if wait and "reply" not in result:
        if not as_json:
            ended = str(result.get("ended", "none came"))
            click.echo(f"robota: no reply: {ended}{_why(ended, device, remote)}", err=True)
        sys.exit(1)


_REASONS = {
    "no-task": "{device} has no task {task!r} (robota task list there)",
    "no-answer": "the turn on {device} ended without an answer",
    "refused": "{device} refused the message",
    "max-hops": "the conversation reached mesh.limits.maxHops",
    "max-replies": "the conversation reached mesh.limits.maxReplies",
    "unknown-conversation": "{device} knows no such conversation",
}


def _why(ended: str, device: str, task: str | None) -> str:
    """The end's reason (a ``robota.mesh.END_REASONS`` one, ``peer: `` before it when the
    other side ended the conversation) said as a sentence in brackets; ``""`` for another."""
    said = _REASONS.get(ended.removeprefix("peer: "))
    return "" if said is None else f" ({said.format(device=device, task=task or '')})"
