"""The ``/sessions`` card: what each entry offers, paging that keeps the search, and budgets."""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

import pytest

from robota.core.engine import SessionsEntry, SessionsListing
from robota.transports.feishu import card_components
from robota.transports.feishu._sessions_card import sessions_card, sessions_notes

WALL = 1_780_000_000.0
EN = sessions_notes("en_US.UTF-8")


def entry(number: int, state: str = "completed", **changes: Any) -> SessionsEntry:
    fields: dict[str, Any] = {
        "number": number,
        "agent": "codex",
        "updated_at": WALL - number,
        "title": f"task {number}",
        "state": state,
        "cwd": "/work/p",
        "task_id": None if state == "external" else f"t{number:011x}",
        "session_id": "thread-x" if state == "external" else None,
    }
    fields.update(changes)
    return SessionsEntry(**fields)


def draw(listing: SessionsListing, notes: Any = EN) -> tuple[dict[str, Any], dict[str, Any]]:
    counter = itertools.count()
    card = sessions_card(listing, notes, lambda: f"tok{next(counter)}")
    by_element = {}
    for element in walk(card.card):
        if element.get("tag") == "button":
            token = element["behaviors"][0]["value"]["token"]
            by_element[element["element_id"]] = token
    actions = {a.token: a for a in card.actions}
    return card.card, {eid: actions[token] for eid, token in by_element.items()}


def walk(value: Any) -> list[dict[str, Any]]:
    found = []
    if isinstance(value, dict):
        if "tag" in value:
            found.append(value)
        for inner in value.values():
            found.extend(walk(inner))
    elif isinstance(value, list):
        for inner in value:
            found.extend(walk(inner))
    return found


@pytest.mark.parametrize(
    ("shown", "buttons"),
    [
        (entry(1), ["s1", "n1", "f1"]),
        (entry(2, current=True), ["n2", "f2"]),  # the current one is not switched to
        (entry(3, state="failed"), ["s3", "n3"]),  # no completed turn to fork from
        (entry(4, state="new"), ["s4", "n4"]),
        (entry(5, state="external"), ["s5", "n5", "f5"]),  # an agent's own thread forks
    ],
)
def test_each_entry_offers_what_it_can(shown: SessionsEntry, buttons: list[str]) -> None:
    _card, actions = draw(SessionsListing((shown,), 1, None, more=False))
    assert sorted(actions) == sorted(buttons)
    for eid, action in actions.items():
        assert action.kind == {"s": "switch", "n": "newgroup", "f": "forkgroup"}[eid[0]]
        assert action.value == shown.ref


@pytest.mark.parametrize(
    ("page", "more", "search", "paging"),
    [
        (1, False, None, {}),
        (1, True, None, {"next": "/sessions 2"}),
        (2, True, "pear", {"prev": "/sessions pear 1", "next": "/sessions pear 3"}),
        (3, False, "two words", {"prev": "/sessions two words 2"}),
    ],
)
def test_paging_keeps_the_search_and_asks_for_the_neighbouring_page(
    page: int, more: bool, search: str | None, paging: dict[str, str]
) -> None:
    first = (page - 1) * 5 + 1
    listing = SessionsListing(
        tuple(entry(n) for n in range(first, first + 5)), page, search, more=more
    )
    card, actions = draw(listing)
    pages = {eid: a.value for eid, a in actions.items() if a.kind == "page"}
    assert pages == paging
    numbers = re.findall(r"\*\*(\d+)\. ", json.dumps(card, ensure_ascii=False))
    assert numbers == [str(n) for n in range(first, first + 5)]  # global, across pages
    if search:
        assert search in card["header"]["subtitle"]["content"]


def test_an_empty_page_and_an_agent_that_failed_are_said() -> None:
    listing = SessionsListing((), 1, "kiwi", more=False, failures=("codex: timed out",))
    card, actions = draw(listing)
    text = json.dumps(card, ensure_ascii=False)
    assert actions == {}
    assert "No tasks matching kiwi" in text and "codex: timed out" in text
    zh, _ = draw(listing, sessions_notes("zh_CN.UTF-8"))
    assert "没有匹配 kiwi 的任务" in json.dumps(zh, ensure_ascii=False)


def test_a_full_page_of_long_titles_stays_a_valid_card() -> None:
    shown = tuple(
        entry(n, title="<b>" + "很长的标题 " * 400, cwd="/" + "d" * 4000) for n in range(6, 11)
    )
    card, actions = draw(SessionsListing(shown, 2, "x" * 300, more=True))
    ids = [element["element_id"] for element in walk(card) if "element_id" in element]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[A-Za-z][A-Za-z0-9_]{0,19}", eid) for eid in ids)
    assert len({a.token for a in actions.values()}) == len(actions) == 5 * 3 + 2
    assert card_components(card) <= 200
    assert len(card["header"]["subtitle"]["content"]) <= 100
    text = json.dumps(card, ensure_ascii=False)
    assert len(text.encode()) <= 8 * 1024  # far within the 30 KB of a request body
    assert "<b>" not in text  # titles are shown as text, never as tags
