"""robota.core.store: everything robota remembers, in one SQLite file.

The design in four rules:

**One writer.** ``StoreWriter`` is an actor and owns the only connection that writes. SQLite
allows one writer at a time anyway; making that explicit means no write in the process ever
waits on a lock or retries ``SQLITE_BUSY``, and the order of writes is the order they reached
the writer. The file is in WAL mode with ``synchronous=NORMAL``: commits do not wait for fsync,
and a process crash never loses a committed write (a power cut may lose the last few).

**Batches.** Callers do not send one message per write. A ``StoreClient`` appends ``Write(op,
ack)`` to its queue and tells the writer ``Drain`` only when no drain is already on its way; the
writer takes everything queued as one batch and applies it in one transaction, each op in its
own savepoint. A burst of a thousand writes costs a handful of commits, and one op that fails is
rolled back alone and gets its error while the rest of its batch commits.

**Acks after commit.** A write's ack is called only after ``COMMIT`` returned. Whoever is acked
may tell the world (a chat platform, another actor) that the write happened: it survives a
crash of the process and is visible to every reader from then on. The ack is a plain callable
or a ``Reply``, so the same write serves the trio loop (``await client.write(...)``), an actor
(``client.submit(op, ack)``) and a blocking thread (``client.write_sync(...)``).

**Readers on their own connections.** ``open_reader`` gives a read-only connection; the query
functions here take one. Reads never queue behind writes and never block them. Many actors
that read now and then (the engine's routes) borrow from one ``ReaderPool`` of a few
connections instead of holding one each.

Ops are small frozen dataclasses with an ``apply(db)`` method (``WriteOp``); the typed ones here
cover inbound-event dedupe, route states, the final-delivery ledger, turn attempts
(``_turn_attempts``), the prompt queue (``_prompt_queue``), the audit trail, what chat
transports keep of their chats (``_chats``) and the messages they accepted until their routes
took them in (``_inbox``), and team groups' registry, decision audit and stored requests
(``_teams``), and which process owns a task (``_owners``), and the device mesh's high-water
marks (``_mesh``) and session handoffs between devices (``_handoffs``, what a destination
keeps of one it takes ``_handoff_staged``, what they mean for a task ``_mobility``). The schema
grows through ``MIGRATIONS``, applied by the writer when it starts; a database from a newer
robota is refused with ``StoreError``. Migrations that change tables are written with
sqlite-utils (``schema_change``), which is also what ``inspect_store`` (``robota store``) reads
a file with; both import it lazily, the write path never does.

The facade is lazy (PEP 562): each name loads its module on first use, so a command that only
reads a task (``robota task send`` resolving its TASK) loads the connection and the task queries,
not the writer's actor, trio, pykka or the ops of every table.

A typical tree::

    supervisor = Supervisor("root", [ChildSpec("store", lambda: StoreWriter(path)), ...])
    store = StoreClient(supervisor.address("store"))
    if await store.write(ClaimInboundEvent(event.id, "message"), timeout=5):
        ...  # first delivery of this event
"""

import typing

from ..kernel import lazy_attributes as _lazy_attributes

if typing.TYPE_CHECKING:
    from ._card_claims import CardGate, CardVerdict, ClaimProgressCard, card_gate
    from ._cards import (
        CLAIM_REFUSALS,
        ActionBinding,
        BindCardActions,
        CardAction,
        ClaimCardAction,
        Claimed,
        ClaimRefusal,
        Refused,
        RetireCardActions,
        SaveTurnSnapshot,
        TurnSnapshot,
        card_actions,
        turn_snapshot,
    )
    from ._chats import (
        AnchorTurnAttempt,
        ChatContext,
        ForgetReaction,
        NoteChat,
        RecordReaction,
        SetChatSetting,
        chat_context,
        chat_contexts,
        message_reactions,
        turn_of_chat_message,
        unsettled_chat_turns,
    )
    from ._client import StoreClient
    from ._connection import open_reader
    from ._database import Database, Parameters
    from ._finals import ClaimFinalSend, FinalGate, FinalVerdict, claim_time, final_gate
    from ._handoff_staged import AnswerHandoff, StageHandoff, accepted_cwd, staged_payloads
    from ._handoffs import (
        HANDOFF_SIDES,
        CommitHeldTask,
        HandoffRow,
        HandoffSide,
        HeldTask,
        LetGoTask,
        MarkPrimed,
        MarkReleased,
        MoveHandoff,
        OfferHandoff,
        ReceiveHandoff,
        handoff_payload,
        handoff_row,
        handoff_rows,
        imported_transcript,
        transcript_to_prime,
    )
    from ._inbox import (
        AcceptInbound,
        ConsumeInbox,
        InboxOutcome,
        InboxRow,
        PruneInbox,
        RelinkInbox,
        SettleInbox,
        settled_outcome,
        unconsumed_inbox,
        unsettled_inbox,
    )
    from ._inspect import StoreReport, TableReport, inspect_store
    from ._mesh import MESH_LISTS, MeshList, RaiseMeshMark, mesh_marks
    from ._mesh_offers import MeshOffer, SaveMeshOffer, mesh_offer, mesh_offers
    from ._mesh_talks import (
        MeshConversation,
        SaveMeshConversation,
        mesh_conversation,
        mesh_conversations,
    )
    from ._messages import Ack, Failable, Write
    from ._migrations import MIGRATIONS, Migration, migrate, schema_version
    from ._mobility import (
        TaskImmobile,
        TaskMobility,
        mobility_refusal,
        refuse_immobile,
        task_mobility,
    )
    from ._once import write_once
    from ._ops import (
        AppendAuditEvent,
        ClaimInboundEvent,
        RecordFinalDelivery,
        RecordProgressCard,
        SaveRouteState,
        Together,
        WriteOp,
    )
    from ._owners import ClaimTask, ReleaseTask, TaskOwner, task_owner
    from ._pool import ReaderPool
    from ._prompt_queue import (
        CancelPrompt,
        CancelRoutePrompts,
        EnqueuePrompt,
        TakePrompt,
        TakeQueuedTurn,
    )
    from ._queries import (
        audit_events,
        event_claimed,
        final_delivery,
        load_route_state,
        pending_prompts,
        route_loose_ends,
        stale_turn_attempts,
        turn_attempt,
    )
    from ._records import (
        ACTIVE_TURN_STATUSES,
        AuditEvent,
        FinalDelivery,
        JSONValue,
        PromptStatus,
        QueuedPrompt,
        TurnAttempt,
        TurnStatus,
    )
    from ._route_states import SqliteRouteStates
    from ._tables import schema_change, tables_of
    from ._task_ops import (
        BindRouteTask,
        CreateTask,
        FinishTurnAttempt,
        ResetTaskToTurn,
        UpdateTask,
    )
    from ._task_queries import (
        active_turn_attempts,
        bound_sessions,
        find_task,
        find_turn_attempt,
        head_attempt,
        latest_task,
        latest_turn_attempt,
        route_binding,
        task,
        task_turn_attempts,
        task_with_remote,
        tasks,
    )
    from ._task_records import RouteBinding, Task
    from ._teams import (
        AppendTeamAudit,
        CountHeldTeamMessage,
        DropTeamRequest,
        LoadTeamLastTask,
        LoadTeamRequests,
        LoadTeamRow,
        SaveTeamRequest,
        SaveTeamState,
        SetTeamPaused,
        StartTeamRequest,
        TeamAuditEvent,
        TeamLastTask,
        TeamRequestRow,
        TeamRow,
        latest_team_audit,
        team_audit,
        team_requests,
        team_row,
        team_rows,
    )
    from ._turn_attempts import HeartbeatTurnAttempt, InsertTurnAttempt, UpdateTurnAttempt
    from ._writer import StoreWriter

__all__ = [
    # the connection
    "Database",
    "Parameters",
    # the writer and its clients
    "StoreWriter",
    "StoreClient",
    "Write",
    "WriteOp",
    "Ack",
    "Failable",
    # readers
    "open_reader",
    "ReaderPool",
    # schema
    "MIGRATIONS",
    "Migration",
    "migrate",
    "schema_version",
    "schema_change",
    "tables_of",
    # inspection
    "inspect_store",
    "StoreReport",
    "TableReport",
    # write ops
    "ClaimInboundEvent",
    "SaveRouteState",
    "RecordFinalDelivery",
    "ClaimFinalSend",
    "FinalGate",
    "FinalVerdict",
    "final_gate",
    "claim_time",
    "RecordProgressCard",
    "ClaimProgressCard",
    "CardGate",
    "CardVerdict",
    "card_gate",
    "InsertTurnAttempt",
    "UpdateTurnAttempt",
    "HeartbeatTurnAttempt",
    "EnqueuePrompt",
    "CancelPrompt",
    "CancelRoutePrompts",
    "TakePrompt",
    "TakeQueuedTurn",
    "Together",
    "AppendAuditEvent",
    "SaveTurnSnapshot",
    "BindCardActions",
    "ClaimCardAction",
    "RetireCardActions",
    "NoteChat",
    "SetChatSetting",
    "AnchorTurnAttempt",
    "RecordReaction",
    "ForgetReaction",
    "AcceptInbound",
    "ConsumeInbox",
    "PruneInbox",
    "RelinkInbox",
    "SettleInbox",
    # queries
    "event_claimed",
    "load_route_state",
    "final_delivery",
    "turn_attempt",
    "stale_turn_attempts",
    "pending_prompts",
    "route_loose_ends",
    "audit_events",
    "turn_snapshot",
    "card_actions",
    "chat_context",
    "chat_contexts",
    "message_reactions",
    "turn_of_chat_message",
    "unsettled_chat_turns",
    "unconsumed_inbox",
    "unsettled_inbox",
    "settled_outcome",
    # records
    "ACTIVE_TURN_STATUSES",
    "AuditEvent",
    "FinalDelivery",
    "JSONValue",
    "PromptStatus",
    "QueuedPrompt",
    "TurnAttempt",
    "TurnStatus",
    "TurnSnapshot",
    "InboxRow",
    "InboxOutcome",
    "CardAction",
    "ChatContext",
    "ActionBinding",
    "Claimed",
    "Refused",
    "ClaimRefusal",
    "CLAIM_REFUSALS",
    # route states
    "SqliteRouteStates",
    # which process owns a task
    "ClaimTask",
    "ReleaseTask",
    "TaskOwner",
    "task_owner",
    # the device mesh's high-water marks
    "MESH_LISTS",
    "MeshList",
    "RaiseMeshMark",
    "mesh_marks",
    "HANDOFF_SIDES",
    "AnswerHandoff",
    "CommitHeldTask",
    "HandoffRow",
    "HandoffSide",
    "HeldTask",
    "LetGoTask",
    "MarkPrimed",
    "MarkReleased",
    "MoveHandoff",
    "OfferHandoff",
    "ReceiveHandoff",
    "StageHandoff",
    "TaskImmobile",
    "TaskMobility",
    "handoff_payload",
    "accepted_cwd",
    "staged_payloads",
    "handoff_row",
    "handoff_rows",
    "imported_transcript",
    "mobility_refusal",
    "refuse_immobile",
    "task_mobility",
    "transcript_to_prime",
    # the device mesh's conversations
    "MeshConversation",
    "SaveMeshConversation",
    "mesh_conversation",
    "mesh_conversations",
    # the device mesh's file offers
    "MeshOffer",
    "SaveMeshOffer",
    "mesh_offer",
    "mesh_offers",
    # one write from a process with no writer actor
    "write_once",
    # tasks and routes
    "Task",
    "RouteBinding",
    "CreateTask",
    "UpdateTask",
    "BindRouteTask",
    "FinishTurnAttempt",
    "ResetTaskToTurn",
    "task",
    "tasks",
    "latest_task",
    "find_task",
    "route_binding",
    "task_turn_attempts",
    "latest_turn_attempt",
    "find_turn_attempt",
    "head_attempt",
    "task_with_remote",
    "bound_sessions",
    "active_turn_attempts",
    # teams
    "AppendTeamAudit",
    "CountHeldTeamMessage",
    "DropTeamRequest",
    "LoadTeamLastTask",
    "LoadTeamRequests",
    "LoadTeamRow",
    "SaveTeamRequest",
    "StartTeamRequest",
    "TeamLastTask",
    "TeamRequestRow",
    "SaveTeamState",
    "SetTeamPaused",
    "TeamAuditEvent",
    "TeamRow",
    "latest_team_audit",
    "team_audit",
    "team_requests",
    "team_row",
    "team_rows",
]

_LAZY = {
    "CLAIM_REFUSALS": "._cards",
    "ActionBinding": "._cards",
    "BindCardActions": "._cards",
    "CardAction": "._cards",
    "ClaimCardAction": "._cards",
    "Claimed": "._cards",
    "ClaimRefusal": "._cards",
    "Refused": "._cards",
    "RetireCardActions": "._cards",
    "SaveTurnSnapshot": "._cards",
    "TurnSnapshot": "._cards",
    "card_actions": "._cards",
    "turn_snapshot": "._cards",
    "AnchorTurnAttempt": "._chats",
    "ChatContext": "._chats",
    "ForgetReaction": "._chats",
    "NoteChat": "._chats",
    "RecordReaction": "._chats",
    "SetChatSetting": "._chats",
    "chat_context": "._chats",
    "chat_contexts": "._chats",
    "message_reactions": "._chats",
    "turn_of_chat_message": "._chats",
    "unsettled_chat_turns": "._chats",
    "open_reader": "._connection",
    "Database": "._database",
    "Parameters": "._database",
    "StoreReport": "._inspect",
    "TableReport": "._inspect",
    "inspect_store": "._inspect",
    "ClaimProgressCard": "._card_claims",
    "CardGate": "._card_claims",
    "CardVerdict": "._card_claims",
    "card_gate": "._card_claims",
    "ClaimFinalSend": "._finals",
    "FinalGate": "._finals",
    "FinalVerdict": "._finals",
    "final_gate": "._finals",
    "claim_time": "._finals",
    "Ack": "._messages",
    "Failable": "._messages",
    "Write": "._messages",
    "MIGRATIONS": "._migrations",
    "Migration": "._migrations",
    "migrate": "._migrations",
    "schema_version": "._migrations",
    "AppendAuditEvent": "._ops",
    "CancelPrompt": "._prompt_queue",
    "CancelRoutePrompts": "._prompt_queue",
    "ClaimInboundEvent": "._ops",
    "EnqueuePrompt": "._prompt_queue",
    "HeartbeatTurnAttempt": "._turn_attempts",
    "InsertTurnAttempt": "._turn_attempts",
    "RecordFinalDelivery": "._ops",
    "RecordProgressCard": "._ops",
    "SaveRouteState": "._ops",
    "TakePrompt": "._prompt_queue",
    "TakeQueuedTurn": "._prompt_queue",
    "Together": "._ops",
    "UpdateTurnAttempt": "._turn_attempts",
    "WriteOp": "._ops",
    "ReaderPool": "._pool",
    "audit_events": "._queries",
    "event_claimed": "._queries",
    "final_delivery": "._queries",
    "load_route_state": "._queries",
    "pending_prompts": "._queries",
    "route_loose_ends": "._queries",
    "stale_turn_attempts": "._queries",
    "turn_attempt": "._queries",
    "ACTIVE_TURN_STATUSES": "._records",
    "AuditEvent": "._records",
    "FinalDelivery": "._records",
    "JSONValue": "._records",
    "PromptStatus": "._records",
    "QueuedPrompt": "._records",
    "TurnAttempt": "._records",
    "TurnStatus": "._records",
    "schema_change": "._tables",
    "tables_of": "._tables",
    "BindRouteTask": "._task_ops",
    "CreateTask": "._task_ops",
    "FinishTurnAttempt": "._task_ops",
    "ResetTaskToTurn": "._task_ops",
    "RouteBinding": "._task_records",
    "Task": "._task_records",
    "UpdateTask": "._task_ops",
    "active_turn_attempts": "._task_queries",
    "bound_sessions": "._task_queries",
    "find_task": "._task_queries",
    "find_turn_attempt": "._task_queries",
    "head_attempt": "._task_queries",
    "latest_task": "._task_queries",
    "latest_turn_attempt": "._task_queries",
    "route_binding": "._task_queries",
    "task": "._task_queries",
    "task_turn_attempts": "._task_queries",
    "task_with_remote": "._task_queries",
    "tasks": "._task_queries",
    "AppendTeamAudit": "._teams",
    "CountHeldTeamMessage": "._teams",
    "DropTeamRequest": "._teams",
    "LoadTeamLastTask": "._teams",
    "LoadTeamRequests": "._teams",
    "LoadTeamRow": "._teams",
    "SaveTeamRequest": "._teams",
    "StartTeamRequest": "._teams",
    "TeamLastTask": "._teams",
    "TeamRequestRow": "._teams",
    "SaveTeamState": "._teams",
    "SetTeamPaused": "._teams",
    "TeamAuditEvent": "._teams",
    "TeamRow": "._teams",
    "latest_team_audit": "._teams",
    "team_audit": "._teams",
    "team_requests": "._teams",
    "team_row": "._teams",
    "team_rows": "._teams",
    "AcceptInbound": "._inbox",
    "ConsumeInbox": "._inbox",
    "InboxOutcome": "._inbox",
    "InboxRow": "._inbox",
    "PruneInbox": "._inbox",
    "RelinkInbox": "._inbox",
    "SettleInbox": "._inbox",
    "settled_outcome": "._inbox",
    "unconsumed_inbox": "._inbox",
    "unsettled_inbox": "._inbox",
    "StoreClient": "._client",
    "SqliteRouteStates": "._route_states",
    "MESH_LISTS": "._mesh",
    "MeshList": "._mesh",
    "RaiseMeshMark": "._mesh",
    "mesh_marks": "._mesh",
    "HANDOFF_SIDES": "._handoffs",
    "AnswerHandoff": "._handoff_staged",
    "StageHandoff": "._handoff_staged",
    "accepted_cwd": "._handoff_staged",
    "staged_payloads": "._handoff_staged",
    "CommitHeldTask": "._handoffs",
    "HandoffRow": "._handoffs",
    "HandoffSide": "._handoffs",
    "HeldTask": "._handoffs",
    "LetGoTask": "._handoffs",
    "MarkPrimed": "._handoffs",
    "MarkReleased": "._handoffs",
    "MoveHandoff": "._handoffs",
    "OfferHandoff": "._handoffs",
    "ReceiveHandoff": "._handoffs",
    "TaskImmobile": "._mobility",
    "TaskMobility": "._mobility",
    "handoff_payload": "._handoffs",
    "handoff_row": "._handoffs",
    "handoff_rows": "._handoffs",
    "imported_transcript": "._handoffs",
    "mobility_refusal": "._mobility",
    "refuse_immobile": "._mobility",
    "task_mobility": "._mobility",
    "transcript_to_prime": "._handoffs",
    "MeshConversation": "._mesh_talks",
    "SaveMeshConversation": "._mesh_talks",
    "mesh_conversation": "._mesh_talks",
    "mesh_conversations": "._mesh_talks",
    "MeshOffer": "._mesh_offers",
    "SaveMeshOffer": "._mesh_offers",
    "mesh_offer": "._mesh_offers",
    "mesh_offers": "._mesh_offers",
    "write_once": "._once",
    "ClaimTask": "._owners",
    "ReleaseTask": "._owners",
    "TaskOwner": "._owners",
    "task_owner": "._owners",
    "StoreWriter": "._writer",
}

__getattr__, __dir__ = _lazy_attributes(__name__, _LAZY)
