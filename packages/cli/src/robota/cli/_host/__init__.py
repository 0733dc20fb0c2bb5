"""The host (``robota server``): one process whose root is a supervision tree with the engine,
the local control endpoint and, later, the chat transports; ``robota task`` talks to it.

Layering, bottom up: ``_requests`` (the control requests), ``_routing`` (pure: which route a
task is driven through), ``_reads`` (the store reads ``task list`` and the host share),
``_taps`` (the host's subscriptions to routes), ``_transports`` (the chat transports'
children and their status), ``_desk`` (the ``task.*`` requests), ``_host``
(the tree), ``_run`` (``server run``: lock, signals, exit code). The CLI's ``server`` and
``task`` commands import this package only inside their bodies: it loads the engine.
"""

from ._host import Host, status_json
from ._reads import TaskRow, count_routes, routes_of, task_rows
from ._requests import HostStatus, StopHost, TaskNew, TaskSend, TaskStop
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
]
