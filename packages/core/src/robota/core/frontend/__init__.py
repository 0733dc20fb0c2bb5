"""robota.core.frontend: the one port every front end uses to reach the engine's routes.

A front end (the TUI, print mode; later the chat transports, ``robota session attach`` and
``--serve``) makes one ``FrontEndPort`` per engine, subscribes to each route it shows, reads the
route's notices in batches on its own side (a trio loop, an asyncio loop on its own thread, a
plain thread), and tells the route what the person did::

    port = FrontEndPort(engine)
    link = port.subscribe("tui:1a2b")          # any thread; connected from now on
    link.send(NewTask(TaskSettings()))         # any thread, never blocks
    link.send(UserInput("hello"))
    async for batch in link:                   # trio; or attach(wake) + drain(); or wait()
        for notice in batch: ...
    link.close()

The vocabulary (``UserInput``, ``TurnUpdate``...) is ``robota.core.engine``'s; this package adds
the crossing (``_port``), its back-pressure policy (``_backpressure``: read its docstring before
changing a bound) and what a name given to ``-r`` means (``_resolve``).

Why a package of its own and not part of ``robota.core.engine``: it is the layer above the
engine (it knows the engine only as a ``RouteHub``: connect, disconnect, tell), front ends need
nothing else of the engine's wiring, and the engine's internals change without front ends
noticing.

Layering, bottom up: ``_backpressure`` (pure), ``_resolve`` (pure), ``_inbound`` (pure: the
chat transports' owner filter, stale guard and durable claim), ``_admission`` (pure: a chat
message's way in as effects, the screen, the accept, the lane), ``_port`` (an attached
surface's frames are the protocol's: ``robota.core.protocol``), ``_transport`` (what the host
hands a chat transport it starts: the port, the store, a status callback; what a transport
offers back: group creation), ``_groups`` (what every transport's group chats share: their
notes, the welcome note, a chat's ``/newgroup`` through the host), ``_link`` (pure: a chat
transport's connection machine and the status it reports), ``_chat_values`` (pure: a followed
route's and a turn's values), ``_recovery_plan`` (``recovery_plan``, the restart's decision,
pure), ``_chat_gate`` (``ChatGate``, pure: how many chats a transport serves at once, the
others waiting in order), ``_chat`` (``ChatTurns``: the machinery every chat service owns, its
routes read and its cards opened, handed the platform's part as a ``TurnHooks``; above
``robota.core.cards``; its inbox, ``_chat_inbox``: a message accepted before the platform is
acknowledged, fed again or settled after a crash), ``_restarts`` (``RestartDesk``: a chat
transport's side of the host's safe restart, its notes through the platform's ``send``),
``_queue`` (``QueueNotes``: a queued prompt's note and its Cancel action, pure),
``_recovery_notes`` (pure: what a restarted host tells a chat of a turn it left unsettled),
``_media`` (a chat's images and files once downloaded: limits, folder, what the agent gets),
``_clicks`` (``Clicks``: a click on a chat's button checked, claimed once and acted on, through
what of the service ``ClickSite`` names), ``_service`` (``ChatService``: one chat service,
composed: the shell that runs ``_admission``'s effects and ``_link``'s machine for any
``Platform``, the protocol a chat transport's adapter implements; above all the others).
"""

import typing

from ..kernel import lazy_attributes as _lazy_attributes

if typing.TYPE_CHECKING:
    from ._admission import Arrived, Heard, ScreenRules, accepted, admission, fetched, screen
    from ._backpressure import CAPACITY, COALESCE_AFTER, merge_notices
    from ._chat import RECOVER_SINCE, ChatTurns, TurnHooks
    from ._chat_gate import MAX_BUSY_CHATS, ChatGate
    from ._chat_inbox import Accepted, ChatInbox, InboxLeft
    from ._chat_values import ChatRoute, ChatTurn, Opening, Outcome, Pending, take_pending
    from ._clicks import Clicked, ClickVerdict
    from ._groups import (
        GROUP_COMMANDS,
        MadeGroups,
        greet_group,
        group_notes,
        open_group,
        welcome_text,
    )
    from ._inbound import STALE_AFTER, Dated, Ignore, freshness, inbound_claims, owner_filter
    from ._link import Identified, IdentifyFailed, LinkConnecting, LinkUp, PlatformRefused
    from ._media import (
        FILE_BYTES,
        IMAGE_BYTES,
        IMAGE_EDGE,
        Prepared,
        Refused,
        Saved,
        agent_capabilities,
        attachments_folder,
        check_image,
        image_extension,
        image_size,
        media_notes,
        prompt_with,
        safe_name,
        stored,
        too_big,
        write_attachment,
    )
    from ._port import FrontEndPort, LinkEnded, Overflowed, RouteHub, RouteLink
    from ._queue import (
        QUEUE_CANCEL,
        QueueClick,
        QueueNote,
        QueueNotes,
        QueueState,
        queue_texts,
    )
    from ._recovery_notes import RecoveryNote, recovery_note, recovery_notes, recovery_texts
    from ._recovery_plan import RecoveredTurn, recovery_plan
    from ._resolve import AmbiguousTask, TaskNotFound, TaskNotResolved, resolve_task
    from ._restarts import NOTE_TIMEOUT, RESTART_CANCEL, RestartDesk, RestartSend, restart_text
    from ._service import (
        Card,
        ChatService,
        Hearing,
        LinkStatus,
        Platform,
        Reaction,
    )
    from ._transport import (
        GroupChat,
        GroupMaker,
        GroupRefused,
        HostActions,
        PendingFinals,
        RestartNote,
        RestartNotes,
        RestartPhase,
        ServedTransport,
        ServesRoutes,
        TransportContext,
        TransportState,
        TransportStatus,
    )

__all__ = [
    # the port
    "FrontEndPort",
    "RouteLink",
    "RouteHub",
    "LinkEnded",
    "Overflowed",
    # the back-pressure policy
    "CAPACITY",
    "COALESCE_AFTER",
    "merge_notices",
    # what a chat transport is handed by the host, and reports
    "ServedTransport",
    "TransportContext",
    "TransportStatus",
    "TransportState",
    "HostActions",
    "PendingFinals",
    "ServesRoutes",
    "RestartNote",
    "RestartNotes",
    "RestartPhase",
    "GroupMaker",
    "GroupChat",
    "GroupRefused",
    # what every chat transport's groups share: their notes, the welcome, a chat's command
    "MadeGroups",
    "GROUP_COMMANDS",
    "greet_group",
    "group_notes",
    "open_group",
    "welcome_text",
    # what every chat transport shares: its turns, its restart, its inbound order's pure steps
    "ChatTurns",
    "TurnHooks",
    "ChatGate",
    "MAX_BUSY_CHATS",
    "Accepted",
    "ChatInbox",
    "InboxLeft",
    "ChatRoute",
    "ChatTurn",
    "Pending",
    "Opening",
    "Outcome",
    "RECOVER_SINCE",
    "RecoveredTurn",
    "recovery_plan",
    "take_pending",
    "STALE_AFTER",
    "Dated",
    "Ignore",
    "freshness",
    "inbound_claims",
    "owner_filter",
    # the admission core (pure): a message's way in as effects
    "Heard",
    "ScreenRules",
    "Arrived",
    "screen",
    "accepted",
    "admission",
    "fetched",
    # one chat service, composed: the shell and the platform adapter's protocol
    "ChatService",
    "Clicked",
    "ClickVerdict",
    "Platform",
    "Hearing",
    "Card",
    "Reaction",
    "LinkStatus",
    "Identified",
    "IdentifyFailed",
    "LinkConnecting",
    "LinkUp",
    "PlatformRefused",
    "RestartDesk",
    "RestartSend",
    "RESTART_CANCEL",
    "QUEUE_CANCEL",
    "QueueClick",
    "QueueNote",
    "QueueNotes",
    "QueueState",
    "queue_texts",
    "NOTE_TIMEOUT",
    "restart_text",
    "RecoveryNote",
    "recovery_note",
    "recovery_notes",
    "recovery_texts",
    # a chat's images and files, once downloaded
    "FILE_BYTES",
    "IMAGE_BYTES",
    "IMAGE_EDGE",
    "Prepared",
    "Refused",
    "Saved",
    "agent_capabilities",
    "attachments_folder",
    "check_image",
    "image_extension",
    "image_size",
    "media_notes",
    "prompt_with",
    "safe_name",
    "stored",
    "too_big",
    "write_attachment",
    # an attached surface's frames (notices and requests as JSON lines)
    # naming a task
    "resolve_task",
    "TaskNotResolved",
    "TaskNotFound",
    "AmbiguousTask",
]

_HOMES = {
    "ChatService": "._service",
    "Clicked": "._clicks",
    "ClickVerdict": "._clicks",
    "Platform": "._service",
    "Hearing": "._service",
    "Card": "._service",
    "Reaction": "._service",
    "LinkStatus": "._service",
    "Identified": "._link",
    "IdentifyFailed": "._link",
    "LinkConnecting": "._link",
    "LinkUp": "._link",
    "PlatformRefused": "._link",
    "Heard": "._admission",
    "ScreenRules": "._admission",
    "Arrived": "._admission",
    "screen": "._admission",
    "accepted": "._admission",
    "admission": "._admission",
    "fetched": "._admission",
    "QUEUE_CANCEL": "._queue",
    "QueueClick": "._queue",
    "QueueNote": "._queue",
    "QueueNotes": "._queue",
    "QueueState": "._queue",
    "queue_texts": "._queue",
    "FILE_BYTES": "._media",
    "IMAGE_BYTES": "._media",
    "IMAGE_EDGE": "._media",
    "Prepared": "._media",
    "Refused": "._media",
    "Saved": "._media",
    "agent_capabilities": "._media",
    "attachments_folder": "._media",
    "check_image": "._media",
    "image_extension": "._media",
    "image_size": "._media",
    "media_notes": "._media",
    "prompt_with": "._media",
    "safe_name": "._media",
    "stored": "._media",
    "too_big": "._media",
    "write_attachment": "._media",
    "RecoveryNote": "._recovery_notes",
    "recovery_note": "._recovery_notes",
    "recovery_notes": "._recovery_notes",
    "recovery_texts": "._recovery_notes",
    "NOTE_TIMEOUT": "._restarts",
    "RESTART_CANCEL": "._restarts",
    "RestartDesk": "._restarts",
    "RestartSend": "._restarts",
    "restart_text": "._restarts",
    "RECOVER_SINCE": "._chat",
    "Accepted": "._chat_inbox",
    "ChatGate": "._chat_gate",
    "MAX_BUSY_CHATS": "._chat_gate",
    "ChatInbox": "._chat_inbox",
    "InboxLeft": "._chat_inbox",
    "ChatRoute": "._chat_values",
    "ChatTurn": "._chat_values",
    "ChatTurns": "._chat",
    "TurnHooks": "._chat",
    "Outcome": "._chat_values",
    "Opening": "._chat_values",
    "Pending": "._chat_values",
    "RecoveredTurn": "._recovery_plan",
    "recovery_plan": "._recovery_plan",
    "take_pending": "._chat_values",
    "STALE_AFTER": "._inbound",
    "Dated": "._inbound",
    "Ignore": "._inbound",
    "freshness": "._inbound",
    "inbound_claims": "._inbound",
    "owner_filter": "._inbound",
    "AmbiguousTask": "._resolve",
    "TaskNotFound": "._resolve",
    "TaskNotResolved": "._resolve",
    "resolve_task": "._resolve",
    "MadeGroups": "._groups",
    "GROUP_COMMANDS": "._groups",
    "greet_group": "._groups",
    "group_notes": "._groups",
    "open_group": "._groups",
    "welcome_text": "._groups",
    "GroupChat": "._transport",
    "GroupMaker": "._transport",
    "GroupRefused": "._transport",
    "HostActions": "._transport",
    "PendingFinals": "._transport",
    "ServedTransport": "._transport",
    "ServesRoutes": "._transport",
    "RestartNote": "._transport",
    "RestartNotes": "._transport",
    "RestartPhase": "._transport",
    "TransportContext": "._transport",
    "TransportState": "._transport",
    "TransportStatus": "._transport",
    "CAPACITY": "._backpressure",
    "COALESCE_AFTER": "._backpressure",
    "merge_notices": "._backpressure",
    "FrontEndPort": "._port",
    "LinkEnded": "._port",
    "Overflowed": "._port",
    "RouteHub": "._port",
    "RouteLink": "._port",
}
"""Where each lazily loaded name lives (the same as the imports for type checkers above)."""


__getattr__, __dir__ = _lazy_attributes(__name__, _HOMES)
