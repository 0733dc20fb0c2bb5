"""Taking a task another device offers (issue 30 §3, the destination's operator): a handoff
waiting for an answer is listed by ``mesh offers`` beside the files (``kind`` ``handoff``),
accepted by ``mesh accept ID [--dir PATH]`` and declined by ``mesh decline ID``; the host's
file offers and handoffs share those three requests (``MeshService`` asks this module first).

``mesh.accept`` is operator-only (the control server refuses a caller descending from an
agent's process; the command asks on ``/dev/tty`` first). The answer goes to
``MeshHandoffs.answer`` with the folder chosen, then the accept waits until the handoff
committed (the task saved held here) or ended otherwise. Its answer names the folder the task
works in, what stayed on the source, and the warnings ``checkout_warnings`` gives when the
source's folder was a git checkout whose origin or HEAD this folder does not share.

An item's ``name`` is the task's title as the offer carries it (the manifest's ``title``,
which the source's grant signs), so the operator recognises what is offered; a task with no
title is named by its id.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio

from robota.core.control import HandlerError

if TYPE_CHECKING:
    from robota.core.store import HandoffRow
    from robota.mesh import SourceCheckout

    from ._mesh_handoff import MeshHandoffs

__all__ = [
    "accept_handoff",
    "checkout_warnings",
    "decline_handoff",
    "handoff_item",
    "handoff_name",
    "offered_handoff",
    "offered_handoffs",
]

COMMIT_TIMEOUT = 120.0
"""Seconds an accepted handoff may take to arrive and be saved."""
POLL = 0.2


def handoff_item(row: HandoffRow) -> dict[str, Any]:
    """A handoff waiting here as ``mesh offers --json`` lists it (the Contract's names)."""
    from robota.mesh import iso_time  # noqa: PLC0415

    return {
        "id": row.id,
        "kind": "handoff",
        "from": row.peer,
        "name": handoff_name(row.manifest, row.task),
        "size": row.manifest_length,
        "sha256": row.manifest_sha256.hex(),
        "expiresAt": iso_time(row.expires_at),
    }


def handoff_name(manifest: Mapping[str, object], task: str) -> str:
    """What a handoff is called to its destination's operator: the title its manifest carries,
    else the task's id."""
    title = manifest.get("title")
    return title if isinstance(title, str) and title else task


def checkout_warnings(manifest: Mapping[str, object], local: SourceCheckout) -> list[str]:
    """What the operator is warned of when the source's folder was a git checkout and this
    one differs: another origin, another HEAD, or no checkout at all."""
    origin, head = manifest.get("origin"), manifest.get("head")
    if not isinstance(origin, str) and not isinstance(head, str):
        return []
    if local.head is None:
        return [f"{local.cwd} is not a git checkout; the source's was ({origin or 'no origin'})"]
    warnings = []
    if isinstance(origin, str) and origin != local.origin:
        warnings.append(f"{local.cwd}: origin {local.origin or 'none'}, the source's {origin}")
    if isinstance(head, str) and head != local.head:
        warnings.append(f"{local.cwd}: HEAD {local.head[:12]}, the source's {head[:12]}")
    return warnings


async def offered_handoffs(handoffs: MeshHandoffs) -> list[HandoffRow]:
    """The handoffs offered to this device and not yet answered."""
    return [r for r in await handoffs.rows() if r.side == "destination" and r.phase == "offered"]


async def offered_handoff(handoffs: MeshHandoffs | None, text: str) -> HandoffRow | None:
    """The one handoff waiting here whose id is or begins with ``text``; ``None`` when none
    is (the id may be a file offer's)."""
    if handoffs is None or not text:
        return None
    rows = [r for r in await offered_handoffs(handoffs) if r.id.startswith(text)]
    if len(rows) > 1:
        raise HandlerError("bad_request", f"{text!r} begins several offers' ids", "offer")
    return rows[0] if rows else None


async def accept_handoff(
    handoffs: MeshHandoffs, row: HandoffRow, directory: str | None
) -> dict[str, object]:
    """The operator's yes to ``row`` (the task to work in ``directory``, else the source's
    folder), then the wait until it is saved here (module docstring)."""
    from robota.core.store import handoff_row  # noqa: PLC0415
    from robota.core.store import task as load_task  # noqa: PLC0415

    from ._mesh_push import git_checkout  # noqa: PLC0415

    if directory is not None and not (Path(directory).is_absolute() and Path(directory).is_dir()):
        raise HandlerError("bad_request", f"--dir {directory} is not a folder", "dir")
    try:
        await handoffs.answer(row.id, yes=True, cwd=directory)
    except ValueError as error:
        raise HandlerError("refused", str(error)) from None
    current = row
    with trio.move_on_after(COMMIT_TIMEOUT):
        while current.phase not in ("committed", "abandoned"):
            await trio.sleep(POLL)
            fresh = await handoffs.book.read(lambda db: handoff_row(db, row.id, "destination"))
            current = fresh if fresh is not None else current
    if current.phase != "committed":
        raise HandlerError("failed", f"handoff {row.id} is {current.phase}, the task not saved")
    task = await handoffs.book.read(lambda db: load_task(db, row.task))
    cwd = str(task.cwd) if task is not None else directory or ""
    local = await trio.to_thread.run_sync(git_checkout, cwd)
    inventory = row.manifest.get("inventory")
    staying = inventory.get("source-local", []) if isinstance(inventory, Mapping) else []
    return {
        "handoff": row.id,
        "task": row.task,
        "from": row.peer,
        "phase": current.phase,
        "cwd": cwd,
        "sourceLocal": list(staying) if isinstance(staying, list) else [],
        "warnings": checkout_warnings(row.manifest, local),
    }


async def decline_handoff(handoffs: MeshHandoffs, row: HandoffRow) -> dict[str, object]:
    try:
        phase = await handoffs.answer(row.id, yes=False)
    except ValueError as error:
        raise HandlerError("refused", str(error)) from None
    return {"offer": row.id, "phase": phase}
