"""A minimal MCP server over stdio, on the official SDK: one tool, ``probe_echo``. Configured
as an agent's MCP server, its tool shows among the tools the agent offers the fake model
(``TOOLNAMES``). Run: ``python mcp_probe_server.py``."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

TOOL = "probe_echo"


async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
    schema = {"type": "object", "properties": {"text": {"type": "string"}}}
    return types.ListToolsResult(
        tools=[types.Tool(name=TOOL, description="Echo the text back.", input_schema=schema)]
    )


async def call_tool(_ctx: Any, params: Any) -> types.CallToolResult:
    text = str((params.arguments or {}).get("text", ""))
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"probe: {text}")])


async def main() -> None:
    server = Server("probe", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
