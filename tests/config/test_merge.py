"""Merging a newer template into a user's config.yaml: additive, faithful, idempotent."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from robota.core import ConfigError
from robota.core.config import merge_config_text, template_text
from robota.core.config._load import parse_yaml

from ._yamlgen import (
    comment_lines,
    expected_merge,
    key_orders,
    newer_templates,
    render,
    user_documents,
)

TEMPLATE = template_text("config.yaml")
TEMPLATE_DATA: Any = parse_yaml(TEMPLATE, file="template")


def _is_subsequence(small: list[str], big: list[str]) -> bool:
    remaining = iter(big)
    return all(any(line == candidate for candidate in remaining) for line in small)


def _grown_from(line: str, candidate: str) -> bool:
    """``candidate`` is ``line`` with text inserted (a flow mapping that got entries)."""
    return "{" in line and _is_subsequence(list(line), list(candidate))


def _lines_survive(small: list[str], big: list[str]) -> bool:
    remaining = iter(big)
    return all(any(line == c or _grown_from(line, c) for c in remaining) for line in small)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.data(),
    st.sampled_from([2, 4]),
    st.sampled_from(["\n", "\r\n"]),
)
def test_merge_keeps_everything_of_the_user_and_adds_what_is_missing(
    data: st.DataObject, indent: int, eol: str
) -> None:
    newer = data.draw(newer_templates(TEMPLATE_DATA), label="template")
    user = data.draw(user_documents(TEMPLATE_DATA), label="user")
    template_text_ = render(newer)
    user_text = render(user, indent).replace("\n", eol)

    merged = merge_config_text(user_text, template_text_)

    merged_data = parse_yaml(merged, file="merged")
    assert merged_data == expected_merge(user.data, newer.data)
    # The user's keys keep their order; new keys come after them.
    orders = key_orders(merged_data)
    for path, keys in key_orders(user.data).items():
        assert orders[path][: len(keys)] == keys
    # No comment of the user's is lost, and they stay in order.
    assert _is_subsequence(comment_lines(user_text), comment_lines(merged))
    # The merge inserts text: every user line survives as it was, or with entries added to a
    # flow mapping on it.
    assert _lines_survive(user_text.split(eol), merged.split(eol))
    # Line endings are kept.
    if eol == "\r\n":
        assert merged.count("\n") == merged.count("\r\n")
    # Running it again changes nothing, byte for byte.
    assert merge_config_text(merged, template_text_) == merged


@given(st.data())
@settings(max_examples=40, deadline=None)
def test_merge_of_an_up_to_date_file_returns_it_unchanged(data: st.DataObject) -> None:
    user = data.draw(user_documents(TEMPLATE_DATA))
    text = render(user, data.draw(st.sampled_from([2, 4])))
    once = merge_config_text(text, TEMPLATE)
    assert merge_config_text(once, TEMPLATE) == once
    if parse_yaml(once, file="x") == parse_yaml(text, file="x"):
        assert once == text


def test_template_comments_come_with_new_entries() -> None:
    user = (
        "agents:\n    mine:\n        kind: acp\n        command: mine\ndefaults:\n    agent: mine\n"
    )
    merged = merge_config_text(user, TEMPLATE)
    assert merged.startswith(user)
    assert (
        "defaults:\n    agent: mine\n"
        "    # Working directory of new sessions; a relative path resolves against the directory"
    ) in merged
    # Re-indented to the user's four spaces, commented examples included.
    assert "\ntransports:\n    console:\n        enabled: true\n    # Feishu/Lark" in merged
    assert "\n    # feishu:\n    #   appId: ${FEISHU_APP_ID}\n" in merged


def test_user_agents_are_theirs() -> None:
    user = (
        "agents:\n"
        "  codex:\n"
        "    kind: app-server\n"
        "    command: /opt/codex  # my build\n"
        "  mine:\n"
        "    kind: acp\n"
        "    command: mine\n"
        "defaults:\n"
        "  cwd: ~/src\n"
    )
    merged = parse_yaml(merge_config_text(user, TEMPLATE), file="merged")
    assert isinstance(merged, dict)
    # Removed template agents are not re-added; kept ones get missing fields.
    assert list(merged["agents"]) == ["codex", "mine"]
    assert merged["agents"]["codex"] == {
        "kind": "app-server",
        "command": "/opt/codex",
        "args": ["app-server", "--listen", "stdio://"],
        "title": "Codex",
    }
    assert merged["agents"]["mine"] == {"kind": "acp", "command": "mine"}
    # A missing default agent is not guessed.
    assert "agent" not in merged["defaults"]
    assert merged["defaults"]["cwd"] == "~/src"


def test_comments_introducing_the_next_section_stay_with_it() -> None:
    user = (
        "agents:\n"
        "  mine: {kind: acp, command: mine}\n"
        "defaults:\n"
        "  agent: mine\n"
        "  # cwd: ~/commented-out-by-me\n"
        "\n"
        "# ---- my transports ----\n"
        "transports:\n"
        "  console:\n"
        "    enabled: false\n"
    )
    merged = merge_config_text(user, TEMPLATE)
    assert (
        "  agent: mine\n"
        "  # cwd: ~/commented-out-by-me\n"
        "  # Working directory of new sessions; a relative path resolves against the directory"
        " robota\n"
        "  # was started in.\n"
        "  cwd: .\n"
        "  # default | acceptEdits | bypassPermissions | plan\n"
        "  permissionMode: default\n"
        "\n"
        "# ---- my transports ----\n"
        "transports:\n"
    ) in merged


def test_flow_mappings_get_their_entries_inline() -> None:
    user = (
        "# my agents\n"
        "agents: {mine: {kind: acp, command: mine}}  # inline\n"
        "defaults: {agent: mine}  # flow\n"
        "transports: {\n"
        "  console: {},  # nothing here yet\n"
        "}\n"
        "# the end\n"
    )
    merged = merge_config_text(user, TEMPLATE)
    assert merged.startswith(
        "# my agents\n"
        "agents: {mine: {kind: acp, command: mine}}  # inline\n"
        "defaults: {agent: mine, cwd: ., permissionMode: default}  # flow\n"
        "transports: {\n"
        "  console: {enabled: true},  # nothing here yet\n"
        "}\n"
        "# the end\n"
        "\n"
        "storage:\n"
    )
    assert parse_yaml(merged, file="merged") == expected_merge(
        parse_yaml(user, file="user"), TEMPLATE_DATA
    )
    assert merge_config_text(merged, TEMPLATE) == merged


def test_layouts_text_insertion_gets_wrong_fall_back_to_a_round_trip() -> None:
    # Lines inserted after a `|+` scalar would change its trailing newlines.
    user = "defaults:\n  cwd: |+\n    keep\n\n# mine\nagents: {a: {kind: acp, command: a}}\n"
    merged = merge_config_text(user, TEMPLATE)
    data = parse_yaml(merged, file="merged")
    assert data == expected_merge(parse_yaml(user, file="user"), TEMPLATE_DATA)
    assert isinstance(data, dict) and data["defaults"]["cwd"] == "keep\n\n"
    assert "# mine" in merged
    assert merge_config_text(merged, TEMPLATE) == merged


def test_empty_or_comment_only_file_gets_the_template_below_its_comments() -> None:
    assert merge_config_text("", TEMPLATE) == TEMPLATE
    merged = merge_config_text("# keep me\n", TEMPLATE)
    assert merged.startswith("# keep me\n\n")
    assert parse_yaml(merged, file="merged") == TEMPLATE_DATA


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("agents: [\n", "config.yaml: line 2, column 1: found invalid YAML"),
        ("- a\n- b\n", "config.yaml: (top level): found a list, expected a mapping"),
    ],
)
def test_unmergeable_files_raise(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=None) as caught:
        merge_config_text(text, TEMPLATE, file="config.yaml")
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize(
    ("user", "template", "merged"),
    [
        # A template whose keys are quoted (as JSON writes them), into a flow mapping whose keys
        # are plain, double-quoted or single-quoted: the entry goes in with a plain key.
        (
            "defaults: {agent: mine}  # flow\n",
            'defaults: {"agent": x, "cwd": .}\n',
            "defaults: {agent: mine, cwd: .}  # flow\n",
        ),
        (
            'peers:\n  A: {"name": "mine"}  # desk\n',
            'peers:\n  A: {"name": "desk", "address": "10.0.0.1:5"}\n',
            'peers:\n  A: {"name": "mine", address: 10.0.0.1:5}  # desk\n',
        ),
        (
            "peers:\n  A: {'name': mine}\n",
            "peers:\n  A: {'name': desk, 'address': '10.0.0.1:5'}\n",
            "peers:\n  A: {'name': mine, address: 10.0.0.1:5}\n",
        ),
        # Quoted keys all the way down: the added value's own keys come plain too.
        (
            "mesh: {enabled: true}\n",
            'mesh: {"peers": {"A": {"name": "desk"}}}\n',
            "mesh: {enabled: true, peers: {A: {name: desk}}}\n",
        ),
        # A key that is only a string because it is quoted stays a string.
        (
            "ports: {'1': a}\n",
            "ports: {'1': a, '2': b}\n",
            "ports: {'1': a, '2': b}\n",
        ),
        # Into a block mapping the template's lines are copied, quotes and all.
        (
            '# mine\npeers:\n  "A":\n    "name": mine\n',
            'peers:\n  "A":\n    "name": desk\n    "address": "10.0.0.1:5"\n',
            '# mine\npeers:\n  "A":\n    "name": mine\n    "address": "10.0.0.1:5"\n',
        ),
    ],
)
def test_quoted_keys_in_the_template_merge_into_flow_and_block_mappings(
    user: str, template: str, merged: str
) -> None:
    assert merge_config_text(user, template) == merged
    assert merge_config_text(merged, template) == merged
