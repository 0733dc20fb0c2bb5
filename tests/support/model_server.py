"""A fake model server for real coding agents: four wire APIs, scripted by keywords in the prompt.

``with FakeModel() as model:`` listens on ``127.0.0.1`` (a free port) in a background thread;
point an agent at ``model.url`` (see ``tests/support/agents.py``). ``tools/fake_model.py`` runs
the same server as a process. Standard library only; HTTP/1.1 with keep-alive; every stream is
``text/event-stream`` with chunked transfer encoding.

APIs (matched on the path, never the query: Claude appends ``?beta=true``):

* OpenAI Responses          ``POST .../responses``            (Codex App Server, codex-acp)
* OpenAI Chat Completions   ``POST .../chat/completions``     (qwen, opencode)
* Anthropic Messages        ``POST .../messages``, ``.../messages/count_tokens`` (Claude agents)
* Gemini                    ``POST .../models/<m>:streamGenerateContent`` (``?alt=sse``),
  ``:generateContent``, ``:countTokens``                     (gemini-cli)
* ``GET .../models`` lists one model; any other path is a 404.

The prompt. Agents wrap the user's words in context blocks. The prompt is the last real text part
of the last user message that has one, after dropping ``<environment_context>``,
``<user_instructions>``, ``<permissions ...>``, ``# AGENTS.md ...`` (Codex), ``<system-reminder>``
(Claude) and ``<session_context>`` (gemini) blocks; after a Claude cancel the text after the last
``[Request interrupted by user]`` marker counts. A user message that carries only tool results is
not a new prompt: the server answers the tool result (see "after a tool call").

Scenario keywords (case-sensitive, at the start of the prompt):

==================  =============================================================================
(none)              answer ``ECHO: <prompt>``
``SHELL: <cmd>``    call the agent's shell tool with ``<cmd>`` (default ``echo fake-shell-output``);
                    the tool is picked from the tools the request offers: ``exec_command``
                    (Codex, codex-acp: ``{cmd}``), ``run_shell_command`` (gemini, qwen), ``bash``
                    (opencode), ``Bash`` (Claude), ...
``WRITE: <path> <text>``  write ``<text>`` to ``<path>`` with the agent's write tool
                    (``apply_patch`` for Codex, ``write_file``, ``write``, ``Write``); a relative
                    path is made absolute with the working directory the agent reports, when the
                    tool needs one
``READ: <path>``    read ``<path>`` with the agent's read tool (``read_file``, ``read``, ``Read``;
                    Codex: ``cat`` through ``exec_command``)
``SLOW``            a slow text stream: ``slow_deltas`` deltas, ``slow_delay`` s apart (60 x 50 ms)
``HISTORY``         answer ``HISTORY: <p1> | <p2> | ...``: every user prompt of the conversation
                    (a transcript robota primed a prompt with counts its prompts: ``primed``)
``TOOLNAMES``       answer ``TOOLNAMES: <name> <name> ...``: the tools the request offers, sorted
                    (an agent's configured MCP servers' tools among them)
``FAIL400``         HTTP 400, ``invalid_request_error``, message ``fake invalid request``
``FAIL500``         HTTP 500, message ``fake internal server error``
``CUTSTREAM``       HTTP 200, a few deltas, then the connection is closed before the final event
==================  =============================================================================

After a tool call, the next request (its last user message carries the tool result) gets the final
answer ``TOOL <name> RESULT: <tool output>``.

Side calls never get a tool call, a failure or a slow stream. A request that offers no tools
(opencode's title call) is answered with ``ECHO: <prompt>`` (at most 200 characters). qwen's
calls that offer tools but are not a user's turn are recognised by their prompt (``SIDE_PROMPTS``):
``[SUGGESTION MODE ...`` gets ``run the tests``, ``Managed memory has ...`` gets ``Nothing to
remember.``, and the "The connection dropped mid-response. Resume directly ..." prompt qwen sends
after a cut stream gets ``(resumed after the cut)``. A request for JSON (``response_format`` json,
Gemini ``responseMimeType: application/json``) gets a JSON object matching the schema it gives,
or ``{"next_speaker": "user", "reasoning": ...}``.

Every request is recorded (``model.requests``): method, path, query, headers without credentials,
the parsed body, the API, the prompt, the scenario and the status answered.
"""

from __future__ import annotations

import gzip
import itertools
import json
import re
import socket
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import PurePosixPath
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

__all__ = ["FakeModel", "RecordedRequest", "extract"]

SECRET_HEADERS = frozenset({"authorization", "x-api-key", "x-goog-api-key", "api-key", "cookie"})

CONTEXT_TAGS = (
    "environment_context",
    "user_instructions",
    "permissions",
    "system-reminder",
    "session_context",
    "skills_instructions",
    "user_shell_command",
    "turn_aborted",
)
_CONTEXT_BLOCK = re.compile(
    r"<(" + "|".join(re.escape(t) for t in CONTEXT_TAGS) + r")\b[^>]*>.*?</\1\b[^>]*>",
    re.DOTALL,
)
_INTERRUPTED = "[Request interrupted by user"

SHELL_TOOLS = (
    "exec_command",
    "shell_command",
    "shell",
    "run_shell_command",
    "bash",
    "Bash",
    "mcp__acp__Bash",
)
WRITE_TOOLS = ("apply_patch", "write_file", "write", "Write", "mcp__acp__Write")
READ_TOOLS = ("read_file", "read", "Read", "mcp__acp__Read")
PATH_KEYS = ("file_path", "filePath", "absolute_path", "path")
CONTENT_KEYS = ("content", "contents", "text")

KEYWORDS = (
    "SHELL",
    "WRITE",
    "READ",
    "SLOW",
    "HISTORY",
    "TOOLNAMES",
    "FAIL400",
    "FAIL500",
    "CUTSTREAM",
)
_KEYWORD = re.compile(r"^(" + "|".join(KEYWORDS) + r")\b:?\s*(.*)$", re.DOTALL)

_TOOLS = re.compile(r"^TOOLS\s+([0-9]{1,4})\b\s*(.*)$", re.DOTALL)
"""``TOOLS N CMD``: N shell calls (CMD, or ``true``) in one turn, then it says so."""

_CWD_PATTERNS = (
    re.compile(r"<cwd>([^<]+)</cwd>"),  # Codex
    re.compile(r"[Pp]rimary working directory: *(/\S+)"),  # Claude Code
    re.compile(r"Workspace Directories:\**\s*- *(/\S+)"),  # gemini
    re.compile(r"working in the directory: *(/\S+)"),  # qwen
    re.compile(r"[Ww]orking directory: *(/\S+)"),  # opencode
)


# -- what the agent asked ------------------------------------------------------------------------


@dataclass(frozen=True)
class Tool:
    name: str
    properties: dict[str, Any]
    required: tuple[str, ...]
    custom: bool = False
    """A freeform (non-JSON) tool: Codex's ``apply_patch``."""


@dataclass(frozen=True)
class ToolResult:
    name: str
    output: str


@dataclass
class Conversation:
    """The neutral view of one request, whatever the API."""

    prompts: list[str] = field(default_factory=list)
    tool_result: ToolResult | None = None
    """The tool result that ends the conversation (after the last prompt), if any."""
    tool_results: int = 0
    """Tool results since the last prompt (``TOOLS N``: N shell calls, one after another)."""
    tools: list[Tool] = field(default_factory=list)
    json_schema: dict[str, Any] | None = None
    json_mode: bool = False
    cwd: str | None = None
    model: str = "fake-model"

    @property
    def prompt(self) -> str | None:
        return self.prompts[-1] if self.prompts else None


def strip_context(text: str) -> str:
    """The user's own words in one text part ("" when the part is only agent context)."""
    if text.lstrip().startswith("# AGENTS.md"):
        return ""
    text = _CONTEXT_BLOCK.sub("", text)
    if _INTERRUPTED in text:
        text = text.rsplit(_INTERRUPTED, 1)[1]
        text = text.split("]", 1)[1] if "]" in text else ""
    return text.strip()


_PRIMED_END = "[robota: the conversation goes on with the user's next message:]"
_PRIMED_TURN = re.compile(r"--- turn \d+, the user:\n(.*?)\n--- turn \d+, you answered:", re.DOTALL)


def primed(text: str) -> tuple[list[str], str]:
    """A prompt robota primed with the transcript a task brought from another device
    (``robota.core.engine._route_turns.primer``): its earlier prompts, as a model reading the
    transcript knows them, and the user's own words after it."""
    if _PRIMED_END not in text:
        return [], text
    head, own = text.split(_PRIMED_END, 1)
    return _PRIMED_TURN.findall(head), own.strip()


def _text_of(value: Any) -> str:
    """Tool output of any shape (string, list of content blocks, object) as text."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for item in value:
            if isinstance(item, dict) and isinstance(item.get("text"), str):
                parts.append(item["text"])
            elif isinstance(item, str):
                parts.append(item)
            else:
                parts.append(json.dumps(item))
        return "\n".join(parts)
    if isinstance(value, dict):
        for key in ("output", "content", "text", "result", "error"):
            if key in value:
                return _text_of(value[key])
    return json.dumps(value)


class _Builder:
    """Collects user messages in order; each is a list of text parts plus tool results."""

    def __init__(self, conversation: Conversation) -> None:
        self.conversation = conversation

    def user_message(self, texts: list[str], results: list[ToolResult]) -> None:
        real = [t for t in (strip_context(x) for x in texts) if t]
        if real:
            earlier, own = primed(real[-1])
            self.conversation.prompts.extend(earlier)
            self.conversation.prompts.append(own)
            self.conversation.tool_result = None
            self.conversation.tool_results = 0
        elif results:
            self.conversation.tool_result = results[-1]
            self.conversation.tool_results += len(results)

    def assistant_message(self) -> None:
        # A model turn after a tool result means that result was already answered.
        self.conversation.tool_result = None


def _schema_tool(name: str, schema: Any, *, custom: bool = False) -> Tool:
    schema = schema if isinstance(schema, dict) else {}
    props = schema.get("properties")
    required = schema.get("required")
    return Tool(
        name,
        props if isinstance(props, dict) else {},
        tuple(r for r in required if isinstance(r, str)) if isinstance(required, list) else (),
        custom,
    )


def _parse_responses(body: dict[str, Any], conv: Conversation) -> None:
    b = _Builder(conv)
    calls: dict[str, str] = {}
    items = body.get("input")
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        if kind == "message":
            content = item.get("content")
            texts = (
                [content]
                if isinstance(content, str)
                else [
                    c["text"]
                    for c in content or []
                    if isinstance(c, dict) and isinstance(c.get("text"), str)
                ]
            )
            if item.get("role") == "user":
                b.user_message(texts, [])
            elif item.get("role") == "assistant":
                b.assistant_message()
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            calls[str(item.get("call_id"))] = str(item.get("name", kind))
            b.assistant_message()
        elif kind in ("function_call_output", "custom_tool_call_output"):
            name = calls.get(str(item.get("call_id")), "tool")
            b.user_message([], [ToolResult(name, _text_of(item.get("output")))])
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "custom":
            conv.tools.append(Tool(str(tool.get("name")), {}, (), custom=True))
        elif tool.get("type") == "namespace":
            # Codex groups an MCP server's tools in a namespace (``mcp__<server>``): each is
            # listed as ``<namespace>__<tool>``, the name Codex itself gives it.
            for inner in tool.get("tools") or []:
                if isinstance(inner, dict) and "name" in inner:
                    name = f"{tool.get('name')}__{inner['name']}"
                    conv.tools.append(_schema_tool(name, inner.get("parameters")))
        elif "name" in tool:
            conv.tools.append(_schema_tool(str(tool["name"]), tool.get("parameters")))
    text = body.get("text")
    fmt = text.get("format") if isinstance(text, dict) else None
    if isinstance(fmt, dict) and fmt.get("type") in ("json_schema", "json_object"):
        conv.json_mode = True
        schema = fmt.get("schema")
        conv.json_schema = schema if isinstance(schema, dict) else None
    conv.model = str(body.get("model") or conv.model)


def _parse_chat(body: dict[str, Any], conv: Conversation) -> None:
    b = _Builder(conv)
    calls: dict[str, str] = {}
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        content = message.get("content")
        if role == "user":
            texts = (
                [content]
                if isinstance(content, str)
                else [
                    c["text"]
                    for c in content or []
                    if isinstance(c, dict) and isinstance(c.get("text"), str)
                ]
            )
            b.user_message(texts, [])
        elif role == "assistant":
            for call in message.get("tool_calls") or []:
                if isinstance(call, dict):
                    function = call.get("function") or {}
                    calls[str(call.get("id"))] = str(function.get("name", "tool"))
            b.assistant_message()
        elif role == "tool":
            name = calls.get(str(message.get("tool_call_id")), "tool")
            b.user_message([], [ToolResult(name, _text_of(content))])
    for tool in body.get("tools") or []:
        if isinstance(tool, dict) and isinstance(tool.get("function"), dict):
            function = tool["function"]
            conv.tools.append(_schema_tool(str(function.get("name")), function.get("parameters")))
    fmt = body.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") in ("json_object", "json_schema"):
        conv.json_mode = True
        spec = fmt.get("json_schema")
        schema = spec.get("schema") if isinstance(spec, dict) else None
        conv.json_schema = schema if isinstance(schema, dict) else None
    conv.model = str(body.get("model") or conv.model)


def _parse_anthropic(body: dict[str, Any], conv: Conversation) -> None:
    b = _Builder(conv)
    calls: dict[str, str] = {}
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        blocks = [x for x in blocks or [] if isinstance(x, dict)]
        if message.get("role") == "user":
            texts = [x["text"] for x in blocks if x.get("type") == "text" and "text" in x]
            results = [
                ToolResult(calls.get(str(x.get("tool_use_id")), "tool"), _text_of(x.get("content")))
                for x in blocks
                if x.get("type") == "tool_result"
            ]
            b.user_message(texts, results)
        elif message.get("role") == "assistant":
            for x in blocks:
                if x.get("type") == "tool_use":
                    calls[str(x.get("id"))] = str(x.get("name"))
            b.assistant_message()
    for tool in body.get("tools") or []:
        if isinstance(tool, dict) and "name" in tool:
            conv.tools.append(_schema_tool(str(tool["name"]), tool.get("input_schema")))
    conv.model = str(body.get("model") or conv.model)


def _parse_gemini(body: dict[str, Any], conv: Conversation, model: str) -> None:
    b = _Builder(conv)
    for content in body.get("contents") or []:
        if not isinstance(content, dict):
            continue
        parts = [p for p in content.get("parts") or [] if isinstance(p, dict)]
        if content.get("role", "user") == "user":
            texts = [p["text"] for p in parts if isinstance(p.get("text"), str)]
            results = [
                ToolResult(
                    str(p["functionResponse"].get("name", "tool")),
                    _text_of(p["functionResponse"].get("response")),
                )
                for p in parts
                if isinstance(p.get("functionResponse"), dict)
            ]
            b.user_message(texts, results)
        else:
            b.assistant_message()
    for group in body.get("tools") or []:
        for decl in (group or {}).get("functionDeclarations") or []:
            if isinstance(decl, dict) and "name" in decl:
                schema = decl.get("parametersJsonSchema") or decl.get("parameters")
                conv.tools.append(_schema_tool(str(decl["name"]), schema))
    config = body.get("generationConfig") or {}
    if isinstance(config, dict) and config.get("responseMimeType") == "application/json":
        conv.json_mode = True
        schema = config.get("responseJsonSchema") or config.get("responseSchema")
        conv.json_schema = schema if isinstance(schema, dict) else None
    conv.model = model


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)


def extract(api: str, body: Any, *, model: str = "fake-model") -> Conversation:
    """Parse a request body of ``api`` (responses, chat, anthropic, gemini)."""
    conv = Conversation(model=model)
    if not isinstance(body, dict):
        return conv
    if api == "responses":
        _parse_responses(body, conv)
    elif api == "chat":
        _parse_chat(body, conv)
    elif api == "anthropic":
        _parse_anthropic(body, conv)
    elif api == "gemini":
        _parse_gemini(body, conv, model)
    raw = "\n".join(_strings(body))
    for pattern in _CWD_PATTERNS:
        match = pattern.search(raw)
        if match:
            conv.cwd = match.group(1).rstrip(".,;:")
            break
    return conv


# -- what to answer ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any]
    custom_input: str | None = None
    """Set for a freeform tool: the raw input text instead of JSON arguments."""


@dataclass(frozen=True)
class Plan:
    scenario: str
    text: str = ""
    tool: ToolCall | None = None
    status: int = 200
    error: str = ""
    slow: bool = False
    cut: bool = False


def _find_tool(tools: list[Tool], names: tuple[str, ...]) -> Tool | None:
    offered = {t.name: t for t in tools}
    for name in names:
        if name in offered:
            return offered[name]
    return None


def _fill(tool: Tool, args: dict[str, Any]) -> dict[str, Any]:
    """Add the required arguments the scenario did not set, with harmless values."""
    for key in tool.required:
        if key in args:
            continue
        prop = tool.properties.get(key) or {}
        kind = prop.get("type") if isinstance(prop, dict) else None
        kind = str(kind[0] if isinstance(kind, list) and kind else kind or "string").lower()
        if prop.get("enum"):
            args[key] = prop["enum"][0]
        elif kind in ("integer", "number"):
            args[key] = 60000 if "timeout" in key.lower() else 1
        elif kind == "boolean":
            args[key] = False
        elif kind == "array":
            args[key] = []
        elif kind == "object":
            args[key] = {}
        else:
            args[key] = f"fake {key}"
    return args


def _shell_call(tool: Tool, command: str) -> ToolCall:
    props = tool.properties
    args: dict[str, Any] = {}
    if "cmd" in props:
        args["cmd"] = command
    elif isinstance(props.get("command"), dict) and props["command"].get("type") == "array":
        args["command"] = ["bash", "-lc", command]
    else:
        args["command"] = command
    if "description" in props:
        args["description"] = f"Run {command}"[:80]
    return ToolCall(tool.name, _fill(tool, args))


def _absolute(path: str, cwd: str | None) -> str:
    if path.startswith("/") or cwd is None:
        return path
    return str(PurePosixPath(cwd) / path)


def _path_key(tool: Tool) -> str:
    return next((k for k in PATH_KEYS if k in tool.properties), PATH_KEYS[0])


def _write_call(conv: Conversation, path: str, text: str) -> ToolCall | None:
    tool = _find_tool(conv.tools, WRITE_TOOLS)
    if tool is not None and tool.name == "apply_patch":
        lines = "".join(f"+{line}\n" for line in text.split("\n"))
        patch = f"*** Begin Patch\n*** Add File: {path}\n{lines}*** End Patch\n"
        if tool.custom:
            return ToolCall(tool.name, {}, custom_input=patch)
        return ToolCall(tool.name, _fill(tool, {"input": patch}))
    if tool is not None:
        content_key = next((k for k in CONTENT_KEYS if k in tool.properties), CONTENT_KEYS[0])
        args = {_path_key(tool): _absolute(path, conv.cwd), content_key: text}
        return ToolCall(tool.name, _fill(tool, args))
    shell = _find_tool(conv.tools, SHELL_TOOLS)
    if shell is not None:
        quoted = text.replace("'", "'\\''")
        return _shell_call(shell, f"printf '%s\\n' '{quoted}' > {path}")
    return None


def _read_call(conv: Conversation, path: str) -> ToolCall | None:
    tool = _find_tool(conv.tools, READ_TOOLS)
    if tool is not None:
        return ToolCall(tool.name, _fill(tool, {_path_key(tool): _absolute(path, conv.cwd)}))
    shell = _find_tool(conv.tools, SHELL_TOOLS)
    return _shell_call(shell, f"cat {path}") if shell is not None else None


def _sample(schema: Any) -> Any:
    """A small value that satisfies a JSON schema (OpenAPI-style upper-case types too)."""
    if not isinstance(schema, dict):
        return {}
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    kind = str(kind or ("object" if "properties" in schema else "string")).lower()
    if kind == "object":
        props = schema.get("properties") or {}
        out = {key: _sample(value) for key, value in props.items()}
        if "next_speaker" in out:
            out["next_speaker"] = "user"
        return out
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return 0
    if kind == "boolean":
        return False
    return "fake"


SIDE_PROMPTS = (
    ("[SUGGESTION MODE", "run the tests"),  # qwen's next-prompt suggestion, after every turn
    ("Managed memory has", "Nothing to remember."),  # qwen's memory extraction, after turns
    ("The connection dropped mid-response", "(resumed after the cut)"),  # qwen, after a cut
)
"""Side calls that offer tools but must not run a scenario: prompt prefix -> answer."""

NEXT_SPEAKER = {"next_speaker": "user", "reasoning": "The fake model finished its answer."}


def plan(conv: Conversation) -> Plan:
    """Decide the answer to one request."""
    if conv.json_mode:
        value = _sample(conv.json_schema) if conv.json_schema else NEXT_SPEAKER
        return Plan("json", text=json.dumps(value))
    prompt = conv.prompt or ""
    if not conv.tools:
        if prompt.startswith("HISTORY"):
            return Plan("history", text="HISTORY: " + " | ".join(conv.prompts))
        return Plan("side", text=f"ECHO: {prompt}"[:200])
    tools = _TOOLS.match(prompt)
    if tools is not None and conv.tool_results < int(tools[1]):
        shell = _find_tool(conv.tools, SHELL_TOOLS)
        if shell is not None:
            return Plan("tools", tool=_shell_call(shell, tools[2] or "true"))
    if tools is not None:
        return Plan("tools", text=f"TOOLS: {conv.tool_results} calls done")
    if conv.tool_result is not None:
        result = conv.tool_result
        return Plan("tool_result", text=f"TOOL {result.name} RESULT: {result.output[:2000]}")
    for start, answer in SIDE_PROMPTS:
        if prompt.startswith(start):
            return Plan("side", text=answer)
    match = _KEYWORD.match(prompt)
    if match is None:
        return Plan("echo", text=f"ECHO: {prompt}")
    keyword, rest = match.group(1), match.group(2).strip()
    call: ToolCall | None = None
    if keyword == "SHELL":
        shell = _find_tool(conv.tools, SHELL_TOOLS)
        call = _shell_call(shell, rest or "echo fake-shell-output") if shell else None
    elif keyword == "WRITE":
        path, _, text = (rest or "fake-written.txt").partition(" ")
        call = _write_call(conv, path, text or "written by the fake model")
    elif keyword == "READ":
        call = _read_call(conv, rest or "fake-written.txt")
    elif keyword == "SLOW":
        return Plan("slow", text=f"SLOW: {rest}", slow=True)
    elif keyword == "HISTORY":
        return Plan("history", text="HISTORY: " + " | ".join(conv.prompts))
    elif keyword == "TOOLNAMES":
        return Plan("toolnames", text="TOOLNAMES: " + " ".join(sorted(t.name for t in conv.tools)))
    elif keyword == "FAIL400":
        return Plan("fail400", status=400, error="fake invalid request")
    elif keyword == "FAIL500":
        return Plan("fail500", status=500, error="fake internal server error")
    elif keyword == "CUTSTREAM":
        return Plan("cutstream", text="This answer is cut short before its final event", cut=True)
    if call is None:
        offered = ", ".join(t.name for t in conv.tools)
        return Plan("no_tool", text=f"ECHO: {prompt} (no {keyword} tool among: {offered})")
    return Plan(keyword.lower(), tool=call)


# -- wire formats --------------------------------------------------------------------------------

Event = tuple[str | None, Any]
"""(SSE event name or None, data: a JSON-able object or a raw string)."""


def _pieces(text: str, count: int | None = None) -> list[str]:
    if count is not None:
        return [f"slow-{i:02d} " for i in range(count)]
    words = re.findall(r"\S+\s*|\s+", text) or [""]
    size = max(1, len(words) // 4 + (len(words) % 4 > 0))
    return ["".join(words[i : i + size]) for i in range(0, len(words), size)]


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


class _Ids:
    def __init__(self) -> None:
        self._counter = itertools.count(1)
        self._lock = threading.Lock()

    def next(self) -> int:
        with self._lock:
            return next(self._counter)


def _responses_events(p: Plan, conv: Conversation, n: int, pieces: list[str]) -> Iterator[Event]:
    seq = itertools.count()
    response = {
        "id": f"resp_{n:06d}",
        "object": "response",
        "created_at": int(time.time()),
        "status": "in_progress",
        "model": conv.model,
        "output": [],
    }

    def ev(kind: str, **data: Any) -> Event:
        return kind, {"type": kind, "sequence_number": next(seq), **data}

    yield ev("response.created", response=response)
    yield ev("response.in_progress", response=response)
    if p.tool is not None:
        call = p.tool
        item_id, call_id = f"fc_{n:06d}", f"call_{n:06d}"
        if call.custom_input is not None:
            item: dict[str, Any] = {"type": "custom_tool_call", "id": item_id, "call_id": call_id}
            item |= {"name": call.name, "input": "", "status": "in_progress"}
            yield ev("response.output_item.added", output_index=0, item=item)
            chunk = {"item_id": item_id, "output_index": 0}
            yield ev("response.custom_tool_call_input.delta", **chunk, delta=call.custom_input)
            yield ev("response.custom_tool_call_input.done", **chunk, input=call.custom_input)
            done = item | {"input": call.custom_input, "status": "completed"}
        else:
            arguments = json.dumps(call.arguments)
            item = {"type": "function_call", "id": item_id, "call_id": call_id}
            item |= {"name": call.name, "arguments": "", "status": "in_progress"}
            yield ev("response.output_item.added", output_index=0, item=item)
            chunk = {"item_id": item_id, "output_index": 0}
            yield ev("response.function_call_arguments.delta", **chunk, delta=arguments)
            yield ev("response.function_call_arguments.done", **chunk, arguments=arguments)
            done = item | {"arguments": arguments, "status": "completed"}
        yield ev("response.output_item.done", output_index=0, item=done)
        text = json.dumps(call.arguments) + (call.custom_input or "")
    else:
        item_id = f"msg_{n:06d}"
        item = {"id": item_id, "type": "message", "status": "in_progress", "role": "assistant"}
        yield ev("response.output_item.added", output_index=0, item=item | {"content": []})
        part = {"type": "output_text", "text": "", "annotations": []}
        where = {"item_id": item_id, "output_index": 0, "content_index": 0}
        yield ev("response.content_part.added", **where, part=part)
        for piece in pieces:
            yield ev("response.output_text.delta", **where, delta=piece)
        text = "".join(pieces)
        yield ev("response.output_text.done", **where, text=text)
        yield ev("response.content_part.done", **where, part=part | {"text": text})
        done = item | {"status": "completed", "content": [part | {"text": text}]}
        yield ev("response.output_item.done", output_index=0, item=done)
    usage = {
        "input_tokens": conv_tokens(conv),
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": _tokens(text),
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": conv_tokens(conv) + _tokens(text),
    }
    final = response | {"status": "completed", "output": [done], "usage": usage}
    yield ev("response.completed", response=final)


def conv_tokens(conv: Conversation) -> int:
    return 100 + 10 * len(conv.prompts)


def _chat_events(p: Plan, conv: Conversation, n: int, pieces: list[str]) -> Iterator[Event]:
    base = {
        "id": f"chatcmpl-{n:06d}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": conv.model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> Event:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return None, base | {"choices": [choice]} | extra

    if p.tool is not None:
        arguments = json.dumps(p.tool.arguments)
        call = {"index": 0, "id": f"call_{n:06d}", "type": "function"}
        call["function"] = {"name": p.tool.name, "arguments": ""}
        yield chunk({"role": "assistant", "content": None, "tool_calls": [call]})
        more = {"index": 0, "function": {"arguments": arguments}}
        yield chunk({"tool_calls": [more]})
        finish, text = "tool_calls", arguments
    else:
        yield chunk({"role": "assistant", "content": ""})
        for piece in pieces:
            yield chunk({"content": piece})
        finish, text = "stop", "".join(pieces)
    usage = {
        "prompt_tokens": conv_tokens(conv),
        "completion_tokens": _tokens(text),
        "total_tokens": conv_tokens(conv) + _tokens(text),
    }
    yield chunk({}, finish, usage=usage)
    yield None, "[DONE]"


def _anthropic_events(p: Plan, conv: Conversation, n: int, pieces: list[str]) -> Iterator[Event]:
    usage = {
        "input_tokens": conv_tokens(conv),
        "output_tokens": 1,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    message: dict[str, Any] = {
        "id": f"msg_fake_{n:06d}",
        "type": "message",
        "role": "assistant",
        "model": conv.model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    yield "message_start", {"type": "message_start", "message": message}
    if p.tool is not None:
        block = {"type": "tool_use", "id": f"toolu_fake_{n:06d}", "name": p.tool.name, "input": {}}
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        )
        partial = json.dumps(p.tool.arguments)
        delta = {"type": "input_json_delta", "partial_json": partial}
        yield "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}
        stop, text = "tool_use", partial
    else:
        block = {"type": "text", "text": ""}
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        )
        for piece in pieces:
            delta = {"type": "text_delta", "text": piece}
            yield "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}
        stop, text = "end_turn", "".join(pieces)
    yield "content_block_stop", {"type": "content_block_stop", "index": 0}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": _tokens(text)},
        },
    )
    yield "message_stop", {"type": "message_stop"}


def _gemini_events(p: Plan, conv: Conversation, n: int, pieces: list[str]) -> Iterator[Event]:
    del n

    def chunk(parts: list[dict[str, Any]], *, last: bool, text: str = "") -> Event:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        data: dict[str, Any] = {"candidates": [candidate], "modelVersion": conv.model}
        if last:
            candidate["finishReason"] = "STOP"
            data["usageMetadata"] = {
                "promptTokenCount": conv_tokens(conv),
                "candidatesTokenCount": _tokens(text),
                "totalTokenCount": conv_tokens(conv) + _tokens(text),
            }
        return None, data

    if p.tool is not None:
        call = {"name": p.tool.name, "args": p.tool.arguments}
        yield chunk([{"functionCall": call}], last=True, text=json.dumps(p.tool.arguments))
        return
    for i, piece in enumerate(pieces):
        yield chunk([{"text": piece}], last=i == len(pieces) - 1, text="".join(pieces))


RENDERERS: dict[str, Callable[[Plan, Conversation, int, list[str]], Iterator[Event]]] = {
    "responses": _responses_events,
    "chat": _chat_events,
    "anthropic": _anthropic_events,
    "gemini": _gemini_events,
}


def error_body(api: str, status: int, message: str) -> dict[str, Any]:
    if api == "gemini":
        code = "INVALID_ARGUMENT" if status == 400 else "INTERNAL"
        return {"error": {"code": status, "message": message, "status": code}}
    kind = "invalid_request_error" if status == 400 else "api_error"
    if api == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    kind = "invalid_request_error" if status == 400 else "server_error"
    return {
        "type": "error",
        "error": {"message": message, "type": kind, "param": None, "code": kind},
    }


def _gemini_json(p: Plan, conv: Conversation) -> dict[str, Any]:
    """A non-streamed ``:generateContent`` answer: the stream's parts, merged."""
    parts: list[dict[str, Any]] = []
    data: dict[str, Any] = {}
    for _, data in _gemini_events(p, conv, 0, _pieces(p.text)):
        parts.extend(data["candidates"][0]["content"]["parts"])
    texts = "".join(part.get("text", "") for part in parts)
    merged = [{"text": texts}] if texts else parts
    data["candidates"][0]["content"]["parts"] = merged
    return data


# -- the server ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    query: str
    headers: dict[str, str]
    """Lower-case names; credentials removed."""
    body: Any
    """The parsed JSON body (or the raw text when it is not JSON; None when empty)."""
    api: str
    """responses, chat, anthropic, anthropic_count, gemini, gemini_json, gemini_count, models,
    unknown."""
    prompt: str | None
    scenario: str
    status: int

    def as_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "path": self.path,
            "query": self.query,
            "headers": self.headers,
            "api": self.api,
            "prompt": self.prompt,
            "scenario": self.scenario,
            "status": self.status,
            "body": self.body,
        }


def classify(method: str, path: str) -> tuple[str, str]:
    """The API of a request path and, for Gemini, the model name."""
    if method == "GET" and path.rstrip("/").endswith("/models"):
        return "models", ""
    if method != "POST":
        return "unknown", ""
    if path.endswith("/responses"):
        return "responses", ""
    if path.endswith("/chat/completions"):
        return "chat", ""
    if path.endswith("/messages/count_tokens"):
        return "anthropic_count", ""
    if path.endswith("/messages"):
        return "anthropic", ""
    match = re.search(
        r"/models/([^/:]+):(streamGenerateContent|generateContent|countTokens)$", path
    )
    if match:
        kind = {"streamGenerateContent": "gemini", "generateContent": "gemini_json"}
        return kind.get(match.group(2), "gemini_count"), match.group(1)
    return "unknown", ""


class _Server(ThreadingHTTPServer):
    daemon_threads = False
    block_on_close = True
    allow_reuse_address = True

    def __init__(self, owner: FakeModel, address: tuple[str, int]) -> None:
        self.owner = owner
        super().__init__(address, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        # Runs in the serving thread, so once ``shutdown`` returns every accepted socket is known.
        self.owner._track(request, add=True)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        self.owner._track(request, add=False)
        super().shutdown_request(request)


class _Cut(Exception):
    """The scenario drops the connection."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass  # the peer is gone

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the owner records requests; stderr stays quiet

    def handle_one_request(self) -> None:
        try:
            super().handle_one_request()
        except (OSError, _Cut):
            self.close_connection = True
        except Exception as error:  # a bug in the fake: keep it for the tests to see
            self.server.owner._fail(f"{self.command} {self.path}: {error!r}")
            self.close_connection = True

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    # -- plumbing -

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                data += self.rfile.read(size)
                self.rfile.readline()
        else:
            data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        encoding = self.headers.get("Content-Encoding", "").lower()
        if encoding == "gzip":
            data = gzip.decompress(data)
        elif encoding == "deflate":
            data = zlib.decompress(data)
        return data

    def _send_json(self, status: int, value: Any) -> None:
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _serve(self) -> None:
        owner = self.server.owner
        url = urlsplit(self.path)
        api, gemini_model = classify(self.command, url.path)
        raw = self._read_body() if self.command == "POST" else b""
        body: Any = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw.decode(errors="replace")
        headers = {k.lower(): v for k, v in self.headers.items() if k.lower() not in SECRET_HEADERS}
        base = api.split("_")[0]
        conv = extract(base, body, model=gemini_model or "fake-model")
        if api in ("responses", "chat", "anthropic", "gemini", "gemini_json"):
            p = plan(conv)
        elif api in ("anthropic_count", "gemini_count", "models"):
            p = Plan(api)
        else:
            p = Plan("not_found", status=404, error=f"no such endpoint: {url.path}")
        owner._record(
            RecordedRequest(
                self.command,
                url.path,
                url.query,
                headers,
                body,
                api,
                conv.prompt,
                p.scenario,
                p.status,
            )
        )
        if p.status != 200:
            self._send_json(p.status, error_body(base, p.status, p.error))
            return
        if api == "anthropic_count":
            self._send_json(200, {"input_tokens": conv_tokens(conv)})
        elif api == "gemini_count":
            self._send_json(200, {"totalTokens": conv_tokens(conv)})
        elif api == "models":
            model = {"id": "fake-model", "object": "model", "owned_by": "fake", "created": 0}
            self._send_json(200, {"object": "list", "data": [model]})
        elif api == "gemini_json":
            self._send_json(200, _gemini_json(p, conv))
        else:
            self._stream(api, p, conv)

    def _stream(self, api: str, p: Plan, conv: Conversation) -> None:
        owner = self.server.owner
        pieces = _pieces(p.text, owner.slow_deltas if p.slow else None)
        events = list(RENDERERS[api](p, conv, owner._ids.next(), pieces))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        deltas = 0
        for name, data in events:
            text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
            frame = (f"event: {name}\n" if name else "") + f"data: {text}\n\n"
            is_delta = _is_delta(data)
            if is_delta and p.slow and deltas and owner._stopping.wait(owner.slow_delay):
                raise _Cut
            self._chunk(frame.encode())
            deltas += is_delta
            if p.cut and deltas >= 2:
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
                raise _Cut
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def _is_delta(data: Any) -> bool:
    if not isinstance(data, dict):
        return False
    if data.get("type") in ("response.output_text.delta", "content_block_delta"):
        return True
    choices = data.get("choices")
    if isinstance(choices, list) and choices and choices[0].get("delta", {}).get("content"):
        return True
    candidates = data.get("candidates")
    if isinstance(candidates, list) and candidates:
        parts = candidates[0].get("content", {}).get("parts", [])
        return any("text" in part for part in parts)
    return False


class FakeModel:
    """The server; a context manager. ``url`` is ``http://127.0.0.1:<port>`` (no path)."""

    def __init__(
        self,
        port: int = 0,
        *,
        slow_deltas: int = 60,
        slow_delay: float = 0.05,
        on_request: Callable[[RecordedRequest], None] | None = None,
    ) -> None:
        self.slow_deltas = slow_deltas
        self.slow_delay = slow_delay
        self._port = port
        self._on_request = on_request
        self._requests: list[RecordedRequest] = []
        self.errors: list[str] = []
        """Exceptions inside the fake itself (a test should expect none)."""
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self._stopping = threading.Event()
        self._ids = _Ids()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        assert self._server is not None, "the server is not started"
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    def model_requests(self) -> list[RecordedRequest]:
        """Only the requests that asked a model for an answer (no counts, no model lists)."""
        apis = ("responses", "chat", "anthropic", "gemini", "gemini_json")
        return [r for r in self.requests if r.api in apis]

    def clear(self) -> None:
        with self._lock:
            self._requests.clear()

    def start(self) -> FakeModel:
        self._server = _Server(self, ("127.0.0.1", self._port))
        # shutdown() waits for serve_forever's next poll: 10 ms, not 50, since some 350 tests
        # close a fake model (start and close 54 -> 13-20 ms; the polls cost 0.6 ms of CPU).
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving, drop open connections (ending slow streams), join every thread."""
        server = self._server
        if server is None:
            return
        self._stopping.set()
        server.shutdown()
        with self._lock:
            for connection in self._connections:
                try:
                    connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass  # the peer closed it already
        server.server_close()
        if self._thread is not None:
            self._thread.join()
        self._server = None

    def __enter__(self) -> FakeModel:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- called by handler threads -

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)
        if self._on_request is not None:
            self._on_request(request)

    def _fail(self, message: str) -> None:
        with self._lock:
            self.errors.append(message)

    def _track(self, connection: socket.socket, *, add: bool) -> None:
        with self._lock:
            if add:
                self._connections.add(connection)
            else:
                self._connections.discard(connection)
