"""robota.mcp: ``robota mcp serve``, robota's agents as tools of any MCP client (Claude
Desktop, Cursor, Zed, VS Code, Codex, Claude Code), on the official ``mcp`` SDK.

Layering, bottom up: ``_tools`` (pure: the tools' names and schemas, argument validation, a
run's result, the cut of long results), ``_setup`` (what the command hands over, and the
backend's face), ``_follow`` (pure: which of a route's notices are a run's turn, the progress
line each says, the approvals it reports; both backends feed it), ``_http`` (streamable
HTTP's bearer token and loopback rule), ``_engine_backend`` (the tools on an engine of this
process's own) and ``_host_backend`` (through the profile's running host, as ``robota task``
drives it, its notices streamed by ``task.run``), ``_screen`` (pure: which of a stdio client's
lines reach the SDK, and the JSON-RPC error that answers the others), ``_server`` (the SDK's
server over stdio or HTTP, one cleanup for every way it ends).

It imports ``robota.core`` facades and the SDK, never the CLI: the command hands it the
profile, the trust decision and how an engine is made (``ServeSetup``). The facade is lazy
(PEP 562): ``robota --help`` loads none of it, and the SDK and hypercorn load only when
``robota mcp serve`` runs.
"""

import typing

from robota.core import lazy_attributes as _lazy_attributes

if typing.TYPE_CHECKING:
    from ._engine_backend import EngineBackend
    from ._errors import McpError
    from ._follow import Line, TurnFollow, event_line
    from ._host_backend import HostBackend, host_runs
    from ._http import BadTokenFile, auth_refusal, loopback, write_token_file
    from ._screen import INVALID_REQUEST, PARSE_ERROR, screen_line
    from ._server import EXIT_FAILED, EXIT_STOPPED, HttpOptions, Stdio, serve, take_stdio
    from ._setup import Backend, RunOutcome, ServeSetup, ToolRefused
    from ._tools import (
        MAX_RESULT_CHARS,
        TOOLS,
        BadArgument,
        ToolSpec,
        agents_json,
        cut,
        fitted,
        folder_refusal,
        parse_call,
        run_result,
        turn_status,
    )

__all__ = [
    "McpError",
    # the command's side
    "ServeSetup",
    "serve",
    "take_stdio",
    "Stdio",
    "HttpOptions",
    "EXIT_STOPPED",
    "EXIT_FAILED",
    # backends
    "Backend",
    "EngineBackend",
    "HostBackend",
    "host_runs",
    "ToolRefused",
    "RunOutcome",
    # a run's turn as its client sees it (pure)
    "TurnFollow",
    "Line",
    "event_line",
    # streamable HTTP's guard
    "BadTokenFile",
    "auth_refusal",
    "loopback",
    "write_token_file",
    # a stdio client's lines (pure)
    "screen_line",
    "PARSE_ERROR",
    "INVALID_REQUEST",
    # the tools (pure)
    "TOOLS",
    "ToolSpec",
    "MAX_RESULT_CHARS",
    "BadArgument",
    "agents_json",
    "cut",
    "fitted",
    "folder_refusal",
    "parse_call",
    "run_result",
    "turn_status",
]

_HOMES = {
    "McpError": "._errors",
    "EngineBackend": "._engine_backend",
    "HostBackend": "._host_backend",
    "Line": "._follow",
    "TurnFollow": "._follow",
    "event_line": "._follow",
    "host_runs": "._host_backend",
    "BadTokenFile": "._http",
    "auth_refusal": "._http",
    "loopback": "._http",
    "write_token_file": "._http",
    "screen_line": "._screen",
    "PARSE_ERROR": "._screen",
    "INVALID_REQUEST": "._screen",
    "EXIT_FAILED": "._server",
    "EXIT_STOPPED": "._server",
    "HttpOptions": "._server",
    "Stdio": "._server",
    "serve": "._server",
    "take_stdio": "._server",
    "Backend": "._setup",
    "ToolRefused": "._setup",
    "RunOutcome": "._setup",
    "ServeSetup": "._setup",
    "MAX_RESULT_CHARS": "._tools",
    "TOOLS": "._tools",
    "BadArgument": "._tools",
    "ToolSpec": "._tools",
    "agents_json": "._tools",
    "cut": "._tools",
    "fitted": "._tools",
    "folder_refusal": "._tools",
    "parse_call": "._tools",
    "run_result": "._tools",
    "turn_status": "._tools",
}
"""Where each lazily loaded name lives (the same as the imports for type checkers above)."""

__getattr__, __dir__ = _lazy_attributes(__name__, _HOMES)
