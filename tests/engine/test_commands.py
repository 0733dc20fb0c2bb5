"""Slash-command resolution: exact, unique prefix, initialism; ambiguity and unknowns rejected."""

from __future__ import annotations

import pytest

from robota.core.engine import (
    COMMANDS,
    CommandSpec,
    Invocation,
    NotACommand,
    Rejected,
    resolve,
)

WITH_GROUPS = (
    *COMMANDS,
    CommandSpec("newgroup", "a new chat group for a task", initialism="ng"),
    CommandSpec("forkgroup", "a chat group forked from a task", initialism="fg"),
)


@pytest.mark.parametrize(
    ("text", "name", "args"),
    [
        ("/new", "new", ""),
        ("/new --dir /tmp/x fix the bug", "new", "--dir /tmp/x fix the bug"),
        ("  /STOP  ", "stop", ""),
        ("/sto", "stop", ""),
        ("/sess find me", "sessions", "find me"),
        ("/ns do this later", "nosteer", "do this later"),
        ("/ng", "newgroup", ""),
        ("/fg title", "forkgroup", "title"),
        ("/nosteer\nline two", "nosteer", "line two"),
    ],
)
def test_commands_resolve(text: str, name: str, args: str) -> None:
    resolved = resolve(text, WITH_GROUPS)
    assert isinstance(resolved, Invocation)
    assert (resolved.name, resolved.args) == (name, args)


def test_an_exact_name_wins_over_longer_names_it_prefixes() -> None:
    assert resolve("/new", WITH_GROUPS) == Invocation("new", "", "new")


@pytest.mark.parametrize(
    ("text", "candidates"),
    [
        ("/s", ("sessions", "status", "stop", "switch")),
        ("/st", ("status", "stop")),
        ("/n", ("new", "newgroup", "nosteer")),
    ],
)
def test_ambiguous_prefixes_are_rejected_with_their_candidates(
    text: str, candidates: tuple[str, ...]
) -> None:
    resolved = resolve(text, WITH_GROUPS)
    assert isinstance(resolved, Rejected)
    assert resolved.candidates == candidates
    assert "ambiguous" in resolved.message


def test_initialisms_only_count_for_registered_commands() -> None:
    assert isinstance(resolve("/fg"), Rejected)  # forkgroup is not registered here


@pytest.mark.parametrize("text", ["/frobnicate now", "/usr/bin is where", "/", "/ space"])
def test_unknown_command_lines_are_rejected_not_sent(text: str) -> None:
    assert isinstance(resolve(text), Rejected)


@pytest.mark.parametrize(
    ("text", "prompt"),
    [
        ("fix the tests", "fix the tests"),
        ("//usr/bin is where", "/usr/bin is where"),
        ("what does a/b mean", "what does a/b mean"),
    ],
)
def test_plain_text_and_escaped_slashes_are_prompts(text: str, prompt: str) -> None:
    assert resolve(text) == NotACommand(prompt)


def test_every_command_has_a_unique_name_and_initialism() -> None:
    names = [c.name for c in WITH_GROUPS]
    initialisms = [c.initialism for c in WITH_GROUPS if c.initialism]
    assert len(set(names)) == len(names)
    assert len(set(initialisms)) == len(initialisms)
    assert not set(initialisms) & set(names)
