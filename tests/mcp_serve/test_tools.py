"""The served tools' pure decisions: argument validation, a run's result, the cut, the HTTP
guard (``robota.mcp``'s ``_tools`` and ``_http``), as tables."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest

from robota.mcp import (
    MAX_RESULT_CHARS,
    TOOLS,
    BadArgument,
    BadTokenFile,
    auth_refusal,
    cut,
    folder_refusal,
    loopback,
    parse_call,
    run_result,
    turn_status,
    write_token_file,
)
from robota.mcp._tools import (
    DEFAULT_TIMEOUT,
    AgentsCall,
    RunCall,
    TaskNewCall,
    TasksCall,
    TaskStatusCall,
    TaskStopCall,
)


def test_the_tool_names_are_the_contract() -> None:
    assert [t.name for t in TOOLS] == [
        "robota_agents",
        "robota_task_new",
        "robota_run",
        "robota_tasks",
        "robota_task_status",
        "robota_task_stop",
    ]
    schemas = {t.name: t.input_schema for t in TOOLS}
    assert schemas["robota_run"]["required"] == ["prompt"]
    assert set(schemas["robota_run"]["properties"]) == {"prompt", "task", "agent", "timeoutSeconds"}
    assert set(schemas["robota_task_new"]["properties"]) == {"agent", "cwd", "title"}
    assert set(schemas["robota_tasks"]["properties"]) == {"all"}
    assert all(s["additionalProperties"] is False for s in schemas.values())


@pytest.mark.parametrize(
    ("name", "arguments", "call"),
    [
        ("robota_agents", None, AgentsCall()),
        ("robota_agents", {}, AgentsCall()),
        ("robota_task_new", {}, TaskNewCall()),
        (
            "robota_task_new",
            {"agent": "codex", "cwd": "/w", "title": "t"},
            TaskNewCall("codex", "/w", "t"),
        ),
        ("robota_task_new", {"agent": None}, TaskNewCall()),
        ("robota_run", {"prompt": "hi"}, RunCall("hi", timeout=DEFAULT_TIMEOUT)),
        (
            "robota_run",
            {"prompt": "hi", "task": "ab12", "timeoutSeconds": 5},
            RunCall("hi", "ab12", None, 5.0),
        ),
        ("robota_run", {"prompt": "hi", "agent": "claude"}, RunCall("hi", None, "claude")),
        ("robota_run", {"prompt": "hi", "timeoutSeconds": 0.5}, RunCall("hi", timeout=0.5)),
        ("robota_tasks", {}, TasksCall(False)),
        ("robota_tasks", {"all": True}, TasksCall(True)),
        ("robota_task_status", {"task": "1"}, TaskStatusCall("1")),
        ("robota_task_stop", {"task": "ab"}, TaskStopCall("ab")),
    ],
)
def test_good_arguments_become_calls(name: str, arguments: Any, call: object) -> None:
    assert parse_call(name, arguments) == call


@pytest.mark.parametrize(
    ("name", "arguments", "field", "found", "expected"),
    [
        ("robota_run", {}, "prompt", "nothing", "a non-empty string"),
        ("robota_run", {"prompt": 42}, "prompt", "42", "a non-empty string"),
        ("robota_run", {"prompt": "  "}, "prompt", '"  "', "a non-empty string"),
        ("robota_run", {"prompt": None}, "prompt", "null", "a non-empty string"),
        ("robota_run", {"prompt": "x", "task": 7}, "task", "7", "a non-empty string"),
        ("robota_run", {"prompt": "x", "timeoutSeconds": 0}, "timeoutSeconds", "0", "(0, 86400]"),
        (
            "robota_run",
            {"prompt": "x", "timeoutSeconds": 10**6},
            "timeoutSeconds",
            "1000000",
            "(0, 86400]",
        ),
        (
            "robota_run",
            {"prompt": "x", "timeoutSeconds": "5"},
            "timeoutSeconds",
            '"5"',
            "number of seconds",
        ),
        (
            "robota_run",
            {"prompt": "x", "timeoutSeconds": True},
            "timeoutSeconds",
            "true",
            "number of seconds",
        ),
        ("robota_run", {"prompt": "x", "promt": "y"}, "promt", '"y"', "one of: prompt, task"),
        ("robota_tasks", {"all": "yes"}, "all", '"yes"', "true or false"),
        ("robota_task_status", {}, "task", "nothing", "a non-empty string"),
        ("robota_task_stop", {"task": ["a"]}, "task", '["a"]', "a non-empty string"),
        ("robota_agents", {"x": 1}, "x", "1", "no arguments"),
        ("robota_task_new", {"cwd": 3}, "cwd", "3", "a non-empty string"),
        ("robota_task_new", [1, 2], "arguments", "[1, 2]", "an object"),
    ],
)
def test_a_bad_argument_names_the_field_what_was_found_and_what_was_expected(
    name: str, arguments: Any, field: str, found: str, expected: str
) -> None:
    with pytest.raises(BadArgument) as raised:
        parse_call(name, arguments)
    assert raised.value.field == field
    message = str(raised.value)
    assert f"argument {field!r}" in message
    assert f"found {found}" in message
    assert expected in message


def test_an_unknown_tool_is_named_with_the_ones_there_are() -> None:
    with pytest.raises(LookupError, match=r"robota_frobnicate.*robota_run"):
        parse_call("robota_frobnicate", {})


@pytest.mark.parametrize(
    ("status", "shown"),
    [
        ("completed", "completed"),
        ("failed", "failed"),
        ("interrupted", "interrupted"),
        (None, "running"),
        ("running", "running"),
    ],
)
def test_turn_status(status: str | None, shown: str) -> None:
    assert turn_status(status) == shown


@pytest.mark.parametrize(
    ("status", "answer", "error", "text", "is_error"),
    [
        ("completed", "the answer", None, "the answer", False),
        ("completed", None, None, "", False),
        ("failed", None, "model said no", "task t1: turn failed: model said no", True),
        ("interrupted", "half", None, "half\n\ntask t1: turn interrupted", True),
        (None, None, None, "task t1: the turn is still running; its answer is not in yet", False),
    ],
)
def test_run_result(
    status: str | None, answer: str | None, error: str | None, text: str, is_error: bool
) -> None:
    approvals = ({"id": "a1", "decision": "decline", "by": "policy"},)
    shown, structured, failed = run_result(
        "t1", "turn1", status, answer, error=error, approvals=approvals
    )
    assert (shown, failed) == (text, is_error)
    assert structured["task"] == "t1" and structured["turn"] == "turn1"
    assert structured["status"] == turn_status(status)
    assert structured["answer"] == (answer or "")
    assert structured["approvals"] == [dict(a) for a in approvals]
    assert ("error" in structured) == (error is not None)


@pytest.mark.parametrize("length", [0, 10, MAX_RESULT_CHARS - 1, MAX_RESULT_CHARS])
def test_a_result_that_fits_is_whole(length: int) -> None:
    assert cut("x" * length) == "x" * length


@pytest.mark.parametrize("length", [MAX_RESULT_CHARS + 1, 100_000, 3_000_000])
def test_a_longer_result_is_cut_with_a_note_of_its_length(length: int) -> None:
    text = "y" * length
    shown = cut(text)
    assert len(shown) <= MAX_RESULT_CHARS
    assert shown.startswith("y" * 1000)
    assert shown.endswith(f"[robota: cut at {MAX_RESULT_CHARS} of {length} characters]")


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.4", False),
        ("example.com", False),
        ("", False),
    ],
)
def test_only_loopback_may_be_bound(host: str, allowed: bool) -> None:
    assert loopback(host) is allowed


@pytest.mark.parametrize(
    ("header", "refusal"),
    [
        (None, "no Authorization header"),
        (b"", "no Authorization header"),
        (b"Basic abc", "not a bearer token"),
        (b"Bearer", "wrong bearer token"),
        (b"Bearer nope", "wrong bearer token"),
        (b"Bearer s3cret-token", None),
        (b"bearer s3cret-token", None),
        (b"Bearer s3cret-tokenX", "wrong bearer token"),
    ],
)
def test_auth_refusal(header: bytes | None, refusal: str | None) -> None:
    assert auth_refusal(header, "s3cret-token") == refusal
    if refusal is not None:
        assert "s3cret" not in refusal


def test_the_token_file_is_made_exclusively_and_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "token"
    token = write_token_file(path)
    assert path.read_text() == token + "\n" and len(token) >= 40
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with pytest.raises(BadTokenFile, match="already exists"):
        write_token_file(path)
    with pytest.raises(BadTokenFile, match="not an absolute path"):
        write_token_file(Path("relative-token"))
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "target")
    with pytest.raises(BadTokenFile):
        write_token_file(link)
    assert not (tmp_path / "target").exists()


@pytest.mark.parametrize(
    ("given", "refusal"),
    [
        ("relative/dir", "not an absolute path"),
        ("{ws}", None),
        ("{ws}/sub/deeper", None),
        ("{ws}/sub/../other", None),
        ("{ws}/..", "outside"),
        ("{ws}-sibling", "outside"),
        ("/", "outside"),
    ],
)
def test_folder_refusal(tmp_path: Path, given: str, refusal: str | None) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    assert folder_refusal(Path(given.format(ws=workspace)), workspace) == refusal
