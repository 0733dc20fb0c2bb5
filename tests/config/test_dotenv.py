"""The .env dialect: parsing, round trips, and appending a newer template."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from robota.core import ConfigError
from robota.core.config import dotenv_values, format_assignment, merge_dotenv, set_dotenv
from robota.core.config._dotenv import parse_dotenv

keys = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,15}", fullmatch=True)
values = st.text(st.characters(codec="utf-8"), max_size=40)


def test_dialect() -> None:
    text = (
        "# comment\n"
        "\n"
        "PLAIN=abc\n"
        "export EXPORTED=1\n"
        "SPACED = spaced value  # trailing comment\n"
        "HASH=a#b\n"
        "SINGLE='lit\\n $X # kept'\n"
        'DOUBLE="line\\nnext \\"q\\" \\\\ # kept"  # comment\n'
        "EMPTY=\n"
        "PLAIN=last wins\n"
    )
    assert dotenv_values(text) == {
        "PLAIN": "last wins",
        "EXPORTED": "1",
        "SPACED": "spaced value",
        "HASH": "a#b",
        "SINGLE": "lit\\n $X # kept",
        "DOUBLE": 'line\nnext "q" \\ # kept',
        "EMPTY": "",
    }


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("not an assignment", "not KEY=value"),
        ("KEY='unterminated", "unterminated single-quoted"),
        ('KEY="unterminated', "unterminated double-quoted"),
        ('KEY="x" junk', "text after the closing quote"),
        ("1KEY=x", "not KEY=value"),
    ],
)
def test_bad_lines_are_errors_that_do_not_quote_the_line(line: str, problem: str) -> None:
    secret_line = line.replace("x", "hunter2-secret")
    with pytest.raises(ConfigError) as caught:
        dotenv_values(f"OK=1\n{secret_line}\n", file="/p/.env")
    message = str(caught.value)
    assert message.startswith("/p/.env: line 2")
    assert problem in message
    assert "hunter2" not in message


def test_commented_assignments_are_recognised_as_keys() -> None:
    lines = parse_dotenv("# FEISHU_APP_ID=\n#export SLACK_BOT_TOKEN=xoxb\n# just words\n")
    assert [(line.kind, line.key) for line in lines] == [
        ("comment", "FEISHU_APP_ID"),
        ("comment", "SLACK_BOT_TOKEN"),
        ("comment", None),
    ]


@given(st.dictionaries(keys, values, max_size=8))
def test_format_then_parse_round_trips_any_value(env: dict[str, str]) -> None:
    text = "".join(format_assignment(key, value) + "\n" for key, value in env.items())
    assert dotenv_values(text) == env


@given(st.text(max_size=200))
def test_parsing_keeps_every_byte(text: str) -> None:
    assert "".join(line.text + line.ending for line in parse_dotenv(text)) == text


# -- merging a newer template ------------------------------------------------------------------

comment_text = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=20)


@st.composite
def env_files(draw: st.DrawFn) -> str:
    """A .env file of assignments, commented assignments, comments and blank lines."""
    lines: list[str] = []
    for _ in range(draw(st.integers(0, 10))):
        kind = draw(st.sampled_from(["assign", "commented", "comment", "blank"]))
        if kind == "assign":
            lines.append(format_assignment(draw(keys), draw(values)))
        elif kind == "commented":
            lines.append(f"# {draw(keys)}={draw(comment_text)}")
        elif kind == "comment":
            lines.append("#" + draw(comment_text))
        else:
            lines.append("")
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    text = eol.join(lines)
    final_newline: bool = draw(st.booleans())
    return text + eol if lines and final_newline else text


def _mentioned(text: str) -> set[str]:
    return {line.key for line in parse_dotenv(text) if line.key is not None}


@given(env_files(), env_files())
def test_merge_appends_only_unmentioned_active_assignments(existing: str, template: str) -> None:
    merged = merge_dotenv(existing, template)

    # Everything the user had is still there, byte for byte, at the start.
    assert merged.startswith(existing)
    # Their values win; the template's new keys arrive with the template's values.
    ours, theirs, result = dotenv_values(existing), dotenv_values(template), dotenv_values(merged)
    for key, value in ours.items():
        assert result[key] == value
    commented_by_user = _mentioned(existing) - set(ours)
    added = set(result) - set(ours)
    assert added == set(theirs) - _mentioned(existing)
    assert not added & commented_by_user
    # The template's commented examples never become active.
    commented_only = _mentioned(template) - set(theirs)
    assert not (commented_only - set(ours)) & set(result)
    # A second merge changes nothing.
    assert merge_dotenv(merged, template) == merged
    # The file keeps its line endings.
    if "\r\n" in existing and added:
        assert merged[len(existing) :].count("\n") == merged[len(existing) :].count("\r\n")


def test_merge_example() -> None:
    existing = "# mine\r\nA=1\r\n# B=off\r\nC=3"
    template = "A=template\r\nB=2\r\n# D=example\r\nE=5\r\n"
    assert merge_dotenv(existing, template) == "# mine\r\nA=1\r\n# B=off\r\nC=3\r\nE=5\r\n"


@pytest.mark.parametrize(
    ("existing", "values", "expected"),
    [
        # replaced where it stands; later assignments of the key dropped (they would win)
        ("A=1\nB=2\nA=3\n", {"A": "9"}, "A=9\nB=2\n"),
        # a commented example becomes the assignment, in place
        ("# Feishu\n# APP_ID=\nX=1\n", {"APP_ID": "cli_1"}, "# Feishu\nAPP_ID=cli_1\nX=1\n"),
        # otherwise appended, after a missing last line ending, in the file's line endings
        ("X=1\r\nY=2", {"Z": "a b"}, 'X=1\r\nY=2\r\nZ="a b"\r\n'),
        ("", {"K": "v"}, "K=v\n"),
        # an invalid line of that key is replaced too
        ('S="unterminated\n', {"S": "ok"}, "S=ok\n"),
    ],
)
def test_set_dotenv(existing: str, values: dict[str, str], expected: str) -> None:
    assert set_dotenv(existing, values) == expected


@given(
    st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=80),
    st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=40),
)
def test_set_dotenv_values_read_back(existing_value: str, new: str) -> None:
    existing = format_assignment("OTHER", existing_value) + "\n# KEY=\n"
    result = set_dotenv(existing, {"KEY": new})
    assert dotenv_values(result) == {"OTHER": existing_value, "KEY": new}
