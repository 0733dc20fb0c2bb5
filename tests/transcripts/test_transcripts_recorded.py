"""The recorded agent transcripts (fixtures) are complete, well formed and what they claim to be.

They are produced by ``tools/record_transcripts.py`` (see README.md here). These tests fail when a
regeneration silently drops a scenario, leaks a machine path, leaves a request unanswered or
was recorded with an agent version other than the pinned one.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

PINNED = {
    "codex": "0.171.0",
    "codex-acp": "0.16.0",
    "claude-agent-acp": "0.49.0",
    "gemini": "0.61.0",
    "qwen": "0.24.4",
    "opencode": "1.18.33",
}
_ACP_CORE = {
    "text",
    "tool_approved",
    "tool_declined",
    "write_approved",
    "cancel",
    "error_400",
    "stream_cut",
}
EXPECTED = {
    "codex": {
        "text",
        "tool_approved",
        "tool_declined",
        "write_approved",
        "interrupt",
        "steer",
        "fork",
        "resume",
        "error_400",
        "error_500",
        "stream_cut",
    },
    # codex-acp fails HTTP 500 at once (retries off in config.toml): it has error_500.
    "codex-acp": _ACP_CORE | {"load", "error_500"},
    # The others retry HTTP 500 for minutes: no error_500. gemini 0.61 cannot session/load.
    "claude-agent-acp": _ACP_CORE | {"load"},
    "gemini": set(_ACP_CORE),
    "qwen": _ACP_CORE | {"load"},
    "opencode": _ACP_CORE | {"load"},
}
TWO_PROCESSES = {"resume", "load"}

Line = dict[str, Any]


def load(path: Path) -> list[Line]:
    lines: list[Line] = [json.loads(raw) for raw in path.read_text().splitlines()]
    return lines


def files() -> list[Path]:
    return sorted(HERE.glob("*/*.jsonl"))


def streamed_text(lines: list[Line]) -> str:
    """The answer text the agent streamed (App Server deltas or ACP message chunks)."""
    out = []
    for line in lines:
        msg = line["msg"]
        params = msg.get("params")
        if line["dir"] != "in" or not isinstance(params, dict):
            continue
        if msg.get("method") == "item/agentMessage/delta":
            out.append(params["delta"])
        update = params.get("update")
        if isinstance(update, dict) and update.get("sessionUpdate") == "agent_message_chunk":
            out.append(update["content"].get("text", ""))
    return "".join(out)


def test_there_are_transcripts() -> None:
    assert {path.parent.name for path in files()} == set(PINNED)


@pytest.mark.parametrize("path", files(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_line_is_a_direction_and_a_jsonrpc_message(path: Path) -> None:
    lines = load(path)
    assert lines
    for line in lines:
        assert set(line) <= {"dir", "msg", "process"}
        assert line["dir"] in ("in", "out")
        assert isinstance(line["msg"], dict)
        assert "method" in line["msg"] or "id" in line["msg"]
        if path.stem in TWO_PROCESSES:
            assert line["process"] in (1, 2)
        else:
            assert "process" not in line
    assert lines[0]["dir"] == "out"
    assert lines[0]["msg"]["method"] == "initialize"


@pytest.mark.parametrize("path", files(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_request_is_answered_exactly_once(path: Path) -> None:
    """Both ways: the client's requests and the agent's (permission, approval, extensions)."""
    asked: Counter[tuple[Any, str, str]] = Counter()
    answered: Counter[tuple[Any, str, str]] = Counter()
    for line in load(path):
        msg, process = line["msg"], line.get("process", 1)
        if "id" in msg and "method" in msg:
            asked[(process, line["dir"], json.dumps(msg["id"]))] += 1
        elif "id" in msg:
            asker = "out" if line["dir"] == "in" else "in"
            answered[(process, asker, json.dumps(msg["id"]))] += 1
    assert asked == answered


@pytest.mark.parametrize("path", files(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_no_machine_paths_and_no_huge_lines(path: Path) -> None:
    text = path.read_text()
    assert "robota-transcripts-" not in text  # the recorder's temporary state directory
    assert str(REPO) not in text
    assert "127.0.0.1:" not in text  # the fake model's port is normalised away
    assert max(len(line) for line in text.splitlines()) < 64 * 1024


@pytest.mark.parametrize("agent", sorted(PINNED))
def test_each_agent_has_its_key_scenarios(agent: str) -> None:
    recorded = {path.stem for path in (HERE / agent).glob("*.jsonl")}
    assert recorded >= EXPECTED[agent]


@pytest.mark.parametrize("agent", sorted(PINNED))
def test_recorded_with_the_pinned_version(agent: str) -> None:
    first_answer = next(
        line["msg"] for line in load(HERE / agent / "text.jsonl") if line["dir"] == "in"
    )
    result = first_answer["result"]
    if agent == "codex":
        assert f"/{PINNED[agent]} " in result["userAgent"]
    else:
        assert result["agentInfo"]["version"] == PINNED[agent]


@pytest.mark.parametrize("agent", sorted(PINNED))
def test_the_text_turn_carries_the_fake_models_echo(agent: str) -> None:
    assert "ECHO: hello from the recorder" in streamed_text(load(HERE / agent / "text.jsonl"))


@pytest.mark.parametrize("agent", sorted(PINNED))
def test_the_approved_tool_ran_and_its_output_reached_the_model(agent: str) -> None:
    lines = load(HERE / agent / "tool_approved.jsonl")
    asked = [
        line["msg"]["method"]
        for line in lines
        if line["dir"] == "in" and "id" in line["msg"] and "method" in line["msg"]
    ]
    assert any(m.endswith(("request_permission", "requestApproval")) for m in asked)
    assert "RESULT:" in streamed_text(lines)  # the fake's answer quoting the tool output
    assert "approved" in streamed_text(lines).split("RESULT:", 1)[1]


def _final_results(lines: list[Line]) -> list[Any]:
    return [line["msg"] for line in lines if line["dir"] == "in" and "method" not in line["msg"]]


@pytest.mark.parametrize("agent", sorted(PINNED))
def test_cancel_or_interrupt_ends_the_turn_early(agent: str) -> None:
    if agent == "codex":
        lines = load(HERE / agent / "interrupt.jsonl")
        statuses = [
            line["msg"]["params"]["turn"]["status"]
            for line in lines
            if line["msg"].get("method") == "turn/completed"
        ]
        assert statuses == ["interrupted", "completed"]
        return
    lines = load(HERE / agent / "cancel.jsonl")
    assert any(line["msg"].get("method") == "session/cancel" for line in lines)
    stops = [
        m["result"]["stopReason"]
        for m in _final_results(lines)
        if isinstance(m.get("result"), dict) and "stopReason" in m["result"]
    ]
    assert stops == ["cancelled", "end_turn"]


@pytest.mark.parametrize("agent", sorted(PINNED))
def test_the_model_400_fails_the_turn(agent: str) -> None:
    lines = load(HERE / agent / "error_400.jsonl")
    if agent == "codex":
        (turn,) = [
            line["msg"]["params"]["turn"]
            for line in lines
            if line["msg"].get("method") == "turn/completed"
        ]
        assert turn["status"] == "failed"
        assert "fake invalid request" in turn["error"]["message"]
        return
    errors = [m["error"] for m in _final_results(lines) if "error" in m]
    assert len(errors) == 1
    assert "fake invalid request" in json.dumps(errors[0])


def test_history_survives_fork_resume_and_load() -> None:
    for agent, scenario in [("codex", "fork"), ("codex", "resume")] + [
        (agent, "load") for agent, expected in EXPECTED.items() if "load" in expected
    ]:
        text = streamed_text(load(HERE / agent / f"{scenario}.jsonl"))
        assert "HISTORY: remember the word PINEAPPLE | HISTORY" in text, (agent, scenario)


def test_readme_explains_provenance_for_every_agent() -> None:
    readme = (HERE / "README.md").read_text()
    assert "tools/record_transcripts.py" in readme
    for agent, version in PINNED.items():
        assert agent in readme
        assert version in readme
