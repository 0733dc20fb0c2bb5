"""Print mode's agent, started as soon as the configuration is known.

A one-shot ``robota -p`` would otherwise import print mode and the engine and build the engine
before its agent's process is even spawned, and only then would the agent's own start begin. So
right after the profile's configuration loads, the agent print mode will use (``--agent``, else
the profile's default) is spawned through its runtime plugin's ``prestart`` (plain
``subprocess``; the protocol's ``initialize`` written at once), the rest of robota (print mode,
the engine, the store, the protocol clients: about 80 ms) loads meanwhile, and ``open_engine``
hands the process to that agent's host, whose process service adopts it on the first job
instead of spawning one.

What still comes before the spawn: the interpreter, click and ``robota.cli``, then the
configuration (ruamel and the config package) and the runtime plugin's entry point. Neither
``robota.core``'s facade (lazy, PEP 562) nor the plugin's prestart path (``_spawn``,
``_framing``, ``_reaper``) imports trio or pykka, so the kernel, the engine and the protocol
clients all load while the agent starts (tests/cli/test_import_budget.py pins what is loaded at
the spawn).

A new task's session opens ahead too (``Prestart.open_session``): with the prompt on the command
line and no ``-c``/``-r``, print mode works out the settings the engine will open the task's
session with, exactly as ``run_print`` and the engine do (the directory and workspace, the
agent, the model, the permission mode, ``plan`` where the directory runs Restricted, the
appended instructions), and the runtime writes that session's opening (the App Server's
``initialized`` and ``thread/start``) before trio and the engine load, so the agent starts the
thread while they do instead of after. The engine still opens the session as always; its
``thread/start`` takes the answer written ahead only when its params are the same, and is sent
as usual otherwise (``robota.runtimes``' ``Connection``).

With ``-c``/``-r`` the task may belong to another agent: then no job ever reaches the
prestarted agent's host, the process is never adopted, the task's own agent is spawned as
usual, and ``close`` ends the unused one when the run is over. The caller runs ``close`` in a
``finally``, so nothing outlives a run that failed after the spawn (a usage error, an exception,
Ctrl-C); the runtime's reaper covers a robota killed outright. Ctrl-C during the prestart itself
waits until it returned (``ctrl_c_deferred``): raised inside ``subprocess.Popen`` after the
fork, or between the spawn and the caller's assignment, it would leave a process nobody holds.

Anything that stops the prestart (no configuration, an invalid one, an unknown agent, a missing
runtime plugin, a command that cannot start) just leaves it out: the normal path then meets
the same problem and reports it as it always has.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from robota.core import Record

if TYPE_CHECKING:
    from robota.core import PrestartedAgent
    from robota.core.config import Config, Profile

__all__ = ["Prestart", "ctrl_c_deferred", "prestart_agent"]


class Prestart(Record):
    """The configuration as loaded for the prestart, and the agent started from it."""

    config: Config
    profile: Profile
    agent: PrestartedAgent | None

    def close(self) -> None:
        """End the prestarted agent unless its host adopted it."""
        if self.agent is not None:
            self.agent.close()

    def open_session(
        self,
        *,
        agent: str | None,
        cwd: Path | None,
        model: str | None,
        permission_mode: str | None,
        developer_instructions: str | None,
        restricted: bool,
    ) -> bool:
        """Write the new task's session opening to the prestarted agent (module docstring):
        the settings ``run_print`` and the engine will open it with from these options;
        whether it was written. Nothing when the run will not get that far (no such
        directory, a refused workspace) or its task is another agent's."""
        if self.agent is None:
            return False
        from robota.core import ConfigError  # noqa: PLC0415
        from robota.host import WorkspaceRefused, headless_workspace  # noqa: PLC0415

        directory = (cwd or self.config.defaults.cwd).resolve()
        if not directory.is_dir():
            return False  # print mode's usage error: no turn runs
        try:
            workspace = headless_workspace(
                self.config, self.profile, directory, restricted=restricted, mode="print"
            )
        except (WorkspaceRefused, ConfigError):
            return False
        defaults = workspace.config.defaults  # the engine's TaskDefaults
        if (agent or defaults.agent) != self.agent.launch.name:
            return False
        task_cwd = (cwd or defaults.cwd).resolve()  # PrintRun's, on the engine's defaults
        mode = permission_mode or defaults.permission_mode
        return self.agent.open_session(
            cwd=task_cwd,
            permission_mode="plan" if workspace.hook(task_cwd) else mode,
            model=model,
            developer_instructions=developer_instructions,
        )

    # Generated by tools/gen_records.py from the fields above: do not edit below.
    __slots__ = ("agent", "config", "profile")
    __match_args__ = ("config", "profile", "agent")

    def __init__(self, config: Config, profile: Profile, agent: PrestartedAgent | None) -> None:
        object.__setattr__(self, "config", config)
        object.__setattr__(self, "profile", profile)
        object.__setattr__(self, "agent", agent)

    def __repr__(self) -> str:
        return (
            f"{type(self).__qualname__}(config={self.config!r}, "
            f"profile={self.profile!r}, agent={self.agent!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Prestart) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.config, self.profile, self.agent) == (other.config, other.profile, other.agent)

    def __hash__(self) -> int:
        return hash((self.config, self.profile, self.agent))


@contextmanager
def ctrl_c_deferred() -> Iterator[None]:
    """Ctrl-C (SIGINT) during the block raises ``KeyboardInterrupt`` once the block is done,
    not in the middle of it. A handler, not a blocked signal mask: the agent spawned inside
    inherits a mask but not a handler (``exec`` resets it)."""
    pressed: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, _frame: pressed.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if pressed:
        raise KeyboardInterrupt


def prestart_agent(agent: str | None) -> Prestart | None:
    """Load the profile's configuration and spawn ``agent`` (default: the profile's default
    agent); ``None`` when the configuration cannot be loaded."""
    from robota.core import ConfigError, PluginError, runtime_plugins  # noqa: PLC0415
    from robota.core.config import load_config, resolve_profile  # noqa: PLC0415
    from robota.host import agent_launch  # noqa: PLC0415

    from ._parsed_text import parsed_cache_on  # noqa: PLC0415

    parsed_cache_on()
    try:
        profile = resolve_profile()
        config = load_config(profile)
    except (OSError, ConfigError):
        return None
    configured = config.agents.get(agent or config.defaults.agent)
    if configured is None:
        return Prestart(config, profile, None)
    try:
        plugin = runtime_plugins().get(configured.kind)
    except PluginError:
        plugin = None
    if plugin is None:
        return Prestart(config, profile, None)
    prestarted = plugin.prestart(agent_launch(configured, config, profile))
    try:
        return Prestart(config, profile, prestarted)
    except BaseException:  # Ctrl-C before the caller holds it: nobody else could close it
        if prestarted is not None:
            prestarted.close()
        raise
