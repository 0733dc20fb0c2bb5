"""The agent skill packaged with robota, and its managed copy in the shared skill directory.

Agents that read skills (Codex, Claude Code and others follow the ``~/.agents/skills/NAME/SKILL.md``
layout) learn from ``robota/SKILL.md`` which ``robota task`` commands they may run for their own
task. The packaged files are package data of ``robota.cli`` (``skills/robota/``); ``robota skills
install`` copies them to ``<skills dir>/robota`` and writes a marker file (``MARKER``) beside
them. The marker is what makes the directory *managed*: only a managed directory is ever
refreshed or removed, so a user's own ``robota`` skill (or anything else of that name) is left
alone, and uninstall refuses a managed directory that holds files robota did not put there.

The skills directory is ``--target DIR``, else ``$ROBOTA_SKILLS_DIR``, else ``~/.agents/skills``.

States (``skill_state``, a pure judgement of what ``inspect`` read):

* ``absent``: no ``robota`` entry in the skills directory;
* ``installed``: managed, and every packaged file is there with the packaged content;
* ``outdated``: managed, but a file is missing or differs (an older robota, or an edit);
* ``unmanaged``: something named ``robota`` without robota's marker (never touched).

Only the standard library and ``robota.core``'s error base are imported (the lazy facade loads
nothing else); the command module imports this when it runs.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from importlib import resources
from pathlib import Path

from robota.core import RobotaError

__all__ = [
    "MARKER",
    "SKILL_NAME",
    "SKILLS_DIR_ENV",
    "SkillError",
    "SkillReport",
    "SkillState",
    "inspect",
    "install",
    "packaged_files",
    "refresh",
    "skill_state",
    "skills_dir",
    "uninstall",
]

SKILL_NAME = "robota"
SKILLS_DIR_ENV = "ROBOTA_SKILLS_DIR"
MARKER = ".robota-managed.json"
"""Written last by an install, so a half-written copy is never taken for a managed one."""
_MANAGED_BY = "robota"


class SkillError(RobotaError):
    """A skills directory robota cannot use, or a directory it must not change."""


class SkillState(StrEnum):
    ABSENT = "absent"
    INSTALLED = "installed"
    OUTDATED = "outdated"
    UNMANAGED = "unmanaged"


@dataclass(frozen=True, slots=True)
class SkillReport:
    state: SkillState
    path: Path
    """``<skills dir>/robota``."""
    installed_version: str | None
    """The robota version the marker names (managed copies only)."""
    extra_files: tuple[str, ...] = ()
    """Files in a managed directory that robota did not put there."""

    def to_json(self) -> dict[str, object]:
        return {
            "state": self.state.value,
            "path": str(self.path),
            "installedVersion": self.installed_version,
            "extraFiles": list(self.extra_files),
        }


def skills_dir(target: str | os.PathLike[str] | None, environ: Mapping[str, str]) -> Path:
    """The skills directory: ``target``, else ``$ROBOTA_SKILLS_DIR``, else ``~/.agents/skills``."""
    if target is not None:
        value, origin = os.fspath(target), "--target"
    elif environ.get(SKILLS_DIR_ENV):
        value, origin = environ[SKILLS_DIR_ENV], SKILLS_DIR_ENV
    else:
        home = environ.get("HOME") or str(Path.home())
        return Path(home) / ".agents" / "skills"
    path = Path(value).expanduser()
    if not path.is_absolute():
        # A relative path would name a different directory from each working directory.
        raise SkillError(f"{origin} must be an absolute path, found {value!r}")
    return path


def packaged_files() -> dict[str, bytes]:
    """The skill's files as robota ships them: name -> content."""
    root = resources.files("robota.cli") / "skills" / SKILL_NAME
    return {item.name: item.read_bytes() for item in root.iterdir() if item.is_file()}


def skill_state(*, exists: bool, marker_ok: bool, files_match: bool) -> SkillState:
    """What ``inspect`` found, as a state (see the module docstring)."""
    if not exists:
        return SkillState.ABSENT
    if not marker_ok:
        return SkillState.UNMANAGED
    return SkillState.INSTALLED if files_match else SkillState.OUTDATED


def _read_marker(directory: Path) -> tuple[bool, str | None]:
    """``(managed, version)``: whether robota's marker is there, and the version it names."""
    try:
        data = json.loads((directory / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False, None
    if not isinstance(data, dict) or data.get("managedBy") != _MANAGED_BY:
        return False, None
    version = data.get("version")
    return True, version if isinstance(version, str) else None


def inspect(directory: Path) -> SkillReport:
    """The state of ``directory`` (a ``<skills dir>/robota``) against the packaged skill."""
    if not directory.exists() and not directory.is_symlink():
        return SkillReport(SkillState.ABSENT, directory, None)
    if directory.is_symlink() or not directory.is_dir():
        # A link or a file is the user's doing: robota writes only plain directories.
        return SkillReport(SkillState.UNMANAGED, directory, None)
    managed, version = _read_marker(directory)
    if not managed:
        return SkillReport(SkillState.UNMANAGED, directory, None)
    packaged = packaged_files()
    match = True
    for name, content in packaged.items():
        try:
            match = match and (directory / name).read_bytes() == content
        except OSError:
            match = False
    present = {entry.name for entry in directory.iterdir()}
    extra = tuple(sorted(present - set(packaged) - {MARKER}))
    state = skill_state(exists=True, marker_ok=True, files_match=match)
    return SkillReport(state, directory, version, extra)


def _marker_bytes(version: str) -> bytes:
    return (json.dumps({"managedBy": _MANAGED_BY, "version": version}, indent=2) + "\n").encode()


def _write(path: Path, data: bytes) -> None:
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o644)
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
        Path(temporary).replace(path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def install(root: Path, version: str) -> tuple[SkillReport, SkillReport]:
    """Install or refresh the managed copy under ``root``; ``(before, after)``.

    An unmanaged ``robota`` entry is refused (``SkillError``). A fresh copy is built in a
    temporary directory beside the target and renamed into place, so an agent never reads a
    half-written skill; a refresh replaces each file atomically and rewrites the marker last.
    """
    directory = root / SKILL_NAME
    before = inspect(directory)
    if before.state is SkillState.UNMANAGED:
        raise SkillError(
            f"{directory} exists and was not installed by robota (no {MARKER}); "
            "move it away or choose another --target"
        )
    if before.state is SkillState.INSTALLED and before.installed_version == version:
        return before, before
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise SkillError(f"cannot create the skills directory {root}: {error}") from error
    files = {**packaged_files(), MARKER: _marker_bytes(version)}
    try:
        if before.state is SkillState.ABSENT:
            staging = Path(tempfile.mkdtemp(dir=root, prefix=f".{SKILL_NAME}."))
            try:
                staging.chmod(0o755)
                for name, content in files.items():
                    (staging / name).write_bytes(content)
                staging.rename(directory)
            except BaseException:
                shutil.rmtree(staging, ignore_errors=True)
                raise
        else:
            for name, content in files.items():  # the marker is the dict's last entry
                _write(directory / name, content)
    except OSError as error:
        raise SkillError(f"cannot write the skill to {directory}: {error}") from error
    return before, inspect(directory)


def refresh(root: Path, version: str) -> SkillReport:
    """What ``robota init`` does: install or refresh, but leave an unmanaged entry alone."""
    current = inspect(root / SKILL_NAME)
    if current.state is SkillState.UNMANAGED:
        return current
    return install(root, version)[1]


def uninstall(root: Path) -> SkillReport:
    """Remove the managed copy under ``root``; the state it was in before.

    Refused (``SkillError``) for an unmanaged entry, and for a managed directory that holds
    files robota did not write: those are someone's, and removing them is not robota's call.
    """
    directory = root / SKILL_NAME
    before = inspect(directory)
    if before.state is SkillState.ABSENT:
        return before
    if before.state is SkillState.UNMANAGED:
        raise SkillError(f"{directory} was not installed by robota (no {MARKER}); left as it is")
    if before.extra_files:
        raise SkillError(
            f"{directory} holds files robota did not install ({', '.join(before.extra_files)}); "
            "left as it is"
        )
    try:
        for name in packaged_files():
            (directory / name).unlink(missing_ok=True)
        (directory / MARKER).unlink(missing_ok=True)  # last: until here it is still managed
        directory.rmdir()
    except OSError as error:
        raise SkillError(f"cannot remove {directory}: {error}") from error
    return before
