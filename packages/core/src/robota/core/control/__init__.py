"""robota.core.control: the host's local control endpoint and the one-host-per-profile lock.

The endpoint is a Unix socket in the profile's owner-only runtime directory
(``Profile.control_socket``) speaking the protocol's envelope (``robota.core.protocol``) in
newline-delimited JSON, one request or reply per line; the envelope's names are re-exported
here for the endpoint's users::

    {"id": 1, "type": "status"}                       a request: id, type, the type's fields
    {"id": 1, "ok": true, "result": {...}}            its success
    {"id": 1, "ok": false, "error": {"code": "bad_request", "message": "...", "field": "text"}}

``ErrorCode`` lists the stable error codes. The host declares its request types as frozen
dataclasses (``TYPE`` plus typed fields) and serves them with ``ControlServer`` and one
``Endpoint`` per type; CLI commands talk to it with the blocking ``ControlClient``.

``acquire_host_lock`` keeps a second host of the same profile from starting and tells it who
runs; ``probe_host`` answers "is a host running?" whether or not one is.

Importing this package adds only standard-library modules to what ``robota.core`` loads
(trio is already among those); the config package (ruamel) loads only when a host publishes
its state, so a client command stays quick to start.

The facade is lazy for the server alone (PEP 562): a client (``robota task``, ``robota server
status``) never loads trio.
"""

from __future__ import annotations

import typing

from ..kernel import lazy_attributes as _lazy_attributes

if typing.TYPE_CHECKING:
    from ..protocol import (
        MAX_LINE,
        Failure,
        LineSplitter,
        MalformedReply,
        Ok,
        Overlong,
        Reply,
        RequestId,
        decode_reply,
        encode_reply,
        encode_request,
    )
    from ._ancestry import REAPER_MARK, ProcessEntry, caller_refusal, judge_caller, read_process
    from ._client import ControlClient
    from ._errors import (
        ControlError,
        HostRefused,
        HostUnreachable,
        NoHostRunning,
        SocketInUse,
        UnsafeRuntimeDir,
    )
    from ._host_lock import HostAlreadyRunning, HostLock, acquire_host_lock, probe_host
    from ._host_state import (
        BadHostState,
        HostPresence,
        HostState,
        Presence,
        judge_presence,
        parse_host_state,
        pid_alive,
    )
    from ._protocol import Call, ErrorCode, ServerConnection
    from ._registration import (
        SESSION_ID,
        SESSION_STATES,
        BadRegistration,
        Registration,
        list_state,
        listing_row,
        now_iso,
        own_process_start,
        owner_verified,
        parse_registration,
        process_start_ticks,
        read_registrations,
    )
    from ._requests import Refused, RequestRegistry
    from ._server import ControlServer, Endpoint, HandlerError, ServerLimits, StreamEndpoint
    from ._socket_file import ensure_runtime_dir, listening_socket, socket_address

__all__ = [
    # the protocol, sans-IO
    "MAX_LINE",
    "Call",
    "ErrorCode",
    "Failure",
    "LineSplitter",
    "MalformedReply",
    "Ok",
    "Overlong",
    "Refused",
    "Reply",
    "RequestId",
    "RequestRegistry",
    "ServerConnection",
    "decode_reply",
    "encode_reply",
    "encode_request",
    # the host's side
    "ControlServer",
    # who may approve (an agent's process may not)
    "REAPER_MARK",
    "ProcessEntry",
    "caller_refusal",
    "judge_caller",
    "read_process",
    "Endpoint",
    "HandlerError",
    "ServerLimits",
    "StreamEndpoint",
    # the client's side
    "ControlClient",
    # one host per profile
    "BadHostState",
    "HostLock",
    "HostPresence",
    "HostState",
    "Presence",
    "acquire_host_lock",
    "judge_presence",
    "parse_host_state",
    "pid_alive",
    "probe_host",
    "ensure_runtime_dir",
    "listening_socket",
    "socket_address",
    # background sessions' registrations
    "SESSION_ID",
    "SESSION_STATES",
    "BadRegistration",
    "Registration",
    "list_state",
    "listing_row",
    "now_iso",
    "own_process_start",
    "owner_verified",
    "parse_registration",
    "process_start_ticks",
    "read_registrations",
    # errors
    "ControlError",
    "HostAlreadyRunning",
    "HostRefused",
    "HostUnreachable",
    "NoHostRunning",
    "SocketInUse",
    "UnsafeRuntimeDir",
]

_HOMES = {
    "REAPER_MARK": "._ancestry",
    "ProcessEntry": "._ancestry",
    "caller_refusal": "._ancestry",
    "judge_caller": "._ancestry",
    "read_process": "._ancestry",
    "ControlClient": "._client",
    "ControlError": "._errors",
    "HostAlreadyRunning": "._host_lock",
    "HostRefused": "._errors",
    "HostUnreachable": "._errors",
    "NoHostRunning": "._errors",
    "SocketInUse": "._errors",
    "UnsafeRuntimeDir": "._errors",
    "HostLock": "._host_lock",
    "acquire_host_lock": "._host_lock",
    "probe_host": "._host_lock",
    "BadHostState": "._host_state",
    "HostPresence": "._host_state",
    "HostState": "._host_state",
    "Presence": "._host_state",
    "judge_presence": "._host_state",
    "parse_host_state": "._host_state",
    "pid_alive": "._host_state",
    "LineSplitter": "..protocol",
    "Overlong": "..protocol",
    "MAX_LINE": "..protocol",
    "Call": "._protocol",
    "ErrorCode": "._protocol",
    "Failure": "..protocol",
    "MalformedReply": "..protocol",
    "Ok": "..protocol",
    "Reply": "..protocol",
    "RequestId": "..protocol",
    "ServerConnection": "._protocol",
    "decode_reply": "..protocol",
    "encode_reply": "..protocol",
    "encode_request": "..protocol",
    "Refused": "._requests",
    "RequestRegistry": "._requests",
    "ControlServer": "._server",
    "Endpoint": "._server",
    "HandlerError": "._server",
    "ServerLimits": "._server",
    "StreamEndpoint": "._server",
    "SESSION_ID": "._registration",
    "SESSION_STATES": "._registration",
    "BadRegistration": "._registration",
    "Registration": "._registration",
    "list_state": "._registration",
    "listing_row": "._registration",
    "now_iso": "._registration",
    "own_process_start": "._registration",
    "owner_verified": "._registration",
    "parse_registration": "._registration",
    "process_start_ticks": "._registration",
    "read_registrations": "._registration",
    "ensure_runtime_dir": "._socket_file",
    "listening_socket": "._socket_file",
    "socket_address": "._socket_file",
}
"""Where each lazily loaded name lives (the same as the imports for type checkers above)."""


__getattr__, __dir__ = _lazy_attributes(__name__, _HOMES)
