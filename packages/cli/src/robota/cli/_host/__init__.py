"""The host (``robota server``): one process whose root is a supervision tree with the engine,
the local control endpoint and, later, the chat transports; ``robota task`` talks to it.

Layering, bottom up: ``_requests`` (the control requests), ``_routing`` (pure: which route a
task is driven through), ``_reads`` (the store reads ``task list`` and the host share),
``_taps`` (the host's subscriptions to routes), ``_transports`` (the chat transports'
children, their status and their group offers), ``_desk`` (the ``task.*`` requests),
``_groups`` (``task.newgroup | forkgroup`` through a transport's ``GroupMaker``), ``_spawn``
(a detached host and its readiness: ``server start`` and a restart), ``_crash`` (crash
reports), ``_restart`` (pure: the safe restart's decisions) and ``_restarter`` (its shell and
the handoff of enrolled routes), ``_host`` (the tree), ``_run`` (``server run``: lock,
signals, exit code, replacing itself). The CLI's ``server`` and
``task`` commands import this package only inside their bodies. The facade is lazy (PEP 562):
``robota task list`` loads the store reads it uses, not the engine a host runs.
"""

import typing

from robota.core import lazy_attributes as _lazy_attributes

if typing.TYPE_CHECKING:
    from ._crash import crash_report, write_crash_report
    from ._host import Host, status_json
    from ._reads import (
        TaskRow,
        count_routes,
        routes_of,
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
    from ._transports import HostTransports, enabled_transports, host_locale, transports_agent_env

__all__ = [
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
    "tasks_with_remote_id",
    "task_number",
    "task_status",
]

_HOMES = {
    "crash_report": "._crash",
    "write_crash_report": "._crash",
    "Host": "._host",
    "status_json": "._host",
    "TaskRow": "._reads",
    "count_routes": "._reads",
    "routes_of": "._reads",
    "task_number": "._reads",
    "task_rows": "._reads",
    "task_status": "._reads",
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
