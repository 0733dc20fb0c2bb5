"""The actor base class and what counts as a crash.

An ``Actor`` is a pykka ``ThreadingActor`` on a daemon thread with four hooks for subclasses:
``started`` (in the actor's thread, before the first message), ``receive`` (one message at a time),
``stopping`` (on a normal stop) and ``terminated`` (as the incarnation ends, stopped or crashed).

A crash is an unhandled exception in a *tell* handler or in ``started``. pykka reports the first to
``on_failure`` but swallows the second, so both paths are caught here and turned into one exit
report. An exception raised while answering an *ask* is the asker's reply, not a crash.

When an incarnation ends for any reason, it first detaches itself from its ``Address`` (rescuing
the tells still in its inbox), then reports ``Stopped`` or ``Crashed`` to whoever bound it: a
supervisor or a route directory. The order matters: the owner may start the next incarnation as
soon as it hears the report, and by then the stash must hold everything.
"""

from __future__ import annotations

import logging
import queue
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import pykka
from pykka import messages as pykka_messages

from .._errors import CrashRequested
from ._address import Address

__all__ = [
    "Actor",
    "Binding",
    "Crashed",
    "ExitReason",
    "RequestCrash",
    "Stopped",
    "launch",
]

logger = logging.getLogger("robota.core.kernel")


@dataclass(frozen=True, slots=True)
class Stopped:
    """The incarnation stopped normally."""


@dataclass(frozen=True, slots=True)
class Crashed:
    """The incarnation died of ``error``."""

    error: BaseException


ExitReason = Stopped | Crashed


@dataclass(frozen=True, slots=True)
class RequestCrash:
    """Makes the receiving actor crash with ``CrashRequested``; see ``testing.crash``."""

    reason: str = "crash requested"


@dataclass(frozen=True, slots=True)
class Binding:
    """What an incarnation needs to know about its owner.

    ``report`` is called exactly once, from the actor's own thread, after the address has been
    detached. It must not block and must not raise.
    """

    address: Address
    incarnation: int
    report: Callable[[int, ExitReason], None]
    ready: Callable[[int], None] | None = None
    """Called from the actor's thread once ``started`` returned, so owners can start children
    strictly one after another."""


class Actor(pykka.ThreadingActor):
    """Base class of every robota actor.

    Subclasses override ``receive`` (and optionally ``started`` and ``stopping``); they do not
    override pykka's ``on_*`` hooks, which belong to the kernel.
    """

    use_daemon_thread: ClassVar[bool] = True

    @staticmethod
    def _create_actor_inbox() -> queue.SimpleQueue[Any]:
        # pykka's default, ``queue.Queue``, wakes a sleeping actor through a Python-level
        # condition variable; the C ``SimpleQueue`` takes half the time (36 against 81 us, one
        # way, after 20 ms of quiet on this machine), and every turn crosses several inboxes.
        return queue.SimpleQueue()

    def __init__(self) -> None:
        super().__init__()
        self._binding: Binding | None = None
        self._exited = False

    # -- hooks for subclasses ------------------------------------------------------------------

    def started(self) -> None:
        """Runs in the actor's thread before the first message. Raising here is a crash."""

    def receive(self, message: Any) -> Any:
        """Handle one message. Raising here is a crash for a tell, the reply for an ask."""
        raise TypeError(f"{type(self).__name__} does not handle {type(message).__qualname__}")

    def stopping(self) -> None:
        """Runs in the actor's thread when the actor stops normally."""

    def terminated(self, reason: ExitReason) -> None:
        """Runs in the actor's thread as the incarnation ends, whether it stopped or crashed:
        the place to release what it holds (files, connections). Errors here are logged."""

    # -- the kernel's side of pykka ------------------------------------------------------------

    def on_start(self) -> None:
        try:
            self.started()
        except Exception as error:
            # pykka logs this and stops the actor but never calls on_failure for it.
            self._exit(Crashed(error))
            raise
        binding = self._binding
        if binding is not None and binding.ready is not None:
            binding.ready(binding.incarnation)

    def on_receive(self, message: Any) -> Any:
        if isinstance(message, RequestCrash):
            raise CrashRequested(message.reason)
        return self.receive(message)

    def on_failure(
        self,
        exception_type: Any,  # noqa: ARG002 (pykka's signature)
        exception_value: Any,
        traceback: Any,  # noqa: ARG002
    ) -> None:
        error = exception_value if exception_value is not None else RuntimeError("unknown")
        self._exit(Crashed(error))

    def on_stop(self) -> None:
        try:
            self.stopping()
        except Exception as error:
            self._exit(Crashed(error))
            raise
        self._exit(Stopped())

    def _exit(self, reason: ExitReason) -> None:
        if self._exited:
            return
        self._exited = True
        try:
            self.terminated(reason)
        except Exception:
            logger.exception("%s: terminated() raised", type(self).__name__)
        binding = self._binding
        if binding is None:
            return
        binding.address._detach(self.actor_ref, self._drain_inbox)
        binding.report(binding.incarnation, reason)

    def _drain_inbox(self) -> Iterator[object]:
        """Yield the tells still queued; answer queued asks with ``ActorDeadError``."""
        inbox = self.actor_inbox
        while not inbox.empty():
            envelope = inbox.get_nowait()  # type: ignore[attr-defined]  # a queue.SimpleQueue
            message = envelope.message
            if isinstance(message, pykka_messages._ActorStop):
                if envelope.reply_to is not None:
                    envelope.reply_to.set(None)
                continue
            if envelope.reply_to is not None:
                envelope.reply_to.set_exception(
                    exc_info=(
                        pykka.ActorDeadError,
                        pykka.ActorDeadError(f"{self} stopped before handling the message"),
                        None,
                    )
                )
                continue
            yield message


def launch(actor: Actor, binding: Binding | None = None) -> pykka.ActorRef[Any]:
    """Start an already constructed actor (pykka's ``start`` insists on constructing it).

    With a ``binding``, the actor reports its exit there and the address is attached to it.
    """
    actor._binding = binding
    ref = actor.actor_ref
    pykka.ActorRegistry.register(ref)
    if binding is not None:
        # Attach before the thread runs: the stash lands in the inbox behind nothing, and a
        # crash in ``started`` rescues it again.
        binding.address._attach(ref)
    actor._start_actor_loop()
    return ref
