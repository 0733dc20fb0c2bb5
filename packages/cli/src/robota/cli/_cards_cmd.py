"""``robota cards preview``: what a turn will look like in a terminal, Feishu or Slack.

It replays a stream-json event file (``robota -p --output-format stream-json`` writes one) the
way a card actor would: the card at each update point the throttle lets through, then the final
answer as the platform's messages. Nothing is sent anywhere and no profile is read. The reading
and the update simulation are in ``_cards_preview``.
"""

from __future__ import annotations

import json
import sys
from typing import IO, TYPE_CHECKING, Any, cast

import click

if TYPE_CHECKING:
    from robota.core.presentation import Layout

    from ._cards_preview import Final, Platform, Update

__all__ = ["cards_group"]


@click.group("cards")
def cards_group() -> None:
    """Progress cards and final answers, as the terminal, Feishu and Slack show them."""


@cards_group.command("preview")
@click.option(
    "--platform",
    type=click.Choice(["terminal", "feishu", "slack"]),
    required=True,
    help="Whose card to draw.",
)
@click.option(
    "--layout",
    type=click.Choice(["grouped", "timeline"]),
    default=None,
    help="Feishu card layout (default grouped).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help='One JSON object per line: {"turn", "update", "at", "payload"} per update, then '
    '{"turn", "final"} with the final-answer messages.',
)
@click.argument("events_file", type=click.File("rb"))
def preview_command(
    platform: str, layout: str | None, as_json: bool, events_file: IO[bytes]
) -> None:
    """Draw the cards of the turns in EVENTS_FILE (stream-json lines; - for stdin).

    Each event line may carry "ts" (seconds) to replay real timing; otherwise lines are 100 ms
    apart. Updates follow the card throttle: the first at once, then at most every 2 s, every
    0.5 s for a new approval or the end; an update that draws the same card is skipped.
    """
    from ._cards_preview import PreviewError, preview, read_events  # noqa: PLC0415

    if layout is not None and platform != "feishu":
        raise click.UsageError("--layout applies to --platform feishu only")
    name = "stdin" if events_file.name in ("<stdin>", "-") else events_file.name
    try:
        events = read_events(events_file)
    except PreviewError as error:
        click.echo(f"robota: {name} {error}", err=True)
        sys.exit(2)
    if not events:
        click.echo(f"robota: {name} has no events", err=True)
        sys.exit(2)
    chosen = cast("Platform", platform)
    for item in preview(events, platform=chosen, layout=cast("Layout", layout or "grouped")):
        if as_json:
            click.echo(json.dumps(_json_line(item), ensure_ascii=False))
        else:
            _show(item, platform)


def _json_line(item: Update | Final) -> dict[str, Any]:
    from ._cards_preview import Update  # noqa: PLC0415

    if isinstance(item, Update):
        return {"turn": item.turn, "update": item.number, "at": item.at, "payload": item.payload}
    return {"turn": item.turn, "final": item.messages}


def _show(item: Update | Final, platform: str) -> None:
    from ._cards_preview import Update  # noqa: PLC0415

    if isinstance(item, Update):
        reason = "" if item.reason == "update" else f" ({item.reason})"
        click.echo(f"--- turn {item.turn} · update {item.number} at {item.at:.1f} s{reason} ---")
        if platform == "terminal":
            for line in item.payload["lines"]:
                click.echo(line)
        else:
            click.echo(json.dumps(item.payload, ensure_ascii=False, indent=2))
        return
    count = len(item.messages)
    what = f"{count} message{'s' if count != 1 else ''}" if count else "no final answer"
    click.echo(f"--- turn {item.turn} · {item.status} · final: {what} ---")
    for message in item.messages:
        if platform == "terminal":
            click.echo(message.rstrip("\n"))
        else:
            click.echo(json.dumps(message, ensure_ascii=False, indent=2))
    if item.skipped:
        click.echo(f"(skipped as unchanged: {item.skipped})")
