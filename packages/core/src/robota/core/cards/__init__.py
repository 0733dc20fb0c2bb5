"""robota.core.cards: the card renderer, one actor per turn, and the delivery of its cards.

Every turn a person watches gets one progress card (created once, then edited in place) and,
once the turn ended and the card shows it, the final answer as messages of their own, exactly
once. This package decides what is shown and when; a transport only implements ``CardSink``.

Design, in four parts (layer 7 of ``robota.core``: it uses the kernel, the store and
``presentation``, and nothing of runtimes, transports or the CLI):

* ``TurnCard`` is the policy, pure: events reduce into a ``TurnView``; ``UpdateThrottle``
  decides when to show (at most every 2 s, critical changes such as a new approval or the
  terminal state after 500 ms, latest state wins, unchanged renders skipped by hash, transient
  failures backed off 2, 4, 8, 16, 30 s or the platform's ``retry_after``, the terminal state
  never dropped); the final answer goes once the terminal card is on screen. It returns effects
  and a next deadline, so it is tested on a hand-held clock.
* ``CardShell`` is the shell: it feeds ``TurnCard``, sends its requests to the delivery
  service, its store ops to the writer, its notices to the engine, and keeps one ``Timers``
  wake-up for its next deadline. It never does I/O, so it runs on either kind of actor: the
  card host's ``LoopCard`` (on the trio loop, no thread of its own) or ``CardActor`` (a pykka
  thread, under any supervisor).
* ``CardDelivery`` is the trio side (one service per sink): per-turn ordered lanes, the sink's
  calls under a timeout, and the ledger: ``RecordProgressCard`` around each edit (no edit once
  the answer is out) and ``RecordFinalDelivery`` after the answer (never sent twice, chunks
  never repeated).
* ``CardHost`` runs each open turn's ``LoopCard`` under a ``LoopChild`` (no task or thread per
  turn), so a card that crashes restarts from its saved snapshot (``SaveTurnSnapshot``) with the
  ledger's card id and its live approval tokens, and sends nothing if the answer is already out.

The platform is a strategy (``CardPlatform``: core's ``TerminalPlatform``, and each chat
transport plugin's, which it declares as ``CardRenderers``): view to payload, answer to chunks
split on Markdown boundaries within the platform's limits; ``StopButtonCards`` decorates one
with a transport's own buttons (Stop while the turn runs).
Approval buttons carry opaque random tokens bound in the store (``BindCardActions``); the
transport resolves a click with ``robota.core.store.ClaimCardAction`` (a stale or foreign token
is refused with a reason).

Wiring (the engine's side)::

    # once, in the supervision tree, in this order after the store writer (children stop in
    # reverse, so the host stops first and every card actor saves its snapshot while the
    # delivery service and the store are still up):
    timers = Timers()                                     # robota.core, a Service
    delivery = CardDelivery(chat_sink, store)             # a Service per transport
    host = CardHost(store=store, timers=timers)           # a Service
    ... ChildSpec("timers", lambda: timers), ChildSpec("chat-cards", lambda: delivery),
        ChildSpec("cards", lambda: host) ...

    # per turn, from any thread (a route actor):
    card = host.open(
        CardTurn(turn_id, task_id, route_key, started_at=time.time()),
        lambda: plugin.card_platform(agent="reviewer"),   # the transport's CardRenderers
        delivery,
        notify=route_address.tell,
    )
    card.tell(event)            # every RuntimeEvent of the turn, and UserSteer(text)

What the engine gets back, on ``notify``: ``ProgressCardPosted(turn_id, message_id)`` when the
card exists, then one of ``FinalAnswerDelivered(turn_id, message_ids, card_message_id,
already)`` or ``FinalAnswerFailed(turn_id, error)``, after which the host stops the card.
Notices may repeat across restarts (``already=True``): handle them idempotently. A turn that
never ends (the agent vanished) is the engine's to end: tell the actor a ``TurnCompleted``
(interrupted or failed), or ``host.close(turn_id)`` to drop it unanswered. Tests and print
mode may also drive ``CardActor`` under any supervisor, or ``TurnCard`` alone on the loop. Approval
decisions do not come from here: the transport claims the clicked token and the engine tells
the agent; the ``ApprovalResolved`` event that follows retires the approval's other buttons.
"""

from ._actor import CardActor
from ._buttons import RUNNING_STATES, StopButtonCards
from ._core import CardPolicy, Effect, Restored, TurnCard
from ._delivery import CardDelivery
from ._host import CARD_BACKOFF, CardHost
from ._messages import (
    CardFailed,
    CardNotice,
    CardOutcome,
    CardRequest,
    CardShown,
    CardSkipped,
    CardTurn,
    DeliverFinal,
    FinalAnswerDelivered,
    FinalAnswerFailed,
    FinalFailed,
    FinalSent,
    ProgressCardPosted,
    ShowCard,
)
from ._platforms import ApprovalTokens, CardPlatform, CardRenderers, TerminalPlatform
from ._sink import (
    CardLookup,
    CardSink,
    FinalLookup,
    PermanentSendError,
    SendError,
    TransientSendError,
)

__all__ = [
    # what the engine wires
    "CardHost",
    "CardDelivery",
    "CardTurn",
    "CardPolicy",
    "CARD_BACKOFF",
    # what the engine hears
    "CardNotice",
    "ProgressCardPosted",
    "FinalAnswerDelivered",
    "FinalAnswerFailed",
    # platforms
    "CardPlatform",
    "CardRenderers",
    "ApprovalTokens",
    "TerminalPlatform",
    "StopButtonCards",
    "RUNNING_STATES",
    # what a transport implements
    "CardSink",
    "FinalLookup",
    "CardLookup",
    "SendError",
    "TransientSendError",
    "PermanentSendError",
    # the actor and its pure policy
    "CardActor",
    "TurnCard",
    "Restored",
    "Effect",
    # between the actor and the delivery service
    "CardRequest",
    "ShowCard",
    "DeliverFinal",
    "CardOutcome",
    "CardShown",
    "CardSkipped",
    "CardFailed",
    "FinalSent",
    "FinalFailed",
]
