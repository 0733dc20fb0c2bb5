"""One TLS context per transport: the one given, else httpx's default made at its first use.

A context holds its certificates (about 1 MB), so a transport makes one and shares it with
every connection it opens: its REST or Web API calls, the endpoint call of its long connection
and the ``wss`` dial, which then all trust the same roots. Made lazily: ``_net.ssl_context``
reads certifi's bundle only once a service runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ssl

__all__ = ["OneTlsContext"]


class OneTlsContext:
    """``given``, else ``_net.ssl_context()`` made at the first ``get`` and kept."""

    __slots__ = ("_context",)

    def __init__(self, given: ssl.SSLContext | None = None) -> None:
        self._context = given

    def get(self) -> ssl.SSLContext:
        if self._context is None:
            from ._net import ssl_context  # noqa: PLC0415 (only once a service runs)

            self._context = ssl_context()
        return self._context
