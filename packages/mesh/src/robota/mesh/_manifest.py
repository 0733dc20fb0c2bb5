"""What a handoff carries: the sealed payload, its manifest and inventory, and the staging check.

The source seals the task once, when the push starts: ``seal`` refuses while anything is in
flight (a turn running, a prompt queued, an approval waiting: ``Busy`` names which), then
writes the task's settings, its turns (prompts and answers) and its queue as canonical JSON
(sorted keys, no spaces, UTF-8). The manifest is that payload's byte length and SHA-256, the
task's **title** (``offer_title``: the name its operator knows it by, printable and bounded, so
the destination's operator recognises what is offered; the grant signs it), plus an
**inventory** that names every category of what a task has, so both operators see what
moves and what does not: ``transferred`` (settings, turns, queue), ``re-created`` (the agent's
own session: the destination opens a new one primed with the transcript unless the runtime
declares a native way), ``source-local`` (uncommitted and untracked files of a git checkout,
which stay on the source's disk) and ``never-transferred`` (credentials, ``.env``, the
profile, trust decisions, agent logins).

The destination stages the bytes apart as they arrive (``Staging``): chunks must come in order
and never run past the stated length; ``finish`` checks the length first and only then the
digest (a short or long payload is named as such, and hashing is never the first line of
defence). ``read_payload`` then parses the verified bytes, field-checked. Pure, standard library
only.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from ._errors import MeshError

__all__ = [
    "BUSY_STATES",
    "INVENTORY_CATEGORIES",
    "MAX_PAYLOAD",
    "MAX_TITLE",
    "Busy",
    "HandoffBusy",
    "InventoryCategory",
    "Manifest",
    "Payload",
    "PayloadMismatch",
    "Sealed",
    "SourceCheckout",
    "Staging",
    "offer_title",
    "read_payload",
    "seal",
]

MAX_PAYLOAD = 64 * 1024 * 1024
"""The largest payload a handoff carries (a task's transcript; files never travel in it)."""
MAX_TITLE = 200
"""The longest task title an offer (and its grant) carries, in characters."""

Busy = Literal["turn-running", "prompt-queued", "approval-waiting"]
BUSY_STATES: tuple[Busy, ...] = get_args(Busy)

InventoryCategory = Literal["transferred", "re-created", "source-local", "never-transferred"]
INVENTORY_CATEGORIES: tuple[InventoryCategory, ...] = get_args(InventoryCategory)

NEVER_TRANSFERRED = (
    "credentials and API keys",
    ".env files",
    "the robota profile",
    "workspace trust decisions",
    "agent logins",
)

_BUSY_TEXT: dict[Busy, str] = {
    "turn-running": "a turn is running",
    "prompt-queued": "a prompt is queued",
    "approval-waiting": "an approval is waiting",
}


class HandoffBusy(MeshError):
    """A push refused because the task is not idle (``busy`` names what is in flight)."""

    def __init__(self, busy: Busy) -> None:
        super().__init__(f"the task cannot move while {_BUSY_TEXT[busy]}")
        self.busy: Busy = busy


class PayloadMismatch(MeshError):
    """Staged bytes that are not what the manifest states (``what``: ``length``, ``digest``,
    ``order`` or ``content``)."""

    def __init__(self, what: Literal["length", "digest", "order", "content"], detail: str) -> None:
        super().__init__(f"the payload's {what} does not match: {detail}")
        self.what = what


@dataclass(frozen=True, slots=True)
class SourceCheckout:
    """The source's working folder as git sees it (``None`` fields: not a git checkout)."""

    cwd: str
    origin: str | None = None
    head: str | None = None
    uncommitted: tuple[str, ...] = ()
    """Paths with uncommitted changes, then untracked paths: they stay on the source."""


@dataclass(frozen=True, slots=True)
class Manifest:
    """What the offer states about the payload, and what both operators are shown."""

    length: int
    sha256: bytes
    inventory: Mapping[InventoryCategory, tuple[str, ...]]
    origin: str | None
    head: str | None
    title: str = ""
    """The task's title as ``offer_title`` gives it (``""``: the task has none)."""


def offer_title(title: object) -> str:
    """A task's title as an offer carries it: its whitespace runs as one space, anything not
    printable dropped, at most ``MAX_TITLE`` characters; ``""`` for no title."""
    if not isinstance(title, str):
        return ""
    printable = "".join(ch for ch in " ".join(title.split()) if ch.isprintable())
    return printable[:MAX_TITLE].strip()


@dataclass(frozen=True, slots=True)
class Sealed:
    payload: bytes
    manifest: Manifest


@dataclass(frozen=True, slots=True)
class Payload:
    """A verified payload, parsed: what the destination saves as its (held) copy of the task."""

    task: Mapping[str, Any]
    turns: tuple[Mapping[str, Any], ...]
    queue: tuple[str, ...]
    checkout: SourceCheckout


def seal(
    task: Mapping[str, Any],
    turns: Sequence[Mapping[str, Any]],
    queue: Sequence[str],
    checkout: SourceCheckout,
    *,
    busy: Busy | None,
) -> Sealed:
    """The task's payload and manifest; ``HandoffBusy`` while ``busy`` names what runs."""
    if busy is not None:
        raise HandoffBusy(busy)
    document = {
        "v": 1,
        "task": dict(task),
        "turns": [dict(turn) for turn in turns],
        "queue": list(queue),
        "checkout": {"cwd": checkout.cwd, "origin": checkout.origin, "head": checkout.head},
    }
    payload = json.dumps(
        document, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    ).encode("utf-8")
    if len(payload) > MAX_PAYLOAD:
        raise MeshError(
            f"the task's history is larger than a handoff carries ({MAX_PAYLOAD} bytes)"
        )
    inventory: dict[InventoryCategory, tuple[str, ...]] = {
        "transferred": (
            "settings",
            f"{len(turns)} turn{'s' if len(turns) != 1 else ''}",
            f"{len(queue)} queued prompt{'s' if len(queue) != 1 else ''}",
        ),
        "re-created": ("the agent's session, primed with the transcript",),
        "source-local": checkout.uncommitted,
        "never-transferred": NEVER_TRANSFERRED,
    }
    manifest = Manifest(
        len(payload),
        hashlib.sha256(payload).digest(),
        inventory,
        checkout.origin,
        checkout.head,
        offer_title(task.get("title")),
    )
    return Sealed(payload, manifest)


@dataclass
class Staging:
    """The destination's check of a payload as its chunks arrive (the shell writes them to a
    staging file apart from the task store; this decides whether they may be kept)."""

    length: int
    sha256: bytes
    received: int = 0
    _hash: Any = field(default_factory=hashlib.sha256)

    def __post_init__(self) -> None:
        if not 0 <= self.length <= MAX_PAYLOAD:
            raise PayloadMismatch("length", f"a stated length of {self.length} bytes")

    def feed(self, offset: int, chunk: bytes) -> None:
        """Take the chunk that starts at ``offset``; a gap, an overlap or bytes past the stated
        length are refused before anything is kept."""
        if offset != self.received:
            raise PayloadMismatch("order", f"a chunk at {offset}, expected {self.received}")
        if self.received + len(chunk) > self.length:
            raise PayloadMismatch("length", f"more than the stated {self.length} bytes")
        self._hash.update(chunk)
        self.received += len(chunk)

    @property
    def complete(self) -> bool:
        return self.received == self.length

    def finish(self) -> None:
        """Length first, then digest (module docstring); ``PayloadMismatch`` otherwise."""
        if self.received != self.length:
            raise PayloadMismatch("length", f"{self.received} of {self.length} bytes")
        if self._hash.digest() != self.sha256:
            raise PayloadMismatch("digest", "its SHA-256 is not the manifest's")


def read_payload(data: bytes) -> Payload:
    """The verified payload's content, field-checked; ``PayloadMismatch('content', ...)`` for
    anything that is not a payload ``seal`` writes."""
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise PayloadMismatch("content", f"not JSON: {error}") from None
    if not isinstance(document, dict) or document.get("v") != 1:
        raise PayloadMismatch("content", "not a version 1 payload")
    expected = {"v", "task", "turns", "queue", "checkout"}
    if set(document) != expected:
        raise PayloadMismatch("content", f"fields {sorted(document)}, expected {sorted(expected)}")
    task, turns, queue, checkout = (document[k] for k in ("task", "turns", "queue", "checkout"))
    if not isinstance(task, dict):
        raise PayloadMismatch("content", "task is not an object")
    if not isinstance(turns, list) or not all(isinstance(turn, dict) for turn in turns):
        raise PayloadMismatch("content", "turns is not a list of objects")
    if not isinstance(queue, list) or not all(isinstance(item, str) for item in queue):
        raise PayloadMismatch("content", "queue is not a list of texts")
    if not (
        isinstance(checkout, dict)
        and isinstance(checkout.get("cwd"), str)
        and all(isinstance(checkout.get(k), str | None) for k in ("origin", "head"))
    ):
        raise PayloadMismatch("content", "checkout is not {cwd, origin, head}")
    return Payload(
        task,
        tuple(turns),
        tuple(queue),
        SourceCheckout(checkout["cwd"], checkout.get("origin"), checkout.get("head")),
    )
