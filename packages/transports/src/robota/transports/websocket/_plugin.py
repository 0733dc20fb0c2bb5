"""The plugin object the ``robota.surfaces`` entry point names."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from robota.core.surfaces import SurfaceHub

__all__ = ["WebSocketSurface", "plugin"]


class WebSocketSurface:
    """``robota.core.SurfacePlugin``: a loopback WebSocket server (``_server.serve``)."""

    name = "websocket"

    async def serve(self, hub: SurfaceHub, *, port: int, token: str, task_status: object) -> None:
        from ._server import serve  # noqa: PLC0415 (trio-websocket loads only when serving)

        await serve(hub, port=port, token=token, task_status=task_status)


plugin = WebSocketSurface()
