"""``inspect_store`` on real files: beside a live writer, at older versions, and broken ones."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from robota.core import StoreError
from robota.core.store import (
    MIGRATIONS,
    AppendAuditEvent,
    ClaimInboundEvent,
    Together,
    inspect_store,
    migrate,
)
from robota.core.store._connection import open_writer

LATEST = MIGRATIONS[-1].version
PAYLOAD = {"text": "x" * 200}


def fill(store: Any, events: int, claims: int) -> None:
    ops = [AppendAuditEvent("turn.started", PAYLOAD) for _ in range(events)]
    ops += [ClaimInboundEvent(f"evt-{n}", "message") for n in range(claims)]
    store.client.write_sync(Together(tuple(ops)), timeout=10)


def test_a_live_store_is_reported_table_by_table(store: Any) -> None:
    fill(store, events=300, claims=7)
    report = inspect_store(store.path)  # the writer is running: WAL not checkpointed yet
    tables = {t.name: t for t in report.tables}
    assert (report.path, report.schema_version, report.latest_version) == (
        store.path,
        LATEST,
        LATEST,
    )
    assert report.journal_mode == "wal"
    assert report.wal_bytes > 0
    assert report.size_source == "dbstat"
    assert (tables["audit_events"].rows, tables["inbound_event_receipts"].rows) == (300, 7)
    assert tables["schema_versions"].rows == LATEST
    assert tables["routes"].rows == 0
    assert not any(name.startswith("sqlite_") for name in tables)
    # 300 events of 200+ bytes each cannot fit fewer than 15 pages of 4 KiB.
    assert tables["audit_events"].bytes >= 300 * 200
    assert tables["audit_events"].bytes % report.page_size == 0
    assert tables["audit_events"].indexes == ("audit_events_by_type",)
    assert tables["audit_events"].index_bytes >= report.page_size
    assert tables["turn_attempts"].indexes == (
        "turn_attempts_by_status_heartbeat",
        "turn_attempts_by_task",
    )
    # Every page in use belongs to a table or an index.
    used = sum(t.bytes + t.index_bytes for t in report.tables)
    assert used < report.pages * report.page_size


def test_without_dbstat_sizes_are_the_values_bytes(store: Any) -> None:
    fill(store, events=50, claims=0)
    measured = {t.name: t for t in inspect_store(store.path).tables}
    estimated = inspect_store(store.path, dbstat=False)
    tables = {t.name: t for t in estimated.tables}
    assert estimated.size_source == "estimate"
    events = tables["audit_events"]
    assert 50 * len('{"text":"' + "x" * 200 + '"}') < events.bytes <= measured["audit_events"].bytes
    assert (events.rows, events.index_bytes) == (50, 0)
    assert tables["routes"].bytes == 0


def test_an_older_store_says_its_version_and_has_only_its_tables(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = open_writer(path)
    migrate(db, target=1)
    db.close()
    report = inspect_store(path)
    assert (report.schema_version, report.latest_version) == (1, LATEST)
    assert "routes" in {t.name for t in report.tables}
    assert "audit_events" not in {t.name for t in report.tables}  # a version 2 table


def test_a_file_that_is_not_a_store_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("not a database, but long enough to have a header of sorts\n" * 20)
    with pytest.raises(StoreError, match=rf"cannot read the store {path}: file is not a database"):
        inspect_store(path)
    with pytest.raises(StoreError, match="no such file"):
        inspect_store(tmp_path / "missing.db")
