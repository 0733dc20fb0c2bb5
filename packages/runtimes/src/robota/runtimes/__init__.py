"""robota.runtimes: drive agent processes over stdio (Codex App Server protocol and ACP).

Layering, bottom up:

1. ``_framing``    newline-delimited JSON-RPC, sans-IO: bytes to classified messages
2. ``_jsonrpc``    a connection on trio streams: request ids, timeouts, -32601 for unknown calls
3. ``_process``    spawning: scrubbed environment, own process group, sure shutdown
4. ``_handshake``  each protocol's first exchange, as pure functions
5. ``_approvals``  pending approvals of a connection, resolved once, cancelled on exit
   ``_app_server_map``  App Server notifications to robota events, sans-IO
6. ``_app_server``  the App Server client: threads, turns, steering, approvals
7. ``_acp_map``, ``_acp_host``, ``_acp``  the same for ACP: updates to events, the files and
   terminals an agent may ask for, and the client
8. ``_drivers``   one face over both clients, for the process service
9. ``_agent_jobs``, ``_session_table``, ``_agent_process``, ``_agent``   an agent as a supervised
   subtree: the session table (on the loop, behind a mailbox) and the process (a trio service),
   started on first use
   ``_prestart``  an agent process spawned before the trio loop runs, adopted on first use
10. ``_plugins``   the ``app-server`` and ``acp`` runtime plugins (entry points)

This package imports ``robota.core`` and nothing else of robota.
"""

from ._acp import AcpClient, AcpSession, ImagesUnsupported, SessionBusy, SteerUnsupported
from ._agent import agent_host
from ._agent_process import AgentExited
from ._app_server import AppServerClient, SteerRejected, ThreadInfo
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
from ._plugins import AcpRuntime, AppServerRuntime, acp, app_server
from ._process import AgentProcess, ShutdownTimings, agent_environment, is_reserved_name

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
]
