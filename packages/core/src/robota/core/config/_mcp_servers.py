"""``mcpServers``: the MCP servers every agent's sessions are offered, in the shape MCP clients
use (Claude Desktop's and Cursor's ``mcpServers``)::

    mcpServers:
      files:                       # a server the agent starts, over stdio
        command: npx
        args: [-y, "@modelcontextprotocol/server-filesystem", /srv/docs]
        env:
          API_TOKEN: ${DOCS_TOKEN} # from the profile's .env; never logged or listed
      search:                      # a server the agent reaches over HTTP
        url: https://mcp.example.com/mcp
        headers:
          Authorization: Bearer ${SEARCH_TOKEN}

The same table may stand at the top level, under ``agents.<name>`` (that agent only, on top)
and in a trusted workspace's ``.robota/config.yaml`` (``literal``: no ``${NAME}``, no
secret-named variable or header, as the project's ``env`` rules go). Mistakes are
``ConfigError``s naming the file, the key, what was found and what was expected; a value that
may be a credential is described, never quoted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Literal
from urllib.parse import urlsplit

from .._plugins import McpServer
from ._keys import MCP_SERVER_KEYS, key_names
from ._reader import Reader, describe
from ._secrets import looks_secret

__all__ = ["SERVER_NAME", "merged_servers", "validate_mcp_servers"]

SERVER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*\Z")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_HEADER_NAME = re.compile(r"[A-Za-z0-9!#$%&'*+.^_`|~-]+\Z")
_KEYS = key_names(MCP_SERVER_KEYS)
_TRANSPORTS: tuple[Literal["stdio", "http", "sse"], ...] = ("stdio", "http", "sse")
_SHAPE = "a mapping of server names to {command, args, env} or {url, headers}"


def validate_mcp_servers(
    reader: Reader, raw: object, path: str, *, literal: bool = False
) -> dict[str, McpServer]:
    """The servers of the table at ``path`` (``{}`` when absent), in file order."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise reader.error(path, describe(raw), _SHAPE)
    servers: dict[str, McpServer] = {}
    for name, spec in raw.items():
        if not isinstance(name, str) or not SERVER_NAME.match(name):
            raise reader.error(
                path, f"the server name {describe(name)}", "a name like [A-Za-z0-9][A-Za-z0-9_-]*"
            )
        servers[name] = _Server(reader, f"{path}.{name}", literal).read(name, spec)
    return servers


def merged_servers(*tables: Mapping[str, McpServer]) -> tuple[McpServer, ...]:
    """The servers of ``tables`` in order, a later table's server replacing an earlier one of
    the same name (in the earlier one's place)."""
    merged: dict[str, McpServer] = {}
    for table in tables:
        merged.update(table)
    return tuple(merged.values())


class _Server:
    def __init__(self, reader: Reader, path: str, literal: bool) -> None:
        self.reader = reader
        self.path = path
        self.literal = literal

    def read(self, name: str, raw: object) -> McpServer:
        section = self.reader.section(raw, self.path, _KEYS, nullable=False)
        command = self._text(section.get("command"), "command")
        url = self._text(section.get("url"), "url")
        transport = self._transport(section.get("type"), command, url)
        if transport == "stdio":
            assert command is not None
            self._absent(section, ("headers",), "a stdio server (it has a command)")
            return McpServer(
                name,
                "stdio",
                command=command,
                args=self._args(section.get("args")),
                env=self._pairs(section.get("env"), "env", _ENV_NAME, "NAME: text"),
            )
        assert url is not None
        self._absent(section, ("args", "env"), "a server reached at its url")
        return McpServer(
            name,
            transport,
            url=self._url(url),
            headers=self._pairs(section.get("headers"), "headers", _HEADER_NAME, "Name: text"),
        )

    def _transport(
        self, raw: object, command: str | None, url: str | None
    ) -> Literal["stdio", "http", "sse"]:
        if command is not None and url is not None:
            raise self.reader.error(
                self.path, "both command and url", "either `command` (stdio) or `url` (http, sse)"
            )
        if command is None and url is None:
            raise self.reader.error(
                self.path, "neither command nor url", "`command` (stdio) or `url` (http, sse)"
            )
        if raw is None:
            return "stdio" if command is not None else "http"
        transport = next((t for t in _TRANSPORTS if t == raw), None)
        if transport is None:
            raise self.reader.error(f"{self.path}.type", describe(raw), "stdio, http or sse")
        if (transport == "stdio") != (command is not None):
            found = f"type {transport} with {'a command' if command is not None else 'a url'}"
            expected = "stdio with `command`, http or sse with `url`"
            raise self.reader.error(f"{self.path}.type", found, expected)
        return transport

    def _absent(self, section: Mapping[str, object], keys: tuple[str, ...], what: str) -> None:
        for key in keys:
            if key in section:
                raise self.reader.error(
                    f"{self.path}.{key}", f"`{key}` on {what}", f"no `{key}` there"
                )

    def _literal(self, raw: object, where: str) -> None:
        if self.literal and isinstance(raw, str) and "${" in raw:
            raise self.reader.error(
                where, "a ${NAME} reference", "literal text (no expansion in project settings)"
            )

    def _text(self, raw: object, key: str) -> str | None:
        where = f"{self.path}.{key}"
        self._literal(raw, where)
        return self.reader.text(raw, where, required=False)

    def _args(self, raw: object) -> tuple[str, ...]:
        where = f"{self.path}.args"
        if raw is None:
            return ()
        if not isinstance(raw, list):
            raise self.reader.error(where, describe(raw), "a list of text arguments")
        args: list[str] = []
        for index, item in enumerate(raw):
            self._literal(item, f"{where}[{index}]")
            arg = self.reader.text(item, f"{where}[{index}]", required=True)
            assert arg is not None
            args.append(arg)
        return tuple(args)

    def _pairs(
        self, raw: object, key: str, names: re.Pattern[str], shape: str
    ) -> Mapping[str, str]:
        where = f"{self.path}.{key}"
        if raw is None:
            return MappingProxyType({})
        if not isinstance(raw, Mapping):
            raise self.reader.error(where, describe(raw), f"a mapping of {shape}")
        pairs: dict[str, str] = {}
        for name, value in raw.items():
            if not isinstance(name, str) or not names.match(name):
                raise self.reader.error(where, f"the name {describe(name)}", shape)
            secret = key == "headers" or looks_secret(name)
            if self.literal and looks_secret(name):
                raise self.reader.error(
                    f"{where}.{name}",
                    "a secret-named value",
                    "no credentials in a project's settings (put them in the profile's)",
                )
            self._literal(value, f"{where}.{name}")
            text = self.reader.env_value(value, f"{where}.{name}", secret=secret)
            if text is not None:
                pairs[name] = text
        return MappingProxyType(pairs)

    def _url(self, url: str) -> str:
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 (raises on a port that is not a number)
        except ValueError:
            parts = None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            raise self.reader.error(f"{self.path}.url", describe(url), "an http:// or https:// URL")
        return url
