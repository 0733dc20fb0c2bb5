"""``/sessions`` as a Feishu card: five entries a page, each with Switch, NewGroup and ForkGroup.

The engine answers ``/sessions`` with the page as data (``SessionsListing``) beside its text;
this module draws that page as a Card JSON 2.0 card, pure. Entry numbers are the listing's
global ones (``/switch 7`` names the same entry whatever page showed it), and Previous / Next
re-ask the route for the neighbouring page with the same search: the service then replaces
this card's contents instead of sending another card.

Buttons carry only an opaque token (``new_token()``, bound server side by the caller to what
the button does); the card returns its ``SessionsAction``s so the caller can bind them:

* ``switch``     ``value`` is the entry's reference (a task id or an agent's thread id);
* ``newgroup``   a new group chat for that entry's project and settings;
* ``forkgroup``  a new group chat forked from the entry's latest completed turn;
* ``page``       ``value`` is the ``/sessions`` command that shows the neighbouring page.

ForkGroup is offered for an entry that can have a completed turn (a robota task whose last turn
completed, or an agent's own thread); the fork itself still says why when there is none.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from robota.core.engine import SessionsEntry, SessionsListing

__all__ = ["SessionsAction", "SessionsCard", "sessions_card", "sessions_notes"]

Json = dict[str, Any]
ActionKind = Literal["switch", "newgroup", "forkgroup", "page"]


@dataclass(frozen=True, slots=True)
class SessionsAction:
    """What one button of the card does, for the caller to bind to its token."""

    token: str
    kind: ActionKind
    value: str


@dataclass(frozen=True, slots=True)
class SessionsCard:
    card: Json
    actions: tuple[SessionsAction, ...]


def sessions_notes(locale: str) -> Mapping[str, str]:
    if locale.startswith("zh"):
        return {
            "title": "任务列表",
            "search": "搜索",
            "page": "第 {page} 页",
            "empty": "没有任务",
            "empty_search": "没有匹配 {search} 的任务",
            "current": "当前",
            "switch": "切换",
            "newgroup": "新建群聊",
            "forkgroup": "分叉到群聊",
            "previous": "上一页",
            "next": "下一页",
            "external": "外部会话",
            "switching": "正在切换",
            "paging": "正在翻页",
            "grouping": "正在创建群聊",
        }
    return {
        "title": "Sessions",
        "search": "search",
        "page": "page {page}",
        "empty": "No tasks",
        "empty_search": "No tasks matching {search}",
        "current": "current",
        "switch": "Switch",
        "newgroup": "NewGroup",
        "forkgroup": "ForkGroup",
        "previous": "Previous",
        "next": "Next",
        "external": "external",
        "switching": "Switching",
        "paging": "Turning the page",
        "grouping": "Making the group",
    }


def sessions_card(
    listing: SessionsListing, notes: Mapping[str, str], new_token: Callable[[], str]
) -> SessionsCard:
    """The card of one ``/sessions`` page and the actions its buttons stand for."""
    actions: list[SessionsAction] = []

    def button(eid: str, label: str, kind: ActionKind, value: str, style: str) -> Json:
        token = new_token()
        actions.append(SessionsAction(token, kind, value))
        return {
            "tag": "button",
            "element_id": eid,
            "text": {"tag": "plain_text", "content": label},
            "type": style,
            "size": "small",
            "behaviors": [{"type": "callback", "value": {"token": token}}],
        }

    elements: list[Json] = []
    for entry in listing.entries:
        n = entry.number
        elements.append(_markdown(f"e{n}", _entry_text(entry, notes)))
        buttons = []
        if not entry.current:
            buttons.append(button(f"s{n}", notes["switch"], "switch", entry.ref, "primary"))
        buttons.append(button(f"n{n}", notes["newgroup"], "newgroup", entry.ref, "default"))
        if entry.state in ("completed", "external"):
            buttons.append(button(f"f{n}", notes["forkgroup"], "forkgroup", entry.ref, "default"))
        elements.append(_row(f"r{n}", buttons))
    if not listing.entries:
        empty = (
            notes["empty_search"].format(search=listing.search)
            if listing.search
            else notes["empty"]
        )
        elements.append(_markdown("empty", _escape(empty)))
    for number, failure in enumerate(listing.failures):
        elements.append(_markdown(f"x{number}", f"<font color='red'>{_escape(failure)}</font>"))
    paging = []
    search = f"{listing.search} " if listing.search else ""
    if listing.page > 1:
        back = f"/sessions {search}{listing.page - 1}"
        paging.append(button("prev", notes["previous"], "page", back, "default"))
    if listing.more:
        forward = f"/sessions {search}{listing.page + 1}"
        paging.append(button("next", notes["next"], "page", forward, "default"))
    if paging:
        elements.append({"tag": "hr", "element_id": "paging_rule"})
        elements.append(_row("paging", paging))
    subtitle = notes["page"].format(page=listing.page)
    if listing.search:
        subtitle += f" · {notes['search']}: {listing.search}"
    card: Json = {
        "schema": "2.0",
        "config": {
            "update_multi": True,
            "width_mode": "fill",
            "summary": {"content": notes["title"]},
        },
        "header": {
            "title": {"tag": "plain_text", "content": notes["title"]},
            "subtitle": {"tag": "plain_text", "content": subtitle[:100]},
            "template": "blue",
        },
        "body": {"elements": elements},
    }
    return SessionsCard(card, tuple(actions))


def _entry_text(entry: SessionsEntry, notes: Mapping[str, str]) -> str:
    when = datetime.fromtimestamp(entry.updated_at).strftime("%Y-%m-%d %H:%M")
    state = notes["external"] if entry.state == "external" else entry.state
    facts = [entry.agent, state, when]
    if entry.cwd:
        facts.append(entry.cwd if len(entry.cwd) <= 80 else "…" + entry.cwd[-79:])
    current = f" · **{notes['current']}**" if entry.current else ""
    return (
        f"**{entry.number}. {_escape(entry.title[:120])}**{current}\n"
        f"<font color='grey'>{_escape(' · '.join(facts))} · {_escape(entry.ref)}</font>"
    )


def _markdown(eid: str, content: str) -> Json:
    return {"tag": "markdown", "element_id": eid, "content": content}


def _row(eid: str, buttons: list[Json]) -> Json:
    return {
        "tag": "column_set",
        "element_id": eid,
        "flex_mode": "flow",
        "horizontal_spacing": "small",
        "columns": [{"tag": "column", "width": "auto", "elements": [button]} for button in buttons],
    }


def _escape(text: str) -> str:
    """Text shown as-is inside card Markdown: no stray tags (as the progress cards do)."""
    return text.replace("<", "&lt;").replace(">", "&gt;")
