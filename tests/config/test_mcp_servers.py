"""``mcpServers`` in config.yaml, under an agent and in a trusted project's file: what a valid
table becomes, what every mistake says (file, key, found, expected; secrets never quoted),
and each protocol's shape of it (``robota.runtimes._mcp_servers``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from robota.core import ConfigError, McpServer
from robota.core.config import (
    Config,
    apply_project,
    merged_servers,
    parse_config,
    parse_project_config,
    resolve_profile,
)
from robota.runtimes._mcp_servers import acp_mcp_servers, app_server_mcp_config

HOME = Path("/profiles/p")
FILE = HOME / "config.yaml"
PROJECT = Path("/w/.robota/config.yaml")
AGENTS = {"mine": {"kind": "acp", "command": "my-agent"}}


def parse(
    servers: object, *, agent_servers: object = None, env: dict[str, str] | None = None
) -> Config:
    agents: dict[str, Any] = {"mine": dict(AGENTS["mine"])}
    if agent_servers is not None:
        agents["mine"]["mcpServers"] = agent_servers
    data: dict[str, Any] = {"agents": agents, "defaults": {"agent": "mine"}}
    if servers is not None:
        data["mcpServers"] = servers
    return parse_config(
        json.dumps(data),
        file=FILE,
        environ=env or {},
        profile=resolve_profile({"ROBOTA_HOME": str(HOME)}),
        start_dir=Path("/work"),
    )


def test_stdio_and_url_servers_in_the_shape_mcp_clients_use() -> None:
    config = parse(
        {
            "files": {
                "command": "npx",
                "args": ["-y", "server-filesystem", "/srv"],
                "env": {"DOCS_TOKEN": "${DOCS_TOKEN}", "LEVEL": 3},
            },
            "search": {
                "url": "https://mcp.example.com/mcp",
                "headers": {"Authorization": "Bearer ${SEARCH_TOKEN}"},
            },
            "legacy": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
        },
        agent_servers={"files": {"command": "mine-files"}, "extra": {"command": "x"}},
        env={"DOCS_TOKEN": "docs-secret-value-123", "SEARCH_TOKEN": "search-secret-value-456"},
    )
    files, search, legacy = config.mcp_servers.values()
    assert (files.transport, files.command, files.args) == (
        "stdio",
        "npx",
        ("-y", "server-filesystem", "/srv"),
    )
    assert dict(files.env) == {"DOCS_TOKEN": "docs-secret-value-123", "LEVEL": "3"}
    assert (search.transport, search.url) == ("http", "https://mcp.example.com/mcp")
    assert dict(search.headers) == {"Authorization": "Bearer search-secret-value-456"}
    assert (legacy.transport, legacy.url) == ("sse", "http://127.0.0.1:9/sse")
    # Secrets are masked in logs, and never in a repr (a listing, a logged object).
    assert {"docs-secret-value-123", "Bearer search-secret-value-456"} <= config.secrets
    assert "secret-value" not in repr(config.mcp_servers) + repr(config.agents)
    # An agent's own table is laid over the top-level one, by name.
    mine = config.agents["mine"].mcp_servers
    served = merged_servers(config.mcp_servers, mine)
    assert [(s.name, s.command) for s in served] == [
        ("files", "mine-files"),
        ("search", None),
        ("legacy", None),
        ("extra", "x"),
    ]


def test_no_table_is_no_server() -> None:
    config = parse(None)
    assert dict(config.mcp_servers) == {} and dict(config.agents["mine"].mcp_servers) == {}


@pytest.mark.parametrize(
    ("servers", "key", "found", "expected"),
    [
        (["a"], "mcpServers", "a list", "a mapping of server names"),
        ({"bad name": {"command": "x"}}, "mcpServers", "the server name", "[A-Za-z0-9]"),
        ({"s": None}, "mcpServers.s", "nothing", "a mapping"),
        ({"s": {}}, "mcpServers.s", "neither command nor url", "`command` (stdio)"),
        (
            {"s": {"command": "x", "url": "http://h"}},
            "mcpServers.s",
            "both command and url",
            "either",
        ),
        ({"s": {"command": "x", "cwd": "/"}}, "mcpServers.s", "unknown key 'cwd'", "command"),
        ({"s": {"command": "x", "args": "a b"}}, "mcpServers.s.args", "'a b'", "a list"),
        ({"s": {"command": "x", "args": [1]}}, "mcpServers.s.args[0]", "1", "text"),
        ({"s": {"command": "x", "env": ["A=1"]}}, "mcpServers.s.env", "a list", "NAME: text"),
        ({"s": {"command": "x", "env": {"1A": "v"}}}, "mcpServers.s.env", "the name '1A'", "NAME"),
        ({"s": {"command": "x", "headers": {"A": "b"}}}, "mcpServers.s.headers", "`headers`", "no"),
        ({"s": {"url": "http://h", "env": {"A": "b"}}}, "mcpServers.s.env", "`env`", "no `env`"),
        ({"s": {"url": "ftp://h/x"}}, "mcpServers.s.url", "ftp://h/x", "http:// or https://"),
        ({"s": {"url": "https://"}}, "mcpServers.s.url", "https://", "http:// or https://"),
        (
            {"s": {"type": "ws", "url": "http://h"}},
            "mcpServers.s.type",
            "'ws'",
            "stdio, http or sse",
        ),
        (
            {"s": {"type": "stdio", "url": "http://h"}},
            "mcpServers.s.type",
            "stdio with a url",
            "stdio with",
        ),
        (
            {"s": {"type": "http", "command": "x"}},
            "mcpServers.s.type",
            "http with a command",
            "with `url`",
        ),
    ],
)
def test_a_mistake_names_file_key_found_and_expected(
    servers: object, key: str, found: str, expected: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        parse(servers)
    error = raised.value
    assert (error.file, error.key) == (str(FILE), key), error
    assert found in error.found, error
    assert expected in error.expected, error


def test_an_agents_table_is_validated_under_its_key() -> None:
    with pytest.raises(ConfigError) as raised:
        parse(None, agent_servers={"s": {"command": 5}})
    assert raised.value.key == "agents.mine.mcpServers.s.command"


def test_a_secret_value_is_described_never_quoted() -> None:
    with pytest.raises(ConfigError) as raised:
        parse({"s": {"url": "https://h", "headers": {"Authorization": ["Bearer sk-live-1234"]}}})
    assert "sk-live-1234" not in str(raised.value)


@pytest.mark.parametrize(
    ("servers", "key", "found"),
    [
        ({"s": {"command": "${HOME}/bin/x"}}, "mcpServers.s.command", "a ${NAME} reference"),
        ({"s": {"command": "x", "args": ["${TOKEN}"]}}, "mcpServers.s.args[0]", "a ${NAME}"),
        (
            {"s": {"command": "x", "env": {"API_TOKEN": "t"}}},
            "mcpServers.s.env.API_TOKEN",
            "secret",
        ),
        ({"s": {"command": "x", "env": {"LEVEL": "${X}"}}}, "mcpServers.s.env.LEVEL", "a ${NAME}"),
        (
            {"s": {"url": "https://h", "headers": {"Authorization": "t"}}},
            "mcpServers.s.headers.Authorization",
            "secret",
        ),
    ],
)
def test_a_projects_servers_are_literal_and_hold_no_credentials(
    servers: object, key: str, found: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_project_config({"mcpServers": servers}, file=PROJECT, agents=AGENTS)
    assert (raised.value.file, raised.value.key) == (str(PROJECT), key), raised.value
    assert found in raised.value.found


def test_a_trusted_projects_servers_join_the_profiles() -> None:
    config = parse({"shared": {"command": "profile-one"}, "docs": {"command": "d"}})
    project = parse_project_config(
        {"mcpServers": {"shared": {"command": "project-one", "env": {"LEVEL": "2"}}}},
        file=PROJECT,
        agents=AGENTS,
    )
    applied = apply_project(config, project)
    assert [(s.name, s.command) for s in applied.mcp_servers.values()] == [
        ("shared", "project-one"),
        ("docs", "d"),
    ]
    assert apply_project(config, None).mcp_servers == config.mcp_servers


STDIO = McpServer("files", "stdio", command="npx", args=("-y", "fs"), env={"A": "1"})
HTTP = McpServer("search", "http", url="https://h/mcp", headers={"Authorization": "Bearer t"})
SSE = McpServer("legacy", "sse", url="http://127.0.0.1:9/sse")


@pytest.mark.parametrize(
    ("capabilities", "names"),
    [
        ({}, ["files"]),
        ({"mcpCapabilities": {"http": True}}, ["files", "search"]),
        ({"mcpCapabilities": {"http": True, "sse": True}}, ["files", "search", "legacy"]),
        ({"mcpCapabilities": {"sse": True}}, ["files", "legacy"]),
        ({"mcpCapabilities": "yes"}, ["files"]),
    ],
)
def test_acp_sessions_get_the_servers_their_agent_speaks(
    capabilities: dict[str, Any], names: list[str]
) -> None:
    shaped = acp_mcp_servers((STDIO, HTTP, SSE), capabilities)
    assert [s["name"] for s in shaped] == names
    assert shaped[0] == {
        "name": "files",
        "command": "npx",
        "args": ["-y", "fs"],
        "env": [{"name": "A", "value": "1"}],
    }
    if "search" in names:
        assert shaped[1] == {
            "type": "http",
            "name": "search",
            "url": "https://h/mcp",
            "headers": [{"name": "Authorization", "value": "Bearer t"}],
        }


def test_app_server_threads_get_config_overrides_and_no_sse() -> None:
    assert app_server_mcp_config((STDIO, HTTP, SSE)) == {
        "mcp_servers.files": {"command": "npx", "args": ["-y", "fs"], "env": {"A": "1"}},
        "mcp_servers.search": {
            "url": "https://h/mcp",
            "http_headers": {"Authorization": "Bearer t"},
        },
    }
    assert app_server_mcp_config(()) == {}
    bare = McpServer("bare", "stdio", command="x")
    assert app_server_mcp_config((bare,)) == {"mcp_servers.bare": {"command": "x", "args": []}}
