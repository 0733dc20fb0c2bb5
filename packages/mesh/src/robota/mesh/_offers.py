"""File offers between devices, sans-IO (issue 30 §2): which files may be offered, the name an
accepted file is kept under, and an offer's life.

``robota mesh offer DEVICE PATH``: from the operator's terminal any readable file; from an agent
(no terminal, or the caller's ancestry reaches an agent's process) only a file inside its
task's working folder that does not look like a secret (``offer_refusal``, ``secret_reason``:
``.env*``, keys and certificates, ``id_*``, ``.netrc``, ``.npmrc``, ``.pypirc``,
``.git-credentials``, anything in an ``.ssh`` or ``.gnupg`` folder, anything under the
profile). The path is judged as resolved (links followed), so a link inside the folder to a
file outside it is outside.

The receiving device keeps an accepted file under ``<profile>/data/peers/<device id>/``, named
by ``kept_name`` from the name the offer carries: one path component, no control characters,
never ``.``/``..``, never the prefix of a partial copy, at most ``MAX_NAME_BYTES``; a clash gets
a suffix (``clash_name``). An offer's phases (``advance``): ``offered`` -> ``accepted`` ->
``done | failed``, or ``declined``, or ``expired`` once ``OFFER_TTL`` passed unanswered; a
phase is one store write on its side.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import PurePath, PurePosixPath
from typing import ClassVar, Literal

__all__ = [
    "CHUNK",
    "MAX_NAME_BYTES",
    "OFFER_TTL",
    "OUTCOMES",
    "PARTIAL_PREFIX",
    "FileChunk",
    "OfferEvent",
    "OfferFrame",
    "OfferOutcome",
    "OfferPhase",
    "PeerOffer",
    "advance",
    "clash_name",
    "kept_name",
    "offer_refusal",
    "secret_reason",
]

OFFER_TTL = 600.0
"""Seconds an offer waits for the operator's answer."""
MAX_NAME_BYTES = 200
PARTIAL_PREFIX = ".partial-"
"""A copy being received: never a kept file's name, removed on failure and at start."""

OfferPhase = Literal["offered", "accepted", "done", "failed", "declined", "expired"]
OfferEvent = Literal["accept", "decline", "expire", "complete", "fail"]

_SECRET_NAMES = frozenset({".netrc", ".npmrc", ".pypirc", ".git-credentials", "_netrc"})
_SECRET_SUFFIXES = frozenset(
    {
        ".pem",
        ".key",
        ".crt",
        ".cer",
        ".der",
        ".p12",
        ".pfx",
        ".jks",
        ".keystore",
        ".ppk",
        ".gpg",
        ".asc",
        ".kdbx",
    }
)
_SECRET_FOLDERS = frozenset({".ssh", ".gnupg", ".aws", ".kube", ".docker"})


@dataclass(frozen=True, slots=True)
class PeerOffer:
    """A file offered (the frame ``peer.offer``): what the receiving operator sees and what
    the copy is checked against."""

    TYPE: ClassVar[str] = "peer.offer"
    offer: str
    name: str
    size: int
    sha256: str
    task: str
    """The task on the receiving device whose conversation is told of the kept file, as
    ``robota task`` names one (``""``: none)."""


@dataclass(frozen=True, slots=True)
class OfferOutcome:
    """The receiving device's answer (``peer.offer.outcome``): ``accepted`` (send the bytes),
    then ``done`` or ``failed``; or ``declined`` / ``expired``; ``detail`` says why."""

    TYPE: ClassVar[str] = "peer.offer.outcome"
    offer: str
    outcome: str
    detail: str


@dataclass(frozen=True, slots=True)
class FileChunk:
    """Bytes of an accepted offer (``peer.chunk``), sent in order from ``offset``."""

    TYPE: ClassVar[str] = "peer.chunk"
    offer: str
    offset: int
    data: bytes


OfferFrame = PeerOffer | OfferOutcome | FileChunk
CHUNK = 256 * 1024
"""Bytes one chunk carries (its frame, base64, stays well under the link's 1 MiB)."""
OUTCOMES = frozenset({"accepted", "declined", "expired", "done", "failed"})


def secret_reason(path: PurePath) -> str | None:
    """Why ``path`` looks like a secret (its parts as given), or ``None``."""
    for folder in path.parts[:-1]:
        if folder in _SECRET_FOLDERS:
            return f"it is in a {folder} folder"
    name = path.name
    lowered = name.lower()
    if lowered.startswith(".env"):
        return f"{name} looks like an environment file (.env*)"
    if lowered in _SECRET_NAMES:
        return f"{name} holds credentials"
    if lowered.startswith("id_"):
        return f"{name} looks like a private key (id_*)"
    suffixes = {s.lower() for s in PurePosixPath(lowered).suffixes}
    found = sorted(suffixes & _SECRET_SUFFIXES)
    if found:
        return f"{name} looks like a key or certificate ({found[0]})"
    return None


def _inside(path: PurePath, folder: PurePath) -> bool:
    return path == folder or folder in path.parents


def offer_refusal(
    resolved: PurePath, *, operator: bool, task_dir: PurePath | None, profile: PurePath
) -> str | None:
    """Why the file at ``resolved`` (absolute, links resolved) may not be offered, or ``None``.
    ``operator``: the caller is the operator at a terminal; else an agent, bounded by its
    task's working folder ``task_dir`` (resolved too)."""
    if operator:
        return None
    if task_dir is None:
        return "an agent may offer only files of its task's folder, and no task was named"
    if _inside(resolved, profile):
        return "it is under robota's profile"
    if not _inside(resolved, task_dir):
        return f"it is outside the task's folder ({task_dir})"
    return secret_reason(resolved.relative_to(task_dir))


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def kept_name(offered: str) -> str:
    """The name an accepted file is kept under, from the one the offer carries: its last path
    component (``/`` or ``\\``), control characters dropped, never empty, ``.`` or ``..``, never
    a partial copy's prefix, at most ``MAX_NAME_BYTES`` bytes (the extension kept)."""
    name = unicodedata.normalize("NFC", offered)
    name = re.split(r"[/\\]", name)[-1]
    name = _CONTROL.sub("", name).strip()
    if name in ("", ".", ".."):
        return "file"
    if name.startswith(PARTIAL_PREFIX):
        name = "_" + name
    return _shortened(name, MAX_NAME_BYTES)


def _shortened(name: str, limit: int) -> str:
    if len(name.encode("utf-8")) <= limit:
        return name
    path = PurePosixPath(name)
    suffix = path.suffix if len(path.suffix.encode("utf-8")) <= 16 else ""
    stem = name[: len(name) - len(suffix)] if suffix else name
    while len((stem + suffix).encode("utf-8")) > limit:
        stem = stem[:-1]
    return stem + suffix


def clash_name(name: str, attempt: int) -> str:
    """The name to try after ``attempt`` clashes (``report.pdf`` -> ``report (2).pdf``)."""
    if attempt <= 0:
        return name
    path = PurePosixPath(name)
    suffix = path.suffix if path.stem else ""
    stem = name[: len(name) - len(suffix)] if suffix else name
    tail = f" ({attempt + 1}){suffix}"
    return _shortened(stem, MAX_NAME_BYTES - len(tail.encode("utf-8"))) + tail


_MOVES: dict[tuple[OfferPhase, OfferEvent], OfferPhase] = {
    ("offered", "accept"): "accepted",
    ("offered", "decline"): "declined",
    ("offered", "expire"): "expired",
    ("accepted", "complete"): "done",
    ("accepted", "fail"): "failed",
}


def advance(
    phase: OfferPhase, event: OfferEvent, *, now: float, expires_at: float
) -> OfferPhase | None:
    """The phase after ``event``; ``None`` when it is not a move from ``phase`` (refused,
    nothing changes). An offer past its ``expires_at`` can only expire."""
    if phase == "offered" and event in ("accept", "decline") and now >= expires_at:
        return None
    return _MOVES.get((phase, event))
