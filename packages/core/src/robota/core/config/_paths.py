"""Where a profile lives: the config file, its .env, the data and log directories.

A profile is pinned by ``ROBOTA_HOME`` (everything under one directory, easy to copy, back up or
run side by side) or else follows the platform's conventions through platformdirs. The two
environment variables are the whole contract: ``--profile`` and ``--config`` only rewrite them,
so every process robota starts resolves the same profile without being told.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CONFIG_ENV",
    "HOME_ENV",
    "Profile",
    "profile_environment",
    "resolve_profile",
]

HOME_ENV = "ROBOTA_HOME"
CONFIG_ENV = "ROBOTA_CONFIG"


def chat_credential_prefixes() -> tuple[str, ...]:
    """Variables ``--profile`` drops from the inherited environment: ``<NAME>_*`` for every
    installed transport plugin (see ``robota.core.TransportPlugin``).

    Without this, a bot token exported in the shell would silently win over the profile's own
    .env (the environment wins over .env), and a test profile could answer in a production
    workspace.
    """
    # The plugin registry loads only here: resolving a profile's paths (every client of the
    # host does) needs none of it.
    from .._plugins import transport_names  # noqa: PLC0415

    return tuple(name.upper().replace("-", "_") + "_" for name in transport_names())


_APP = "robota"


@dataclass(frozen=True, slots=True)
class Profile:
    """The resolved locations of one profile. Nothing here touches the file system."""

    home: Path
    """Config directory: holds .env, init.lock and the default config.yaml."""
    config_file: Path
    """The config file in effect (``--config``/``ROBOTA_CONFIG`` may point outside ``home``)."""
    data_dir: Path
    log_dir: Path
    pinned: bool
    """True when ``ROBOTA_HOME`` chose the directory, False for the platform defaults."""

    @property
    def env_file(self) -> Path:
        return self.home / ".env"

    @property
    def init_lock(self) -> Path:
        return self.home / "init.lock"

    @property
    def backups_dir(self) -> Path:
        return self.home / ".reset-backups"

    @property
    def runtime_dir(self) -> Path:
        """Where a running host keeps its lock, state file and control socket (owner-only).

        Under the data directory rather than ``$XDG_RUNTIME_DIR``: one rule for pinned and
        platform profiles, present on every platform and for users without a login session.
        Nothing in it outlives its meaning: a dead host's socket is replaced, its state file is
        read as "not running" because the kernel released its lock.
        """
        return self.data_dir / "run"

    @property
    def control_socket(self) -> Path:
        return self.runtime_dir / "control.sock"

    @property
    def host_lock(self) -> Path:
        return self.runtime_dir / "host.lock"

    @property
    def host_state_file(self) -> Path:
        return self.runtime_dir / "host.json"

    @property
    def sessions_dir(self) -> Path:
        """The rendezvous of background sessions (owner-only): each one's lock, control socket
        and registration, named by its id (``robota.core.control.Registration``)."""
        return self.runtime_dir / "sessions"

    @property
    def default_sqlite_path(self) -> Path:
        return self.data_dir / "robota.sqlite"

    @property
    def default_log_path(self) -> Path:
        return self.log_dir / "robota.log"


def _absolute(value: str, cwd: Path) -> Path:
    path = Path(value).expanduser()
    return path if path.is_absolute() else cwd / path


def resolve_profile(
    environ: Mapping[str, str] | None = None, *, cwd: Path | None = None
) -> Profile:
    """Resolve the profile named by ``ROBOTA_HOME``/``ROBOTA_CONFIG`` in ``environ``.

    Without ``ROBOTA_HOME`` the directories come from platformdirs, which reads the real process
    environment (``HOME``, ``XDG_*``), not ``environ``.
    """
    env = os.environ if environ is None else environ
    base = Path.cwd() if cwd is None else cwd
    home_value = env.get(HOME_ENV, "")
    if home_value:
        home = _absolute(home_value, base)
        config_dir, data_dir, log_dir = home, home / "data", home / "logs"
        pinned = True
    else:
        # Imported here: a pinned profile (``ROBOTA_HOME``, ``--profile``) needs none
        # of it, and it costs several milliseconds of every start.
        import platformdirs  # noqa: PLC0415

        config_dir = Path(platformdirs.user_config_dir(_APP, appauthor=False))
        data_dir = Path(platformdirs.user_data_dir(_APP, appauthor=False))
        log_dir = Path(platformdirs.user_log_dir(_APP, appauthor=False))
        pinned = False
    config_value = env.get(CONFIG_ENV, "")
    config_file = _absolute(config_value, base) if config_value else config_dir / "config.yaml"
    return Profile(
        home=config_dir,
        config_file=config_file,
        data_dir=data_dir,
        log_dir=log_dir,
        pinned=pinned,
    )


def profile_environment(
    environ: Mapping[str, str],
    *,
    profile: str | os.PathLike[str] | None = None,
    config: str | os.PathLike[str] | None = None,
    cwd: Path | None = None,
) -> dict[str, str]:
    """The environment a command runs in after ``--profile DIR`` or ``--config FILE``.

    Paths are made absolute so that a child started in another directory resolves the same
    profile. ``--profile`` pins both variables, so an inherited ``ROBOTA_CONFIG`` cannot leak
    another profile's config into this one.
    """
    if profile is not None and config is not None:
        raise ValueError("--profile and --config cannot be combined")
    base = Path.cwd() if cwd is None else cwd
    result = dict(environ)
    if profile is not None:
        home = _absolute(os.fspath(profile), base)
        prefixes = chat_credential_prefixes()
        for name in list(result):
            if name.startswith(prefixes):
                del result[name]
        result[HOME_ENV] = str(home)
        result[CONFIG_ENV] = str(home / "config.yaml")
    elif config is not None:
        result[CONFIG_ENV] = str(_absolute(os.fspath(config), base))
    return result
