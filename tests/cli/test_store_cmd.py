"""``robota store``: the profile's store file, read-only, in text and JSON."""

from __future__ import annotations

from robota.core.store import MIGRATIONS, migrate
from robota.core.store._connection import open_writer

from ..support.robota import Robota

LATEST = MIGRATIONS[-1].version


def test_store_reports_path_version_rows_and_sizes(robota: Robota) -> None:
    assert robota.run("init").returncode == 0
    path = robota.home / "data" / "robota.sqlite"
    missing = robota.run("store")
    assert missing.returncode == 0, missing.stderr
    assert missing.stdout == f"no store at {path} yet (robota creates it on first start)\n"
    assert not path.exists(), "robota store must not create the store"
    db = open_writer(path)
    migrate(db, target=LATEST - 1)
    db.execute(
        "INSERT INTO audit_events (event_type, payload_json, created_at) VALUES ('a', '{}', 1)"
    )
    db.close()

    report = robota.run_json("store")
    assert (report["exists"], report["path"]) == (True, str(path))
    assert (report["schema_version"], report["latest_version"]) == (LATEST - 1, LATEST)
    assert report["size_source"] == "dbstat"
    tables = {t["name"]: t for t in report["tables"]}
    assert tables["audit_events"]["rows"] == 1
    assert tables["audit_events"]["bytes"] == report["page_size"]
    assert tables["schema_versions"]["rows"] == LATEST - 1
    assert report["file_bytes"] == path.stat().st_size

    text = robota.run("store")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0] == f"store {path}"
    assert lines[1] == f"  schema v{LATEST - 1}, migrates to v{LATEST} on next start; journal wal"
    row = next(line.split() for line in lines if line.startswith("  audit_events "))
    assert row == ["audit_events", "1", "4.0", "KiB", "4.0", "KiB"]
    assert lines[-1] == "  (sizes from dbstat)"
    db = open_writer(path)
    try:
        assert db.execute("SELECT max(version) FROM schema_versions").fetchone() == (LATEST - 1,)
    finally:
        db.close()


def test_store_of_another_file_and_of_a_file_that_is_not_a_store(robota: Robota) -> None:
    other = robota.root / "other.sqlite"
    assert robota.run_json("store", "--db", str(other)) == {"path": str(other), "exists": False}
    other.write_text("hello\n" * 100)
    broken = robota.run("store", "--db", str(other))
    assert broken.returncode == 1
    assert f"cannot read the store {other}: file is not a database" in broken.stderr


def test_store_is_listed_in_help(robota: Robota) -> None:
    listed = robota.run("--help")
    assert any(line.split()[:1] == ["store"] for line in listed.stdout.splitlines())
