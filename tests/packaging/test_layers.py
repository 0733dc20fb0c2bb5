"""No import circles anywhere, and ``robota.core``'s layers as its docstring names them.

The graph is every module under packages/*/src and what it imports, read from the source as
tests/packaging/test_private_imports.py reads it: imports under ``TYPE_CHECKING`` and inside
functions count, because a circle a type checker or a late import closes is still a circle
(two modules that cannot be understood, moved or tested one without the other). An imported
name resolves to the longest module path it starts with (``from ..kernel import Address`` is
an edge to ``robota.core.kernel``, the facade); a package's ``__init__`` is a module like any.

``robota.core``'s layers are parsed from its own docstring (``1. ``_errors``: ...``), so the
docstring and this test cannot drift, and docs/architecture/layers.md §1 must list the same.
A unit of core is the name right after ``robota.core`` (``kernel``, ``_plugins``, ``engine``):
its modules import only from their own layer and the layers below. The facade ``robota.core``
itself is above every layer: no module of core may import it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Collection, Iterable, Mapping

import pytest

from ._imports import ROOT, imported_names, modules

CORE = "robota.core"
KERNEL = "robota.core.kernel"
ERRORS = "robota.core._errors"
RECORDS = "robota.core._records"
LAYER_ITEM = re.compile(r"^(\d+)\. ((?:(``?)[\w.]+\3(?:, )?)+):", re.MULTILINE)
"""A numbered layer: ``N. ``a``, ``b``: what they are`` (one backtick in Markdown)."""

Graph = Mapping[str, Iterable[str]]


def import_graph() -> dict[str, set[str]]:
    """Module -> the robota modules it imports, over packages/*/src."""
    found = modules()
    known = {name for _, name, _ in found}
    graph: dict[str, set[str]] = {}
    for path, module, is_package in found:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        edges = graph.setdefault(module, set())
        for _, name in imported_names(tree, module, is_package):
            target = resolve(name, known)
            if target is not None and target != module:
                edges.add(target)
    return graph


def resolve(name: str, known: Collection[str]) -> str | None:
    """The longest module path ``name`` starts with, ``None`` outside the project."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def circles(graph: Graph) -> list[list[str]]:
    """Every strongly connected component of more than one module, each sorted (Tarjan's,
    iterative: no recursion limit to meet on a deep chain)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def parse_layers(text: str) -> list[list[str]]:
    """The numbered layers of ``text``, bottom up, each a list of unit names; the numbers must
    count 1, 2, 3... and every item must be on a line of its own."""
    layers = []
    for number, (position, names) in enumerate(
        ((int(m[1]), re.findall(r"`+([\w.]+)`+", m[2])) for m in LAYER_ITEM.finditer(text)), 1
    ):
        assert position == number, f"layer {position} is numbered out of order"
        layers.append(names)
    return layers


def unit(module: str, package: str = CORE) -> str | None:
    """The unit of ``package`` that ``module`` belongs to: the name right after the package;
    ``""`` for the package's facade itself, ``None`` outside it."""
    if module == package:
        return ""
    if not module.startswith(package + "."):
        return None
    return module[len(package) + 1 :].split(".", maxsplit=1)[0]


def upward_imports(
    graph: Graph, layers: list[list[str]], unit_of: Callable[[str], str | None]
) -> list[str]:
    """``importer -> imported`` for every import of a unit from a higher layer than the
    importer's (the facade, unit ``""``, is above them all); modules outside the layered
    package are not checked, and a unit no layer names counts as on top (and is an error of
    its own)."""
    level = {name: number for number, names in enumerate(layers) for name in names}
    level[""] = len(layers)
    found = []
    for module in sorted(graph):
        own = unit_of(module)
        if own is None or own == "":
            continue
        for target in sorted(graph[module]):
            theirs = unit_of(target)
            if theirs is not None and level.get(theirs, len(layers)) > level.get(own, len(layers)):
                found.append(f"{module} -> {target}")
    return found


def core_docstring() -> str:
    source = ROOT / "packages/core/src/robota/core/__init__.py"
    return ast.get_docstring(ast.parse(source.read_text(encoding="utf-8"))) or ""


def architecture_layers() -> list[list[str]]:
    """The list under ``Inside `robota.core`, bottom up`` in docs/architecture/layers.md §1."""
    section = (ROOT / "docs/architecture/layers.md").read_text(encoding="utf-8")
    return parse_layers(section.partition("Inside `robota.core`, bottom up")[2])


def core_units() -> set[str]:
    """Every unit of robota.core on disk: a module or subpackage right under it."""
    root = ROOT / "packages/core/src/robota/core"
    found = {p.stem for p in root.glob("*.py") if p.stem != "__init__"}
    return found | {p.name for p in root.iterdir() if (p / "__init__.py").is_file()}


# -- the project ------------------------------------------------------------------------------


def test_no_package_has_an_import_circle() -> None:
    found = circles(import_graph())
    assert found == [], "modules that import each other, even through others:\n" + "\n".join(
        " <-> ".join(component) for component in found
    )


def test_robota_core_has_no_import_circle() -> None:
    graph = import_graph()
    core = {m: {t for t in graph[m] if unit(t) is not None} for m in graph if unit(m) is not None}
    assert circles(core) == []


def test_the_core_docstring_names_every_unit_in_one_layer() -> None:
    layers = parse_layers(core_docstring())
    named = [name for names in layers for name in names]
    assert len(layers) >= 5, "the docstring's layer list was not found"
    assert len(named) == len(set(named)), "a unit is named in two layers"
    assert set(named) == core_units()
    assert layers[:2] == [["_errors", "_records"], ["kernel"]]


def test_docs_architecture_lists_the_same_layers() -> None:
    assert architecture_layers() == parse_layers(core_docstring())


def test_no_module_of_core_imports_from_a_layer_above_its_own() -> None:
    found = upward_imports(import_graph(), parse_layers(core_docstring()), unit)
    assert found == [], "imports of a higher layer (or of core's facade):\n" + "\n".join(found)


def test_the_kernel_imports_nothing_of_robota_but_itself_the_errors_and_records() -> None:
    graph = import_graph()
    found = [
        f"{module} -> {target}"
        for module in sorted(graph)
        if unit(module, KERNEL) is not None
        for target in sorted(graph[module])
        if unit(target, KERNEL) is None and target not in (ERRORS, RECORDS)
    ]
    assert found == []
    assert any(unit(module, KERNEL) == "_bridge" for module in graph), "the kernel was not found"


# -- the checker, on small graphs -------------------------------------------------------------


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"a": {"b"}, "b": set()}, []),
        ({"a": {"b"}, "b": {"a"}}, [["a", "b"]]),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
        ({"a": {"b", "c"}, "b": {"d"}, "c": {"d"}, "d": set()}, []),  # a diamond is no circle
        ({"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"c"}}, [["a", "b"], ["c", "d"]]),
        ({"a": {"b"}, "b": {"c"}, "c": {"b", "d"}, "d": set()}, [["b", "c"]]),
        ({"a": {"x"}}, []),  # an edge to a module the graph does not hold
    ],
)
def test_circles_finds_every_strongly_connected_component(
    graph: dict[str, set[str]], expected: list[list[str]]
) -> None:
    assert circles(graph) == expected


def test_circles_walks_a_long_chain_without_recursion() -> None:
    chain = {str(i): {str(i + 1)} for i in range(5000)}
    chain["5000"] = {"0"}
    assert [len(component) for component in circles(chain)] == [5001]


LAYERS = [["_errors"], ["kernel"], ["store", "config"], ["engine"]]


@pytest.mark.parametrize(
    ("edges", "expected"),
    [
        ({"p.store._a": {"p.kernel._b", "p._errors"}}, []),
        ({"p.store._a": {"p.config._b"}}, []),  # the same layer
        ({"p.store._a": {"p.store._b"}}, []),  # the same unit
        ({"p.kernel._a": {"p.store"}}, ["p.kernel._a -> p.store"]),
        ({"p.config": {"p.engine._x"}}, ["p.config -> p.engine._x"]),
        ({"p._errors": {"p"}}, ["p._errors -> p"]),  # the facade is above every layer
        ({"p": {"p.engine", "p.kernel"}}, []),  # the facade itself may import every layer
        ({"q.cli": {"p.engine"}, "p.engine": {"q.cli"}}, []),  # outside p: not layered here
        ({"p.surfaces._x": {"p.kernel"}}, []),  # unnamed: on top
        ({"p.kernel._a": {"p.surfaces"}}, ["p.kernel._a -> p.surfaces"]),
    ],
)
def test_upward_imports_finds_an_import_from_a_higher_layer(
    edges: dict[str, set[str]], expected: list[str]
) -> None:
    assert upward_imports(edges, LAYERS, lambda m: unit(m, "p")) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1. ``_errors``: the tree\n2. ``kernel``: actors\n", [["_errors"], ["kernel"]]),
        ("1. `a`, `b`: x,\n   `c`: not a layer\n2. `d`: y", [["a", "b"], ["d"]]),
        (
            "intro\n1. ``a``, ``b``, ``c``: three\n   2. ``d``: indented, not an item",
            [["a", "b", "c"]],
        ),
        ("1. ``a`` without a colon\n", []),
    ],
)
def test_parse_layers_reads_numbered_items(text: str, expected: list[list[str]]) -> None:
    assert parse_layers(text) == expected


def test_parse_layers_refuses_numbers_out_of_order() -> None:
    with pytest.raises(AssertionError, match="out of order"):
        parse_layers("1. ``a``: x\n3. ``b``: y\n")


def test_resolve_takes_the_longest_module_path() -> None:
    known = {"robota.core", "robota.core.kernel", "robota.core.kernel._bridge"}
    assert resolve("robota.core.kernel.Address", known) == "robota.core.kernel"
    assert resolve("robota.core.kernel._bridge.LoopPort", known) == "robota.core.kernel._bridge"
    assert resolve("trio.run", known) is None
