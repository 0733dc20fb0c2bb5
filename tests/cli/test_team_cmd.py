"""``robota team list|status|audit``: configured teams with their registry and decisions, read
from a real store file, in text and JSON, content-free."""

from __future__ import annotations

from robota.core.policy import Request, Scheduler, Submit, scheduler_to_json
from robota.core.store import (
    AppendTeamAudit,
    SaveTeamState,
    SetTeamPaused,
    migrate,
)
from robota.core.store._connection import open_writer

from ..support.robota import Robota

CONFIG = """\
agents:
  mine:
    kind: acp
    command: my-agent
defaults:
  agent: mine
transports:
  feishu:
    appId: cli_a
    appSecret: a-secret-of-enough-length
    userOpenId: ou_owner
teams:
  web:
    transport: feishu
    chat: oc_web
    project: /srv/web
    slots: 1
  api:
    transport: feishu
    chat: oc_api
    project: /srv/api
"""


def _configure(robota: Robota) -> None:
    robota.home.mkdir(parents=True, exist_ok=True)
    (robota.home / "config.yaml").write_text(CONFIG)


def _fill_store(robota: Robota) -> None:
    (robota.home / "data").mkdir()
    db = open_writer(robota.home / "data" / "robota.sqlite")
    try:
        migrate(db)
        scheduler = Scheduler(slots=1)
        scheduler.handle(Submit(Request("r1", "ou_a", "ask", ("read:/srv/web",)), 1_000.0))
        scheduler.handle(Submit(Request("r2", "ou_b", "deploy", ("write:/srv/web",)), 1_001.0))
        SaveTeamState("web", 1, scheduler_to_json(scheduler.state), "[]", at=1_002.0).apply(db)
        SetTeamPaused("api", True, at=1_003.0).apply(db)
        AppendTeamAudit("web", "ou_b", "deploy", "admin", "allow", at=1_001.0).apply(db)
        AppendTeamAudit("web", "ou_c", "switch", "group-rejected", "group-rejected").apply(db)
        AppendTeamAudit("api", "ou_d", "ask", "public", "allow", at=5.0).apply(db)
    finally:
        db.close()


def test_without_a_store_teams_read_as_never_run(robota: Robota) -> None:
    _configure(robota)
    listed = robota.run_json("team", "list", "--json")
    assert listed == {
        "teams": [
            {
                "name": "web",
                "transport": "feishu",
                "chat": "oc_web",
                "project": "/srv/web",
                "paused": False,
                "slots": 1,
                "running": 0,
                "queued": 0,
            },
            {
                "name": "api",
                "transport": "feishu",
                "chat": "oc_api",
                "project": "/srv/api",
                "paused": False,
                "slots": 3,
                "running": 0,
                "queued": 0,
            },
        ]
    }
    assert not (robota.home / "data" / "robota.sqlite").exists()
    status = robota.run_json("team", "status", "web", "--json")
    assert (status["running"], status["queue"], status["paused"]) == ([], [], False)
    audit = robota.run("team", "audit", "web")
    assert (audit.returncode, audit.stdout) == (0, "team web: no decisions recorded\n")


def test_list_status_and_audit_read_the_store(robota: Robota) -> None:
    _configure(robota)
    _fill_store(robota)
    listed = robota.run_json("team", "list", "--json")["teams"]
    assert [(t["name"], t["paused"], t["running"], t["queued"]) for t in listed] == [
        ("web", False, 1, 1),
        ("api", True, 0, 0),
    ]
    text = robota.run("team", "list")
    assert text.returncode == 0, text.stderr
    assert text.stdout.splitlines() == [
        "web  feishu oc_web  /srv/web  on  running 1/1, queued 1",
        "api  feishu oc_api  /srv/api  paused  running 0/3, queued 0",
    ]

    status = robota.run_json("team", "status", "web", "--json")
    assert status["slots"] == 1 and status["queue_limit"] == 10
    assert status["running"] == [
        {
            "request": "r1",
            "sender": "ou_a",
            "intent": "ask",
            "tags": ["read:/srv/web"],
            "started_at": 1_000.0,
        }
    ]
    assert status["queue"] == [
        {
            "position": 1,
            "request": "r2",
            "sender": "ou_b",
            "intent": "deploy",
            "tags": ["write:/srv/web"],
            "queued_at": 1_001.0,
            "reason": "slot_full",
        }
    ]
    lines = robota.run("team", "status", "web").stdout.splitlines()
    assert lines[0] == "team web: on"
    assert lines[1] == "  slots 1/1, queue 1/10, turns end after 30 min"
    assert lines[2].startswith("  running r1  ou_a  ask  read:/srv/web  since ")
    assert lines[3].startswith("  queued #1 r2  ou_b  deploy  write:/srv/web  since ")
    assert lines[3].endswith("(slot_full)")

    audit = robota.run_json("team", "audit", "web", "--json")
    assert audit["team"] == "web"
    assert [(e["sender"], e["intent"], e["level"], e["decision"]) for e in audit["events"]] == [
        ("ou_b", "deploy", "admin", "allow"),
        ("ou_c", "switch", "group-rejected", "group-rejected"),
    ]
    assert set(audit["events"][0]) == {"id", "sender", "intent", "level", "decision", "at"}
    newest = robota.run_json("team", "audit", "web", "--json", "--limit", "1")["events"]
    assert [e["intent"] for e in newest] == ["switch"]
    text_audit = robota.run("team", "audit", "web").stdout.splitlines()
    assert text_audit[0].endswith("  ou_b  deploy  admin  -> allow")


def test_an_unknown_team_is_named_with_the_configured_ones(robota: Robota) -> None:
    _configure(robota)
    for command in ("status", "audit"):
        result = robota.run("team", command, "docs")
        assert result.returncode == 1
        assert "no team 'docs' in " in result.stderr
        assert "(configured teams: web, api)" in result.stderr


def test_a_store_from_before_teams_reads_as_teams_that_never_ran(robota: Robota) -> None:
    _configure(robota)
    (robota.home / "data").mkdir()
    path = robota.home / "data" / "robota.sqlite"
    db = open_writer(path)
    try:
        migrate(db, target=4)
    finally:
        db.close()
    assert robota.run_json("team", "status", "api", "--json")["queue"] == []
    db = open_writer(path)
    try:  # and it was not migrated by reading it
        assert db.execute("SELECT max(version) FROM schema_versions").fetchone() == (4,)
    finally:
        db.close()


def test_pause_and_resume_without_a_host_set_the_store_switch(robota: Robota) -> None:
    _configure(robota)
    _fill_store(robota)
    paused = robota.run("team", "pause", "web")
    assert paused.returncode == 0, paused.stderr
    assert "no host runs" in paused.stdout
    listed = robota.run_json("team", "list", "--json")["teams"]
    assert [(t["name"], t["paused"]) for t in listed] == [("web", True), ("api", True)]
    resumed = robota.run("team", "resume", "api")
    assert resumed.returncode == 0, resumed.stderr
    assert "0 messages arrived" in resumed.stdout
    listed = robota.run_json("team", "list", "--json")["teams"]
    assert [(t["name"], t["paused"]) for t in listed] == [("web", True), ("api", False)]
    unknown = robota.run("team", "pause", "docs")
    assert unknown.returncode == 1 and "no team 'docs' in " in unknown.stderr
