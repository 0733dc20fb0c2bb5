"""The fake model server over real sockets, and each real agent talking to it.

The first part checks each wire API's shape (the final event every agent waits for), prompt
extraction, tool calls, failures and the request log with ``http.client``. The second part runs
one text turn per real agent through raw JSON-RPC: it proves the fake speaks each agent's API.
"""

from __future__ import annotations

import http.client
import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import trio

from robota.runtimes import AgentProcess, Connection

from ..support.agents import ROOT, isolated
from ..support.model_server import FakeModel, extract, strip_context

Event = tuple[str | None, Any]

# -- HTTP helpers --------------------------------------------------------------------------------


def post(
    model: FakeModel, path: str, body: Any, *, method: str = "POST"
) -> tuple[int, dict[str, str], bytes]:
    """One request on its own connection; the whole (chunked) body, or IncompleteRead."""
    conn = http.client.HTTPConnection("127.0.0.1", model.port, timeout=10)
    try:
        headers = {
            "Content-Type": "application/json",
            "Authorization": "Bearer secret-key",
            "x-api-key": "secret-key",
            "x-goog-api-key": "secret-key",
            "User-Agent": "fake-model-test/1.0",
        }
        conn.request(
            method, path, body=json.dumps(body) if body is not None else None, headers=headers
        )
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def sse(data: bytes) -> list[Event]:
    events: list[Event] = []
    for block in data.decode().split("\n\n"):
        if not block.strip():
            continue
        name = None
        payload = []
        for line in block.split("\n"):
            if line.startswith("event: "):
                name = line.removeprefix("event: ")
            elif line.startswith("data: "):
                payload.append(line.removeprefix("data: "))
        text = "\n".join(payload)
        events.append((name, text if text == "[DONE]" else json.loads(text)))
    return events


SHELL_PARAMS = {
    "type": "object",
    "properties": {"command": {"type": "string"}, "description": {"type": "string"}},
    "required": ["command"],
}
WRITE_PARAMS = {
    "type": "object",
    "properties": {"file_path": {"type": "string"}, "content": {"type": "string"}},
    "required": ["file_path", "content"],
}


class Api:
    """How one wire API is asked and how its stream is read back."""

    name: str
    path: str
    shell_tool: str

    def body(self, prompt: str, *, tools: bool = True) -> dict[str, Any]:
        raise NotImplementedError

    def with_tool_result(self, body: dict[str, Any], call: tuple[str, Any], output: str) -> None:
        raise NotImplementedError

    def text(self, events: list[Event]) -> str:
        raise NotImplementedError

    def tool_call(self, events: list[Event]) -> tuple[str, Any]:
        raise NotImplementedError

    def assert_complete(self, events: list[Event]) -> None:
        raise NotImplementedError


class Responses(Api):
    name, path, shell_tool = "responses", "/v1/responses", "exec_command"

    def body(self, prompt: str, *, tools: bool = True) -> dict[str, Any]:
        def user(text: str) -> dict[str, Any]:
            return {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": text}],
            }

        return {
            "model": "fake-model",
            "stream": True,
            "input": [
                {
                    "type": "message",
                    "role": "developer",
                    "content": [{"type": "input_text", "text": "be nice"}],
                },
                user("# AGENTS.md instructions for /work\n\n<INSTRUCTIONS>be brief</INSTRUCTIONS>"),
                user("<environment_context>\n  <cwd>/work/project</cwd>\n</environment_context>"),
                user(prompt),
            ],
            "tools": [
                {
                    "type": "function",
                    "name": "exec_command",
                    "parameters": {
                        "type": "object",
                        "properties": {"cmd": {"type": "string"}, "workdir": {"type": "string"}},
                        "required": ["cmd"],
                    },
                },
                {"type": "custom", "name": "apply_patch", "format": {"type": "grammar"}},
            ]
            if tools
            else [],
        }

    def with_tool_result(self, body: dict[str, Any], call: tuple[str, Any], output: str) -> None:
        name, args = call
        body["input"] += [
            {"type": "function_call", "name": name, "arguments": json.dumps(args), "call_id": "c1"},
            {"type": "function_call_output", "call_id": "c1", "output": output},
        ]

    def text(self, events: list[Event]) -> str:
        return "".join(d["delta"] for n, d in events if n == "response.output_text.delta")

    def tool_call(self, events: list[Event]) -> tuple[str, Any]:
        item = next(d["item"] for n, d in events if n == "response.output_item.done")
        if item["type"] == "custom_tool_call":
            return item["name"], item["input"]
        assert item["type"] == "function_call"
        return item["name"], json.loads(item["arguments"])

    def assert_complete(self, events: list[Event]) -> None:
        names = [n for n, _ in events]
        assert names[:2] == ["response.created", "response.in_progress"]
        assert names[-1] == "response.completed"
        assert all(d["type"] == n for n, d in events)
        assert [d["sequence_number"] for _, d in events] == list(range(len(events)))
        final = events[-1][1]["response"]
        assert final["status"] == "completed"
        assert final["output"]
        assert {"input_tokens", "output_tokens", "total_tokens"} <= set(final["usage"])
        assert final["usage"]["input_tokens_details"] == {"cached_tokens": 0}


class Chat(Api):
    name, path, shell_tool = "chat", "/v1/chat/completions", "run_shell_command"

    def body(self, prompt: str, *, tools: bool = True) -> dict[str, Any]:
        return {
            "model": "fake-model",
            "stream": True,
            "stream_options": {"include_usage": True},
            "messages": [
                {"role": "system", "content": "I'm currently working in the directory: /work/q"},
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "<session_context>x</session_context>"},
                        {"type": "text", "text": prompt},
                    ],
                },
            ],
            "tools": [
                {
                    "type": "function",
                    "function": {"name": "run_shell_command", "parameters": SHELL_PARAMS},
                },
                {
                    "type": "function",
                    "function": {"name": "write_file", "parameters": WRITE_PARAMS},
                },
            ]
            if tools
            else [],
        }

    def with_tool_result(self, body: dict[str, Any], call: tuple[str, Any], output: str) -> None:
        name, args = call
        function = {"name": name, "arguments": json.dumps(args)}
        body["messages"] += [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c1", "type": "function", "function": function}],
            },
            {"role": "tool", "tool_call_id": "c1", "content": output},
        ]

    def text(self, events: list[Event]) -> str:
        return "".join(
            d["choices"][0]["delta"].get("content") or "" for _, d in events if isinstance(d, dict)
        )

    def tool_call(self, events: list[Event]) -> tuple[str, Any]:
        calls = [
            c
            for _, d in events
            if isinstance(d, dict)
            for c in d["choices"][0]["delta"].get("tool_calls", [])
        ]
        name = calls[0]["function"]["name"]
        return name, json.loads("".join(c["function"]["arguments"] for c in calls))

    def assert_complete(self, events: list[Event]) -> None:
        assert all(n is None for n, _ in events)  # Chat Completions SSE has no event names
        assert events[-1] == (None, "[DONE]")
        last = events[-2][1]
        assert last["object"] == "chat.completion.chunk"
        assert last["choices"][0]["finish_reason"] in ("stop", "tool_calls")
        assert {"prompt_tokens", "completion_tokens", "total_tokens"} <= set(last["usage"])
        first = events[0][1]["choices"][0]["delta"]
        assert first["role"] == "assistant"


class Anthropic(Api):
    name, path, shell_tool = "anthropic", "/v1/messages?beta=true", "Bash"

    def body(self, prompt: str, *, tools: bool = True) -> dict[str, Any]:
        return {
            "model": "claude-sonnet-4-5",
            "stream": True,
            "system": [{"type": "text", "text": "Primary working directory: /work/claude"}],
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "<system-reminder>\nskills\n</system-reminder>"},
                        {"type": "text", "text": prompt},
                        {"type": "text", "text": "<system-reminder>todo list</system-reminder>"},
                    ],
                }
            ],
            "tools": [
                {"name": "Bash", "input_schema": SHELL_PARAMS},
                {"name": "Write", "input_schema": WRITE_PARAMS},
            ]
            if tools
            else [],
        }

    def with_tool_result(self, body: dict[str, Any], call: tuple[str, Any], output: str) -> None:
        name, args = call
        body["messages"] += [
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": name, "input": args}],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": [{"type": "text", "text": output}],
                    },
                    {"type": "text", "text": "<system-reminder>still here</system-reminder>"},
                ],
            },
        ]

    def text(self, events: list[Event]) -> str:
        return "".join(
            d["delta"]["text"]
            for n, d in events
            if n == "content_block_delta" and d["delta"]["type"] == "text_delta"
        )

    def tool_call(self, events: list[Event]) -> tuple[str, Any]:
        start = next(d for n, d in events if n == "content_block_start")
        assert start["content_block"]["type"] == "tool_use"
        partial = "".join(
            d["delta"]["partial_json"] for n, d in events if n == "content_block_delta"
        )
        return start["content_block"]["name"], json.loads(partial)

    def assert_complete(self, events: list[Event]) -> None:
        names = [n for n, _ in events]
        assert names[0] == "message_start"
        assert names[-2:] == ["message_delta", "message_stop"]
        assert all(d["type"] == n for n, d in events)
        assert events[-2][1]["delta"]["stop_reason"] in ("end_turn", "tool_use")
        assert set(events[0][1]["message"]["usage"]) >= {"input_tokens", "output_tokens"}


GEMINI_CONTEXT = (
    "<session_context>\nThe project's temporary directory is: /tmp/gem\n"
    "- **Workspace Directories:**\n  - /work/gem\n</session_context>"
)


class Gemini(Api):
    name, shell_tool = "gemini", "run_shell_command"
    path = "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"

    def body(self, prompt: str, *, tools: bool = True) -> dict[str, Any]:
        declarations = [
            {"name": "run_shell_command", "parametersJsonSchema": SHELL_PARAMS},
            {"name": "write_file", "parametersJsonSchema": WRITE_PARAMS},
        ]
        return {
            "contents": [
                {
                    "role": "user",
                    "parts": [
                        {"text": GEMINI_CONTEXT},
                        {"text": prompt},
                    ],
                }
            ],
            "tools": [{"functionDeclarations": declarations}] if tools else [],
            "generationConfig": {"temperature": 0},
        }

    def with_tool_result(self, body: dict[str, Any], call: tuple[str, Any], output: str) -> None:
        name, args = call
        body["contents"] += [
            {"role": "model", "parts": [{"functionCall": {"name": name, "args": args}}]},
            {
                "role": "user",
                "parts": [{"functionResponse": {"name": name, "response": {"output": output}}}],
            },
        ]

    def text(self, events: list[Event]) -> str:
        return "".join(
            p.get("text", "") for _, d in events for p in d["candidates"][0]["content"]["parts"]
        )

    def tool_call(self, events: list[Event]) -> tuple[str, Any]:
        call = next(
            p["functionCall"]
            for _, d in events
            for p in d["candidates"][0]["content"]["parts"]
            if "functionCall" in p
        )
        return call["name"], call["args"]

    def assert_complete(self, events: list[Event]) -> None:
        assert all(n is None for n, _ in events)  # no event names, no [DONE]: the stream ends
        *body, last = [d for _, d in events]
        assert last["candidates"][0].get("finishReason") == "STOP"
        assert {"promptTokenCount", "candidatesTokenCount", "totalTokenCount"} <= set(
            last["usageMetadata"]
        )
        assert all("finishReason" not in d["candidates"][0] for d in body)


APIS = [Responses(), Chat(), Anthropic(), Gemini()]
API_IDS = [api.name for api in APIS]


@pytest.fixture
def model() -> Any:
    with FakeModel(slow_deltas=6, slow_delay=0.02) as server:
        yield server
        assert server.errors == []


# -- stream shapes -------------------------------------------------------------------------------


@pytest.mark.parametrize("api", APIS, ids=API_IDS)
def test_a_text_answer_echoes_the_prompt_and_ends_with_the_final_event(
    model: FakeModel, api: Api
) -> None:
    status, headers, data = post(model, api.path, api.body("hello there, fake"))
    assert status == 200
    assert headers["content-type"] == "text/event-stream"
    assert headers["transfer-encoding"] == "chunked"
    events = sse(data)
    api.assert_complete(events)
    assert api.text(events) == "ECHO: hello there, fake"


@pytest.mark.parametrize("api", APIS, ids=API_IDS)
def test_the_prompt_is_found_behind_every_context_block(model: FakeModel, api: Api) -> None:
    post(model, api.path, api.body("the user's own words"))
    (request,) = model.requests
    assert request.prompt == "the user's own words"
    assert request.scenario == "echo"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("<environment_context>\n<cwd>/x</cwd>\n</environment_context>", ""),
        ("# AGENTS.md instructions for /x\n\n<INSTRUCTIONS>\nhi\n</INSTRUCTIONS>", ""),
        ("<permissions instructions>\nsandbox\n</permissions instructions>", ""),
        ("<system-reminder>\nnote\n</system-reminder>\nreal words", "real words"),
        ("<session_context>ctx</session_context>", ""),
        ("SLOW first\n[Request interrupted by user]\nafter cancel", "after cancel"),
        ("plain words", "plain words"),
    ],
)
def test_strip_context(text: str, words: str) -> None:
    assert strip_context(text) == words


def test_a_message_with_only_tool_results_is_not_a_new_prompt() -> None:
    api = Anthropic()
    body = api.body("SHELL: ls")
    api.with_tool_result(body, ("Bash", {"command": "ls"}), "a.txt")
    conversation = extract("anthropic", body)
    assert conversation.prompts == ["SHELL: ls"]
    assert conversation.tool_result is not None
    assert conversation.tool_result.name == "Bash"
    assert conversation.tool_result.output == "a.txt"
    assert conversation.cwd == "/work/claude"


# -- scenarios -----------------------------------------------------------------------------------


@pytest.mark.parametrize("api", APIS, ids=API_IDS)
def test_shell_scenario_calls_the_offered_shell_tool_then_quotes_its_output(
    model: FakeModel, api: Api
) -> None:
    body = api.body("SHELL: echo hi > out.txt")
    status, _, data = post(model, api.path, body)
    assert status == 200
    events = sse(data)
    api.assert_complete(events)
    name, args = api.tool_call(events)
    assert name == api.shell_tool
    if api.shell_tool == "exec_command":
        assert args == {"cmd": "echo hi > out.txt"}
    else:
        assert args == {"command": "echo hi > out.txt", "description": "Run echo hi > out.txt"}

    api.with_tool_result(body, (name, args), "hi from the shell")
    status, _, data = post(model, api.path, body)
    events = sse(data)
    api.assert_complete(events)
    assert api.text(events) == f"TOOL {name} RESULT: hi from the shell"
    assert [r.scenario for r in model.requests] == ["shell", "tool_result"]


@pytest.mark.parametrize(
    ("tools", "expected"),
    [
        (
            [
                (
                    "bash",
                    {"command": {}, "description": {}, "timeout": {"type": "number"}},
                    ["command", "description"],
                )
            ],
            ("bash", {"command": "ls", "description": "Run ls"}),
        ),
        (
            [
                (
                    "mcp__acp__Bash",
                    {"command": {}, "timeout": {"type": "integer"}},
                    ["command", "timeout"],
                )
            ],
            ("mcp__acp__Bash", {"command": "ls", "timeout": 60000}),
        ),
        (
            [("shell", {"command": {"type": "array"}}, ["command"])],
            ("shell", {"command": ["bash", "-lc", "ls"]}),
        ),
    ],
    ids=["opencode-bash", "claude-code-acp-mcp-bash", "array-command"],
)
def test_shell_arguments_follow_the_offered_schema(
    model: FakeModel, tools: list[tuple[str, dict[str, Any], list[str]]], expected: tuple[str, Any]
) -> None:
    api = Chat()
    body = api.body("SHELL: ls")
    body["tools"] = [
        {
            "type": "function",
            "function": {
                "name": name,
                "parameters": {"type": "object", "properties": props, "required": required},
            },
        }
        for name, props, required in tools
    ]
    _, _, data = post(model, api.path, body)
    assert api.tool_call(sse(data)) == expected


@pytest.mark.parametrize("api", APIS, ids=API_IDS)
def test_write_scenario_uses_the_write_tool_with_an_absolute_path(
    model: FakeModel, api: Api
) -> None:
    _, _, data = post(model, api.path, api.body("WRITE: notes.txt some words"))
    name, args = api.tool_call(sse(data))
    if api.name == "responses":
        assert name == "apply_patch"  # Codex: a freeform custom tool, relative path
        assert args == "*** Begin Patch\n*** Add File: notes.txt\n+some words\n*** End Patch\n"
        return
    cwd = {"chat": "/work/q", "anthropic": "/work/claude", "gemini": "/work/gem"}[api.name]
    assert name in ("write_file", "Write")
    assert args == {"file_path": f"{cwd}/notes.txt", "content": "some words"}


def test_read_scenario_falls_back_to_the_shell_when_no_read_tool_is_offered(
    model: FakeModel,
) -> None:
    api = Responses()
    _, _, data = post(model, api.path, api.body("READ: notes.txt"))
    assert api.tool_call(sse(data)) == ("exec_command", {"cmd": "cat notes.txt"})


def test_history_lists_every_prompt_of_the_conversation(model: FakeModel) -> None:
    api = Chat()
    body = api.body("first words")
    body["messages"] += [
        {"role": "assistant", "content": "ECHO: first words"},
        {"role": "user", "content": "HISTORY please"},
    ]
    _, _, data = post(model, api.path, body)
    assert api.text(sse(data)) == "HISTORY: first words | HISTORY please"


@pytest.mark.parametrize("api", APIS, ids=API_IDS)
def test_slow_streams_many_deltas_with_pauses(model: FakeModel, api: Api) -> None:
    began = time.monotonic()
    _, _, data = post(model, api.path, api.body("SLOW please"))
    took = time.monotonic() - began
    events = sse(data)
    api.assert_complete(events)
    assert api.text(events) == "".join(f"slow-{i:02d} " for i in range(6))
    assert took >= 5 * 0.02


@pytest.mark.parametrize("api", APIS, ids=API_IDS)
@pytest.mark.parametrize(("keyword", "status"), [("FAIL400", 400), ("FAIL500", 500)])
def test_failures_answer_the_status_with_the_api_error_body(
    model: FakeModel, api: Api, keyword: str, status: int
) -> None:
    code, headers, data = post(model, api.path, api.body(keyword))
    assert code == status
    assert headers["content-type"] == "application/json"
    error = json.loads(data)["error"]
    if api.name == "gemini":
        assert error["code"] == status
        assert error["status"] == ("INVALID_ARGUMENT" if status == 400 else "INTERNAL")
    elif api.name == "anthropic":
        assert error["type"] == ("invalid_request_error" if status == 400 else "api_error")
    else:
        assert error["type"] == ("invalid_request_error" if status == 400 else "server_error")
    assert error["message"] == (
        "fake invalid request" if status == 400 else "fake internal server error"
    )


@pytest.mark.parametrize("api", APIS, ids=API_IDS)
def test_cutstream_closes_the_connection_before_the_final_event(model: FakeModel, api: Api) -> None:
    with pytest.raises(http.client.IncompleteRead) as info:
        post(model, api.path, api.body("CUTSTREAM"))
    events = sse(info.value.partial)
    assert events
    assert api.text(events).startswith("This answer is cut short")
    with pytest.raises(AssertionError):
        api.assert_complete(events)


@pytest.mark.parametrize("api", APIS, ids=API_IDS)
def test_side_calls_without_tools_never_fail_or_call_tools(model: FakeModel, api: Api) -> None:
    for prompt in ("FAIL400", "SHELL: rm -rf /", "SLOW"):
        status, _, data = post(model, api.path, api.body(prompt, tools=False))
        assert status == 200
        assert api.text(sse(data)) == f"ECHO: {prompt}"


def test_qwen_post_turn_calls_get_harmless_answers(model: FakeModel) -> None:
    api = Chat()
    _, _, data = post(model, api.path, api.body("[SUGGESTION MODE: Suggest what the user types]"))
    assert api.text(sse(data)) == "run the tests"
    _, _, data = post(model, api.path, api.body("Managed memory has TWO directories."))
    assert api.text(sse(data)) == "Nothing to remember."


def test_json_mode_side_calls_get_a_json_object(model: FakeModel) -> None:
    chat = Chat()
    body = chat.body("Who speaks next?")
    body["response_format"] = {"type": "json_object"}
    _, _, data = post(model, chat.path, body)
    assert json.loads(chat.text(sse(data)))["next_speaker"] == "user"

    gemini = Gemini()
    body = gemini.body("Who speaks next?")
    schema = {
        "type": "object",
        "properties": {
            "reasoning": {"type": "string"},
            "next_speaker": {"type": "string", "enum": ["model", "user"]},
            "done": {"type": "boolean"},
        },
    }
    body["generationConfig"] = {
        "responseMimeType": "application/json",
        "responseJsonSchema": schema,
    }
    _, _, data = post(model, gemini.path, body)
    assert json.loads(gemini.text(sse(data))) == {
        "reasoning": "fake",
        "next_speaker": "user",
        "done": False,
    }


def test_gemini_generate_content_and_count_tokens(model: FakeModel) -> None:
    api = Gemini()
    status, _, data = post(model, "/v1beta/models/gemini-2.5-pro:generateContent", api.body("hi"))
    assert status == 200
    answer = json.loads(data)
    assert answer["candidates"][0]["content"]["parts"] == [{"text": "ECHO: hi"}]
    assert answer["candidates"][0]["finishReason"] == "STOP"
    status, _, data = post(model, "/v1beta/models/gemini-2.5-pro:countTokens", api.body("hi"))
    assert status == 200
    assert json.loads(data)["totalTokens"] > 0


def test_anthropic_count_tokens_models_and_unknown_paths(model: FakeModel) -> None:
    status, _, data = post(model, "/v1/messages/count_tokens?beta=true", Anthropic().body("hi"))
    assert status == 200
    assert json.loads(data)["input_tokens"] > 0
    status, _, data = post(model, "/v1/models", None, method="GET")
    assert status == 200
    assert json.loads(data)["data"][0]["id"] == "fake-model"
    status, _, data = post(model, "/v2/whatever", {})
    assert status == 404
    assert [r.api for r in model.requests] == ["anthropic_count", "models", "unknown"]


def test_every_request_is_recorded_without_credentials(model: FakeModel) -> None:
    api = Anthropic()
    post(model, api.path, api.body("first"))
    post(model, api.path, api.body("FAIL400"))
    first, second = model.requests
    assert (first.method, first.path, first.query) == ("POST", "/v1/messages", "beta=true")
    assert first.api == "anthropic"
    assert first.body["model"] == "claude-sonnet-4-5"
    assert first.headers["user-agent"] == "fake-model-test/1.0"
    assert not {"authorization", "x-api-key", "x-goog-api-key"} & set(first.headers)
    assert "secret-key" not in json.dumps([r.as_json() for r in model.requests])
    assert (first.status, second.status) == (200, 400)
    assert (first.scenario, second.scenario) == ("echo", "fail400")
    model.clear()
    assert model.requests == []


def test_keep_alive_connections_serve_several_requests(model: FakeModel) -> None:
    api = Chat()
    conn = http.client.HTTPConnection("127.0.0.1", model.port, timeout=10)
    try:
        for word in ("one", "two", "three"):
            conn.request("POST", api.path, body=json.dumps(api.body(word)))
            response = conn.getresponse()
            assert api.text(sse(response.read())) == f"ECHO: {word}"
    finally:
        conn.close()


def test_close_ends_a_slow_stream_in_progress_and_leaves_no_thread() -> None:
    before = threading.active_count()
    server = FakeModel(slow_deltas=1000, slow_delay=0.05).start()
    outcome: list[BaseException] = []

    def client() -> None:
        try:
            post(server, Chat().path, Chat().body("SLOW forever"))
        except (http.client.HTTPException, OSError) as error:
            outcome.append(error)

    thread = threading.Thread(target=client)
    thread.start()
    deadline = time.monotonic() + 5
    while not server.requests and time.monotonic() < deadline:
        time.sleep(0.01)
    began = time.monotonic()
    server.close()
    thread.join(5)
    assert time.monotonic() - began < 2
    assert outcome  # the stream was cut, not completed
    assert threading.active_count() == before


def test_the_cli_serves_until_sigterm(tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "tools" / "fake_model.py"), "--port", "0", "--log", str(log)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        host, port = url.removeprefix("http://").split(":")
        assert host == "127.0.0.1"
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        try:
            conn.request(
                "POST", "/v1/chat/completions", body=json.dumps(Chat().body("via the cli"))
            )
            assert Chat().text(sse(conn.getresponse().read())) == "ECHO: via the cli"
        finally:
            conn.close()
        process.send_signal(signal.SIGTERM)
        assert process.wait(10) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
    (line,) = log.read_text().splitlines()
    assert json.loads(line)["prompt"] == "via the cli"


# -- every real agent against the fake -----------------------------------------------------------

AGENTS = ["codex", "codex-acp", "claude-agent-acp", "gemini", "qwen", "opencode"]
API_OF = {
    "codex": "responses",
    "codex-acp": "responses",
    "claude-agent-acp": "anthropic",
    "gemini": "gemini",
    "qwen": "chat",
    "opencode": "chat",
}


async def converse(
    connection: Connection, acp: bool, cwd: Path, prompt: str, done: trio.Event
) -> None:
    """One text turn with raw JSON-RPC: handshake, a session or thread, a prompt or turn."""
    client = {"name": "robota-test", "title": "robota test", "version": "0.0.0"}
    if acp:
        capabilities = {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False}
        init = {"protocolVersion": 1, "clientCapabilities": capabilities, "clientInfo": client}
        await connection.request("initialize", init, timeout=20)
        new = {"cwd": str(cwd), "mcpServers": []}
        session = await connection.request("session/new", new, timeout=20)
        text = [{"type": "text", "text": prompt}]
        turn = {"sessionId": session["sessionId"], "prompt": text}
        result = await connection.request("session/prompt", turn, timeout=20)
        assert result["stopReason"] == "end_turn"
    else:
        init = {"clientInfo": client, "capabilities": None}
        await connection.request("initialize", init, timeout=20)
        await connection.notify("initialized")
        thread = await connection.request("thread/start", {"cwd": str(cwd)}, timeout=20)
        items = [{"type": "text", "text": prompt, "text_elements": []}]
        start = {"threadId": thread["thread"]["id"], "input": items}
        await connection.request("turn/start", start, timeout=20)
        with trio.fail_after(20):
            await done.wait()


async def one_text_turn(name: str, root: Path, model_url: str, prompt: str) -> str:
    """Start the agent, run one text turn, shut it down; the answer text it streamed."""
    setup = isolated(name, root, model_url)
    acp = setup.kind == "acp"
    chunks: list[str] = []
    done = trio.Event()

    def on_notification(method: str, params: Any) -> None:
        if method == "item/agentMessage/delta":
            chunks.append(params["delta"])
        elif method == "turn/completed":
            done.set()
        elif method == "session/update":
            update = params["update"]
            if update.get("sessionUpdate") == "agent_message_chunk":
                chunks.append(update["content"].get("text", ""))

    command = [setup.command, *setup.args]
    agent = await AgentProcess.start(name, command, env=setup.env, cwd=setup.cwd)
    try:
        assert agent.process.stdin is not None and agent.process.stdout is not None
        connection = Connection(
            agent.process.stdin,
            agent.process.stdout,
            name=name,
            jsonrpc_field=acp,
            on_notification=on_notification,
        )
        async with trio.open_nursery() as nursery:
            nursery.start_soon(agent.drain_stderr)
            await nursery.start(connection.run)
            try:
                await converse(connection, acp, setup.cwd, prompt, done)
            finally:
                await agent.shutdown()
                nursery.cancel_scope.cancel()
    finally:
        if agent.process.returncode is None:
            await agent.shutdown()
    return "".join(chunks)


@pytest.mark.parametrize("name", AGENTS)
async def test_real_agent_text_turn_reaches_the_fake_and_gets_the_echo(
    name: str, tmp_path: Path
) -> None:
    with FakeModel() as model:
        prompt = f"smoke test for {name}"
        with trio.fail_after(60):
            text = await one_text_turn(name, tmp_path, model.url, prompt)
        assert f"ECHO: {prompt}" in text
        turns = [r for r in model.model_requests() if r.prompt == prompt]
        assert turns, [r.as_json() for r in model.requests]
        assert {r.api for r in turns} == {API_OF[name]}
        assert all(r.status == 200 for r in model.requests)
        assert model.errors == []
