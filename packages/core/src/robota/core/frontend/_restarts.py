"""A chat transport's side of the host's safe restart, platform-neutral
(docs/architecture/host.md §9).

The owner's ``/restart`` (``/restart --force``) in a chat enrolls its route
(``HostActions.request_restart``); the host tells each enrolled route the restart's news
(``RestartNote``) through the transport's ``RestartNotes``. ``RestartDesk`` keeps what the
notes need across the phases, and says them through the platform's ``send``:

* ``scheduled`` replies to the ``/restart`` message and carries a cancel action whose opaque
  token is bound in the store to the schedule id (``RESTART_CANCEL``: an old note cannot
  cancel a newer restart; the click is claimed like any card action);
* ``cancelled`` and ``restarting`` replace that note (its action goes);
* ``restarted`` (the new host) is a new message.

A route's notes go out one after another, in the order the host told them (one drain task per
route): with ``/restart --force`` the ``restarting`` note follows ``scheduled`` at once, and
must find the scheduled note's message id to replace it, not post a note of its own.

A second ``/restart`` while the route is enrolled gets no new note: ``request`` says what to
reply instead. ``restart_text`` is the note's text, pure.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING

import trio

from .._errors import RobotaError
from ..store import ActionBinding, BindCardActions, CardAction

if TYPE_CHECKING:
    from ..store import StoreClient
    from ._transport import HostActions, RestartNote

__all__ = ["NOTE_TIMEOUT", "RESTART_CANCEL", "RestartDesk", "RestartSend", "restart_text"]

NOTE_TIMEOUT = 5.0
"""Seconds a restart note may take on its way out (it is shielded from the host's stop)."""
RESTART_CANCEL = "restart_cancel"
"""The ``approval_id`` of a restart note's cancel action (its ``decision`` is the schedule id)."""
STORE_TIMEOUT = 10.0

RestartSend = Callable[
    [str, str, "str | None", "str | None", "str | None"], Awaitable["str | None"]
]
"""``send(route_key, text, token, earlier, anchor)``: the note shown on the platform, with a
cancel action carrying ``token`` when it is set; ``earlier``: the note message to replace
(else a new message, a reply to ``anchor`` when set); the new message's id, if one was sent.
A ``RobotaError`` it raises is logged."""


def restart_text(note: RestartNote, texts: Mapping[str, str]) -> str:
    """The note's words from ``texts`` (``restart_<phase>``, ``restart_forced``, ``reason``)."""
    text = texts[f"restart_{note.phase}"]
    if note.phase == "scheduled" and note.forced:
        text = texts["restart_forced"]
    if note.reason:
        text = f"{text}\n\n{texts['reason']}: {note.reason}"
    return text


class RestartDesk:
    """See the module docstring; ``name`` prefixes the log lines."""

    def __init__(
        self,
        store: StoreClient,
        texts: Mapping[str, str],
        send: RestartSend,
        *,
        name: str,
        log: logging.Logger,
    ) -> None:
        self._store = store
        self._texts = texts
        self._send = send
        self._name = name
        self._log = log
        self._anchors: dict[str, str] = {}
        """Route key -> the ``/restart`` message its scheduled note answers."""
        self._cards: dict[tuple[str, str], str] = {}
        """(schedule id, route key) -> the message id of its scheduled note."""
        self._noted: set[tuple[str, str]] = set()
        """(schedule id, route key) told ``scheduled`` (so a second ``/restart`` says so)."""
        self._waiting: dict[str, list[RestartNote]] = {}
        """Route key -> its notes not shown yet, oldest first, while its drain runs."""

    def note(self, note: RestartNote, nursery: trio.Nursery | None) -> None:
        """The host's news for one route (``RestartNotes.restart_note``), shown soon."""
        if nursery is None:
            self._log.warning(
                "%s: restart note %s to %s dropped (not running)", self._name, note.phase, note
            )
            return
        if note.phase == "scheduled":
            self._noted.add((note.schedule_id, note.route_key))
        waiting = self._waiting.get(note.route_key)
        if waiting is not None:  # its drain runs: it comes after the notes before it
            waiting.append(note)
            return
        self._waiting[note.route_key] = [note]
        nursery.start_soon(self._drain, note.route_key)

    async def _drain(self, route_key: str) -> None:
        waiting = self._waiting[route_key]
        try:
            while waiting:
                await self._show(waiting.pop(0))
        finally:
            del self._waiting[route_key]

    def request(
        self, host: HostActions, route_key: str, message_id: str, *, force: bool
    ) -> str | None:
        """The owner's ``/restart`` (``message_id``) in ``route_key``: the route enrolled; the
        schedule id to reply with when it was enrolled already (no new note comes), else
        ``None`` (the scheduled note answers the message)."""
        self._anchors[route_key] = message_id
        schedule = host.request_restart(route_key, force=force)
        if (schedule, route_key) in self._noted:
            return None
        self._anchors.pop(route_key, None)
        return schedule

    async def _show(self, note: RestartNote) -> None:
        # Shielded, and bounded: the restarting note is told just before the host stops its
        # transports, and would otherwise be cancelled on its way out.
        with trio.move_on_after(NOTE_TIMEOUT) as scope:
            scope.shield = True
            await self._deliver(note)

    async def _deliver(self, note: RestartNote) -> None:
        text = restart_text(note, self._texts)
        token = secrets.token_urlsafe(18) if note.phase == "scheduled" else None
        key = (note.schedule_id, note.route_key)
        earlier = self._cards.get(key) if note.phase in ("cancelled", "restarting") else None
        anchor = None if earlier is not None else self._anchors.pop(note.route_key, None)
        try:
            message_id = await self._send(note.route_key, text, token, earlier, anchor)
        except RobotaError as error:
            self._log.warning(
                "%s: the restart note to %s failed: %s", self._name, note.route_key, error
            )
            return
        if token is not None and message_id is not None:
            self._cards[key] = message_id
            action = CardAction(f"restart:{note.schedule_id}", RESTART_CANCEL, note.schedule_id)
            await self._store.write(
                BindCardActions(message_id, note.route_key, (ActionBinding(token, action),)),
                timeout=STORE_TIMEOUT,
            )
