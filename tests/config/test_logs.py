"""Structured logs: JSON lines, owner-only, rotated, and never a secret in them."""

from __future__ import annotations

import json
import logging
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from robota.core.config import load_config, template_text
from robota.core.logs import MASK, JsonLinesFormatter, Redactor, configure_logging

SECRET = "s3cr3t-Planted-Value-42"
SLACK = "xoxb-1234567890-abcdefghij"


@pytest.fixture
def restore_root_logger() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in root.handlers:
        if handler not in handlers:
            root.removeHandler(handler)
            handler.close()
    root.setLevel(level)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _fail_with(secret: str) -> None:
    token = secret  # a local variable holding the secret: shows up in the traceback source
    raise RuntimeError(f"upstream said: invalid credential {token}")


@pytest.mark.usefixtures("restore_root_logger")
def test_a_planted_secret_never_reaches_the_log_file(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text(template_text("config.yaml"))
    (home / ".env").write_text(f"FEISHU_APP_SECRET={SECRET}\n")
    config = load_config(environ={"ROBOTA_HOME": str(home)}, start_dir=tmp_path)
    assert SECRET in config.secrets

    handler = configure_logging(config.logging.path, "debug", secrets=config.secrets)
    log = logging.getLogger("robota.test")
    log.info("connecting with %s", SECRET)
    log.warning("slack said no", extra={"token": SLACK, "nested": {"k": [SECRET, 1]}})
    log.debug("header", extra={"auth": f"Authorization: Bearer {SECRET}x"})
    try:
        _fail_with(SECRET)
    except RuntimeError:
        log.exception("request failed")
    handler.flush()

    path = Path(handler.baseFilename)
    assert path == home / "logs" / "robota.log"
    raw = path.read_text(encoding="utf-8")
    assert SECRET not in raw
    assert SLACK not in raw and "1234567890" not in raw
    lines = _lines(path)  # every line is valid JSON
    assert [line["msg"] for line in lines] == [
        f"connecting with {MASK}",
        "slack said no",
        "header",
        "request failed",
    ]
    assert lines[1]["token"] == MASK
    assert lines[1]["nested"] == {"k": [MASK, 1]}
    assert lines[1]["level"] == "warning" and lines[1]["logger"] == "robota.test"
    assert lines[2]["auth"] == f"Authorization: Bearer {MASK}"
    exc = lines[3]["exc"]
    assert exc["type"] == "builtins.RuntimeError"
    assert exc["message"] == f"upstream said: invalid credential {MASK}"
    assert "Traceback (most recent call last)" in exc["traceback"]
    assert "_fail_with" in exc["traceback"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.usefixtures("restore_root_logger")
def test_rotation_keeps_files_private_and_clean(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "robota.log"
    configure_logging(path, "info", secrets=[SECRET], max_bytes=2000, backup_count=2)
    log = logging.getLogger("robota.rotation")
    for index in range(100):
        log.info("line %d %s", index, SECRET)
    files = sorted(path.parent.iterdir())
    assert [f.name for f in files] == ["robota.log", "robota.log.1", "robota.log.2"]
    for file in files:
        assert stat.S_IMODE(file.stat().st_mode) == 0o600
        assert SECRET not in file.read_text()
        assert all(line["msg"].endswith(MASK) for line in _lines(file))
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


@pytest.mark.usefixtures("restore_root_logger")
def test_reconfiguring_replaces_the_handler(tmp_path: Path) -> None:
    configure_logging(tmp_path / "a.log")
    configure_logging(tmp_path / "b.log", "warning")
    logging.getLogger("robota.x").warning("once")
    logging.getLogger("robota.x").info("filtered")
    assert (tmp_path / "a.log").read_text() == ""
    assert [line["msg"] for line in _lines(tmp_path / "b.log")] == ["once"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("bot xoxb-123456-abcdef ok", f"bot {MASK} ok"),
        ("app=xapp-1-A0B1C2D3", f"app={MASK}"),
        ("key sk-proj-abcdefghijklmnop1234 end", f"key {MASK} end"),
        ("authorization: bearer abc.def-123", f"authorization: bearer {MASK}"),
        ("gh ghp_abcdefghijklmnopqrstuvwxyz0123", f"gh {MASK}"),
        ("sk-learn and skeleton-key stay", "sk-learn and skeleton-key stay"),
    ],
)
def test_well_known_token_shapes_are_masked(text: str, expected: str) -> None:
    assert Redactor().redact(text) == expected


def test_secrets_split_by_json_escaping_are_still_masked() -> None:
    secret = 'pa"ss\\wörd\nline'
    formatter = JsonLinesFormatter(Redactor([secret]))
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "value %s", (secret,), None)
    record.number = 12345678
    line = formatter.format(record)
    assert json.loads(line)["msg"] == f"value {MASK}"
    assert "ss\\\\w" not in line

    numeric = JsonLinesFormatter(Redactor(["12345678"]))
    line = numeric.format(record)
    assert json.loads(line)["number"] == MASK
