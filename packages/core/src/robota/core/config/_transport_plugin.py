"""A chat transport plugin's first contract: validating its own section of config.yaml.

Here, beside the ``Reader`` it names, so that ``_validate`` can load and ask a transport plugin
without naming anything above ``config``. What the host then runs of a transport
(``ServedTransport``: its service, its agents' environment) is ``robota.core.frontend``'s, beside
the ``TransportContext`` it is handed; finding plugins by name is ``robota.core._plugins``'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from .._plugins import TRANSPORTS_GROUP, PluginError, named_plugin

if TYPE_CHECKING:
    from ._reader import Reader

__all__ = ["TransportPlugin", "transport_plugin"]


@runtime_checkable
class TransportPlugin(Protocol):
    """A chat transport, registered under the ``robota.transports`` entry point group with
    its ``name`` (the key of its ``transports.<name>`` section in config.yaml) as the name.

    Its first duty is its own configuration: ``validate`` turns the section, as loaded from
    YAML, into the transport's settings object, and reports every mistake through ``reader``
    (``reader.error(key, found, expected)`` and the typed readers), so a bad section reads
    like any other config error: file, key, found, expected, credentials described and never
    quoted. Values read with ``reader.secret`` join the secrets no log line may carry.

    The environment variables named ``<NAME>_*`` (the name in upper case, ``-`` as ``_``)
    are the transport's credentials: ``--profile`` drops inherited ones so that only the
    profile's ``.env`` provides them.
    """

    name: str

    def validate(self, reader: Reader, section: object) -> object:
        """``transports.<name>`` -> this transport's settings, or a ``ConfigError``."""
        ...


def transport_plugin(name: str) -> TransportPlugin:
    """The installed transport plugin ``name``, loaded (imported) now; ``KeyError`` when none
    of that name is installed, ``PluginError`` when it is broken."""
    plugin, value = named_plugin(TRANSPORTS_GROUP, name, "transport")
    if not isinstance(plugin, TransportPlugin) or plugin.name != name:
        raise PluginError(
            f"transport plugin {name!r} ({value}) is not a TransportPlugin named {name!r}"
        )
    return plugin
