"""A surface carrier plugin's contract (``robota --serve``'s WebSocket), beside the hub it drives.

Finding it by name is ``robota.core._plugins``'s (``named_plugin``); what it must be is said
here, where the ``SurfaceHub`` it is handed lives, so that nothing below ``surfaces`` names it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from .._plugins import SURFACES_GROUP, PluginError, named_plugin

if TYPE_CHECKING:
    from ._hub import SurfaceHub

__all__ = ["SurfacePlugin", "surface_plugin"]


@runtime_checkable
class SurfacePlugin(Protocol):
    """A carrier for surface clients (``robota --serve``'s WebSocket), registered under the
    ``robota.surfaces`` entry point group with its ``name``. It moves text only: every rule of
    the protocol is the ``SurfaceHub``'s (``robota.core.surfaces``)."""

    name: str

    async def serve(
        self,
        hub: SurfaceHub,
        *,
        port: int,
        token: str,
        task_status: object,
    ) -> None:
        """Listen on 127.0.0.1:``port`` (0: any free port) and serve clients that present
        ``token``, until cancelled; ``task_status.started(url)`` once it accepts connections,
        with the URL a client connects to (it carries the token: show it to no one else)."""
        ...


def surface_plugin(name: str) -> SurfacePlugin:
    """The installed surface plugin ``name``, loaded now; ``KeyError`` when none of that name
    is installed, ``PluginError`` when it is broken."""
    plugin, value = named_plugin(SURFACES_GROUP, name, "surface")
    if not isinstance(plugin, SurfacePlugin) or plugin.name != name:
        raise PluginError(
            f"surface plugin {name!r} ({value}) is not a SurfacePlugin named {name!r}"
        )
    return plugin
