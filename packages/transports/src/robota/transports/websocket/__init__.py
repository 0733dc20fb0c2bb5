"""robota.transports.websocket: ``robota --serve``'s carrier, a surface plugin on trio-websocket.

Registered under the ``robota.surfaces`` entry point group as ``websocket``; core names it
nowhere and it imports no other plugin. It moves text only (``_server``): every rule of the
protocol is ``robota.core.surfaces.SurfaceHub``'s. trio-websocket is imported when it serves.
"""

from ._plugin import WebSocketSurface, plugin

__all__ = ["WebSocketSurface", "plugin"]
