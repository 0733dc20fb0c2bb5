"""``robota -p``: print mode through the real engine, against real agents and the fake model."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest

from ..support.model_server import FakeModel
from ..support.processes import processes_with_home_under
from ..support.robota import ROBOTA, Robota
from ._print import configure

CORE = ["codex", "codex-acp", "claude-agent-acp"]


@pytest.fixture
def model() -> Iterator[FakeModel]:
    with FakeModel(slow_deltas=40, slow_delay=0.05) as fake:
        yield fake


def lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


@pytest.mark.parametrize("agent", CORE)
def test_each_output_format_answers(robota: Robota, model: FakeModel, agent: str) -> None:
    name = configure(robota, model, agent)
    text = robota.run("-p", "hello there")
    assert text.returncode == 0, text.stderr
    assert text.stdout == "ECHO: hello there\n"
    assert text.stderr == "", "progress and notes go to stderr only when it is a terminal"

    as_json = robota.run("-p", "second prompt", "--output-format", "json")
    assert as_json.returncode == 0, as_json.stderr
    result = json.loads(as_json.stdout)
    assert result["type"] == "result" and result["subtype"] == "success"
    assert (result["is_error"], result["result"], result["agent"]) == (
        False,
        "ECHO: second prompt",
        name,
    )
    assert result["session_id"] and result["turn_id"] and result["duration_ms"] >= 0

    streamed = robota.run(
        "-p",
        "SHELL: echo streamed",
        "--output-format",
        "stream-json",
        "--permission-mode",
        "bypassPermissions",
    )
    assert streamed.returncode == 0, streamed.stderr
    objects = lines(streamed.stdout)
    types = [o["type"] for o in objects]
    assert types[0] == "session_started" and types[-1] == "result"
    assert {"tool_started", "tool_completed", "turn_completed"} <= set(types)
    assert objects[-1]["session_id"] == objects[0]["session_id"]
    assert "streamed" in objects[-1]["result"]
    assert processes_with_home_under(robota.root / "agents") == []


def test_nobody_can_approve_in_print_mode_so_default_mode_declines(
    robota: Robota, model: FakeModel
) -> None:
    configure(robota, model, "codex")
    streamed = robota.run("-p", "SHELL: echo refused", "--output-format", "stream-json")
    assert streamed.returncode == 0, streamed.stderr
    resolved = [o for o in lines(streamed.stdout) if o["type"] == "approval_resolved"]
    assert [(o["decision"], o["by"]) for o in resolved] == [("decline", "policy")]
    assert "refused" not in lines(streamed.stdout)[-1]["result"].replace("SHELL: echo refused", "")


@pytest.mark.parametrize("agent", CORE)
def test_continue_and_fork_carry_the_conversation(
    robota: Robota, model: FakeModel, agent: str
) -> None:
    configure(robota, model, agent)
    first = robota.run("-p", "remember apples", "--output-format", "json")
    assert first.returncode == 0, first.stderr
    task = json.loads(first.stdout)["session_id"]

    again = robota.run("-p", "HISTORY", "-c", "--output-format", "json")
    assert again.returncode == 0, again.stderr
    continued = json.loads(again.stdout)
    assert continued["session_id"] == task
    assert continued["result"] == "HISTORY: remember apples | HISTORY"

    fork = robota.run(
        "-p", "HISTORY after the fork", "-r", task, "--fork-session", "--output-format", "json"
    )
    if agent == "codex-acp":
        assert fork.returncode == 1
        assert "cannot fork" in fork.stderr
        return
    assert fork.returncode == 0, fork.stderr
    forked = json.loads(fork.stdout)
    assert forked["session_id"] != task
    assert forked["result"].startswith(
        "HISTORY: remember apples | HISTORY | HISTORY after the fork"
    )

    original = robota.run("-p", "HISTORY of the original", "-r", task, "--output-format", "json")
    assert json.loads(original.stdout)["result"] == (
        "HISTORY: remember apples | HISTORY | HISTORY of the original"
    )


def test_a_failed_turn_exits_1_with_an_error_result(robota: Robota, model: FakeModel) -> None:
    configure(robota, model, "codex")
    completed = robota.run("-p", "FAIL400", "--output-format", "json")
    assert completed.returncode == 1, completed.stderr
    result = json.loads(completed.stdout)
    assert (result["subtype"], result["is_error"]) == ("error", True)
    assert result["error"]["category"] == "invalid_request"


def test_usage_errors_exit_2(robota: Robota, model: FakeModel) -> None:
    configure(robota, model, "codex")
    fork_alone = robota.run("-p", "x", "--fork-session")
    assert fork_alone.returncode == 2 and "--fork-session needs" in fork_alone.stderr
    unknown = robota.run("-p", "x", "-r", "nosuchtask")
    assert unknown.returncode == 2 and "no session 'nosuchtask'" in unknown.stderr
    agent = robota.run("-p", "x", "--agent", "nobody")
    assert agent.returncode == 2 and "no agent 'nobody'" in agent.stderr
    empty = robota.run("-p")
    assert empty.returncode == 2 and "stdin was empty" in empty.stderr


def start_streaming(robota: Robota, *args: str) -> subprocess.Popen[str]:
    """``robota -p --input-format stream-json --output-format stream-json``, all pipes."""
    return subprocess.Popen(
        [
            str(ROBOTA),
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            *args,
        ],
        env=robota.env,
        cwd=robota.root,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def stream_session(
    robota: Robota, first: str, then: list[str], *args: str
) -> tuple[int, list[dict[str, Any]], str]:
    """``robota -p --input-format stream-json``: send ``first``, wait until its answer streams,
    send the rest while the turn runs, close stdin; return the exit code and the output."""
    process = start_streaming(robota, *args)
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(json.dumps({"type": "user", "text": first}) + "\n")
        process.stdin.flush()
        seen: list[str] = []
        for line in process.stdout:  # bounded by the communicate timeout below
            seen.append(line)
            if json.loads(line)["type"] == "text_delta":
                break
        more = "".join(json.dumps({"type": "user", "text": t}) + "\n" for t in then)
        rest, stderr = process.communicate(more + "not json\n", timeout=90)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    objects = [json.loads(line) for line in [*seen, *rest.splitlines()] if line.strip()]
    return process.returncode, objects, stderr


def test_input_during_an_app_server_turn_steers_it(robota: Robota, model: FakeModel) -> None:
    configure(robota, model, "codex")
    code, objects, stderr = stream_session(robota, "SLOW first", ["HISTORY now"])
    assert code == 0, stderr
    assert [o["text"] for o in objects if o["type"] == "steered"] == ["HISTORY now"]
    results = [o for o in objects if o["type"] == "result"]
    assert [r["result"] for r in results] == ["HISTORY: SLOW first | HISTORY now"]
    assert "input line 3: not JSON" in stderr
    assert any(o["type"] == "error" and "line 3" in o["error"] for o in objects)


def test_input_during_an_acp_turn_waits_for_the_next_one(robota: Robota, model: FakeModel) -> None:
    configure(robota, model, "claude-agent-acp")
    code, objects, stderr = stream_session(robota, "SLOW first", ["HISTORY next", "last one"])
    assert code == 0, stderr
    assert [o["text"] for o in objects if o["type"] == "queued"] == ["HISTORY next", "last one"]
    results = [o["result"] for o in objects if o["type"] == "result"]
    assert results[1:] == ["HISTORY: SLOW first | HISTORY next", "ECHO: last one"]
    assert len({o["session_id"] for o in objects if o["type"] == "result"}) == 1


def test_stdin_ending_after_the_last_answer_ends_the_run(robota: Robota, model: FakeModel) -> None:
    """A client that waits for each answer before writing more, and closes stdin only after the
    last one, sees robota exit: the route went idle before stdin ended (this hung once)."""
    configure(robota, model, "codex")
    with start_streaming(robota) as process:
        assert process.stdin is not None and process.stdout is not None
        try:
            for text in ("one", "two"):
                process.stdin.write(json.dumps({"type": "user", "text": text}) + "\n")
                process.stdin.flush()
                results = (json.loads(line) for line in process.stdout)  # ends with the kill
                result = next(o for o in results if o["type"] == "result")
                assert result["result"] == f"ECHO: {text}"
            time.sleep(0.3)  # robota has read the route's RouteIdle by now
            _, stderr = process.communicate(timeout=30)  # closes stdin
            assert process.returncode == 0, stderr
        finally:
            if process.poll() is None:
                process.kill()


def test_a_command_as_the_last_input_is_answered_and_ends_the_run(
    robota: Robota, model: FakeModel
) -> None:
    """Commands get a ``reply`` line, and a run whose last input is a command (no turn, so no
    turn's end to wait for) still ends once it is answered."""
    configure(robota, model, "codex")
    with start_streaming(robota) as process:
        inputs = ["hello", "/status", "/nosuchcommand"]
        sent = "".join(json.dumps({"type": "user", "text": t}) + "\n" for t in inputs)
        out, err = process.communicate(sent, timeout=90)
    objects = lines(out)
    assert process.returncode == 0, err
    replies = [o for o in objects if o["type"] == "reply"]
    assert [r["level"] for r in replies][-2:] == ["info", "error"], replies
    assert replies[-2]["text"].startswith("task ") and "unknown command" in replies[-1]["text"]
    assert [o["result"] for o in objects if o["type"] == "result"] == ["ECHO: hello"]
