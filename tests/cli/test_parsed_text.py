"""The parsed-text cache of ``robota``'s starts (``robota.cli._parsed_text``): exact by
construction (the whole text is the key, only JSON-exact data is kept), owner-only, and
ignored whenever its file is not to be trusted."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import pytest

from robota.cli import _cache_files, _parsed_text
from robota.cli._cache_files import cache_dir
from robota.cli._parsed_text import MAX_ENTRIES, ParsedCache, parsed_cache_on, plain
from robota.core import ConfigError
from robota.core.config import _load, _parsed, template_text, use_parse_cache

TEMPLATE = template_text("config.yaml")  # the config robota init writes


@pytest.mark.parametrize(
    ("data", "kept"),
    [
        ({"agents": {"codex": {"args": ["a", 1, 2.5, True, None]}}}, True),
        ("text", True),
        ([], True),
        ({1: "int key"}, False),
        ({"when": datetime.date(2026, 12, 4)}, False),
        ({"blob": b"bytes"}, False),
        ({"nan": float("nan")}, False),
        ({"inf": float("inf")}, False),
        ({"set": {1, 2}}, False),
        ((1, 2), False),
    ],
)
def test_only_data_json_gives_back_unchanged_is_kept(data: object, kept: bool) -> None:
    assert plain(data) is kept


def never(text: str) -> object:
    raise AssertionError("parsed although the cache held the text")


def test_a_text_is_parsed_once_then_read_back(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "parsed-yaml.json"
    calls: list[str] = []

    def parse(text: str) -> object:
        calls.append(text)
        return {"parsed": text, "list": [1, 2]}

    first = ParsedCache(path).parse("a: 1", parse)
    assert calls == ["a: 1"]
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700
    again = ParsedCache(path).parse("a: 1", never)  # another start: from the file
    assert again == first
    assert isinstance(again, dict)
    again["list"].append(3)  # the caller's own copy
    assert ParsedCache(path).parse("a: 1", never) == first


def test_what_is_not_plain_or_failed_is_parsed_every_time(tmp_path: Path) -> None:
    path = tmp_path / "parsed-yaml.json"
    cache = ParsedCache(path)
    assert cache.parse("d", lambda text: {"when": datetime.date(2026, 1, 1)})
    assert not path.exists()

    def broken(text: str) -> object:
        raise ConfigError("f", "line 1, column 1", "invalid YAML", "valid YAML")

    with pytest.raises(ConfigError):
        cache.parse("x: [", broken)
    with pytest.raises(ConfigError):
        ParsedCache(path).parse("x: [", broken)  # the error comes from the parser each time


def test_the_oldest_text_goes_first(tmp_path: Path) -> None:
    path = tmp_path / "parsed-yaml.json"
    cache = ParsedCache(path)
    for n in range(MAX_ENTRIES + 1):
        cache.parse(f"n: {n}", lambda text: {"text": text})
    kept = ParsedCache(path)
    for n in range(1, MAX_ENTRIES + 1):
        assert kept.parse(f"n: {n}", never) == {"text": f"n: {n}"}
    assert kept.parse("n: 0", lambda text: "parsed again") == "parsed again"


def spoil_link(path: Path) -> None:
    real = path.with_name("real.json")
    path.rename(real)
    path.symlink_to(real)


@pytest.mark.parametrize(
    "spoil",
    [
        lambda path: path.write_text("{not json"),
        lambda path: path.write_text(json.dumps({"format": "other", "entries": {}})),
        lambda path: path.write_text(json.dumps({"format": _parsed_text._FORMAT, "entries": []})),
        lambda path: path.chmod(0o666),
        spoil_link,
    ],
    ids=["damaged", "another format", "entries not a mapping", "writable by others", "a link"],
)
def test_a_file_not_to_be_trusted_is_ignored(tmp_path: Path, spoil: object) -> None:
    path = tmp_path / "parsed-yaml.json"
    ParsedCache(path).parse("a: 1", lambda text: {"a": 1})
    spoil(path)  # type: ignore[operator]
    assert ParsedCache(path).parse("a: 1", lambda text: "parsed") == "parsed"


def test_a_forged_entry_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "parsed-yaml.json"
    ParsedCache(path).parse("a: 1", lambda text: {"a": 1})
    document = json.loads(path.read_text())
    document["entries"]["not-a-digest"] = {"a": 2}
    path.write_text(json.dumps(document))
    path.chmod(0o600)
    assert _parsed_text._load(path).keys() == json.loads(path.read_text())["entries"].keys() - {
        "not-a-digest"
    }


def test_parse_yaml_through_the_cache_gives_what_the_parser_gives(tmp_path: Path) -> None:
    fresh = _load.parse_yaml(TEMPLATE, file="config.yaml")
    use_parse_cache(ParsedCache(tmp_path / "parsed-yaml.json"))
    try:
        assert _load.parse_yaml(TEMPLATE, file="config.yaml") == fresh  # the miss
        assert (tmp_path / "parsed-yaml.json").exists()
        assert _load.parse_yaml(TEMPLATE, file="config.yaml") == fresh  # the hit
        with pytest.raises(ConfigError, match="line 1"):
            _load.parse_yaml("a: [", file="config.yaml")
    finally:
        use_parse_cache(None)
    assert _parsed.parse_cache() is None


def test_only_the_robota_script_turns_it_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path)}
    monkeypatch.setattr(_cache_files, "SCRIPT", False)  # the library, not the script
    assert parsed_cache_on(env) is None
    assert _parsed.parse_cache() is None
    monkeypatch.setattr(_cache_files, "SCRIPT", True)
    try:
        assert parsed_cache_on({**env, "ROBOTA_CODE_CACHE": "0"}) is None
        cache = parsed_cache_on(env)
        assert cache is not None and _parsed.parse_cache() is cache
        assert cache.path == tmp_path / "robota" / "parsed-yaml.json"
    finally:
        use_parse_cache(None)


@pytest.mark.parametrize(
    ("env", "where"),
    [
        ({"XDG_CACHE_HOME": "/x/cache", "HOME": "/h"}, "/x/cache/robota"),
        ({"XDG_CACHE_HOME": "relative", "HOME": "/h"}, "/h/.cache/robota"),
        ({"HOME": "/h"}, "/h/.cache/robota"),
        ({"HOME": "relative"}, None),
        ({}, None),
        ({"HOME": "/h", "ROBOTA_CODE_CACHE": "0"}, None),
        ({"HOME": "/h", "ROBOTA_CODE_CACHE": "Off"}, None),
    ],
)
def test_where_the_caches_live(env: dict[str, str], where: str | None) -> None:
    found = cache_dir(env)
    assert (None if found is None else str(found)) == where
