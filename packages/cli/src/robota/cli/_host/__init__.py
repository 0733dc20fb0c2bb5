"""The host (``robota server``): one process whose root is a supervision tree with the engine,
the local control endpoint and, later, the chat transports; ``robota task`` talks to it.

Layering, bottom up: ``_requests`` (the control requests), ``_routing`` (pure: which route a
task is driven through), ``_reads`` (the store reads ``task list`` and the host share),
``_taps`` (the host's subscriptions to routes), ``_transports`` (the chat transports'
children, their status and their group offers), ``_desk`` (the ``task.*`` requests),
``_groups`` (``task.newgroup | forkgroup`` through a transport's ``GroupMaker``), ``_host``
(the tree), ``_run`` (``server run``: lock, signals, exit code). The CLI's ``server`` and
``task`` commands import this package only inside their bodies: it loads the engine.
"""

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
    HostStatus,
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
from ._routing import CLI_KIND, TaskRoute, cli_route, route_for_task, route_kind, serves
from ._run import STOP_SIGNALS, run_host
from ._transports import HostTransports, enabled_transports, host_locale, transports_agent_env

__all__ = [
    "Host",
    "run_host",
    "STOP_SIGNALS",
    "status_json",
    "HostTransports",
    "enabled_transports",
    "host_locale",
    "transports_agent_env",
    # requests
    "HostStatus",
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
