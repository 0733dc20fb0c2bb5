"""Starting the host at login: a systemd user unit on Linux, a LaunchAgent on macOS.

The registered service runs ``robota server run`` in the foreground for one profile, so the
service manager sees the host's own exit code and restarts it only after a crash:

* exit 0 (a clean stop) and exit 75 (the host replaced itself by a safe restart, see
  ``robota server restart``) are not crashes: the host handles both itself;
* anything else (exit 1, a signal) is, and the manager starts it again after a pause.

systemd expresses that with ``Restart=on-failure`` plus ``SuccessExitStatus=75`` and
``RestartPreventExitStatus=75``; launchd with ``KeepAlive = {SuccessfulExit: false}`` (which
counts 75 as a failure: the extra ``robota server run`` it starts after its ``ThrottleInterval``
finds the replacement host running, reports it and exits 0, which ends the keep-alive).

``KillMode=process`` (systemd) and ``AbandonProcessGroup`` (launchd): a stop signals the host
alone, which ends its agents' process groups itself (a clean stop); and a replacement host a
restart started must outlive the process it replaced, so the manager must not kill what is left
in the unit when the main process exits.

**The environment is minimal.** The service runs ``env -i`` with an allowlist (``KEPT``: the
user's identity and locale, ``PATH`` as it was at ``enable`` so the agents ``robota init`` found
are found, the XDG directories that locate a platform profile) plus the profile's own
``ROBOTA_HOME``/``ROBOTA_CONFIG``: chat credentials exported in the shell that ran ``enable`` are
never written into the unit; the profile's ``.env`` provides them. A pinned profile is named
with ``--profile`` (which also clears any inherited ``<NAME>_*`` chat variable); a platform
profile has no directory to name and is found again through the same ``HOME`` and XDG values.

One registration per profile: its name carries a short hash of the profile's config file path
(``robota-host-<hash>``), so two profiles can each have one. A file robota wrote carries
``MANAGED_MARK``; ``disable`` never removes one without it.

Everything that touches the system goes through a ``Runner`` (argv in, exit code and output
out), so the unit's content and the exact ``systemctl``/``loginctl``/``launchctl`` calls are
tested without a service manager; the rendering functions are pure.
"""

from __future__ import annotations

import hashlib
import os
import plistlib
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Literal

from robota.core import RobotaError

__all__ = [
    "KEPT",
    "MANAGED_MARK",
    "AutostartError",
    "Manager",
    "Registration",
    "RegistrationState",
    "RunResult",
    "Runner",
    "ServiceSpec",
    "disable",
    "enable",
    "manager_for",
    "registration",
    "render_launchd_plist",
    "render_systemd_unit",
    "service_spec",
    "subprocess_runner",
    "systemd_quote",
]

MANAGED_MARK = "managed by robota (robota server autostart)"
REPLACED_EXIT = 75
"""The host's exit code after a safe restart replaced it (not a crash)."""

KEPT = (
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "PATH",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TMPDIR",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_CACHE_HOME",
    "XDG_RUNTIME_DIR",
)
"""Variables the service inherits from the shell that ran ``enable``; nothing else."""

_ENV = "/usr/bin/env"
_TIMEOUT = 30.0

Manager = Literal["systemd", "launchd"]


class AutostartError(RobotaError):
    """Autostart cannot be set up here, or a call to the service manager failed."""


@dataclass(frozen=True, slots=True)
class RunResult:
    returncode: int
    stdout: str = ""
    stderr: str = ""


Runner = Callable[[Sequence[str]], RunResult]
"""Runs one command (``systemctl --user ...``) and returns its exit code and output."""


def subprocess_runner(argv: Sequence[str]) -> RunResult:
    """The real runner: the command with no stdin, its output captured, 30 s at most."""
    try:
        done = subprocess.run(
            list(argv),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=_TIMEOUT,
            check=False,
        )
    except FileNotFoundError:
        return RunResult(127, "", f"{argv[0]}: command not found")
    except subprocess.TimeoutExpired:
        return RunResult(124, "", f"{' '.join(argv)}: no answer within {_TIMEOUT:.0f} s")
    return RunResult(done.returncode, done.stdout, done.stderr)


def manager_for(platform: str) -> Manager:
    """The service manager of ``sys.platform`` value ``platform``."""
    if platform.startswith("linux"):
        return "systemd"
    if platform == "darwin":
        return "launchd"
    raise AutostartError(
        f"autostart supports Linux (systemd) and macOS (launchd), not {platform!r}"
    )


@dataclass(frozen=True, slots=True)
class ServiceSpec:
    """What the service runs, independent of the manager."""

    name: str
    """``robota-host-<hash>``: the systemd unit's stem; launchd's label adds a prefix."""
    argv: tuple[str, ...]
    """``robota [--profile DIR] server run``, the executable's absolute path first."""
    environment: tuple[tuple[str, str], ...]
    description: str
    working_dir: str
    log_file: str
    """Where launchd writes the host's stdout and stderr (systemd: the journal)."""

    @property
    def label(self) -> str:
        return f"io.robota.{self.name}"

    def command(self) -> list[str]:
        """``env -i NAME=VALUE ... robota ...``: the environment is exactly ``environment``."""
        return [_ENV, "-i", *(f"{name}={value}" for name, value in self.environment), *self.argv]


def service_spec(
    *,
    robota: Path,
    home: Path,
    config_file: Path,
    log_dir: Path,
    pinned: bool,
    environ: Mapping[str, str],
) -> ServiceSpec:
    """The service for the profile at ``home`` (``Profile`` fields), started by ``robota``."""
    if not robota.is_absolute():
        raise AutostartError(f"the robota executable must be an absolute path, found {robota}")
    digest = hashlib.sha256(str(config_file).encode()).hexdigest()[:10]
    kept = {name: environ[name] for name in KEPT if environ.get(name)}
    if "HOME" not in kept:
        raise AutostartError("HOME is not set: the service could not find the profile")
    argv: list[str] = [str(robota)]
    if pinned:
        kept["ROBOTA_HOME"] = str(home)
        if config_file == home / "config.yaml":
            argv += ["--profile", str(home)]
        else:  # --profile would pin <home>/config.yaml; the variables name this one
            kept["ROBOTA_CONFIG"] = str(config_file)
    elif config_file != home / "config.yaml":
        kept["ROBOTA_CONFIG"] = str(config_file)
    argv += ["server", "run"]
    for name, value in kept.items():
        if "\n" in value or "\0" in value:
            raise AutostartError(f"{name} holds a line break; it cannot go into a service file")
    return ServiceSpec(
        name=f"robota-host-{digest}",
        argv=tuple(argv),
        environment=tuple(sorted(kept.items())),
        description=f"robota host for profile {config_file}",
        working_dir=kept["HOME"],
        log_file=str(log_dir / "autostart.log"),
    )


def systemd_quote(word: str) -> str:
    """``word`` as one argument of a systemd command line (double quotes; ``$`` and ``%``
    escaped, which systemd would otherwise expand)."""
    escaped = word.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("$", "$$").replace("%", "%%") + '"'


def render_systemd_unit(spec: ServiceSpec) -> str:
    """The user unit for ``spec`` (``~/.config/systemd/user/<name>.service``)."""
    env, *words = spec.command()
    exec_start = " ".join([env, *(systemd_quote(word) for word in words)])
    return f"""\
# {MANAGED_MARK}: `robota server autostart disable` removes it.
[Unit]
Description={spec.description.replace("%", "%%")}
# Five crashes within five minutes stop the restarts: a host that cannot start stays down.
StartLimitIntervalSec=300
StartLimitBurst=5

[Service]
Type=simple
ExecStart={exec_start}
WorkingDirectory={spec.working_dir.replace("%", "%%")}
# Restart after a crash only: 0 is a clean stop, {REPLACED_EXIT} a host a safe restart replaced.
Restart=on-failure
RestartSec=5
SuccessExitStatus={REPLACED_EXIT}
RestartPreventExitStatus={REPLACED_EXIT}
# The host ends its agents itself, and a replacement host must outlive this process.
KillMode=process
TimeoutStopSec=45

[Install]
WantedBy=default.target
"""


def render_launchd_plist(spec: ServiceSpec) -> bytes:
    """The LaunchAgent for ``spec`` (``~/Library/LaunchAgents/<label>.plist``)."""
    body = plistlib.dumps(
        {
            "Label": spec.label,
            "ProgramArguments": spec.command(),
            "WorkingDirectory": spec.working_dir,
            "RunAtLoad": True,
            # Relaunched only when it exits unsuccessfully (see the module docstring on 75).
            "KeepAlive": {"SuccessfulExit": False},
            "ThrottleInterval": 10,
            "AbandonProcessGroup": True,
            "ExitTimeOut": 45,
            "StandardOutPath": spec.log_file,
            "StandardErrorPath": spec.log_file,
        },
        sort_keys=False,
    )
    header, _, rest = body.partition(b"<plist")
    return header + f"<!-- {MANAGED_MARK} -->\n".encode() + b"<plist" + rest


def unit_path(manager: Manager, spec: ServiceSpec, environ: Mapping[str, str]) -> Path:
    """Where the service file goes."""
    home = Path(environ["HOME"])
    if manager == "systemd":
        config = environ.get("XDG_CONFIG_HOME") or str(home / ".config")
        return Path(config) / "systemd" / "user" / f"{spec.name}.service"
    return home / "Library" / "LaunchAgents" / f"{spec.label}.plist"


def rendered(manager: Manager, spec: ServiceSpec) -> bytes:
    if manager == "systemd":
        return render_systemd_unit(spec).encode()
    return render_launchd_plist(spec)


class RegistrationState(StrEnum):
    ABSENT = "absent"
    """No service file."""
    CURRENT = "current"
    """robota's file, as ``enable`` would write it now."""
    OUTDATED = "outdated"
    """robota's file, but different (another robota path, PATH or profile): run ``enable``."""
    FOREIGN = "foreign"
    """A file of that name robota did not write."""


@dataclass(frozen=True, slots=True)
class Registration:
    manager: Manager
    path: Path
    state: RegistrationState
    enabled: bool | None
    """The manager's word (systemd ``is-enabled``; launchd: loaded); ``None`` if it gave none."""
    active: bool | None
    """Whether the manager runs the service now."""
    detail: str = ""

    def to_json(self) -> dict[str, object]:
        return {
            "manager": self.manager,
            "path": str(self.path),
            "state": self.state.value,
            "enabled": self.enabled,
            "active": self.active,
            "detail": self.detail,
        }


def _file_state(path: Path, wanted: bytes) -> RegistrationState:
    try:
        current = path.read_bytes()
    except FileNotFoundError:
        return RegistrationState.ABSENT
    except OSError:
        return RegistrationState.FOREIGN
    if MANAGED_MARK.encode() not in current:
        return RegistrationState.FOREIGN
    return RegistrationState.CURRENT if current == wanted else RegistrationState.OUTDATED


def _check(runner: Runner, argv: Sequence[str]) -> RunResult:
    result = runner(argv)
    if result.returncode != 0:
        said = (result.stderr or result.stdout).strip()
        raise AutostartError(
            f"`{' '.join(argv)}` failed (exit {result.returncode})" + (f": {said}" if said else "")
        )
    return result


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_bytes(data)
    temporary.chmod(0o644)
    temporary.replace(path)


def _launchd_domain(uid: int) -> str:
    return f"gui/{uid}"


def enable(
    manager: Manager,
    spec: ServiceSpec,
    environ: Mapping[str, str],
    runner: Runner,
    *,
    start_now: bool,
    linger: bool = False,
    uid: int | None = None,
) -> Path:
    """Write the service file and register it; start it now when ``start_now`` (a host that
    already runs outside the service is left alone: the service takes over at the next login).
    Returns the file's path."""
    path = unit_path(manager, spec, environ)
    if _file_state(path, b"") is RegistrationState.FOREIGN:
        raise AutostartError(f"{path} exists and was not written by robota; left as it is")
    if linger and manager != "systemd":
        raise AutostartError("--linger is for systemd (Linux); launchd agents start at login")
    try:
        _write(path, rendered(manager, spec))
    except OSError as error:
        raise AutostartError(f"cannot write {path}: {error}") from error
    if manager == "systemd":
        _check(runner, ["systemctl", "--user", "daemon-reload"])
        now = ["--now"] if start_now else []
        _check(runner, ["systemctl", "--user", "enable", *now, f"{spec.name}.service"])
        if linger:
            _check(runner, ["loginctl", "enable-linger"])
        return path
    domain = _launchd_domain(os.getuid() if uid is None else uid)
    # bootstrap refuses a label that is loaded already: unload the old definition first.
    runner(["launchctl", "bootout", f"{domain}/{spec.label}"])
    _check(runner, ["launchctl", "bootstrap", domain, str(path)])
    if start_now:
        _check(runner, ["launchctl", "kickstart", f"{domain}/{spec.label}"])
    return path


def disable(
    manager: Manager,
    spec: ServiceSpec,
    environ: Mapping[str, str],
    runner: Runner,
    *,
    uid: int | None = None,
) -> bool:
    """Stop and unregister the service and remove its file; ``False`` when there was none."""
    path = unit_path(manager, spec, environ)
    state = _file_state(path, b"")
    if state is RegistrationState.ABSENT:
        return False
    if state is RegistrationState.FOREIGN:
        raise AutostartError(f"{path} was not written by robota; left as it is")
    if manager == "systemd":
        _check(runner, ["systemctl", "--user", "disable", "--now", f"{spec.name}.service"])
        path.unlink(missing_ok=True)
        _check(runner, ["systemctl", "--user", "daemon-reload"])
        return True
    domain = _launchd_domain(os.getuid() if uid is None else uid)
    argv = ["launchctl", "bootout", f"{domain}/{spec.label}"]
    result = runner(argv)
    if result.returncode not in (0, 3, 113):  # 3 and 113: not loaded, nothing to stop
        raise AutostartError(
            f"`{' '.join(argv)}` failed (exit {result.returncode}): {result.stderr.strip()}"
        )
    path.unlink(missing_ok=True)
    return True


def registration(
    manager: Manager,
    spec: ServiceSpec,
    environ: Mapping[str, str],
    runner: Runner,
    *,
    uid: int | None = None,
) -> Registration:
    """The service file's state and what the manager says about the service."""
    path = unit_path(manager, spec, environ)
    state = _file_state(path, rendered(manager, spec))
    if state is RegistrationState.ABSENT:
        return Registration(manager, path, state, enabled=False, active=False)
    if manager == "systemd":
        unit = f"{spec.name}.service"
        enabled = runner(["systemctl", "--user", "is-enabled", unit])
        active = runner(["systemctl", "--user", "is-active", unit])
        detail = f"is-enabled: {enabled.stdout.strip()}, is-active: {active.stdout.strip()}"
        if enabled.returncode == 127 or not enabled.stdout.strip():
            return Registration(manager, path, state, None, None, enabled.stderr.strip())
        return Registration(
            manager,
            path,
            state,
            enabled=enabled.returncode == 0,
            active=active.returncode == 0,
            detail=detail,
        )
    domain = _launchd_domain(os.getuid() if uid is None else uid)
    printed = runner(["launchctl", "print", f"{domain}/{spec.label}"])
    loaded = printed.returncode == 0
    running = loaded and "state = running" in printed.stdout
    return Registration(manager, path, state, enabled=loaded, active=running)


def robota_executable(argv0: str, python: str) -> Path:
    """The absolute path of the ``robota`` script running now (the service runs the same one)."""
    first = Path(argv0)
    if first.name == "robota" and first.exists():
        return first.absolute()
    beside = Path(python).with_name("robota")
    if beside.exists():
        return beside.absolute()
    raise AutostartError(
        "cannot find the robota executable (run `robota server autostart enable` from an "
        "installed robota)"
    )


def this_robota() -> Path:
    return robota_executable(sys.argv[0], sys.executable)
