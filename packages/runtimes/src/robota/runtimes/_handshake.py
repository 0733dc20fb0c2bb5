"""The first exchange of each protocol, as pure functions: what to send, how to read the reply.

App Server: ``initialize`` with ``clientInfo`` and ``capabilities.experimentalApi``, then the
``initialized`` notification. The server's version is inside ``userAgent``
(``<client>/<version> (...)``); other compatible servers may use ``serverInfo.version`` or
``version``.

ACP: ``initialize`` with ``protocolVersion: 1``, the client capabilities robota implements and
``clientInfo``; the agent answers with ``agentInfo.version`` and its capabilities.

Also the App Server's next exchange, ``thread/start`` (``thread_params``, with the table of
robota's permission modes): here rather than in ``_app_server_map`` because the prestart writes
a new task's ``thread/start`` before trio or the event model load (``_prestart``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from robota.core import robota_version

__all__ = [
    "CLIENT_NAME",
    "PERMISSION_MODES",
    "THREAD_CONFIG",
    "UNLOAD_DELAY",
    "acp_initialize_params",
    "acp_version",
    "app_server_initialize_params",
    "app_server_version",
    "thread_params",
]

CLIENT_NAME = "robota"
UNLOAD_DELAY = "thread_unload_delay_secs"
"""Codex's config key: seconds a thread nobody follows stays loaded."""
THREAD_CONFIG: dict[str, object] = {UNLOAD_DELAY: 0}
"""The Codex config every thread robota starts or resumes asks for (before its MCP servers):
a thread robota closes is unloaded at once, not after Codex's 30 minutes. Codex lets one
process write a thread, and the task's next owner (another process, once a terminal switched
away from it) must be able to resume it. Here, beside ``thread_params``, because a prestarted
``thread/start`` (``_prestart``) is taken over only when its params are the driver's own."""
ACP_PROTOCOL_VERSION = 1

_SEMVER = re.compile(r"\b(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)\b")


def _client_info() -> dict[str, str]:
    return {"name": CLIENT_NAME, "title": "robota", "version": robota_version()}


def app_server_initialize_params() -> dict[str, Any]:
    return {"clientInfo": _client_info(), "capabilities": {"experimentalApi": True}}


PERMISSION_MODES: Mapping[str, tuple[str, str]] = {
    # mode: (approvalPolicy, sandbox)
    "default": ("untrusted", "workspace-write"),
    "acceptEdits": ("on-request", "workspace-write"),
    "bypassPermissions": ("never", "danger-full-access"),
    "plan": ("untrusted", "read-only"),
}
"""How robota's permission modes map onto the App Server's approval policy and sandbox."""


def thread_params(
    *,
    cwd: str | None,
    model: str | None,
    provider: str | None,
    permission_mode: str | None,
    developer_instructions: str | None,
) -> dict[str, Any]:
    """The params of ``thread/start`` (and the settings part of ``thread/resume``)."""
    params: dict[str, Any] = {}
    if cwd is not None:
        params["cwd"] = cwd
    if model is not None:
        params["model"] = model
    if provider is not None:
        params["modelProvider"] = provider
    if permission_mode is not None:
        approval, sandbox = PERMISSION_MODES[permission_mode]
        params["approvalPolicy"] = approval
        params["sandbox"] = sandbox
    if developer_instructions:
        params["developerInstructions"] = developer_instructions
    return params


def app_server_version(result: Any) -> str | None:
    """The server's version from an ``initialize`` result, or ``None`` if it names none."""
    if not isinstance(result, dict):
        return None
    for candidate in (
        (result.get("serverInfo") or {}).get("version")
        if isinstance(result.get("serverInfo"), dict)
        else None,
        result.get("version"),
    ):
        if isinstance(candidate, str) and candidate:
            return candidate
    agent = result.get("userAgent")
    if isinstance(agent, str):
        # "<client>/<version> (...)": the first semver after the first slash
        _, _, rest = agent.partition("/")
        match = _SEMVER.search(rest)
        if match:
            return match.group(1)
    return None


def acp_initialize_params(*, fs: bool, terminal: bool) -> dict[str, Any]:
    return {
        "protocolVersion": ACP_PROTOCOL_VERSION,
        "clientCapabilities": {
            "fs": {"readTextFile": fs, "writeTextFile": fs},
            "terminal": terminal,
        },
        "clientInfo": _client_info(),
    }


def acp_version(result: Any) -> str | None:
    if not isinstance(result, dict):
        return None
    info = result.get("agentInfo")
    if isinstance(info, dict) and isinstance(info.get("version"), str):
        return str(info["version"])
    return None
