"""``mesh.peers`` of a profile's ``config.yaml`` as pairing writes it, comments and layout kept.

A paired device is added (``merge_config_text``: the entry a template, so nothing the operator
wrote is touched); a device paired again from a new address has its ``address`` replaced where
it stands, the scalar alone (``peers_text``, pure), so an address hint never goes stale while
the comments, the name the operator gave and every other entry stay as they were. The joiner
records the address it used; the pairing device records none (the joiner dials it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["peer_entry", "peers_text", "record_peer"]


def peer_entry(device: str, name: str, address: str | None) -> str:
    """The YAML a profile's config gains for a paired device (a template for the merge)."""
    fields = [("name", name), *([("address", address)] if address else [])]
    # Values quoted as JSON (which YAML reads alike), so a name or address is never read as
    # another type; the keys plain, as an operator writes them.
    peer = ", ".join(f"{key}: {json.dumps(value)}" for key, value in fields)
    return f"mesh:\n  peers:\n    {device}: {{{peer}}}\n"


def peers_text(
    existing: str, device: str, name: str, address: str | None, *, file: str = "config.yaml"
) -> str:
    """``existing`` with ``device`` in ``mesh.peers``: added when missing (``name``, and
    ``address`` when given), its ``address`` replaced when a new one is given; the rest as it
    was. ``ConfigError`` when the text is no mapping or the address cannot be replaced alone."""
    from robota.core.config import merge_config_text  # noqa: PLC0415

    merged = merge_config_text(existing, peer_entry(device, name, address), file=file)
    if address is None:
        return merged
    position = _address_position(merged, device)
    if position is None or _loaded_address(merged, device) == address:
        return merged
    lines = merged.split("\n")
    line, column = position
    text = lines[line]
    end = _scalar_end(text, column)
    lines[line] = text[:column] + json.dumps(address) + text[end:]
    replaced = "\n".join(lines)
    if _loaded_address(replaced, device) != address or _without(replaced, device) != _without(
        merged, device
    ):
        from robota.core import ConfigError  # noqa: PLC0415

        raise ConfigError(file, f"mesh.peers.{device}.address", "a layout", "a plain scalar")
    return replaced


def record_peer(config_file: Path, device: str, name: str, address: str | None) -> None:
    """``device`` in ``mesh.peers`` of ``config_file`` (``peers_text``), written whole."""
    existing = config_file.read_text(encoding="utf-8") if config_file.exists() else ""
    merged = peers_text(existing, device, name, address, file=str(config_file))
    if merged != existing:
        fresh = config_file.with_name(f".{config_file.name}.pairing")
        fresh.write_text(merged, encoding="utf-8")
        fresh.chmod(config_file.stat().st_mode & 0o777 if config_file.exists() else 0o600)
        fresh.replace(config_file)


def _load(text: str, kind: str = "rt") -> Any:
    from ruamel.yaml import YAML  # noqa: PLC0415

    return YAML(typ=kind, pure=True).load(text)


def _peer(data: Any, device: str) -> Any:
    mesh = data.get("mesh") if isinstance(data, dict) else None
    peers = mesh.get("peers") if isinstance(mesh, dict) else None
    return peers.get(device) if isinstance(peers, dict) else None


def _address_position(text: str, device: str) -> tuple[int, int] | None:
    """Where the value of ``device``'s ``address`` starts (0-based line and column)."""
    from ruamel.yaml.comments import CommentedMap  # noqa: PLC0415

    peer = _peer(_load(text), device)
    if not isinstance(peer, CommentedMap) or "address" not in peer:
        return None
    line, column = peer.lc.value("address")
    return int(line), int(column)


def _loaded_address(text: str, device: str) -> object:
    peer = _peer(_load(text), device)
    return peer.get("address") if isinstance(peer, dict) else None


def _without(text: str, device: str) -> object:
    """The document as plain data with ``device``'s address left out (what must not change)."""
    data = _load(text, "safe")
    peer = _peer(data, device)
    if isinstance(peer, dict):
        peer.pop("address", None)
    return data


def _scalar_end(text: str, start: int) -> int:
    """The column after the scalar that starts at ``start`` on this line."""
    quote = text[start : start + 1]
    if quote == '"':
        index = start + 1
        while index < len(text):
            if text[index] == "\\":
                index += 2
                continue
            if text[index] == '"':
                return index + 1
            index += 1
        return len(text)
    if quote == "'":
        index = start + 1
        while index < len(text):
            if text[index] == "'":
                if text[index + 1 : index + 2] == "'":  # '' is a quote inside
                    index += 2
                    continue
                return index + 1
            index += 1
        return len(text)
    end = len(text)
    for stop in (",", "}", " #", "\t#"):
        found = text.find(stop, start)
        if found != -1:
            end = min(end, found)
    return len(text[:end].rstrip()) if end > start else end
