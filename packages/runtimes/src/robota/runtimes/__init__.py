"""robota.runtimes: drive agent processes over stdio (Codex App Server protocol and ACP).

Layering, bottom up:

1. ``_framing``    newline-delimited JSON-RPC, sans-IO: bytes to classified messages
2. ``_jsonrpc``    a connection on trio streams: request ids, timeouts, -32601 for unknown calls
3. ``_spawn``      an agent's argv and scrubbed environment (no trio: the prestart uses it)
   ``_process``    an agent process on trio: own process group, sure shutdown;
   ``_stderr_tail``  the agent's last stderr lines, cleaned and redacted, for failure reasons
4. ``_handshake``  each protocol's first exchange, as pure functions
5. ``_approvals``  pending approvals of a connection, resolved once, cancelled on exit
   ``_app_server_map``  App Server notifications to robota events, sans-IO
6. ``_app_server``  the App Server client: threads, turns, steering, approvals
7. ``_acp_map``, ``_acp_host``, ``_acp``  the same for ACP: updates to events, the files and
   terminals an agent may ask for, and the client
8. ``_drivers``   one face over both clients, for the process service; ``_app_server_driver``,
   ``_acp_driver``  each protocol's, loaded when its first process starts (``_agent``'s
   ``driver_factory``)
9. ``_agent_jobs``, ``_session_table``, ``_agent_process``, ``_agent``   an agent as a supervised
   subtree: the session table (on the loop, behind a mailbox) and the process (a trio service),
   started on first use
   ``_prestart``  an agent process spawned before the trio loop runs, adopted on first use
10. ``_plugins``   the ``app-server`` and ``acp`` runtime plugins (entry points), with what
    they declare to core: ``_error_codes`` (the App Server's codes in robota's error
    categories) and ``_known_agents`` (the agents ``robota init`` detects)

This package imports ``robota.core`` and nothing else of robota.

The facade is lazy (PEP 562): importing it loads only the plugins (``_plugins``, what the entry
points name), and each other name loads its module on first use. Loading a plugin must stay
cheap because ``prestart`` runs it before the rest of robota has loaded (``_prestart``).
"""

import typing

from robota.core import lazy_attributes as _lazy_attributes

from ._plugins import AcpRuntime, AppServerRuntime, acp, app_server

if typing.TYPE_CHECKING:
    from ._acp import AcpClient, AcpSession, ImagesUnsupported, SessionBusy, SteerUnsupported
    from ._agent import agent_host
    from ._agent_process import AgentExited
    from ._app_server import AppServerClient, SteerRejected, ThreadInfo
    from ._error_codes import APP_SERVER_ERROR_CODES
    from ._framing import LineDecoder, Malformed, Notification, Request, Response, encode
    from ._handshake import acp_version, app_server_version
    from ._jsonrpc import (
        Connection,
        ConnectionLost,
        MethodNotFound,
        RequestRefused,
        RpcError,
        RpcTimeout,
    )
    from ._known_agents import ACP_AGENTS, APP_SERVER_AGENTS, KNOWN_AGENTS
    from ._process import AgentProcess, ShutdownTimings, start_failure
    from ._spawn import agent_environment, is_reserved_name, scrubbed_names
    from ._stderr_tail import StderrTail, agent_secrets, clean_line, with_last_words

__all__ = [
    # framing
    "LineDecoder",
    "Malformed",
    "Notification",
    "Request",
    "Response",
    "encode",
    # connection
    "Connection",
    "ConnectionLost",
    "MethodNotFound",
    "RequestRefused",
    "RpcError",
    "RpcTimeout",
    # processes
    "AgentProcess",
    "ShutdownTimings",
    "agent_environment",
    "is_reserved_name",
    "scrubbed_names",
    "start_failure",
    # an agent's last words
    "StderrTail",
    "agent_secrets",
    "clean_line",
    "with_last_words",
    # agents as actors
    "AgentExited",
    "agent_host",
    # protocols
    "AcpClient",
    "AcpSession",
    "ImagesUnsupported",
    "SessionBusy",
    "SteerUnsupported",
    "AppServerClient",
    "SteerRejected",
    "ThreadInfo",
    "AcpRuntime",
    "AppServerRuntime",
    "acp",
    "acp_version",
    "app_server",
    "app_server_version",
    # what the plugins declare: their error codes, their agents
    "APP_SERVER_ERROR_CODES",
    "KNOWN_AGENTS",
    "APP_SERVER_AGENTS",
    "ACP_AGENTS",
]

_HOMES = {
    "APP_SERVER_ERROR_CODES": "._error_codes",
    "ACP_AGENTS": "._known_agents",
    "APP_SERVER_AGENTS": "._known_agents",
    "KNOWN_AGENTS": "._known_agents",
    "AcpClient": "._acp",
    "AcpSession": "._acp",
    "ImagesUnsupported": "._acp",
    "SessionBusy": "._acp",
    "SteerUnsupported": "._acp",
    "agent_host": "._agent",
    "AgentExited": "._agent_process",
    "AppServerClient": "._app_server",
    "SteerRejected": "._app_server",
    "ThreadInfo": "._app_server",
    "LineDecoder": "._framing",
    "Malformed": "._framing",
    "Notification": "._framing",
    "Request": "._framing",
    "Response": "._framing",
    "encode": "._framing",
    "acp_version": "._handshake",
    "app_server_version": "._handshake",
    "Connection": "._jsonrpc",
    "ConnectionLost": "._jsonrpc",
    "MethodNotFound": "._jsonrpc",
    "RequestRefused": "._jsonrpc",
    "RpcError": "._jsonrpc",
    "RpcTimeout": "._jsonrpc",
    "AgentProcess": "._process",
    "ShutdownTimings": "._process",
    "start_failure": "._process",
    "agent_environment": "._spawn",
    "is_reserved_name": "._spawn",
    "scrubbed_names": "._spawn",
    "StderrTail": "._stderr_tail",
    "agent_secrets": "._stderr_tail",
    "clean_line": "._stderr_tail",
    "with_last_words": "._stderr_tail",
}
"""Where each lazily loaded name lives (the same as the imports for type checkers above)."""


__getattr__, __dir__ = _lazy_attributes(__name__, _HOMES)
