"""What config.yaml may hold: each section's keys with their type, default and meaning.

The validator takes a section's allowed keys from these tables (``key_names``), so every key it
accepts is a key a table describes, in the order its errors list them. The configuration
reference (docs/reference/configuration.md) is generated from the same tables by
tools/gen_docs.py, and a test checks that the checked-in page is what the generator makes now:
neither can drift from the validator without a failing test.

Plugins describe the sections they own with the same ``ConfigKey``: a transport plugin's
``config_keys`` (see ``DescribesKeys``) lists the keys of its ``transports.<name>`` section.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol, runtime_checkable

__all__ = [
    "AGENT_KEYS",
    "CONFIG_SECTIONS",
    "CONSOLE_KEYS",
    "DEFAULTS_KEYS",
    "ENABLED_KEY",
    "INTENT_KEYS",
    "LOGGING_KEYS",
    "MCP_SERVER_KEYS",
    "MESH_KEYS",
    "MESH_LIMITS_KEYS",
    "MESH_PEER_KEYS",
    "PROJECT_AGENT_KEYS",
    "PROJECT_DEFAULTS_KEYS",
    "PROJECT_SECTIONS",
    "PROJECT_TOP_LEVEL_KEYS",
    "REQUIRED",
    "STORAGE_KEYS",
    "TEAM_KEYS",
    "TOP_LEVEL_KEYS",
    "WS_KEYS",
    "ConfigKey",
    "DescribesKeys",
    "key_names",
]

REQUIRED = "required"
"""The ``default`` of a key that must be given."""


class ConfigKey(NamedTuple):
    """One key of a config.yaml section, as a person reading the reference needs it.

    A named tuple, not a dataclass: the tables load with the validator, before print mode's
    agent is spawned, where each dataclass costs its generated methods' compilation."""

    name: str
    type: str
    """What the value may be, in words (``a whole number from 1 to 64``)."""
    default: str
    """``REQUIRED``, or the value (or what happens) when the key is left out."""
    meaning: str


@runtime_checkable
class DescribesKeys(Protocol):
    """A plugin that describes the keys of the config.yaml section it owns."""

    config_keys: tuple[ConfigKey, ...]


def key_names(keys: tuple[ConfigKey, ...]) -> tuple[str, ...]:
    """The names a section allows, in the table's order (the order errors list them in)."""
    return tuple(key.name for key in keys)


ENABLED_KEY = ConfigKey(
    "enabled",
    "true or false",
    "true",
    "false keeps the section (and its validation) but the host does not start it.",
)
"""A chat transport section's ``enabled``: the same for every transport plugin."""

_PERMISSION_MODE = "default, acceptEdits, bypassPermissions or plan"

TOP_LEVEL_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey(
        "agents",
        "a mapping of agent names to agents",
        REQUIRED,
        "The coding agents robota can drive, at least one; a name is `[a-z0-9][a-z0-9_-]*`.",
    ),
    ConfigKey(
        "defaults",
        "a mapping",
        REQUIRED,
        "What a new conversation starts with (its `agent` must be given).",
    ),
    ConfigKey(
        "transports",
        "a mapping",
        "no chat transport",
        "Where conversations come from: `console`, `ws`, and a section per installed chat"
        " transport plugin, which is on when its section is present.",
    ),
    ConfigKey("storage", "a mapping", "the profile's defaults", "Where the SQLite store lives."),
    ConfigKey("logging", "a mapping", "the profile's defaults", "robota's own log."),
    ConfigKey(
        "mcpServers",
        "a mapping of server names to MCP servers",
        "none",
        "MCP servers every agent's sessions are offered (each runtime passes them on in its"
        " protocol's shape), in the shape MCP clients use; a Restricted session gets none.",
    ),
    ConfigKey(
        "teams",
        "a mapping of team names to teams",
        "no team",
        "Group chats that are the front door of one project each; a name is `[a-z0-9][a-z0-9_-]*`.",
    ),
    ConfigKey(
        "mesh",
        "a mapping",
        "the mesh off",
        "The device mesh: this machine linked with the user's other machines (only the"
        " profile's config.yaml may hold it, never a project's).",
    ),
)

AGENT_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey(
        "kind",
        "the kind of an installed runtime plugin",
        REQUIRED,
        "The protocol robota speaks to it, by the kind of the runtime plugin that speaks it"
        " (the two robota ships are in [agents](../agents.md); `robota doctor` checks it).",
    ),
    ConfigKey("command", "text", REQUIRED, "The executable, looked up on PATH."),
    ConfigKey("args", "a list of text", "no arguments", "Its arguments."),
    ConfigKey(
        "env",
        "a mapping of NAME: text",
        "nothing extra",
        "Extra environment variables for it, on top of its scrubbed environment (`${NAME}`"
        " references allowed; secret-named values are masked in every log line).",
    ),
    ConfigKey("title", "text", "the agent's name", "How the terminal and chats show it."),
    ConfigKey(
        "mcpServers",
        "a mapping of server names to MCP servers",
        "none",
        "MCP servers for this agent only, on top of the top-level `mcpServers` (a name given"
        " in both is this one).",
    ),
)

MCP_SERVER_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey(
        "command",
        "text",
        "required without `url`",
        "A server the agent starts and speaks to over stdio: its executable.",
    ),
    ConfigKey("args", "a list of text", "no arguments", "The command's arguments."),
    ConfigKey(
        "env",
        "a mapping of NAME: text",
        "nothing extra",
        "The command's environment (`${NAME}` references allowed; never logged or listed).",
    ),
    ConfigKey("url", "an http(s) URL", "required without `command`", "A server the agent reaches."),
    ConfigKey(
        "headers",
        "a mapping of Name: text",
        "none",
        "HTTP headers for `url` (`${NAME}` references allowed; never logged or listed).",
    ),
    ConfigKey(
        "type",
        "stdio, http or sse",
        "stdio with `command`, http with `url`",
        "The transport; `sse` for a server that only speaks the older SSE transport.",
    ),
)

DEFAULTS_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey(
        "agent",
        "the name of one of the configured agents",
        REQUIRED,
        "The agent a new conversation starts with.",
    ),
    ConfigKey(
        "cwd",
        "a path",
        "the directory robota was started in",
        "Working directory of new sessions; a relative path resolves against the directory"
        " robota was started in.",
    ),
    ConfigKey(
        "permissionMode",
        _PERMISSION_MODE,
        "default",
        "What an agent may do without asking (see the agents page's permission modes).",
    ),
)

CONSOLE_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey(
        "enabled",
        "true or false",
        "true",
        "Validated and kept; nothing reads it today (the TUI and print mode always run).",
    ),
)

WS_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey("host", "text", "127.0.0.1", "The address it would listen on."),
    ConfigKey("port", "a whole number from 0 to 65535", REQUIRED, "The port it would listen on."),
)
"""``transports.ws``: validated, read by nothing yet; the WebSocket host is ``robota --serve``."""

STORAGE_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey(
        "sqlitePath",
        "a path",
        "robota.sqlite in the profile's data directory",
        "The SQLite database; a relative path resolves against config.yaml's directory.",
    ),
)

LOGGING_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey("level", "debug, info, warning or error (any case)", "info", "The least level kept."),
    ConfigKey(
        "path",
        "a path",
        "robota.log in the profile's log directory",
        "The JSON-lines log (rotated at 10 MiB, 3 backups); a relative path resolves against"
        " config.yaml's directory.",
    ),
)

TEAM_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey(
        "transport",
        "the name of a configured chat transport",
        REQUIRED,
        "The chat transport the team's group is on (it needs a `transports.<name>` section).",
    ),
    ConfigKey(
        "chat",
        "text",
        REQUIRED,
        "The group's chat id; no two teams share one chat of one transport.",
    ),
    ConfigKey(
        "project",
        "an absolute path",
        REQUIRED,
        "The directory every task of the team runs in (trust it for admins' writes).",
    ),
    ConfigKey(
        "admins",
        "a list of sender ids",
        "none (the transport's owner always is one)",
        "Who may run admin intents and answer approvals in the team's threads.",
    ),
    ConfigKey(
        "members",
        "all, or a list of sender ids",
        "all",
        "Who else is heard; anyone else in the group is ignored.",
    ),
    ConfigKey(
        "locale",
        "zh-CN or en-US",
        "the transport's default (en-US unless it has its own)",
        "The language of the team's replies and notes.",
    ),
    ConfigKey(
        "slots",
        "a whole number from 1 to 64",
        "3",
        "How many of the team's requests run at once.",
    ),
    ConfigKey(
        "queueLimit",
        "a whole number from 0 to 1000",
        "10",
        "How many requests may wait for a slot; past it a request is refused.",
    ),
    ConfigKey(
        "maxTurnMinutes",
        "a whole number from 1 to 1440",
        "30",
        "A request still running after this long is interrupted, and its thread told.",
    ),
    ConfigKey(
        "memberPermissionMode",
        _PERMISSION_MODE,
        "plan",
        "The permission mode of members' requests (an agent with no `plan` mode runs its"
        " `read-only` one).",
    ),
    ConfigKey(
        "intents",
        "a mapping of intent keys to intents",
        "none",
        "The project's commands (`/<key>` in the group); a key may not shadow a"
        " built-in intent, a bot switch command or an engine command.",
    ),
    ConfigKey(
        "intentPermissions",
        "a mapping of declared intent keys to public, admin or admin-confirm",
        "by name: admin for risky names (deploy, publish, release, prod ...), else public",
        "Who may run each declared intent; built-in intents' levels are fixed.",
    ),
    ConfigKey(
        "respondToAllMessages",
        "true or false",
        "false",
        "Off: only messages that mention the bot are read in the group.",
    ),
    ConfigKey(
        "timeZone",
        "an IANA time zone like Asia/Shanghai",
        "the transport's default (UTC unless it has its own)",
        "The zone of the times in the team's notes.",
    ),
)

INTENT_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey("description", "text", "empty", "What `/help` says of it."),
    ConfigKey(
        "prompt",
        "text with {args}, {project}, {chat} and {sender} placeholders ({{ for {)",
        REQUIRED,
        "What the agent is asked.",
    ),
    ConfigKey(
        "tags",
        "a list of read:PATH, write:PATH, mcp:NAME, port:N, net:push or exclusive:NAME",
        "none",
        "The resources it uses: two requests whose tags conflict never run at once (relative"
        " paths are the project's).",
    ),
)

MESH_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey(
        "enabled",
        "true or false",
        "false",
        "true: `robota server run` opens the mesh (listens on `listen`, links to `peers`).",
    ),
    ConfigKey(
        "name",
        "text of at most 64 bytes",
        "the machine's host name",
        "This device's name, as the other devices show it: read when `robota mesh init` makes"
        " the device's key, which carries it (set it before; `mesh status` names a later"
        " change among its problems).",
    ),
    ConfigKey(
        "listen",
        "a list of HOST:PORT",
        "none (dial only)",
        "The addresses to accept links on (`[::1]:47390` for an IPv6 address).",
    ),
    ConfigKey(
        "peers",
        "a mapping of device ids to {name, address}",
        "none",
        "Each paired device's name and address hint (written by pairing; editable).",
    ),
    ConfigKey(
        "listLifetimeSeconds",
        "a whole number from 60 to 2592000",
        "86400",
        "How long a roster or revocation list this device issues stays valid; it is"
        " reissued when half of it has passed.",
    ),
    ConfigKey(
        "pairingTtlSeconds",
        "a whole number from 30 to 3600",
        "300",
        "How long `robota mesh pair`'s one-time code may be used.",
    ),
    ConfigKey(
        "limits",
        "a mapping",
        "every default",
        "Bounds on the conversations between devices (`robota mesh send`).",
    ),
)
"""``mesh``: the device mesh (``robota.mesh``); the profile's file only."""

MESH_LIMITS_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey(
        "maxHops",
        "a whole number from 1 to 1000",
        "8",
        "The most messages one conversation between devices carries, both ways, as each side"
        " counts them; the reply that would cross it is not sent.",
    ),
    ConfigKey(
        "maxReplies",
        "a whole number from 0 to 1000",
        "4",
        "The most replies this device sends in one conversation; the reply that would cross"
        " it is not sent.",
    ),
)
"""``mesh.limits``: the bounds of a peer conversation (issue 30)."""

MESH_PEER_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey("name", "text", "the device id", "The peer's name."),
    ConfigKey("address", "HOST:PORT", "none (it dials this device)", "Where to dial it."),
)

CONFIG_SECTIONS: tuple[tuple[str, tuple[ConfigKey, ...]], ...] = (
    ("(top level)", TOP_LEVEL_KEYS),
    ("agents.<name>", AGENT_KEYS),
    ("mcpServers.<name>", MCP_SERVER_KEYS),
    ("defaults", DEFAULTS_KEYS),
    ("transports.console", CONSOLE_KEYS),
    ("transports.ws", WS_KEYS),
    ("storage", STORAGE_KEYS),
    ("logging", LOGGING_KEYS),
    ("teams.<name>", TEAM_KEYS),
    ("teams.<name>.intents.<key>", INTENT_KEYS),
    ("mesh", MESH_KEYS),
    ("mesh.peers.<device id>", MESH_PEER_KEYS),
    ("mesh.limits", MESH_LIMITS_KEYS),
)
"""Every section core validates, by its key path, in the order the reference shows them;
a chat transport's ``transports.<name>`` is its plugin's (``DescribesKeys``)."""

PROJECT_TOP_LEVEL_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey("defaults", "a mapping", "the profile's", "This workspace's defaults."),
    ConfigKey(
        "agents",
        "a mapping of the profile's agent names",
        "nothing extra",
        "Additions to the profile's agents, by name.",
    ),
    ConfigKey(
        "mcpServers",
        "a mapping of server names to MCP servers",
        "none",
        "MCP servers this workspace's sessions are offered on top of the profile's (read only"
        " when the workspace is trusted): literal values only, no `${NAME}` and no"
        " secret-named `env` or `headers`.",
    ),
)

PROJECT_DEFAULTS_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey(
        "agent",
        "the name of one of the profile's agents",
        "the profile's `defaults.agent`",
        "The agent a new conversation in this workspace starts with.",
    ),
    ConfigKey(
        "permissionMode",
        _PERMISSION_MODE,
        "the profile's `defaults.permissionMode`",
        "The permission mode of this workspace's new sessions.",
    ),
)

PROJECT_AGENT_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey(
        "env",
        "a mapping of NAME: literal text",
        "nothing extra",
        "Variables on top of the profile's `agents.<name>.env`: no `${NAME}`, no secret-named"
        " or `ROBOTA_` variables (those stay in the profile).",
    ),
)

PROJECT_SECTIONS: tuple[tuple[str, tuple[ConfigKey, ...]], ...] = (
    ("(top level)", PROJECT_TOP_LEVEL_KEYS),
    ("defaults", PROJECT_DEFAULTS_KEYS),
    ("agents.<name>", PROJECT_AGENT_KEYS),
    ("mcpServers.<name>", MCP_SERVER_KEYS),
)
"""A trusted workspace's ``.robota/config.yaml``, validated by ``_project`` with these keys."""
