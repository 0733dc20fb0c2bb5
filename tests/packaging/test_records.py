"""Records (``robota.core.Record``): the checked-in methods are what tools/gen_records.py writes
now, and a record behaves as the frozen, slotted dataclass it replaces."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import re
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tools.gen_records import RecordError, rewrite  # noqa: E402


def test_the_checked_in_records_are_what_the_generator_writes() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_records.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"run tools/gen_records.py: {done.stdout}{done.stderr}"


DECLARED = """
from robota.core import FACTORY, Record, field


class Plain(Record):
    a: int
    b: str = "x"
    c: tuple[int, ...] = ()


class Made(Record):
    items: list[int] = field(default_factory=list)
    hidden: dict[str, int] = field(default_factory=dict, compare=False, repr=False)


class Keywords(Record, kw_only=True):
    first: int
    second: int | None = None


class Empty(Record):
    pass


class Base(Record):
    a: int


class Derived(Base):
    b: int = 2


class Checked(Record):
    n: int
    seen: list[int] = field(default_factory=list, compare=False)

    def __post_init__(self) -> None:
        self.seen.append(self.n)
"""

ENTRIES: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
    ("Plain", (1,), {}),
    ("Plain", (1, "y", (2, 3)), {}),
    ("Made", (), {}),
    ("Made", ([1],), {"hidden": {"a": 1}}),
    ("Keywords", (), {"first": 1}),
    ("Keywords", (), {"first": 1, "second": 2}),
    ("Empty", (), {}),
    ("Base", (5,), {}),
    ("Derived", (5,), {}),
    ("Derived", (5, 6), {}),
    ("Checked", (3,), {}),
]


def the_same_as_dataclasses(source: str) -> str:
    """``DECLARED`` as frozen, slotted dataclasses (what records replace)."""
    source = source.replace("from robota.core import FACTORY, Record, field", "")
    source = re.sub(r"class (\w+)\(Record, kw_only=True\):", r"@KW\nclass \1:", source)
    source = re.sub(r"class (\w+)\(Record\):", r"@FROZEN\nclass \1:", source)
    source = source.replace("class Derived(Base):", "@FROZEN\nclass Derived(Base):")
    return source.replace("@FROZEN", "@dataclass(frozen=True, slots=True)").replace(
        "@KW", "@dataclass(frozen=True, slots=True, kw_only=True)"
    )


@pytest.fixture
def namespaces(monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], dict[str, Any]]:
    """``DECLARED`` as records (generated) and as dataclasses, each run as a module of its
    own (dataclasses looks its class's module up)."""
    made = []
    for name, source in (
        ("records_probe", rewrite(DECLARED, Path("records.py"))),
        (
            "dataclasses_probe",
            "from dataclasses import dataclass, field\n" + the_same_as_dataclasses(DECLARED),
        ),
    ):
        module = types.ModuleType(name)
        monkeypatch.setitem(sys.modules, name, module)
        exec(compile(source, f"{name}.py", "exec"), vars(module))
        made.append(vars(module))
    return made[0], made[1]


@pytest.mark.parametrize(("name", "args", "kwargs"), ENTRIES)
def test_a_record_behaves_as_its_dataclass(
    namespaces: tuple[dict[str, Any], dict[str, Any]],
    name: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> None:
    records, classes = namespaces
    record, same = records[name](*args, **kwargs), classes[name](*args, **kwargs)
    assert not dataclasses.is_dataclass(record) and dataclasses.is_dataclass(same)
    assert repr(record) == repr(same)
    assert [getattr(record, f.name) for f in dataclasses.fields(same)] == [
        getattr(same, f.name) for f in dataclasses.fields(same)
    ]
    assert record == records[name](*args, **kwargs)
    try:
        hashed = hash(same)
    except TypeError:  # a list among the fields: neither hashes
        with pytest.raises(TypeError):
            hash(record)
    else:
        assert hash(record) == hashed  # the same formula: the hash of the fields' tuple
    assert record != same  # another class: never equal, as two dataclasses are not
    assert type(record).__match_args__ == type(same).__match_args__
    assert not hasattr(record, "__dict__")
    assert copy.copy(record) == record
    assert copy.deepcopy(record) == record
    assert pickle.loads(pickle.dumps(record)) == record
    for field in dataclasses.fields(same):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(record, field.name, 0)
        with pytest.raises(dataclasses.FrozenInstanceError):
            delattr(record, field.name)


def test_fields_outside_the_comparison_are_not_compared(
    namespaces: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    records, _ = namespaces
    made = records["Made"]
    assert made([1], {"a": 1}) == made([1], {"b": 2})
    assert made([1]) != made([2])
    assert made().items is not made().items  # a fresh list each: the factory ran
    assert records["Checked"](3).seen == [3]  # __post_init__ ran


def test_a_record_is_written_again_the_same() -> None:
    once = rewrite(DECLARED, Path("records.py"))
    assert rewrite(once, Path("records.py")) == once
    assert once.count("# Generated by tools/gen_records.py") == 7


@pytest.mark.parametrize(
    ("source", "error"),
    [
        ("class A(Record):\n    a: int = 1\n    b: int\n", "a field without a default follows"),
        ("class A(Record):\n    a: int = field(init=False)\n", r"field\(init=\.\.\.\) unknown"),
        ("class A(Record, frozen=False):\n    a: int\n", "kw_only=True/False only"),
        ("class A(Record):\n    a: list[int] = field(default_factory=list)\n", "FACTORY"),
        ("class A(Record):\n    a: int\n    def __repr__(self) -> str: ...\n", "generator's"),
    ],
)
def test_what_the_generator_refuses(source: str, error: str) -> None:
    with pytest.raises(RecordError, match=error):
        rewrite("from robota.core import Record, field\n" + source, Path("m.py"))


def test_check_names_a_record_whose_fields_changed_since(tmp_path: Path) -> None:
    from tools.gen_records import main

    module = tmp_path / "m.py"
    module.write_text("from robota.core import Record\n\n\nclass A(Record):\n    a: int\n")
    assert main(["--check", str(module)]) == 1
    assert main([str(module)]) == 0
    assert main(["--check", str(module)]) == 0
    module.write_text(module.read_text().replace("    a: int\n", "    a: int\n    b: int\n"))
    assert main(["--check", str(module)]) == 1
    assert main([str(module)]) == 0
    assert "def __init__(self, a: int, b: int) -> None:" in module.read_text()


def test_replace_makes_a_record_anew_and_serves_dataclasses_too(
    namespaces: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    from robota.core import replace

    records, classes = namespaces
    derived = records["Derived"](1, 2)
    assert replace(derived, b=3) == records["Derived"](1, 3)
    assert replace(derived) == derived
    assert replace(records["Keywords"](first=1), second=2) == records["Keywords"](first=1, second=2)
    # __init__ runs again, __post_init__ with it, on the fields kept: as dataclasses.replace
    assert replace(records["Checked"](1), n=2).seen == [1, 2]
    assert replace(classes["Checked"](1), n=2).seen == [1, 2]
    with pytest.raises(TypeError, match="no field 'c'"):
        replace(derived, c=1)
    assert replace(classes["Derived"](1, 2), b=3) == classes["Derived"](1, 3)


@pytest.mark.parametrize(
    ("name", "fields"),
    [
        ("Plain", (("a", True), ("b", False), ("c", False))),
        ("Made", (("items", False), ("hidden", False))),
        ("Keywords", (("first", True), ("second", False))),
        ("Empty", ()),
        ("Derived", (("a", True), ("b", False))),
        ("Checked", (("n", True), ("seen", False))),
    ],
)
def test_fields_of_a_record_are_its_dataclasss(
    namespaces: tuple[dict[str, Any], dict[str, Any]], name: str, fields: tuple[Any, ...]
) -> None:
    from robota.core._records import fields_of, is_value

    records, classes = namespaces
    assert fields_of(records[name]) == fields_of(classes[name]) == fields
    assert is_value(records[name](**{n: 1 for n, required in fields if required}))
    assert not is_value(records[name]) and not is_value(classes[name]) and not is_value(1)
    with pytest.raises(TypeError, match="neither a record nor a dataclass"):
        fields_of(int)


def test_every_record_in_the_packages_has_its_generated_methods() -> None:
    """A record the generator never saw would still type-check (``dataclass_transform`` makes
    its ``__init__`` for type checkers) and fail only when made: each has its own."""
    import importlib

    from tools.gen_records import record_modules

    from robota.core import Record

    for path in record_modules():
        src = next(p for p in path.parents if p.name == "src")
        importlib.import_module(".".join(path.relative_to(src).with_suffix("").parts))
    found, todo = [], list(Record.__subclasses__())
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        if cls.__module__.startswith("robota."):
            found.append(cls)
    assert len(found) > 100
    for cls in found:
        for name in ("__slots__", "__match_args__", "__init__", "__repr__", "__eq__", "__hash__"):
            assert name in vars(cls), f"{cls.__module__}.{cls.__qualname__} has no {name}"
