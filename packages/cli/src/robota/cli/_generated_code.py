"""The compiled code of generated methods, kept from one ``robota`` start to the next.

Why: ``dataclasses`` writes each class's ``__init__``, ``__repr__``, ``__eq__``, ... as source
text and compiles it when the class is defined (Python 3.11's ``dataclasses._create_fn`` does
``exec(txt, globals, ns)``); attrs, which trio uses for its own classes, does the same with
``compile(script, filename, "exec")``. A ``robota -p`` start on Codex defines about 175
dataclasses (most frozen, with slots) and 65 attrs classes before its agent gets
``initialized``: some 1 050 generated functions, at 0.5-0.9 ms per class on this 2-core
machine, most of it the compile (measured with ``python -X importtime`` and a profile of one
run). With the table, the print path's imports take 242 -> 193 ms of CPU in a fresh interpreter
(median of 12 alternating runs), and ``tools/bench/print_vs_raw.py --baseline`` shows what it
does to a whole run (README, Performance).

What: when the ``robota`` console script starts (``robota.cli:main``, never on import of the
library), ``install`` puts two module globals in front of the builtins: ``exec`` in
``dataclasses`` and ``compile`` in ``attr._make`` (when attrs loads; a meta path hook puts it
in the module before its code runs, so attrs' own classes are served too). Both take source
text to a code object through a table keyed by (filename, compiler flags, source text); a miss
compiles as the builtin would have, and anything the wrappers do not recognise (bytes, other
modes or flags) goes to the builtin untouched. The table is read once at the start and written
at interpreter exit only when new entries appeared. Its keys are read at once, its code objects
in chunks of ``CHUNK`` entries (in the order they were first compiled), each unmarshalled when
a class first asks for one of its entries (``Codes``): a command that defines few classes
(``robota --version``, ``robota task send``) pays for few, and print mode, which asks for nearly
all, pays about what one ``marshal`` of them all cost. Measured on a print run's table (1 018
entries, 1.1 MB): unmarshalling all its code objects at once took about 5 ms, its keys alone
about 1 ms, each entry on its own 5.3 ms for all of them (which is why entries are chunked).

Why it is safe: a hit returns the code object that compiling the very same text, filename and
flags produced in an earlier run of the same interpreter (``compile`` is deterministic), and
the wrappers compile with the caller's ``__future__`` flags (``dont_inherit``), so a class is
built exactly as without the table; the generated functions still run with the globals and
locals the caller passes. The file is only trusted as far as the user's own files are: it is
read only when it is a regular file (``O_NOFOLLOW``) owned by the user and writable by nobody
else, at most 16 MiB and 8192 entries, and its header names the interpreter's version and
bytecode magic; anything else (a foreign owner, a symlink, a truncated or corrupted file,
another Python) is ignored and rebuilt. It is written to a temporary file beside it and renamed
(0600), so concurrent starts never read half a table. ``ROBOTA_CODE_CACHE=0`` turns it all off.

attrs' ``__hash__`` embeds a per-process value (``hash`` of a string, salted per process) as an
integer literal, so its text never repeats: as it is, a frozen class's methods (trio's, about
35 of them) would be compiled on every start. So the text is kept with that literal replaced
by ``TYPE_HASH`` (an integer no ``hash`` returns), and the code served has that constant
replaced by the run's value (``code.replace``): the code compiling the run's own text makes,
constant for constant. A ``__hash__`` text of another form is never kept.
"""

from __future__ import annotations
import __future__

import atexit
import builtins
import marshal
import os
import re
import sys
import types
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import Any

from ._cache_files import cache_dir, read_owned, write_owned

__all__ = [
    "MAX_BYTES",
    "MAX_ENTRIES",
    "CodeTable",
    "Codes",
    "cache_file",
    "cacheable",
    "install",
    "read_table",
]

MAX_BYTES = 16 * 1024 * 1024
MAX_ENTRIES = 8192
MAX_SOURCE = 64 * 1024
"""A longer text is not generated code worth keeping."""
CHUNK = 64
"""Code objects unmarshalled together on first use of one of them."""

Key = tuple[str, int, str]
"""(filename, compiler flags, source text)"""

_SIGNATURE = b"robota generated code 2\n"
"""Format 2: (the keys of each chunk, each chunk's marshal); format 1 was one dict."""

TYPE_HASH = 2**63
"""What attrs' per-process hash literal is kept as: outside the range of ``hash``, so never a
value of its own."""
_TYPE_HASH_LINE = re.compile(r"(\n        return hash\(\(\n +)(-?\d+)(,\n)")
"""attrs' ``__hash__`` as ``_make_hash_script`` writes it (no hash cache): the literal line."""


def header() -> bytes:
    """What a table file starts with: the format, the bytecode magic, the interpreter."""
    import importlib.util  # noqa: PLC0415 (0.3 ms, for the magic)

    version = f"{sys.version}\n{sys.implementation.cache_tag}\noptimize={sys.flags.optimize}\n"
    return _SIGNATURE + importlib.util.MAGIC_NUMBER + version.encode()


def cache_file(env: Mapping[str, str]) -> Path | None:
    """Where the table lives (one file per interpreter version), or ``None`` when switched off
    or there is no home to put it in."""
    where = cache_dir(env)
    return None if where is None else where / f"generated-code-{sys.implementation.cache_tag}.bin"


def cacheable(filename: str, source: str) -> bool:
    """Whether a compiled text is worth keeping: generated code that is the same in the next
    run. attrs' ``__hash__`` holds a per-process hash value, so it never is (unless kept
    without it, ``without_type_hash``)."""
    if len(source) > MAX_SOURCE:
        return False
    return not (filename.startswith("<attrs generated") and "__hash__" in source)


def without_type_hash(filename: str, source: str) -> tuple[str, int] | None:
    """attrs' text with its ``__hash__``'s per-process literal as ``TYPE_HASH``, and the
    literal's value; ``None`` for any other text."""
    if not filename.startswith("<attrs generated") or "def __hash__(self):" not in source:
        return None
    found = list(_TYPE_HASH_LINE.finditer(source))
    if len(found) != 1:
        return None
    start, end = found[0].span(2)
    return source[:start] + str(TYPE_HASH) + source[end:], int(found[0].group(2))


def with_constant(code: types.CodeType, kept: int, value: int) -> types.CodeType:
    """``code`` with every integer constant ``kept`` (in nested code too) replaced by ``value``."""
    consts = tuple(
        value
        if type(const) is int and const == kept
        else with_constant(const, kept, value)
        if type(const) is types.CodeType
        else const
        for const in code.co_consts
    )
    return code.replace(co_consts=consts)


class Codes(MutableMapping[Key, types.CodeType]):
    """The table's entries: code objects, each chunk unmarshalled from the file's bytes on
    first use of one of its entries. A chunk whose bytes are not its entries' code objects
    reads as missing (they are compiled again)."""

    def __init__(
        self, chunk_keys: Sequence[Sequence[Key]] = (), chunks: Sequence[bytes] = ()
    ) -> None:
        self._chunks = list(chunks)
        self._chunk_keys = [tuple(keys) for keys in chunk_keys]
        self._chunk_of = {key: i for i, keys in enumerate(self._chunk_keys) for key in keys}
        self._codes: dict[Key, types.CodeType] = {}

    def _load(self, index: int) -> None:
        keys = self._chunk_keys[index]
        try:
            codes = marshal.loads(self._chunks[index])
        except (EOFError, ValueError, TypeError):
            codes = None
        whole = (
            type(codes) is tuple
            and len(codes) == len(keys)
            and all(type(code) is types.CodeType for code in codes)
        )
        for key, code in zip(keys, codes if whole else (), strict=False):
            self._codes.setdefault(key, code)
        for key in keys:
            self._chunk_of.pop(key, None)

    def __getitem__(self, key: Key) -> types.CodeType:
        code = self._codes.get(key)
        if code is None and key in self._chunk_of:
            self._load(self._chunk_of[key])
            code = self._codes.get(key)
        if code is None:
            raise KeyError(key)
        return code

    def __setitem__(self, key: Key, code: types.CodeType) -> None:
        self._chunk_of.pop(key, None)  # its chunk, if it ever loads, does not replace it
        self._codes[key] = code

    def __delitem__(self, key: Key) -> None:
        self[key]
        del self._codes[key]

    def __iter__(self) -> Iterator[Key]:
        yield from list(self._chunk_of)
        yield from list(self._codes)

    def __len__(self) -> int:
        return len(self._chunk_of) + len(self._codes)


def _valid(table: object) -> Codes | None:
    if not (isinstance(table, tuple) and len(table) == 2):
        return None
    chunk_keys, chunks = table
    if not (isinstance(chunk_keys, tuple) and isinstance(chunks, tuple)):
        return None
    if len(chunk_keys) != len(chunks) or not all(type(chunk) is bytes for chunk in chunks):
        return None
    if sum(len(keys) if isinstance(keys, tuple) else 0 for keys in chunk_keys) > MAX_ENTRIES:
        return None
    for keys in chunk_keys:
        if not isinstance(keys, tuple):
            return None
        for key in keys:
            if not (
                isinstance(key, tuple)
                and len(key) == 3
                and isinstance(key[0], str)
                and type(key[1]) is int
                and isinstance(key[2], str)
            ):
                return None
    return Codes(chunk_keys, chunks)


def read_table(path: Path) -> Codes:
    """The table in ``path``; empty when it is missing or not to be trusted."""
    data = read_owned(path, MAX_BYTES)
    start = header()
    if data is None or not data.startswith(start):
        return Codes()
    try:
        table = marshal.loads(data[len(start) :])
    except (EOFError, ValueError, TypeError):
        return Codes()
    return _valid(table) or Codes()


def write_table(path: Path, entries: Mapping[Key, types.CodeType]) -> None:
    """Replace ``path`` with ``entries`` at once (``_cache_files.write_owned``), in chunks of
    ``CHUNK`` in their order."""
    kept = [(key, code) for key in list(entries) if (code := entries.get(key)) is not None]
    pieces = [kept[i : i + CHUNK] for i in range(0, len(kept), CHUNK)]
    chunk_keys = tuple(tuple(key for key, _ in piece) for piece in pieces)
    chunks = tuple(marshal.dumps(tuple(code for _, code in piece)) for piece in pieces)
    data = header() + marshal.dumps((chunk_keys, chunks))
    if len(data) <= MAX_BYTES:
        write_owned(path, data)


class CodeTable:
    """Source text to code object, from the file when it was there, else compiled."""

    def __init__(self, path: Path | None, entries: MutableMapping[Key, types.CodeType]) -> None:
        self.path = path
        self.entries = entries
        self.used: set[Key] = set()
        self.new: dict[Key, types.CodeType] = {}
        self.hits = 0
        self.misses = 0

    def compile(self, source: str, filename: str, flags: int) -> types.CodeType:
        hashed = without_type_hash(filename, source)
        if hashed is None:
            return self._compile(source, filename, flags, cacheable(filename, source))
        kept, value = hashed
        code = self._compile(kept, filename, flags, len(kept) <= MAX_SOURCE)
        return with_constant(code, TYPE_HASH, value)

    def _compile(self, source: str, filename: str, flags: int, keep: bool) -> types.CodeType:
        key = (filename, flags, source)
        known = self.entries.get(key)
        if known is not None:
            self.hits += 1
            self.used.add(key)
            return known
        self.misses += 1
        code: types.CodeType = builtins.compile(source, filename, "exec", flags, dont_inherit=True)
        if keep and len(self.new) < MAX_ENTRIES:
            self.entries[key] = code
            self.new[key] = code
        return code

    def save(self) -> None:
        """Write the table when this run added to it. When it has grown too big for one
        file, what this run used and added is kept and the rest dropped (say, an older
        robota's classes)."""
        if self.path is None or not self.new:
            return
        entries = self.entries
        if len(entries) > MAX_ENTRIES:
            kept = {key: entries[key] for key in self.used}
            kept.update(self.new)
            entries = dict(list(kept.items())[-MAX_ENTRIES:])
        try:
            write_table(self.path, entries)
        except OSError:
            pass  # a cache: the next start compiles again


def future_flags(module: types.ModuleType) -> int:
    """The ``__future__`` flags code compiled inside ``module`` inherits."""
    flags = 0
    for value in vars(module).values():
        if isinstance(value, __future__._Feature):
            flags |= value.compiler_flag
    return flags


def patch_dataclasses(table: CodeTable, module: types.ModuleType) -> None:
    flags = future_flags(module)

    def exec_generated(
        source: Any,
        globals: dict[str, Any] | None = None,
        locals: Mapping[str, object] | None = None,
        /,
        **options: Any,
    ) -> None:
        if globals is None:  # the caller's namespaces, as the builtin would take them
            frame = sys._getframe(1)
            globals, locals = frame.f_globals, frame.f_locals if locals is None else locals
        if type(source) is str and not options:
            source = table.compile(source, "<string>", flags)
        builtins.exec(source, globals, locals, **options)

    module.exec = exec_generated  # type: ignore[attr-defined]


def patch_attrs(table: CodeTable, module: types.ModuleType) -> None:
    """Put ``compile`` in ``module`` (``attr._make``), before or after it executes: its
    ``__future__`` flags are read at the first call (its first statement sets them)."""
    known: list[int] = []

    def compile_generated(  # noqa: PLR0917 (compile's own signature)
        source: Any,
        filename: str,
        mode: str,
        flag: int = 0,
        dont_inherit: bool = False,
        optimize: int = -1,
        **options: Any,
    ) -> Any:
        if not known:
            known.append(future_flags(module))
        flags = known[0]
        plain = flag == 0 and optimize == -1 and not dont_inherit and not options
        if type(source) is str and mode == "exec" and plain:
            return table.compile(source, filename, flags)
        inherited = 0 if dont_inherit else flags
        return builtins.compile(source, filename, mode, flag | inherited, True, optimize, **options)

    module.compile = compile_generated  # type: ignore[attr-defined]


class _AttrsHook:
    """Patches ``attr._make`` as it loads (before its code runs: its own classes are built
    through the table too), so installing imports no attrs."""

    def __init__(self, table: CodeTable) -> None:
        self.table = table

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != "attr._make":
            return None
        sys.meta_path.remove(self)
        from importlib.machinery import PathFinder  # noqa: PLC0415 (loaded: the import system)

        spec = PathFinder.find_spec(name, path, target)
        loader = getattr(spec, "loader", None)
        run = getattr(loader, "exec_module", None)
        if run is None:
            return spec
        table = self.table

        def exec_module(module: types.ModuleType) -> None:
            patch_attrs(table, module)
            run(module)

        loader.exec_module = exec_module  # type: ignore[union-attr]
        return spec


ACTIVE: CodeTable | None = None
"""The table this process uses, once ``install`` ran."""


def install(env: Mapping[str, str] | None = None) -> CodeTable | None:
    """Serve generated code from the table for the rest of this process (once)."""
    global ACTIVE  # noqa: PLW0603 (one table per interpreter)
    if ACTIVE is not None:
        return ACTIVE
    path = cache_file(os.environ if env is None else env)
    if path is None:
        return None
    import dataclasses  # noqa: PLC0415

    table = CodeTable(path, read_table(path))
    patch_dataclasses(table, dataclasses)
    attrs = sys.modules.get("attr._make")
    if attrs is not None:
        patch_attrs(table, attrs)
    else:
        sys.meta_path.insert(0, _AttrsHook(table))
    atexit.register(table.save)
    ACTIVE = table
    return table
