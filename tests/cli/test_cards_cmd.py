"""``robota cards preview``: recorded real-agent turns replayed into each platform's cards.

The event files are written the way print mode writes stream-json (``session_started``, the
events, ``result``) from the recorded transcripts of the core-matrix agents, then the real
``robota`` script draws them. Every payload is checked against the platform limits by the
independent checkers of ``tests/support/platform_limits.py``.
"""

from __future__ import annotations

import itertools
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from robota.core.events import (
    RuntimeEvent,
    TextDelta,
    ToolStarted,
    TurnCompleted,
    TurnStarted,
    Usage,
    UsageUpdated,
    event_to_json,
)
from robota.core.presentation import TurnView, payload_hash

from ..support.model_server import FakeModel
from ..support.platform_limits import check_feishu_activity, check_feishu_card, check_slack_message
from ..support.replay import replay, scenarios
from ..support.robota import ROBOTA, Robota
from ._print import configure

CORE = ["codex", "codex-acp", "claude-agent-acp"]
PLATFORMS = [
    ("terminal", None),
    ("slack", None),
    ("feishu", "grouped"),
    ("feishu", "timeline"),
]
GAPS = [0.05, 0.1, 0.3, 1.7, 0.02, 2.4, 0.6]
"""Seconds between recorded events (cycled): bursts, and pauses long enough for timers."""

LABELS = {"completed": "Completed", "failed": "Failed", "interrupted": "Interrupted"}
"""How the chat cards' headers name a turn's end."""
ACTIVITY_PREFIXES = ("m_", "r_", "u_", "a_", "e_", "g_", "t_")
"""Element ids of the Feishu activity area (the rest: history note, page buttons, footer)."""


def recorded_turns(agent: str) -> list[list[RuntimeEvent]]:
    """Every turn of every recorded scenario of ``agent``, in order."""
    turns: list[list[RuntimeEvent]] = []
    for scenario in scenarios(agent):
        for event in replay(agent, scenario):
            if isinstance(event, TurnStarted) or not turns:
                turns.append([])
            turns[-1].append(event)
    return turns


def write_stream(path: Path, agent: str) -> list[list[RuntimeEvent]]:
    """The agent's recorded scenarios as one stream-json file, one session per scenario."""
    lines: list[dict[str, Any]] = []
    ts = 1_700_000_000.0  # absolute, as a recorder would stamp them
    step = 0
    for scenario in scenarios(agent):
        lines.append({"type": "session_started", "session_id": scenario, "agent": agent})
        for event in replay(agent, scenario):
            ts += GAPS[step % len(GAPS)]
            step += 1
            lines.append({**event_to_json(event), "ts": ts})
        lines.append({"type": "result", "subtype": "success", "result": "", "agent": agent})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return recorded_turns(agent)


def preview(robota: Robota, *args: str) -> list[dict[str, Any]]:
    completed = robota.run("cards", "preview", "--json", *args)
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr == ""
    return [json.loads(line) for line in completed.stdout.splitlines()]


def feishu_activity(card: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in card["body"]["elements"] if e["element_id"].startswith(ACTIVITY_PREFIXES)]


def check_payload(platform: str, payload: dict[str, Any]) -> None:
    if platform == "feishu":
        check_feishu_card(payload)
        check_feishu_activity(feishu_activity(payload))
    elif platform == "slack":
        check_slack_message(payload)
    else:
        assert payload["lines"] and all("\n" not in line for line in payload["lines"])


def shows_terminal_state(platform: str, payload: dict[str, Any], agent: str, status: str) -> bool:
    label = LABELS[status]
    if platform == "feishu":
        return bool(payload["header"]["title"]["content"] == f"{agent} · {label}")
    if platform == "slack":
        return bool(payload["blocks"][0]["text"]["text"].endswith(f"{agent} · {label}"))
    return bool(payload["lines"][0].startswith(f"{agent} · {status} · "))


def final_text(platform: str, messages: list[Any]) -> str:
    if platform == "feishu":
        for card in messages:
            check_feishu_card(card, header=False)
        return "".join(card["body"]["elements"][0]["content"] for card in messages)
    if platform == "slack":
        for message in messages:
            check_slack_message(message)
        return "".join(message["blocks"][0]["text"] for message in messages)
    return "".join(messages)


@pytest.mark.parametrize("agent", CORE)
def test_recorded_turns_preview_within_limits_on_every_platform(robota: Robota, agent: str) -> None:
    events = robota.root / f"{agent}.jsonl"
    turns = write_stream(events, agent)
    assert len(turns) >= 8
    for platform, layout in PLATFORMS:
        out = preview(
            robota, "--platform", platform, *(["--layout", layout] if layout else []), str(events)
        )
        for number, events_of_turn in enumerate(turns, start=1):
            view = TurnView()
            for event in events_of_turn:
                view.apply(event)
            assert view.terminal, (agent, number)
            mine = [o for o in out if o["turn"] == number]
            updates, final = mine[:-1], mine[-1]
            where = (platform, layout, number)
            assert updates, where
            assert [u["update"] for u in updates] == list(range(1, len(updates) + 1)), where
            assert [u["at"] for u in updates] == sorted(u["at"] for u in updates), where
            hashes = [payload_hash(u["payload"]) for u in updates]
            assert all(a != b for a, b in itertools.pairwise(hashes)), where
            for update in updates:
                check_payload(platform, update["payload"])
            last = updates[-1]["payload"]
            assert shows_terminal_state(platform, last, agent, view.status), (where, last)
            assert not any(
                shows_terminal_state(platform, u["payload"], agent, view.status)
                for u in updates[:-1]
            ), where
            text = view.final_text or ""
            assert final_text(platform, final["final"]) == (text if text.strip() else ""), where
        assert len(out) == sum(1 for o in out if "final" in o) + sum(
            1 for o in out if "update" in o
        )
        assert [o["turn"] for o in out if "final" in o] == list(range(1, len(turns) + 1))


# -- timing and the update discipline -----------------------------------------------------------


def write_lines(path: Path, lines: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return str(path)


def stamped(events: list[tuple[float | None, RuntimeEvent]]) -> list[dict[str, Any]]:
    lines = []
    for ts, event in events:
        line = event_to_json(event)
        if ts is not None:
            line["ts"] = ts
        lines.append(line)
    return lines


def test_ts_drives_the_throttle_timers_and_the_critical_spacing(robota: Robota) -> None:
    path = write_lines(
        robota.root / "timed.jsonl",
        stamped(
            [
                (100.0, TurnStarted("t")),
                (100.1, TextDelta("m", "Looking.")),
                (102.5, ToolStarted("c", "command", "ls", command="ls")),
                (102.6, TurnCompleted("t", "completed")),
            ]
        ),
    )
    out = preview(robota, "--platform", "terminal", path)
    # The first update at once; the timer 2 s after it fires before the tool arrives and shows
    # the text; the terminal state goes out 0.5 s after that (critical).
    assert [(o.get("update"), o.get("at")) for o in out] == [
        (1, 0.0),
        (2, 2.0),
        (3, 2.6),
        (None, None),
    ]
    assert "Looking." in out[1]["payload"]["lines"] and "ls" not in "".join(
        out[1]["payload"]["lines"]
    )
    assert out[2]["payload"]["lines"][0] == "agent · completed · 2s · 1 tool"
    assert out[3] == {"turn": 1, "final": ["Looking."]}


def test_lines_without_ts_come_100_ms_apart(robota: Robota) -> None:
    events: list[tuple[float | None, RuntimeEvent]] = [(None, TurnStarted("t"))]
    events += [(None, TextDelta("m", f"part {i} ")) for i in range(30)]
    events.append((None, TurnCompleted("t", "completed")))
    out = preview(
        robota, "--platform", "slack", write_lines(robota.root / "e.jsonl", stamped(events))
    )
    # Events at 0.0 .. 3.1 s: updates at 0, at 2.0 (timer) and the terminal one at 3.1.
    assert [o.get("at") for o in out if "update" in o] == [0.0, 2.0, 3.1]


def test_an_update_that_draws_the_same_card_is_skipped(robota: Robota) -> None:
    # After an hour the elapsed time shows minutes only, so a usage update of zero tokens (shown
    # nowhere) 2 s later draws exactly the same card.
    base: list[tuple[float | None, RuntimeEvent]] = [
        (0.0, TurnStarted("t")),
        (3600.0, TextDelta("m", "Still here.")),
        (3601.0, UsageUpdated(Usage(total_tokens=0))),
    ]
    same = preview(
        robota, "--platform", "terminal", write_lines(robota.root / "a.jsonl", stamped(base))
    )
    assert [o.get("at") for o in same if "update" in o] == [0.0, 3600.0]
    changed = [*base[:-1], (3601.0, TextDelta("m", " And more."))]
    other = preview(
        robota, "--platform", "terminal", write_lines(robota.root / "b.jsonl", stamped(changed))
    )
    assert [o.get("at") for o in other if "update" in o] == [0.0, 3600.0, 3602.0]
    # A turn that never ended still gets its last state out, and no final answer.
    assert other[-1] == {"turn": 1, "final": []}


def test_print_mode_lines_name_the_agent_steer_and_start_the_next_turn(robota: Robota) -> None:
    lines = [
        {"type": "session_started", "session_id": "s1", "agent": "claude", "cwd": "/w"},
        *stamped([(None, TurnStarted("t1")), (None, TextDelta("m", "First."))]),
        {"type": "steered", "turn_id": "t1", "text": "also check the docs"},
        {"type": "queued", "prompt_id": "p2", "text": "next prompt"},
        *stamped([(None, TurnCompleted("t1", "completed", final_item_id="m"))]),
        {"type": "result", "subtype": "success", "result": "First.", "session_id": "s1"},
        *stamped([(None, TurnStarted("t2")), (None, TurnCompleted("t2", "failed"))]),
        {"type": "result", "subtype": "error", "result": "", "session_id": "s1"},
    ]
    out = preview(robota, "--platform", "terminal", write_lines(robota.root / "p.jsonl", lines))
    first = [o for o in out if o["turn"] == 1]
    assert "> you: also check the docs" in first[-2]["payload"]["lines"]
    assert first[-2]["payload"]["lines"][0].startswith("claude · completed")
    assert first[-1]["final"] == ["First."]
    second = [o for o in out if o["turn"] == 2]
    assert second[-2]["payload"]["lines"][0].startswith("claude · failed")
    assert second[-1]["final"] == []


def test_human_output_has_a_header_per_update_and_the_final_answer(robota: Robota) -> None:
    path = write_lines(
        robota.root / "h.jsonl",
        stamped(
            [
                (None, TurnStarted("t")),
                (None, TurnCompleted("t", "completed", final_text="Done **here**.")),
            ]
        ),
    )
    terminal = robota.run("cards", "preview", "--platform", "terminal", path)
    assert terminal.returncode == 0, terminal.stderr
    # The end is critical: it goes out 0.5 s after the first update, not at 0.1 s.
    assert terminal.stdout.splitlines() == [
        "--- turn 1 · update 1 at 0.0 s ---",
        "agent · running · 0s",
        "--- turn 1 · update 2 at 0.5 s (terminal) ---",
        "agent · completed · 0s",
        "--- turn 1 · completed · final: 1 message ---",
        "Done **here**.",
    ]
    feishu = robota.run("cards", "preview", "--platform", "feishu", "--layout", "timeline", path)
    assert feishu.returncode == 0, feishu.stderr
    assert "--- turn 1 · update 2 at 0.5 s (terminal) ---" in feishu.stdout
    assert '"content": "agent · Completed"' in feishu.stdout


def test_events_can_come_from_stdin(robota: Robota) -> None:
    data = "".join(json.dumps(line) + "\n" for line in stamped([(None, TurnStarted("t"))]))
    completed = subprocess.run(
        [str(ROBOTA), "cards", "preview", "--platform", "slack", "--json", "-"],
        input=data,
        env=robota.environment(None, ()),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    first, final = [json.loads(line) for line in completed.stdout.splitlines()]
    assert first["payload"]["blocks"][0]["text"]["text"] == "⏳ agent · Working"
    assert final == {"turn": 1, "final": []}


# -- bad input ----------------------------------------------------------------------------------

GOOD = json.dumps({"type": "turn_started", "turn_id": "t"})


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ('{"type": "text_delta", "item_id": "m",', "line 3: not JSON: "),
        ('{"type": "bogus"}', "line 3: unknown type 'bogus'"),
        (
            '{"type": "tool_started", "tool_id": "c", "title": "x"}',
            "line 3: tool_started.kind: missing",
        ),
        (
            '{"type": "turn_started", "turn_id": 7}',
            "line 3: turn_started.turn_id: expected a string",
        ),
        ("[1, 2]", "line 3: expected a JSON object, found an array"),
        ('{"type": "turn_started", "turn_id": "t", "ts": "soon"}', "line 3: ts: expected a number"),
        ('{"type": "steered"}', "line 3: steered.text: expected a string"),
    ],
)
def test_a_bad_line_is_a_usage_error_naming_the_line(
    robota: Robota, bad: str, message: str
) -> None:
    path = robota.root / "bad.jsonl"
    path.write_text(f"{GOOD}\n\n{bad}\n{GOOD}\n", encoding="utf-8")
    completed = robota.invoke("cards", "preview", "--platform", "feishu", str(path))
    assert completed.returncode == 2
    assert completed.stdout == ""
    assert f"robota: {path} {message}" in completed.stderr
    assert "Traceback" not in completed.stderr


def test_other_usage_errors_exit_2(robota: Robota) -> None:
    backwards = robota.root / "backwards.jsonl"
    backwards.write_text(
        json.dumps({"type": "turn_started", "turn_id": "t", "ts": 5})
        + "\n"
        + json.dumps({"type": "turn_completed", "turn_id": "t", "status": "completed", "ts": 4})
        + "\n",
        encoding="utf-8",
    )
    completed = robota.invoke("cards", "preview", "--platform", "slack", str(backwards))
    assert completed.returncode == 2 and "line 2: ts 4 is earlier" in completed.stderr
    not_utf8 = robota.root / "latin1.jsonl"
    not_utf8.write_bytes(GOOD.encode() + b"\n\xff\xfe\n")
    completed = robota.invoke("cards", "preview", "--platform", "slack", str(not_utf8))
    assert completed.returncode == 2 and "line 2: not UTF-8" in completed.stderr
    empty = robota.root / "empty.jsonl"
    empty.write_text('\n{"type": "session_started", "agent": "codex"}\n', encoding="utf-8")
    completed = robota.invoke("cards", "preview", "--platform", "slack", str(empty))
    assert completed.returncode == 2 and "has no events" in completed.stderr
    completed = robota.invoke(
        "cards", "preview", "--platform", "slack", "--layout", "timeline", str(empty)
    )
    assert (
        completed.returncode == 2
        and "--layout applies to --platform feishu only" in completed.stderr
    )
    completed = robota.invoke("cards", "preview", "--platform", "teams", str(empty))
    assert completed.returncode == 2 and "teams" in completed.stderr


# -- what print mode writes ---------------------------------------------------------------------


def test_print_mode_stream_json_previews_as_written(robota: Robota) -> None:
    with FakeModel() as model:
        name = configure(robota, model, "codex")
        streamed = robota.run(
            "-p",
            "SHELL: echo previewed",
            "--output-format",
            "stream-json",
            "--permission-mode",
            "bypassPermissions",
        )
    assert streamed.returncode == 0, streamed.stderr
    answer = json.loads(streamed.stdout.splitlines()[-1])["result"]
    assert "previewed" in answer
    events = robota.root / "printed.jsonl"
    events.write_text(streamed.stdout, encoding="utf-8")
    out = preview(robota, "--platform", "slack", str(events))
    updates, final = out[:-1], out[-1]
    for update in updates:
        check_slack_message(update["payload"])
    assert updates[-1]["payload"]["blocks"][0]["text"]["text"] == f"✅ {name} · Completed"
    assert "echo previewed" in json.dumps(updates[-1]["payload"], ensure_ascii=False)
    assert final_text("slack", final["final"]) == answer
