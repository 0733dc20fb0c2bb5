"""``robota trust``: trust this workspace (``--yes``), ``status [--json]``, ``revoke --yes``.

The workspace is the git repository's root of the directory (``--cwd``, default this one),
or the directory itself. Trusting applies the project's ``.robota/config.yaml`` and the
profile's permission mode to sessions there; an untrusted workspace runs Restricted and
headless starts refuse it. Exit codes: 0 done, 1 the store could not be read or written,
2 a usage error (``--yes`` missing: nothing here asks, so nothing hangs headless).

Only click is imported at import time.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import click

if TYPE_CHECKING:
    from robota.core.trust import TrustEntry, TrustStore

__all__ = ["trust_group"]

_CWD = click.option(
    "--cwd",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="The directory whose workspace this is about (default: this one).",
)


def _store() -> TrustStore:
    from robota.host import trust_store  # noqa: PLC0415

    from ._profile import load_profile  # noqa: PLC0415

    return trust_store(load_profile()[1])


def _need_yes(yes: bool, what: str) -> None:
    if not yes:
        click.echo(f"robota: {what}: pass --yes to confirm (nothing is asked)", err=True)
        sys.exit(2)


def _change(action: Literal["grant", "revoke"], cwd: Path | None) -> TrustEntry | None:
    """Grant or revoke the workspace of ``cwd``; exit 1 when the store cannot be changed."""
    from robota.core.trust import TrustStoreUnreadable, workspace_root  # noqa: PLC0415

    store = _store()
    workspace = workspace_root(cwd or Path.cwd())
    try:
        return store.grant(workspace) if action == "grant" else store.revoke(workspace)
    except (TrustStoreUnreadable, OSError) as error:
        click.echo(f"robota: {error}", err=True)
        sys.exit(1)


@click.group("trust", invoke_without_command=True)
@click.option("--yes", is_flag=True, help="Trust this workspace (required: nothing is asked).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@_CWD
@click.pass_context
def trust_group(ctx: click.Context, yes: bool, as_json: bool, cwd: Path | None) -> None:
    """Workspace trust: with --yes, trust this workspace (its git root, or the directory)."""
    if ctx.invoked_subcommand is not None:
        return
    _need_yes(yes, "trusting this workspace applies its .robota/config.yaml")
    entry = _change("grant", cwd)
    assert entry is not None
    if as_json:
        click.echo(json.dumps({"workspace": entry.workspace, "state": "trusted"}))
    else:
        click.echo(f"trusted {entry.workspace}")


@trust_group.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@_CWD
def status_command(as_json: bool, cwd: Path | None) -> None:
    """This workspace's trust, and what trusting it would enable (from metadata only)."""
    from robota.core.trust import preview  # noqa: PLC0415

    result = preview(_store(), cwd or Path.cwd())
    if as_json:
        click.echo(json.dumps(result, ensure_ascii=False))
        return
    click.echo(f"workspace {result['workspace']} ({result['key']})")
    click.echo(f"state: {result['state']}" + (" (Restricted)" if result["restricted"] else ""))
    if "problem" in result:
        click.echo(f"problem: {result['problem']}")
    project = result["project_config"]
    assert isinstance(project, dict)
    if project["exists"]:
        click.echo(f"project config: {project['path']} ({project.get('size')} bytes)")
    else:
        click.echo("project config: none")
    if "note" in project:
        click.echo(f"  note: {project['note']}")
    enables = result["trust_enables"]
    assert isinstance(enables, list)
    for item in enables:
        click.echo(f"trusting enables: {item}")
    click.echo("trusting enables: the profile's permission mode (untrusted: plan)")


@trust_group.command("revoke")
@click.option("--yes", is_flag=True, help="Revoke (required: nothing is asked).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@_CWD
def revoke_command(yes: bool, as_json: bool, cwd: Path | None) -> None:
    """Stop trusting this workspace: it runs Restricted again."""
    from robota.core.trust import workspace_root  # noqa: PLC0415

    _need_yes(yes, "revoking trust")
    workspace = workspace_root(cwd or Path.cwd())
    entry = _change("revoke", cwd)
    state = "revoked" if entry is not None else "untrusted"
    if as_json:
        click.echo(json.dumps({"workspace": str(workspace), "state": state}))
    elif entry is None:
        click.echo(f"{workspace} was not trusted")
    else:
        click.echo(f"revoked {workspace}")
