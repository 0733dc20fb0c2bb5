"""Two sides of a handoff's host driver (robota.host._mesh_handoff) on two real stores, their
frames through the codec as a link would carry them (``Wire``), for the tests of the driver and
of its staging on disk; either side can be started again on its store (``Pair.restart``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from robota.core.store import handoff_row, open_reader, write_once
from robota.host._handoff_staging import HandoffStaging
from robota.host._mesh_handoff import HandoffHooks, HandoffKeys, MeshHandoffs
from robota.mesh import HandoffFrame, SourceCheckout, device_id, public_bytes, seal
from robota.mesh._frames import decode, encode

from ._chain import Chain

__all__ = [
    "CHANNEL",
    "TASK",
    "TURNS",
    "Book",
    "Pair",
    "Stopped",
    "Wire",
    "make_pair",
    "phases",
    "sealed_task",
]

CHANNEL = b"\x05" * 32
TURNS = [{"prompt": "HELLO", "answer": "hi"}, {"prompt": "HISTORY", "answer": "HELLO"}]
TASK = {"id": "t-build", "agent": "codex", "runtime_kind": "acp", "cwd": "/src/p", "title": "b"}


class Nothing:
    def apply(self, _db: Any) -> None:
        return None


class Stopped(Exception):
    """The host stopped before this write (``Book.stop_before``)."""


class Book:
    """One store, written one transaction at a time; ``stop_before`` an op's type: the host
    stops just before writing such an op (``Stopped`` raised, nothing written)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.stop_before: type | None = None
        write_once(path, Nothing())  # the schema, so a read before any write finds it

    async def write(self, op: Any) -> Any:
        if self.stop_before is not None and isinstance(op, self.stop_before):
            raise Stopped(type(op).__name__)
        return write_once(self.path, op)

    async def read(self, query: Callable[[Any], Any]) -> Any:
        db = open_reader(self.path)
        try:
            return query(db)
        finally:
            db.close()


@dataclass
class Wire:
    """Both ends of one link: what each side sends waits here until ``pump`` delivers it."""

    sides: dict[str, MeshHandoffs] = field(default_factory=dict)
    queue: list[tuple[str, str, HandoffFrame]] = field(default_factory=list)
    tamper: Callable[[HandoffFrame], HandoffFrame] = lambda frame: frame

    def end(self, me: str) -> Any:
        wire = self

        class End:
            def channel(self, _peer: str) -> bytes:
                return CHANNEL

            async def send_handoff(self, peer: str, frame: HandoffFrame, *, channel: bytes) -> bool:
                assert channel == CHANNEL
                wire.queue.append((me, peer, frame))
                return True

        return End()

    async def pump(self) -> list[str]:
        seen: list[str] = []
        while self.queue:
            sender, peer, frame = self.queue.pop(0)
            arrived = decode(encode(self.tamper(frame)))
            seen.append(type(arrived).__name__)
            await self.sides[peer].on_handoff(sender, CHANNEL, arrived)  # type: ignore[arg-type]
        return seen


@dataclass
class Pair:
    wire: Wire
    source: MeshHandoffs
    destination: MeshHandoffs
    src: str
    dst: str
    src_book: Book
    dst_book: Book
    happened: list[str]
    made: Callable[[str], MeshHandoffs] = field(repr=False, default=lambda _name: NotImplemented)

    def restart(self, name: str) -> MeshHandoffs:
        """The ``source`` or ``destination`` driver anew on the same store and staging folder,
        as a host that stopped starts again: what it held only in memory is gone."""
        side = self.made(name)
        setattr(self, name, side)
        self.wire.sides[self.src if name == "source" else self.dst] = side
        return side


def make_pair(tmp_path: Path) -> Pair:
    """Two sides' drivers on two stores, wired to each other (the ``pair`` fixture's)."""
    chain = Chain()
    src_key, dst_key = chain.devices[:2]
    src, dst = device_id(src_key), device_id(dst_key)
    keys = {src: public_bytes(src_key), dst: public_bytes(dst_key)}
    wire, happened = Wire(), []

    def hooks(side: str) -> HandoffHooks:
        async def let_go(task: str) -> None:
            happened.append(f"{side} let go {task}")

        async def unfreeze(task: str) -> None:
            happened.append(f"{side} unfroze {task}")

        async def released(task: str) -> None:
            happened.append(f"{side} may start {task}")

        return HandoffHooks(let_go, unfreeze, released, happened.append)

    books = Book(tmp_path / "source.db"), Book(tmp_path / "destination.db")
    who = {"source": (books[0], src, src_key), "destination": (books[1], dst, dst_key)}

    def made(name: str) -> MeshHandoffs:
        book, me, key = who[name]
        return MeshHandoffs(
            book,
            HandoffKeys(me, "USER", key, keys.get),
            lambda: wire.end(me),
            staging=HandoffStaging(tmp_path / name),
            hooks=hooks(name),
        )

    sides = made("source"), made("destination")
    wire.sides = {src: sides[0], dst: sides[1]}
    return Pair(wire, sides[0], sides[1], src, dst, *books, happened, made)


def sealed_task() -> Any:
    checkout = SourceCheckout("/src/p", "git@example.org:me/p.git", "a" * 40, ("dirty.py",))
    return seal(TASK, TURNS, [], checkout, busy=None)


async def phases(pair: Pair, handoff: str) -> tuple[str, str]:
    source = await pair.src_book.read(lambda db: handoff_row(db, handoff, "source"))
    destination = await pair.dst_book.read(lambda db: handoff_row(db, handoff, "destination"))
    return (
        source.phase if source else "-",
        destination.phase if destination else "-",
    )
