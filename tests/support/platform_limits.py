"""Independent checks of platform payloads against FEISHU.md and SLACK.md (facts copied here).

Deliberately not the renderer's own code: the renderer's budget arithmetic is what is under
test, so every size is measured again from the serialised payload.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

# -- Feishu Card JSON 2.0 -----------------------------------------------------------------------

FEISHU_BODY_BYTES = 30 * 1024  # request body for a card (send / reply / PATCH)
FEISHU_COMPONENTS = 200
FEISHU_ACTIVITY_BYTES = 24 * 1024
FEISHU_ACTIVITY_COMPONENTS = 160
FEISHU_TABLES = 3
ELEMENT_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,19}$")
CONTAINERS = {"collapsible_panel", "column_set", "column", "form", "interactive_container"}

# 2.0 rejects unknown properties: the properties this project uses, per tag.
ELEMENT_KEYS: dict[str, set[str]] = {
    "markdown": {"tag", "element_id", "content"},
    "hr": {"tag", "element_id"},
    "button": {"tag", "element_id", "text", "type", "behaviors"},
    "collapsible_panel": {"tag", "element_id", "expanded", "header", "elements"},
}
CARD_KEYS = {"schema", "config", "card_link", "header", "body"}
HEADER_KEYS = {"title", "subtitle", "template", "icon", "text_tag_list"}
PANEL_HEADER_KEYS = {"title", "icon", "icon_position", "icon_expanded_angle"}
TEMPLATES = {"blue", "green", "red", "orange", "grey"}


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def utf8(value: Any) -> int:
    return len(dumps(value).encode("utf-8"))


def components(value: Any) -> int:
    if isinstance(value, dict):
        return (1 if "tag" in value else 0) + sum(components(v) for v in value.values())
    if isinstance(value, list):
        return sum(components(v) for v in value)
    return 0


# Compiled once: the checks run on every line of every card a property test draws.
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_DELIMITER_ROW = re.compile(r"\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*")


def tables(markdown: str) -> int:
    """Tables outside fenced code (a table-shaped text inside a fence is code)."""
    lines, inside = [], False
    for line in markdown.split("\n"):
        if _FENCE.match(line):
            inside = not inside
            continue
        lines.append("" if inside else line)
    return sum(
        1
        for a, b in itertools.pairwise(lines)
        if "|" in a and _DELIMITER_ROW.fullmatch(b) and "|" in b
    )


def check_feishu_card(card: dict[str, Any], *, header: bool = True) -> dict[str, str]:
    """Asserts ``card`` is valid Card 2.0 within the hard limits; returns element_id -> tag."""
    assert set(card) <= CARD_KEYS, set(card) - CARD_KEYS
    assert card["schema"] == "2.0"
    assert card["config"]["update_multi"] is True
    assert "i18n_elements" not in card and "fallback" not in card
    if header:
        assert set(card["header"]) <= HEADER_KEYS
        assert card["header"]["title"]["tag"] == "plain_text"
        assert card["header"]["title"]["content"]
        assert card["header"]["template"] in TEMPLATES
    elements = card["body"]["elements"]
    assert isinstance(elements, list) and elements
    ids: dict[str, str] = {}

    def walk(element: dict[str, Any], depth: int) -> None:
        tag = element["tag"]
        assert tag != "action", "the action module is gone in 2.0"
        assert tag in ELEMENT_KEYS, tag
        assert set(element) <= ELEMENT_KEYS[tag], (tag, set(element) - ELEMENT_KEYS[tag])
        eid = element.get("element_id")
        if eid is not None:
            assert ELEMENT_ID.match(eid), eid
            assert eid not in ids, f"duplicate element_id {eid}"
            ids[eid] = tag
        if tag == "markdown":
            assert isinstance(element["content"], str) and element["content"]
        if tag == "button":
            assert element["text"]["tag"] == "plain_text"
            for behavior in element["behaviors"]:
                assert behavior["type"] == "callback"
                assert set(behavior["value"]) == {"token"}
        if tag in CONTAINERS:
            assert depth < 5, "containers nest at most 5 levels"
        if tag == "collapsible_panel":
            assert element["expanded"] is False
            assert set(element["header"]) <= PANEL_HEADER_KEYS
            assert element["header"]["title"]["tag"] in ("markdown", "plain_text")
            assert element["elements"], "an empty panel"
            for child in element["elements"]:
                assert child["tag"] != "form"
                walk(child, depth + 1)

    for element in elements:
        walk(element, 0)
    assert components(card) <= FEISHU_COMPONENTS
    body = json.dumps({"content": dumps(card)}, ensure_ascii=False).encode("utf-8")
    assert len(body) <= FEISHU_BODY_BYTES, len(body)
    markdown = [e["content"] for e in _all(elements) if e.get("tag") == "markdown"]
    assert sum(tables(text) for text in markdown) <= FEISHU_TABLES + 2  # reported limit ~5
    return ids


def check_feishu_activity(activity: list[dict[str, Any]]) -> None:
    assert utf8(activity) <= FEISHU_ACTIVITY_BYTES, utf8(activity)
    assert components(activity) <= FEISHU_ACTIVITY_COMPONENTS
    markdown = [e["content"] for e in _all(activity) if e.get("tag") == "markdown"]
    assert sum(tables(text) for text in markdown) <= FEISHU_TABLES


def _all(elements: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for element in elements:
        out.append(element)
        out.extend(_all(element.get("elements", [])))
    return out


# -- Slack Block Kit ----------------------------------------------------------------------------


def check_slack_message(payload: dict[str, Any]) -> None:
    blocks = payload["blocks"]
    assert payload["text"], "always send the fallback text"
    assert len(payload["text"]) <= 40_000
    assert 1 <= len(blocks) <= 50
    total = 0
    markdown_total = 0
    action_ids: set[str] = set()
    for block in blocks:
        kind = block["type"]
        assert "block_id" not in block or len(block["block_id"]) <= 255
        if kind == "header":
            assert block["text"]["type"] == "plain_text"
            assert 0 < len(block["text"]["text"]) <= 150
            total += len(block["text"]["text"])
        elif kind == "section":
            assert block["text"]["type"] == "mrkdwn"
            assert 0 < len(block["text"]["text"]) <= 3000
            total += len(block["text"]["text"])
        elif kind == "context":
            assert 1 <= len(block["elements"]) <= 10
            total += sum(len(e["text"]) for e in block["elements"])
        elif kind == "actions":
            assert 1 <= len(block["elements"]) <= 25
            for button in block["elements"]:
                assert button["type"] == "button"
                assert len(button["text"]["text"]) <= 75
                assert len(button["value"]) <= 2000
                assert 0 < len(button["action_id"]) <= 255
                assert button["action_id"] not in action_ids
                action_ids.add(button["action_id"])
                assert button.get("style") in (None, "primary", "danger")
        elif kind == "markdown":
            markdown_total += len(block["text"])
        else:
            raise AssertionError(f"unexpected block type {kind}")
    assert markdown_total <= 12_000
    assert total <= 12_000, total  # Slack refuses around 13 k characters of block text
