"""robota.core.surfaces: what a surface client and its host say, sans-IO.

A surface is a client of a session that is not the terminal it runs in: a WebSocket client of
``robota --serve`` (the adapter is a plugin of the ``robota.surfaces`` entry point group) or,
later, another carrier. Everything here is pure: the adapter reads a frame, hands it to
``parse_client_frame`` (a typed message, or ``SurfaceProtocolError`` naming what was wrong:
answered with ``protocol_error``), tells the route, and turns each of the route's notices into
a host message with ``host_message``, which ``TurnDrivers`` stamps with the surface that drives
its turn (``driverId``) and the session's ``SessionStream`` with its ``seq``, keeping it for
``resume``.

Layering, bottom up: ``_frames`` (the client vocabulary), ``_messages`` (notices to host
messages, and their drivers), ``_stream`` (seq, resume buffer, the replies ``get-messages``/
``get-pending`` read), ``_hub`` (the host's clients and sessions on its trio loop: what a
carrier plugin drives), ``_plugin`` (what a carrier plugin is: ``SurfacePlugin``, beside the
hub it is handed).
"""

import typing

from ..kernel import lazy_attributes as _lazy_attributes

if typing.TYPE_CHECKING:
    from ._frames import (
        CLIENT_TYPES,
        MAX_FRAME,
        Abort,
        Ack,
        ClientFrame,
        Command,
        GetMessages,
        GetPending,
        PermissionResponse,
        Resume,
        Submit,
        SurfaceProtocolError,
        parse_client_frame,
    )
    from ._hub import BYTE_BUDGET, SURFACE_PROTOCOL, SurfaceClient, SurfaceHub, SurfaceSession
    from ._messages import HOST_TYPES, MAX_TURNS_FOLLOWED, TurnDrivers, host_message
    from ._plugin import SurfacePlugin, surface_plugin
    from ._stream import RESUME_BYTES, RESUME_MESSAGES, TRANSCRIPT_MESSAGES, SessionStream

__all__ = [
    # the client's frames
    "CLIENT_TYPES",
    "MAX_FRAME",
    "ClientFrame",
    "Submit",
    "Command",
    "Abort",
    "PermissionResponse",
    "GetMessages",
    "GetPending",
    "Resume",
    "Ack",
    "SurfaceProtocolError",
    "parse_client_frame",
    # the host's messages
    "HOST_TYPES",
    "host_message",
    "TurnDrivers",
    "MAX_TURNS_FOLLOWED",
    # one session's sequence
    "SessionStream",
    "RESUME_MESSAGES",
    "RESUME_BYTES",
    "TRANSCRIPT_MESSAGES",
    # the host's clients and sessions (the carrier's shell)
    "SurfaceHub",
    "SurfaceSession",
    "SurfaceClient",
    "SURFACE_PROTOCOL",
    "BYTE_BUDGET",
    # the carrier plugin's contract (``robota --serve``'s WebSocket)
    "SurfacePlugin",
    "surface_plugin",
]

_HOMES = {
    **dict.fromkeys(
        (
            "CLIENT_TYPES",
            "MAX_FRAME",
            "ClientFrame",
            "Submit",
            "Command",
            "Abort",
            "PermissionResponse",
            "GetMessages",
            "GetPending",
            "Resume",
            "Ack",
            "SurfaceProtocolError",
            "parse_client_frame",
        ),
        "._frames",
    ),
    "HOST_TYPES": "._messages",
    "host_message": "._messages",
    "TurnDrivers": "._messages",
    "MAX_TURNS_FOLLOWED": "._messages",
    "SurfacePlugin": "._plugin",
    "surface_plugin": "._plugin",
    **dict.fromkeys(
        ("SessionStream", "RESUME_MESSAGES", "RESUME_BYTES", "TRANSCRIPT_MESSAGES"), "._stream"
    ),
    **dict.fromkeys(
        ("SurfaceHub", "SurfaceSession", "SurfaceClient", "SURFACE_PROTOCOL", "BYTE_BUDGET"),
        "._hub",
    ),
}
"""Where each lazily loaded name lives (the same as the imports for type checkers above)."""

__getattr__, __dir__ = _lazy_attributes(__name__, _HOMES)
