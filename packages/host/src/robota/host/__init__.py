"""robota.host: the host (``robota server``), background sessions, the daemon and ``--serve``:
the long-lived processes whose root is a supervision tree with the engine, the local control
endpoint and the chat transports; ``robota task`` and ``robota session`` talk to them.

It is a composition root: it imports the facades of ``robota.core``, ``robota.runtimes`` and
``robota.transports`` (through core's plugin discovery) and never the CLI, which parses argv,
prints, and imports this facade only (docs/architecture.md §1).

Layering, bottom up: ``_task_names`` (pure: what TASK names), ``_trust`` (the headless
trust gate and the engine's hook), ``_launch`` and ``_engine_host`` (from a profile to an
engine), ``_requests`` (the control requests), ``_routing`` (pure: which route a
task is driven through), ``_reads`` (the store reads ``task list`` and the host share),
``_taps`` (the host's subscriptions to routes), ``_transports`` (the chat transports'
children, their status and their group offers), ``_desk`` (the ``task.*`` requests),
``_groups`` (``task.newgroup | forkgroup`` through a transport's ``GroupMaker``), ``_spawn``
(a detached host and its readiness: ``server start`` and a restart), ``_signals`` (a tree run
until a stop signal), the background sessions (``_session_requests``, ``_sessions``: the
clients' side, ``_daemon``: the workspace's daemon locks, ``_session``: one session's tree,
``_session_run``: ``session run``), ``_crash`` (crash
reports), ``_restart`` (pure: the safe restart's decisions) and ``_restarter`` (its shell and
the handoff of enrolled routes), ``_host`` (the tree), ``_run`` (``server run``: lock,
signals, exit code, replacing itself). The CLI's ``server``, ``session`` and ``task``
commands import this package only inside their bodies. The facade is lazy (PEP 562):
``robota task list`` loads the store reads it uses, not the engine a host runs.
"""

import typing

from robota.core import lazy_attributes as _lazy_attributes

if typing.TYPE_CHECKING:
    from ._crash import crash_report, write_crash_report
    from ._daemon import (
        StartLock,
        daemon_lock_paths,
        find_daemon,
        start_lock_holder,
        start_lock_path,
        take_start_lock,
        unlock,
        workspace_key,
    )
    from ._desk_reads import DeskReads
    from ._engine_host import load_profile, open_engine
    from ._host import Host, status_json
    from ._launch import agent_launch
    from ._reads import (
        TaskRow,
        count_routes,
        routes_of,
        task_lookup,
        task_number,
        task_rows,
        task_status,
        tasks_with_remote_id,
    )
    from ._requests import (
        SEND_WAIT,
        SEND_WAIT_MAX,
        CancelRestart,
        HostStatus,
        RestartHost,
        StopHost,
        TaskFork,
        TaskForkGroup,
        TaskNew,
        TaskNewGroup,
        TaskQueue,
        TaskRename,
        TaskSend,
        TaskStop,
    )
    from ._restart import QUIET, Go, Idle, RestartCore, Schedule, Wait
    from ._restarter import (
        Enrollment,
        HostRestarts,
        read_enrollment,
        restart_notes,
        restarted_notes,
    )
    from ._routing import CLI_KIND, TaskRoute, cli_route, route_for_task, route_kind, serves
    from ._run import EXIT_CRASHED, EXIT_REPLACED, EXIT_STOPPED, STOP_SIGNALS, run_host
    from ._serve import ServeHost, run_serve
    from ._session import SessionHost
    from ._session_requests import (
        SESSION_KIND,
        SessionRename,
        SessionSend,
        SessionStatus,
        SessionStop,
        SessionSurface,
    )
    from ._session_run import run_session
    from ._sessions import (
        SessionSpec,
        SessionStart,
        SessionUnverified,
        session_logs,
        session_paths,
        session_rows,
        spawn_session,
        status_of,
        verified_session,
        wait_session_ready,
        workspace_of,
    )
    from ._spawn import (
        READY_TIMEOUT,
        STOP_TIMEOUT,
        StartOutcome,
        host_logs,
        process_gone,
        rotate_log,
        running_state,
        spawn_host,
        tail,
        wait_gone,
        wait_ready,
    )
    from ._task_names import ENV_NAMES, NoTaskGiven, TaskLookup, pick_task
    from ._transports import HostTransports, enabled_transports, host_locale, transports_agent_env
    from ._trust import (
        Workspace,
        WorkspaceRefused,
        headless_workspace,
        restricted_hook,
        task_restricted_hook,
        trust_store,
        workspace_config,
    )

__all__ = [
    # from a profile to an engine
    "load_profile",
    "open_engine",
    "agent_launch",
    # workspace trust: the headless gate, the engine's hooks
    "headless_workspace",
    "WorkspaceRefused",
    "Workspace",
    "workspace_config",
    "restricted_hook",
    "task_restricted_hook",
    "trust_store",
    # what TASK names
    "ENV_NAMES",
    "NoTaskGiven",
    "TaskLookup",
    "pick_task",
    # the host
    "DeskReads",
    "Host",
    "run_host",
    "STOP_SIGNALS",
    "EXIT_CRASHED",
    "EXIT_REPLACED",
    "EXIT_STOPPED",
    # start, stop, restart, crashes
    "READY_TIMEOUT",
    "STOP_TIMEOUT",
    "StartOutcome",
    "host_logs",
    "process_gone",
    "rotate_log",
    "running_state",
    "spawn_host",
    "tail",
    "wait_gone",
    "wait_ready",
    "crash_report",
    "write_crash_report",
    "QUIET",
    "Go",
    "Idle",
    "RestartCore",
    "Schedule",
    "Wait",
    "Enrollment",
    "HostRestarts",
    "read_enrollment",
    "restart_notes",
    "restarted_notes",
    "status_json",
    "HostTransports",
    "enabled_transports",
    "host_locale",
    "transports_agent_env",
    # background sessions and the daemon
    "SessionHost",
    "run_session",
    "ServeHost",
    "run_serve",
    "SessionSpec",
    "SessionStart",
    "SessionUnverified",
    "session_logs",
    "session_paths",
    "session_rows",
    "spawn_session",
    "status_of",
    "verified_session",
    "wait_session_ready",
    "workspace_of",
    "StartLock",
    "daemon_lock_paths",
    "find_daemon",
    "start_lock_holder",
    "start_lock_path",
    "take_start_lock",
    "unlock",
    "workspace_key",
    "SESSION_KIND",
    "SessionRename",
    "SessionSend",
    "SessionStatus",
    "SessionStop",
    "SessionSurface",
    # requests
    "CancelRestart",
    "HostStatus",
    "RestartHost",
    "StopHost",
    "TaskNew",
    "TaskSend",
    "TaskStop",
    "TaskFork",
    "TaskQueue",
    "TaskRename",
    "TaskNewGroup",
    "TaskForkGroup",
    "SEND_WAIT",
    "SEND_WAIT_MAX",
    # routes
    "CLI_KIND",
    "TaskRoute",
    "cli_route",
    "route_for_task",
    "route_kind",
    "serves",
    # reads
    "TaskRow",
    "count_routes",
    "routes_of",
    "task_rows",
    "task_lookup",
    "tasks_with_remote_id",
    "task_number",
    "task_status",
]

_HOMES = {
    "load_profile": "._engine_host",
    "open_engine": "._engine_host",
    "agent_launch": "._launch",
    "Workspace": "._trust",
    "WorkspaceRefused": "._trust",
    "headless_workspace": "._trust",
    "restricted_hook": "._trust",
    "task_restricted_hook": "._trust",
    "trust_store": "._trust",
    "workspace_config": "._trust",
    "ENV_NAMES": "._task_names",
    "NoTaskGiven": "._task_names",
    "TaskLookup": "._task_names",
    "pick_task": "._task_names",
    "crash_report": "._crash",
    "write_crash_report": "._crash",
    "DeskReads": "._desk_reads",
    "Host": "._host",
    "status_json": "._host",
    "TaskRow": "._reads",
    "count_routes": "._reads",
    "routes_of": "._reads",
    "task_number": "._reads",
    "task_rows": "._reads",
    "task_status": "._reads",
    "task_lookup": "._reads",
    "tasks_with_remote_id": "._reads",
    "SEND_WAIT": "._requests",
    "SEND_WAIT_MAX": "._requests",
    "CancelRestart": "._requests",
    "HostStatus": "._requests",
    "RestartHost": "._requests",
    "StopHost": "._requests",
    "TaskFork": "._requests",
    "TaskForkGroup": "._requests",
    "TaskNew": "._requests",
    "TaskNewGroup": "._requests",
    "TaskQueue": "._requests",
    "TaskRename": "._requests",
    "TaskSend": "._requests",
    "TaskStop": "._requests",
    "QUIET": "._restart",
    "Go": "._restart",
    "Idle": "._restart",
    "RestartCore": "._restart",
    "Schedule": "._restart",
    "Wait": "._restart",
    "Enrollment": "._restarter",
    "HostRestarts": "._restarter",
    "read_enrollment": "._restarter",
    "restart_notes": "._restarter",
    "restarted_notes": "._restarter",
    "CLI_KIND": "._routing",
    "TaskRoute": "._routing",
    "cli_route": "._routing",
    "route_for_task": "._routing",
    "route_kind": "._routing",
    "serves": "._routing",
    "EXIT_CRASHED": "._run",
    "EXIT_REPLACED": "._run",
    "EXIT_STOPPED": "._run",
    "STOP_SIGNALS": "._run",
    "run_host": "._run",
    "SessionHost": "._session",
    "run_session": "._session_run",
    "ServeHost": "._serve",
    "run_serve": "._serve",
    "SessionSpec": "._sessions",
    "SessionStart": "._sessions",
    "SessionUnverified": "._sessions",
    "session_logs": "._sessions",
    "session_paths": "._sessions",
    "session_rows": "._sessions",
    "spawn_session": "._sessions",
    "status_of": "._sessions",
    "verified_session": "._sessions",
    "wait_session_ready": "._sessions",
    "workspace_of": "._sessions",
    "StartLock": "._daemon",
    "daemon_lock_paths": "._daemon",
    "find_daemon": "._daemon",
    "start_lock_holder": "._daemon",
    "start_lock_path": "._daemon",
    "take_start_lock": "._daemon",
    "unlock": "._daemon",
    "workspace_key": "._daemon",
    "SESSION_KIND": "._session_requests",
    "SessionRename": "._session_requests",
    "SessionSend": "._session_requests",
    "SessionStatus": "._session_requests",
    "SessionStop": "._session_requests",
    "SessionSurface": "._session_requests",
    "READY_TIMEOUT": "._spawn",
    "STOP_TIMEOUT": "._spawn",
    "StartOutcome": "._spawn",
    "host_logs": "._spawn",
    "process_gone": "._spawn",
    "rotate_log": "._spawn",
    "running_state": "._spawn",
    "spawn_host": "._spawn",
    "tail": "._spawn",
    "wait_gone": "._spawn",
    "wait_ready": "._spawn",
    "HostTransports": "._transports",
    "enabled_transports": "._transports",
    "host_locale": "._transports",
    "transports_agent_env": "._transports",
}
"""Where each lazily loaded name lives (the same as the imports for type checkers above)."""


__getattr__, __dir__ = _lazy_attributes(__name__, _HOMES)
