"""The generated-code table (``robota.cli._generated_code``): what it keeps, which files it
refuses, and that classes built through it behave as without it."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attr
import attr._make
import pytest

from robota.cli import _generated_code as gc_
from robota.cli._generated_code import CodeTable, cache_file, cacheable, read_table, write_table


@pytest.mark.parametrize(
    ("filename", "source", "kept"),
    [
        ("<string>", "def __create_fn__():\n def __init__(self): pass\n return __init__", True),
        ("<string>", "def __create_fn__():\n def __hash__(self): return 1\n return __hash__", True),
        ("<attrs generated methods m.C>", "def __init__(self, a):\n    self.a = a\n", True),
        (
            "<attrs generated methods m.C>",
            "def __hash__(self):\n  return hash((123, self.a))",
            False,
        ),
        ("<attrs generated __hash__ m.C>", "def __hash__(self):\n  return 1", False),
        ("<string>", "x = 1\n" * 20000, False),  # longer than generated code gets
    ],
)
def test_what_is_kept(filename: str, source: str, kept: bool) -> None:
    assert cacheable(filename, source) is kept


ATTRS_HASH = (
    "def __init__(self, a):\n    self.a = a\n"
    "def __hash__(self):\n        return hash((\n                {},\n                self.a,\n"
    "            ))\n"
)
"""attrs' methods of a frozen class as ``_make_hash_script`` writes them, the literal left open."""


@pytest.mark.parametrize(
    ("filename", "source", "kept"),
    [
        ("<attrs generated methods m.C>", ATTRS_HASH.format(123), (ATTRS_HASH.format(2**63), 123)),
        ("<attrs generated methods m.C>", ATTRS_HASH.format(-45), (ATTRS_HASH.format(2**63), -45)),
        ("<string>", ATTRS_HASH.format(123), None),  # not attrs'
        ("<attrs generated methods m.C>", "def __init__(self, a):\n    self.a = a\n", None),
        (
            "<attrs generated methods m.C>",
            "def __hash__(self):\n  return hash((123, self.a))",
            None,
        ),
        ("<attrs generated methods m.C>", ATTRS_HASH.format(1) + ATTRS_HASH.format(2), None),
    ],
)
def test_attrs_hash_literal_is_kept_as_a_placeholder(
    filename: str, source: str, kept: tuple[str, int] | None
) -> None:
    assert gc_.without_type_hash(filename, source) == kept


def test_attrs_hash_is_served_with_each_runs_own_value() -> None:
    """Two runs' texts differ only in the literal: the second is a hit, and what it serves is
    what compiling its own text makes, constant for constant."""
    table = CodeTable(None, {})
    filename = "<attrs generated methods m.C>"
    table.compile(ATTRS_HASH.format(123), filename, 0)
    served = table.compile(ATTRS_HASH.format(-987654321), filename, 0)
    fresh = compile(ATTRS_HASH.format(-987654321), filename, "exec", 0, dont_inherit=True)
    assert (table.hits, table.misses) == (1, 1)

    def consts(code: types.CodeType) -> list[object]:
        return [consts(c) if isinstance(c, types.CodeType) else c for c in code.co_consts]

    assert consts(served) == consts(fresh)
    assert [c.co_code for c in served.co_consts if isinstance(c, types.CodeType)] == [
        c.co_code for c in fresh.co_consts if isinstance(c, types.CodeType)
    ]
    namespace: dict[str, Any] = {}
    exec(served, namespace)
    instance = types.SimpleNamespace(a=5)
    assert namespace["__hash__"](instance) == hash((-987654321, 5))


@pytest.mark.parametrize(
    ("env", "where"),
    [
        ({"HOME": "/h"}, "/h/.cache/robota"),
        ({"HOME": "/h", "XDG_CACHE_HOME": "/x"}, "/x/robota"),
        ({"HOME": "/h", "XDG_CACHE_HOME": "relative"}, "/h/.cache/robota"),
        ({"HOME": "/h", "ROBOTA_CODE_CACHE": "0"}, None),
        ({"HOME": "/h", "ROBOTA_CODE_CACHE": "off"}, None),
        ({"HOME": "/h", "ROBOTA_CODE_CACHE": "1"}, "/h/.cache/robota"),
        ({}, None),
        ({"HOME": "relative"}, None),
    ],
)
def test_where_the_table_lives(env: dict[str, str], where: str | None) -> None:
    path = cache_file(env)
    assert (None if path is None else str(path.parent)) == where
    if path is not None:
        assert sys.implementation.cache_tag in path.name


def test_the_switch_installs_nothing(tmp_path: Path) -> None:
    assert gc_.install({"HOME": str(tmp_path), "ROBOTA_CODE_CACHE": "0"}) is None
    assert not (tmp_path / ".cache").exists()


def a_table(tmp_path: Path) -> tuple[Path, CodeTable]:
    path = tmp_path / "robota" / "code.bin"
    table = CodeTable(path, {})
    table.compile("def f():\n    return 41 + 1\n", "<string>", 0)
    table.save()
    return path, table


def test_a_saved_table_reads_back_owner_only(tmp_path: Path) -> None:
    path, table = a_table(tmp_path)
    assert path.stat().st_mode & 0o777 == 0o600
    entries = read_table(path)
    assert list(entries) == list(table.entries)
    namespace: dict[str, Any] = {}
    exec(next(iter(entries.values())), namespace)
    assert namespace["f"]() == 42
    assert [p.name for p in path.parent.iterdir()] == ["code.bin"]  # no temporary left


def test_nothing_new_writes_nothing(tmp_path: Path) -> None:
    path, _ = a_table(tmp_path)
    again = CodeTable(path, read_table(path))
    again.compile("def f():\n    return 41 + 1\n", "<string>", 0)
    before = path.stat().st_mtime_ns
    path.chmod(0o400)  # a write would have to replace it
    again.save()
    assert (again.hits, again.misses, path.stat().st_mtime_ns) == (1, 0, before)


def spoil(path: Path, how: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    data = path.read_bytes()
    head = gc_.header()
    if how == "corrupted":
        path.write_bytes(data[: len(head) + 20] + b"\xff" * 7)
    elif how == "truncated":
        path.write_bytes(data[:-10])
    elif how == "another python":
        path.write_bytes(data.replace(sys.version.encode(), b"3.0.0 (elsewhere)", 1))
    elif how == "another magic":
        path.write_bytes(head[:-1] + b"X" + data[len(head) :])
    elif how == "not a table":
        import marshal

        path.write_bytes(head + marshal.dumps({("<string>", 0): "text"}))
    elif how == "foreign owner":
        real = os.getuid()
        monkeypatch.setattr(os, "getuid", lambda: real + 1)
    elif how == "others may write":
        path.chmod(0o622)
    elif how == "oversized":
        monkeypatch.setattr(gc_, "MAX_BYTES", len(data) - 1)
    elif how == "too many entries":
        monkeypatch.setattr(gc_, "MAX_ENTRIES", 0)
    elif how == "symlink":
        link = path.with_name("link.bin")
        link.symlink_to(path)
        return link
    elif how == "directory":
        path.unlink()
        path.mkdir()
    return path


@pytest.mark.parametrize(
    "how",
    [
        "corrupted",
        "truncated",
        "another python",
        "another magic",
        "not a table",
        "foreign owner",
        "others may write",
        "oversized",
        "too many entries",
        "symlink",
        "directory",
    ],
)
def test_a_file_not_to_trust_is_ignored_and_rebuilt(
    tmp_path: Path, how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, _ = a_table(tmp_path)
    spoiled = spoil(path, how, monkeypatch)
    assert read_table(spoiled) == {}
    monkeypatch.undo()
    if how != "directory":
        rebuilt = CodeTable(path, read_table(spoiled))
        rebuilt.compile("def g():\n    return 1\n", "<string>", 0)
        rebuilt.save()
        assert len(read_table(path)) >= 1


def test_a_chunk_that_is_no_code_is_compiled_again_and_the_rest_served(
    tmp_path: Path,
) -> None:
    import marshal

    path = tmp_path / "code.bin"
    good = ("<good>", 0, "x = 1")
    bad = ("<bad>", 0, "y = 2")
    code = compile("x = 1", "<good>", "exec")
    table = ((good,), (bad,)), (marshal.dumps((code,)), b"\xffnot code")
    path.write_bytes(gc_.header() + marshal.dumps(table))
    path.chmod(0o600)
    table = CodeTable(path, read_table(path))
    namespace: dict[str, Any] = {}
    exec(table.compile("x = 1", "<good>", 0), namespace)
    exec(table.compile("y = 2", "<bad>", 0), namespace)
    assert (namespace["x"], namespace["y"], table.hits, table.misses) == (1, 2, 1, 1)
    table.save()
    assert sorted(k[0] for k in read_table(path)) == ["<bad>", "<good>"]
    assert all(isinstance(code, types.CodeType) for code in read_table(path).values())


def test_a_full_table_keeps_what_this_run_used_and_added(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "code.bin"
    old = {(f"<old {i}>", 0, "pass"): compile("pass", f"<old {i}>", "exec") for i in range(3)}
    write_table(path, old)
    monkeypatch.setattr(gc_, "MAX_ENTRIES", 3)
    table = CodeTable(path, read_table(path))
    table.compile("pass", "<old 1>", 0)
    table.compile("x = 1", "<new>", 0)
    table.save()
    assert sorted(k[0] for k in read_table(path)) == ["<new>", "<old 1>"]


@pytest.fixture
def patched(tmp_path: Path) -> Iterator[Path]:
    """dataclasses' ``exec`` and attrs' ``compile`` through tables in ``tmp_path``, undone
    after the test."""
    yield tmp_path / "code.bin"
    for module, name in ((dataclasses, "exec"), (attr._make, "compile")):
        if name in vars(module):
            delattr(module, name)


def through(path: Path) -> CodeTable:
    table = CodeTable(path, read_table(path))
    gc_.patch_dataclasses(table, dataclasses)
    gc_.patch_attrs(table, attr._make)
    return table


def some_classes() -> dict[str, type]:
    @dataclasses.dataclass(frozen=True, order=True, slots=True)
    class Point:
        x: int
        y: int = 0
        tags: tuple[str, ...] = dataclasses.field(default_factory=tuple)

    @dataclasses.dataclass(kw_only=True)
    class Box:
        size: float
        label: str | None = None

    @attr.frozen(order=True)
    class Pin:
        a: int
        b: tuple[int, ...] = attr.Factory(tuple)

    @attr.define(eq=False)
    class Job:  # no __hash__ of attrs' own: kept in the table
        name: str
        done: bool = False

    return {"Point": Point, "Box": Box, "Pin": Pin, "Job": Job}


def behaviour(classes: dict[str, type]) -> dict[str, object]:
    point, box, pin, job = (classes[n] for n in ("Point", "Box", "Pin", "Job"))
    p, q = point(1, 2), point(1, 3)
    frozen = []
    for instance, field in ((p, "x"), (pin(1), "a")):
        try:
            setattr(instance, field, 9)
        except (dataclasses.FrozenInstanceError, attr.exceptions.FrozenInstanceError) as error:
            frozen.append(type(error).__name__)
    b = box(size=2.5)
    b.label = "l"
    return {
        "repr": [repr(p), repr(b), repr(pin(2))],
        "eq": [p == point(1, 2), p == q, b == box(size=2.5, label="l"), pin(1) == pin(1)],
        "hash": [hash(p) == hash(point(1, 2)), hash(pin(1)) == hash(pin(1))],
        "order": [p < q, sorted([q, p]) == [p, q], pin(1) < pin(2)],
        "frozen": frozen,
        "fields": [f.name for f in dataclasses.fields(point)],
        "init": [p.tags, pin(1).b, repr(job("j")), job("j") == job("j")],
        "annotations": {k: str(v) for k, v in vars(point)["__init__"].__annotations__.items()},
        "replace": [dataclasses.replace(p, x=5) == point(5, 2), repr(attr.evolve(pin(1), a=2))],
        "kw_only": _refuses(lambda: box(2.5)),
    }


def _refuses(make: Any) -> bool:
    try:
        make()
    except TypeError:
        return True
    return False


def test_classes_built_through_the_table_behave_as_without_it(patched: Path) -> None:
    plain = behaviour(some_classes())
    first = through(patched)
    compiled = behaviour(some_classes())
    first.save()
    second = through(patched)
    served = behaviour(some_classes())
    assert first.misses > 0
    assert second.hits > 0
    assert second.misses == first.misses - len(first.new)  # only attrs' __hash__ again
    assert any(f.startswith("<attrs generated methods") for f, _, _ in second.used)
    assert plain == compiled == served


def test_code_from_the_table_is_what_compile_makes(patched: Path) -> None:
    first = through(patched)
    some_classes()
    first.save()
    for (filename, flags, source), code in read_table(patched).items():
        fresh = compile(source, filename, "exec", flags, dont_inherit=True)
        assert (code.co_code, code.co_consts, code.co_names) == (
            fresh.co_code,
            fresh.co_consts,
            fresh.co_names,
        )
        assert isinstance(code, types.CodeType)


def test_what_the_wrappers_do_not_recognise_goes_to_the_builtins(patched: Path) -> None:
    table = through(patched)
    namespace: dict[str, Any] = {}
    dataclasses.exec(compile("y = 2", "<c>", "exec"), namespace)  # type: ignore[attr-defined]
    dataclasses.exec(b"z = 3", namespace)  # type: ignore[attr-defined]
    assert (namespace["y"], namespace["z"]) == (2, 3)
    ast = attr._make.compile("1 + 1", "<e>", "eval")  # type: ignore[attr-defined]
    assert eval(ast) == 2
    assert (table.hits, table.misses) == (0, 0)


_PROBE = """
import json, sys, dataclasses
from robota.cli import main, _generated_code
try:
    main(["--version"])
except SystemExit:
    pass
@dataclasses.dataclass(frozen=True)
class Probe:
    a: int
table = _generated_code.ACTIVE
print(json.dumps([table.hits, table.misses, Probe(1) == Probe(1)]))
"""


def run_probe(code: str, home: Path) -> list[Any]:
    """Run ``code`` in a fresh interpreter with ``home`` as HOME; its last line's JSON list."""
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    result: list[Any] = json.loads(out.stdout.splitlines()[-1])
    return result


def test_a_second_robota_start_hits_the_table(tmp_path: Path) -> None:
    def run() -> list[object]:
        return run_probe(_PROBE, tmp_path)

    first = run()
    files = list((tmp_path / ".cache" / "robota").iterdir())
    assert [f.stat().st_mode & 0o777 for f in files] == [0o600]
    second = run()
    assert first[1] != 0 and first[2] is True
    assert second[0] != 0 and second[1] == 0 and second[2] is True


def test_importing_the_library_installs_nothing() -> None:
    """Only the ``robota`` script's ``main`` installs the table: importing robota (as a
    library, or a test) leaves dataclasses and attrs as they are."""
    code = (
        "import dataclasses, json, robota.cli, robota.core, robota.runtimes, trio, attr._make\n"
        "from robota.cli import _generated_code\n"
        "print(json.dumps(['exec' in vars(dataclasses), 'compile' in vars(attr._make),"
        " _generated_code.ACTIVE is None]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert json.loads(out.stdout) == [False, False, True]


_ATTRS_PROBE = """
import json
from robota.cli import _generated_code
table = _generated_code.install()
import trio  # attrs loads under it: its own classes, then trio's (frozen: __hash__)
print(json.dumps([table.misses, sorted({f.split()[-1] for f, _, _ in table.new})]))
"""


def test_attrs_own_and_frozen_classes_come_from_the_table_on_a_second_start(
    tmp_path: Path,
) -> None:
    """The hook patches ``attr._make`` before its code runs (its own classes are built at
    import), and frozen classes' ``__hash__`` is kept: a second start compiles nothing."""
    misses, kept = run_probe(_ATTRS_PROBE, tmp_path)
    assert misses > 0
    assert any(name.startswith("attr._make.") for name in kept), kept
    assert any(name.startswith("trio.") for name in kept), kept
    assert run_probe(_ATTRS_PROBE, tmp_path)[0] == 0
