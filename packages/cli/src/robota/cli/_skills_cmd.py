"""``robota skills install | status | uninstall``: the managed copy of robota's agent skill.

The logic lives in ``_skills`` (standard library only, imported when a command runs). Exit
codes: 0 done (or nothing to do), 1 refused (an unmanaged ``robota`` entry, a managed one with
foreign files, a write that failed), 2 a bad ``--target`` or ``ROBOTA_SKILLS_DIR``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

if TYPE_CHECKING:
    from ._skills import SkillReport

__all__ = ["skills_group"]

_TARGET_HELP = (
    "The skills directory to use (the skill goes in DIR/robota). Default: $ROBOTA_SKILLS_DIR, "
    "else ~/.agents/skills."
)


def _root(target: Path | None) -> Path:
    from ._skills import SkillError, skills_dir  # noqa: PLC0415 (see the module docstring)

    try:
        return skills_dir(target, os.environ)
    except SkillError as error:
        raise click.UsageError(str(error)) from None


def _refuse(message: str, as_json: bool) -> NoReturn:
    if as_json:
        click.echo(json.dumps({"ok": False, "error": message}))
    click.echo(f"robota skills: {message}", err=True)
    raise SystemExit(1)


def _emit(action: str, report: SkillReport, as_json: bool, text: str) -> None:
    if as_json:
        click.echo(json.dumps({"ok": True, "action": action, **report.to_json()}))
    else:
        click.echo(text)


_target = click.option(
    "--target",
    type=click.Path(file_okay=False, path_type=Path),
    help=_TARGET_HELP,
)
_json = click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")


@click.group("skills")
def skills_group() -> None:
    """The robota skill for agents: which `robota task` commands they may run for their task."""


@skills_group.command("install")
@_target
@_json
def install_command(target: Path | None, as_json: bool) -> None:
    """Install the skill, or bring a managed copy up to date."""
    from robota.core import robota_version  # noqa: PLC0415

    from ._skills import SkillError, SkillState, install  # noqa: PLC0415

    root = _root(target)
    try:
        before, after = install(root, robota_version())
    except SkillError as error:
        _refuse(str(error), as_json)
    if before.state is SkillState.ABSENT:
        action, text = "installed", f"installed {after.path}"
    elif before == after:
        action, text = "unchanged", f"up to date: {after.path}"
    else:
        action, text = "refreshed", f"refreshed {after.path} (was {before.state})"
    _emit(action, after, as_json, text)


@skills_group.command("status")
@_target
@_json
def status_command(target: Path | None, as_json: bool) -> None:
    """Say whether the skill is installed, outdated, absent or an unmanaged directory."""
    from ._skills import SkillState, inspect  # noqa: PLC0415

    report = inspect(_root(target) / "robota")
    notes = {
        SkillState.ABSENT: "absent: run `robota skills install`",
        SkillState.INSTALLED: "installed",
        SkillState.OUTDATED: "outdated: run `robota skills install` to refresh it",
        SkillState.UNMANAGED: "unmanaged: not installed by robota, left alone",
    }
    text = f"{report.path}: {notes[report.state]}"
    if report.installed_version:
        text += f" (robota {report.installed_version})"
    _emit("status", report, as_json, text)


@skills_group.command("uninstall")
@_target
@_json
def uninstall_command(target: Path | None, as_json: bool) -> None:
    """Remove the managed copy; never a directory robota did not install."""
    from ._skills import SkillError, SkillState, uninstall  # noqa: PLC0415

    try:
        before = uninstall(_root(target))
    except SkillError as error:
        _refuse(str(error), as_json)
    if before.state is SkillState.ABSENT:
        _emit("absent", before, as_json, f"not installed: {before.path}")
    else:
        _emit("removed", before, as_json, f"removed {before.path}")
