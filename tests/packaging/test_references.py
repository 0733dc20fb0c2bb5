"""The project refers only to itself: no file points outside the repository, and every
citation of a page under docs/architecture/ names a page, section or invariant it has."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ARCHITECTURE = ROOT / "docs" / "architecture"

NOT_THE_PROJECT = {
    ".git",
    ".venv",
    "venv",
    "node_modules",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".hypothesis",
    "build",
    "dist",
}
"""Directories of tools and builds, not of the project (none is in a clone)."""

# Spelled in pieces so this file does not match itself.
OUTSIDE = re.compile(r"(?<![\w.-])(?:\.\./)?" + "shared" + r"/|" + "ARCHITECTURE" + r"\.md")


def project_files() -> Iterator[Path]:
    for directory, subdirectories, files in os.walk(ROOT):
        subdirectories[:] = sorted(
            name
            for name in subdirectories
            if name not in NOT_THE_PROJECT and not name.endswith(".egg-info")
        )
        for name in sorted(files):
            yield Path(directory, name)


def text_of(path: Path) -> str | None:
    data = path.read_bytes()
    if b"\0" in data[:4096]:
        return None  # binary
    return data.decode("utf-8", errors="replace")


def test_no_file_refers_to_files_outside_the_project() -> None:
    found = []
    checked = 0
    for path in project_files():
        text = text_of(path)
        if text is None:
            continue
        checked += 1
        for number, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert checked > 200, "the walk missed the project's files"
    assert found == []


def test_the_pattern_finds_what_it_is_for() -> None:
    for line in ("see ../" + "shared" + "/notes.md", "(" + "ARCHITECTURE" + ".md s.2)"):
        assert OUTSIDE.search(line), line
    assert not OUTSIDE.search("docs/architecture/threads.md §2 and a shared_state/ directory")


def test_every_citation_of_the_architecture_names_what_it_has() -> None:
    """A section is a page whose title is numbered (``# 10. Chat transports``); a citation
    names the page and may add its number (``docs/architecture/chat-transports.md §10``)."""
    numbers: dict[str, int] = {}
    for page in ARCHITECTURE.glob("*.md"):
        title = re.match(r"# (\d+)\. ", page.read_text(encoding="utf-8"))
        if title:
            numbers[page.stem] = int(title.group(1))
    sections = set(numbers.values())
    assert len(sections) == len(numbers), "two pages have the same number"
    assert sections == set(range(1, max(sections) + 1))
    doc = (ARCHITECTURE / "invariants.md").read_text(encoding="utf-8")
    invariants = {int(n) for n in re.findall(r"^(\d+)\. \*\*", doc, re.MULTILINE)}
    assert invariants == set(range(1, max(invariants) + 1))
    # Spelled in pieces so this file does not match itself.
    single_page = "docs/architecture" + ".md"
    cited = 0
    for path in project_files():
        text = text_of(path)
        if text is None:
            continue
        assert single_page not in text, f"{path} cites the one page the architecture was"
        for match in re.finditer(
            r"docs/architecture/([\w-]+)\.md(?:``)?(?: §(\d+))?(?:,\s+invariants? ([\d, and]+))?",
            text,
        ):
            cited += 1
            page, section, cited_invariants = match.groups()
            assert page in numbers or page == "index", f"{path}: no page {page}.md"
            if section:
                assert numbers.get(page) == int(section), f"{path}: {page}.md is not §{section}"
            for number in re.findall(r"\d+", cited_invariants or ""):
                assert int(number) in invariants, f"{path}: invariant {number} does not exist"
    assert cited >= 2
