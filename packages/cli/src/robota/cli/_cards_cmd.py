"""``robota cards preview``: what a turn will look like in a terminal or a chat platform.

It replays a stream-json event file (``robota -p --output-format stream-json`` writes one) the
way a card actor would: the card at each update point the throttle lets through, then the final
answer as the platform's messages. Nothing is sent anywhere and no profile is read. The reading
and the update simulation are in ``_cards_preview``. The platforms are the terminal and every
installed transport plugin that declares its cards (``robota.core.cards.CardRenderers``), named
and laid out as the plugin says; they are looked up when the command runs, so ``--help`` loads
no plugin.
"""

from __future__ import annotations

import json
import sys
from typing import IO, TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from robota.core.cards import CardRenderers

    from ._cards_preview import Final, Update

__all__ = ["cards_group"]


@click.group("cards")
def cards_group() -> None:
    """Progress cards and final answers, as the terminal and the chat platforms show them."""


@cards_group.command("preview")
@click.option(
    "--platform",
    metavar="NAME",
    required=True,
    help="Whose card to draw: terminal, or an installed chat transport with cards.",
)
@click.option(
    "--layout",
    metavar="NAME",
    default=None,
    help="The card layout, for a platform that has several (default: its first).",
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
    from ._cards_preview import TERMINAL, PreviewError, preview, read_events, renderers  # noqa: PLC0415

    plugins = renderers()
    _check_choice(platform, layout, plugins, terminal=TERMINAL)
    name = "stdin" if events_file.name in ("<stdin>", "-") else events_file.name
    try:
        events = read_events(events_file)
    except PreviewError as error:
        click.echo(f"robota: {name} {error}", err=True)
        sys.exit(2)
    if not events:
        click.echo(f"robota: {name} has no events", err=True)
        sys.exit(2)
    for item in preview(events, platform=platform, layout=layout, plugins=plugins):
        if as_json:
            click.echo(json.dumps(_json_line(item), ensure_ascii=False))
        else:
            _show(item, platform)


def _check_choice(
    platform: str, layout: str | None, plugins: dict[str, CardRenderers], *, terminal: str
) -> None:
    """A usage error (exit 2) for a platform or a layout the installed plugins do not draw."""
    if platform != terminal and platform not in plugins:
        names = ", ".join([terminal, *plugins])
        raise click.BadParameter(f"{platform!r} is not one of {names}", param_hint="'--platform'")
    if layout is None:
        return
    layouts = () if platform == terminal else plugins[platform].card_layouts
    if not layouts:
        having = [name for name, plugin in plugins.items() if plugin.card_layouts]
        raise click.UsageError(f"--layout applies to --platform {' or '.join(having)} only")
    if layout not in layouts:
        raise click.BadParameter(
            f"{layout!r} is not one of {', '.join(layouts)}", param_hint="'--layout'"
        )


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
