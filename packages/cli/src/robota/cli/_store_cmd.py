"""``robota store``: what the profile's SQLite store holds, table by table.

Prints the database's path, its schema version (and the one this robota migrates to), and each
table's row count and size (``dbstat`` pages where SQLite has them, else an estimate), with
``--json`` for scripts. Read-only: safe beside a running robota, and it never creates or
migrates the file (doctor's rule too). ``--db FILE`` inspects another store file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ._agents_cmd import load_profile

if TYPE_CHECKING:
    from robota.core.store import StoreReport

__all__ = ["human_bytes", "store_command"]


@click.command("store")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Inspect this store file instead of the profile's (storage.sqlitePath).",
)
def store_command(as_json: bool, db_path: Path | None) -> None:
    """Show the store's path, schema version and each table's rows and size."""
    from robota.core import StoreError  # noqa: PLC0415
    from robota.core.store import inspect_store  # noqa: PLC0415

    path = db_path if db_path is not None else load_profile()[0].storage.sqlite_path
    if not path.exists():
        if as_json:
            click.echo(json.dumps({"path": str(path), "exists": False}, indent=2))
        else:
            click.echo(f"no store at {path} yet (robota creates it on first start)")
        return
    try:
        report = inspect_store(path)
    except StoreError as error:
        raise click.ClickException(str(error)) from None
    if as_json:
        click.echo(json.dumps({"exists": True, **report.as_json()}, indent=2))
    else:
        for line in report_lines(report):
            click.echo(line)


def report_lines(report: StoreReport) -> list[str]:
    version = f"schema v{report.schema_version}"
    if report.schema_version < report.latest_version:
        version += f", migrates to v{report.latest_version} on next start"
    elif report.schema_version > report.latest_version:
        version += f", newer than this robota (v{report.latest_version})"
    lines = [
        f"store {report.path}",
        f"  {version}; journal {report.journal_mode}",
        f"  file {human_bytes(report.file_bytes)}, wal {human_bytes(report.wal_bytes)}; "
        f"{report.pages} pages of {human_bytes(report.page_size)}, {report.free_pages} free",
    ]
    width = max([len("table"), *(len(t.name) for t in report.tables)])
    lines.append(f"  {'table'.ljust(width)}  {'rows':>8}  {'size':>9}  {'indexes':>9}")
    for table in report.tables:
        lines.append(
            f"  {table.name.ljust(width)}  {table.rows:>8}  {human_bytes(table.bytes):>9}  "
            f"{human_bytes(table.index_bytes):>9}"
        )
    source = "dbstat" if report.size_source == "dbstat" else "an estimate (the values' bytes)"
    lines.append(f"  (sizes from {source})")
    return lines


def human_bytes(size: int) -> str:
    """``512 B``, ``4.0 KiB``, ``1.5 MiB``..."""
    if size < 1024:
        return f"{size} B"
    value = float(size)
    for unit in ("KiB", "MiB", "GiB"):
        value /= 1024
        if value < 1024 or unit == "GiB":
            break
    return f"{value:.1f} {unit}"
