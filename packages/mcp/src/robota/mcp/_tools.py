"""The served tools as data and pure decisions: their names and schemas (the contract), each
call's argument validation, a turn's result, and the cut that keeps a result under the limit.

Nothing here does I/O or imports the MCP SDK: the server (``_server``) is a thin shell that
hands a call's name and arguments to ``parse_call`` and a backend's answer to ``run_result`` /
``cut``, so every decision is tested with tables (tests/mcp/test_tools.py).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._errors import McpError

__all__ = [
    "MAX_RESULT_CHARS",
    "MAX_TIMEOUT",
    "TOOLS",
    "AgentsCall",
    "BadArgument",
    "RunCall",
    "TaskNewCall",
    "TaskStatusCall",
    "TaskStopCall",
    "TasksCall",
    "ToolCall",
    "ToolSpec",
    "agents_json",
    "cut",
    "fitted",
    "folder_refusal",
    "parse_call",
    "run_result",
    "turn_status",
]

MAX_RESULT_CHARS = 25_000
"""A result's text longer than this is cut (with a note giving the full length)."""
MAX_TIMEOUT = 86_400.0
"""The longest ``timeoutSeconds`` a run may ask for (a day, as ``task send --timeout``)."""
DEFAULT_TIMEOUT = 1_800.0
"""A run's wait without ``timeoutSeconds`` (``task send --wait``'s default)."""


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str
    input_schema: Mapping[str, Any]


def _object(properties: Mapping[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": dict(properties),
        "additionalProperties": False,
    }
    if required:
        schema["required"] = list(required)
    return schema


_STRING = {"type": "string", "minLength": 1}
_TASK = {**_STRING, "description": "A task id, a unique id prefix, or a title."}

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "robota_agents",
        "The coding agents robota drives here: name, title, protocol and capabilities.",
        _object({}),
    ),
    ToolSpec(
        "robota_task_new",
        "Start a new task (a conversation with one agent in one folder); returns its id.",
        _object(
            {
                "agent": {**_STRING, "description": "A configured agent (robota_agents)."},
                "cwd": {
                    **_STRING,
                    "description": "Absolute working folder, inside the served workspace.",
                },
                "title": {**_STRING, "description": "The task's title."},
            }
        ),
    ),
    ToolSpec(
        "robota_run",
        "Run a prompt on a task's agent and return its final answer. Without `task` a new "
        "task is started; the same `task` later continues that conversation.",
        _object(
            {
                "prompt": {**_STRING, "description": "What to ask the agent."},
                "task": _TASK,
                "agent": {**_STRING, "description": "The agent of a new task."},
                "timeoutSeconds": {
                    "type": "number",
                    "exclusiveMinimum": 0,
                    "maximum": MAX_TIMEOUT,
                    "description": "Seconds to wait for the turn (it goes on after).",
                },
            },
            ("prompt",),
        ),
    ),
    ToolSpec(
        "robota_tasks",
        "The profile's tasks, newest first (what `robota task list --json` reports).",
        _object({"all": {"type": "boolean", "description": "Every task, not only the newest."}}),
    ),
    ToolSpec(
        "robota_task_status",
        "One task's state, routes, queue and latest turn (`robota task status --json`).",
        _object({"task": _TASK}, ("task",)),
    ),
    ToolSpec(
        "robota_task_stop",
        "Interrupt a task's running turn.",
        _object({"task": _TASK}, ("task",)),
    ),
)


class BadArgument(McpError, ValueError):
    """A tool's argument is wrong: the MCP tool error names the field, what it found and what
    it expected."""

    def __init__(self, tool: str, field: str, found: object, expected: str) -> None:
        self.tool = tool
        self.field = field
        self.found = found
        self.expected = expected
        shown = "nothing" if found is _MISSING else _shown(found)
        super().__init__(f"{tool}: argument {field!r}: found {shown}, expected {expected}")


_MISSING = object()


def _shown(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= 80 else text[:77] + "..."


@dataclass(frozen=True, slots=True)
class AgentsCall:
    pass


@dataclass(frozen=True, slots=True)
class TaskNewCall:
    agent: str | None = None
    cwd: str | None = None
    title: str | None = None


@dataclass(frozen=True, slots=True)
class RunCall:
    prompt: str
    task: str | None = None
    agent: str | None = None
    timeout: float = DEFAULT_TIMEOUT


@dataclass(frozen=True, slots=True)
class TasksCall:
    all: bool = False


@dataclass(frozen=True, slots=True)
class TaskStatusCall:
    task: str


@dataclass(frozen=True, slots=True)
class TaskStopCall:
    task: str


ToolCall = AgentsCall | TaskNewCall | RunCall | TasksCall | TaskStatusCall | TaskStopCall


class _Args:
    """One call's arguments, read field by field; what is left over is refused."""

    def __init__(self, tool: str, arguments: Mapping[str, Any] | None) -> None:
        if arguments is not None and not isinstance(arguments, Mapping):
            raise BadArgument(tool, "arguments", arguments, "an object")
        self.tool = tool
        self.values = dict(arguments or {})

    def text(self, name: str, *, required: bool = False) -> str | None:
        value = self.values.pop(name, _MISSING)
        if value is _MISSING or (value is None and not required):
            if required:
                raise BadArgument(self.tool, name, _MISSING, "a non-empty string")
            return None
        if not isinstance(value, str) or not value.strip():
            raise BadArgument(self.tool, name, value, "a non-empty string")
        return value

    def flag(self, name: str) -> bool:
        value = self.values.pop(name, False)
        if value is None:
            return False
        if not isinstance(value, bool):
            raise BadArgument(self.tool, name, value, "true or false")
        return value

    def seconds(self, name: str, default: float) -> float:
        value = self.values.pop(name, None)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise BadArgument(
                self.tool, name, value, f"a number of seconds in (0, {MAX_TIMEOUT:g}]"
            )
        if not 0 < value <= MAX_TIMEOUT:
            raise BadArgument(
                self.tool, name, value, f"a number of seconds in (0, {MAX_TIMEOUT:g}]"
            )
        return float(value)

    def done(self, known: tuple[str, ...]) -> None:
        if self.values:
            extra = sorted(self.values)[0]
            expected = ", ".join(known) if known else "no arguments"
            raise BadArgument(self.tool, extra, self.values[extra], f"one of: {expected}")


def parse_call(name: str, arguments: Mapping[str, Any] | None) -> ToolCall:
    """The call ``name`` with ``arguments`` as a typed request; ``BadArgument`` for a wrong
    or unknown argument, ``LookupError`` for a tool this server does not have."""
    args = _Args(name, arguments)
    call: ToolCall
    known: tuple[str, ...]
    if name == "robota_agents":
        call, known = AgentsCall(), ()
    elif name == "robota_task_new":
        call = TaskNewCall(args.text("agent"), args.text("cwd"), args.text("title"))
        known = ("agent", "cwd", "title")
    elif name == "robota_run":
        prompt = args.text("prompt", required=True)
        assert prompt is not None
        call = RunCall(
            prompt,
            args.text("task"),
            args.text("agent"),
            args.seconds("timeoutSeconds", DEFAULT_TIMEOUT),
        )
        known = ("prompt", "task", "agent", "timeoutSeconds")
    elif name == "robota_tasks":
        call, known = TasksCall(args.flag("all")), ("all",)
    elif name in ("robota_task_status", "robota_task_stop"):
        task = args.text("task", required=True)
        assert task is not None
        call = TaskStatusCall(task) if name == "robota_task_status" else TaskStopCall(task)
        known = ("task",)
    else:
        raise LookupError(f"no tool {name!r}; this server has {', '.join(t.name for t in TOOLS)}")
    args.done(known)
    return call


def turn_status(status: str | None) -> str:
    """A turn's end as the run reports it: ``completed``, ``failed``, ``interrupted``, or
    ``running`` when the wait ended first (the turn goes on)."""
    if status in ("completed", "failed", "interrupted"):
        return status
    return "running"


def run_result(
    task: str,
    turn: str | None,
    status: str | None,
    answer: str | None,
    *,
    error: str | None = None,
    approvals: tuple[Mapping[str, object], ...] = (),
) -> tuple[str, dict[str, object], bool]:
    """A ``robota_run``'s text, structured content and whether it is an error (a turn that did
    not complete). The text is the final answer, or why there is none."""
    shown = turn_status(status)
    structured: dict[str, object] = {
        "task": task,
        "turn": turn,
        "status": shown,
        "answer": answer or "",
        "approvals": [dict(a) for a in approvals],
    }
    if error:
        structured["error"] = error
    if shown == "completed":
        return answer or "", structured, False
    if shown == "running":
        text = f"task {task}: the turn is still running; its answer is not in yet"
        return text, structured, False
    why = f": {error}" if error else ""
    text = f"task {task}: turn {shown}{why}"
    if answer:
        text = f"{answer}\n\n{text}"
    return text, structured, True


def cut(text: str, limit: int = MAX_RESULT_CHARS) -> str:
    """``text`` whole when it fits, else its head with a note giving the full length, the
    whole at most ``limit`` characters."""
    if len(text) <= limit:
        return text
    note = f"\n\n[robota: cut at {limit} of {len(text)} characters]"
    return text[: max(limit - len(note), 0)] + note


def fitted(
    structured: Mapping[str, object], limit: int = MAX_RESULT_CHARS
) -> dict[str, object] | None:
    """``structured`` content within ``limit`` characters of JSON: whole when it fits, else
    with its ``answer`` cut (``cut``, the note giving the full length) until it fits, so a
    long answer keeps its task and turn beside it; ``None`` when it cannot fit (no answer to
    cut: the text content, cut, is the result alone)."""
    whole = dict(structured)
    answer = whole.get("answer")
    if _json_length(whole) <= limit:
        return whole
    if not isinstance(answer, str):
        return None
    budget = limit - _json_length({**whole, "answer": ""})
    # Characters the JSON escapes take more room: start from the answer's share of it.
    keep = len(answer) * budget // max(_json_length(answer) - 2, 1)
    while keep > 0:
        whole["answer"] = cut(answer, keep)
        over = _json_length(whole) - limit
        if over <= 0:
            return whole
        keep -= over  # each character cut takes one JSON character or more with it
    return None


def _json_length(value: object) -> int:
    return len(json.dumps(value, ensure_ascii=False))


def agents_json(agents: Mapping[str, Any], plugins: Mapping[str, Any]) -> list[dict[str, object]]:
    """``robota_agents``: each configured agent's name, title, protocol (its kind) and what
    its protocol offers at most (its runtime plugin's capabilities)."""
    from dataclasses import asdict  # noqa: PLC0415

    rows: list[dict[str, object]] = []
    for name, agent in agents.items():
        plugin = plugins.get(agent.kind)
        capabilities = asdict(plugin.capabilities) if plugin is not None else {}
        rows.append(
            {
                "name": name,
                "title": agent.title or name,
                "protocol": agent.kind,
                "capabilities": capabilities,
            }
        )
    return rows


def folder_refusal(path: Path, workspace: Path) -> str | None:
    """Why a new task may not work in ``path`` as given: ``not an absolute path``, or
    ``outside`` the served ``workspace`` (resolved; a trusted folder may still be allowed);
    ``None`` inside it."""
    if not path.is_absolute():
        return "not an absolute path"
    resolved = path.resolve()
    if resolved == workspace or workspace in resolved.parents:
        return None
    return "outside"
