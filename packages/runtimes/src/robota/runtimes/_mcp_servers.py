"""The configured MCP servers (``robota.core.McpServer``) in each protocol's shape, as pure
functions.

ACP: ``session/new``, ``session/load`` and ``session/fork`` take ``mcpServers``: a stdio
server is ``{name, command, args, env: [{name, value}]}`` (every agent takes those), an HTTP
or SSE one ``{type, name, url, headers: [{name, value}]}``, offered only to an agent whose
``agentCapabilities.mcpCapabilities`` says it speaks that transport.

App Server: ``thread/start`` and ``thread/resume`` take ``config``, overrides of Codex's own
configuration by key path: each server is ``mcp_servers.<name>`` (``command``, ``args``,
``env``; or ``url`` and ``http_headers``), laid over the user's own servers of other names.
Codex speaks no SSE: such a server is left out (and logged, by name).

A Restricted session is offered none: the drivers pass ``()`` then.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from robota.core import McpServer

__all__ = ["acp_mcp_servers", "app_server_mcp_config"]

logger = logging.getLogger("robota.runtimes.agent")


def _pairs(values: Mapping[str, str]) -> list[dict[str, str]]:
    return [{"name": name, "value": value} for name, value in values.items()]


def acp_mcp_servers(
    servers: Iterable[McpServer], capabilities: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """``mcpServers`` for an ACP session; ``capabilities`` is the agent's
    ``agentCapabilities`` (``mcpCapabilities.http`` / ``.sse``)."""
    raw = capabilities.get("mcpCapabilities")
    speaks = raw if isinstance(raw, Mapping) else {}
    shaped: list[dict[str, Any]] = []
    for server in servers:
        if server.transport == "stdio":
            shaped.append(
                {
                    "name": server.name,
                    "command": server.command,
                    "args": list(server.args),
                    "env": _pairs(server.env),
                }
            )
        elif speaks.get(server.transport):
            shaped.append(
                {
                    "type": server.transport,
                    "name": server.name,
                    "url": server.url,
                    "headers": _pairs(server.headers),
                }
            )
        else:
            logger.info(
                "acp: the agent speaks no %s MCP: server %r left out", server.transport, server.name
            )
    return shaped


def app_server_mcp_config(servers: Iterable[McpServer]) -> dict[str, Any]:
    """The ``config`` overrides of a ``thread/start`` or ``thread/resume`` (``{}``: none)."""
    config: dict[str, Any] = {}
    for server in servers:
        if server.transport == "stdio":
            entry: dict[str, Any] = {"command": server.command, "args": list(server.args)}
            if server.env:
                entry["env"] = dict(server.env)
        elif server.transport == "http":
            entry = {"url": server.url}
            if server.headers:
                entry["http_headers"] = dict(server.headers)
        else:
            logger.info("app-server: Codex speaks no SSE MCP: server %r left out", server.name)
            continue
        config[f"mcp_servers.{server.name}"] = entry
    return config
