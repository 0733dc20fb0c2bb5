"""``robota session run``: one background session in this process, until stopped.

Takes the session's lock (``ID.lock``, the host lock's code: an ``flock`` the kernel releases
however its holder dies, guarding the registration ``ID.json``), and for the workspace's
daemon also the workspace's daemon lock, held for the process's life: whatever races the
starts run, a second daemon of one workspace finds it held and exits. Stop signals stop it
cleanly (``_signals``). Exit codes: 0 stopped, 1 the tree failed or the lock was held, or the
task it was to continue was refused (``--task``: the reason printed as it is, ``refusal``).
"""

from __future__ import annotations

import contextlib
import logging
import sys

from robota.core import ConfigError
from robota.core.control import HandlerError, HostAlreadyRunning, HostLock, acquire_host_lock

from ._daemon import daemon_lock_paths
from ._engine_host import load_profile
from ._session import SessionHost
from ._sessions import SessionSpec, session_paths
from ._signals import run_until_stopped
from ._trust import WorkspaceRefused, headless_workspace

__all__ = ["refusal", "run_session"]

logger = logging.getLogger("robota.host.session")


def run_session(spec: SessionSpec) -> int:
    config, profile = load_profile()
    try:
        # Checked again here: trust may have been revoked since the start looked.
        workspace = headless_workspace(
            config, profile, spec.cwd, restricted=spec.restricted, mode="background session"
        )
    except (WorkspaceRefused, ConfigError) as refused:
        print(f"robota: {refused}", file=sys.stderr)
        return 2
    lock_path, registration_path, _socket = session_paths(profile, spec.session_id)
    with contextlib.ExitStack() as held:
        try:
            lock = acquire_host_lock(lock_path, registration_path, wait=2.0)
        except HostAlreadyRunning:
            print(f"robota: session {spec.session_id} already runs", file=sys.stderr)
            return 1
        held.enter_context(lock)
        if spec.daemon:
            daemon_lock, daemon_state = daemon_lock_paths(profile, spec.workspace)
            try:
                workspace_lock: HostLock = acquire_host_lock(daemon_lock, daemon_state, wait=0)
            except HostAlreadyRunning:
                print("robota: a daemon already serves this workspace", file=sys.stderr)
                return 1
            held.enter_context(workspace_lock)
        host = SessionHost(
            workspace.config, profile, lock, spec, restricted=workspace.hook, print_config=config
        )
        try:
            run_until_stopped(host)
        except Exception as failed:
            why = refusal(failed)
            if why is not None:
                print(f"robota: {why}", file=sys.stderr)
                return 1
            logger.exception("session %s: the tree failed", spec.session_id)
            print(f"robota: the session failed: {failed}", file=sys.stderr)
            return 1
    return 0


def refusal(failed: BaseException) -> str | None:
    """The reason a session's start was refused (a ``HandlerError``, however deep in the
    tree's exception groups), ``None`` when it failed otherwise."""
    if isinstance(failed, HandlerError):
        return failed.message
    if isinstance(failed, BaseExceptionGroup):
        for inner in failed.exceptions:
            found = refusal(inner)
            if found is not None:
                return found
    return None
