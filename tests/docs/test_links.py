"""Every relative link in README.md, CONTRIBUTING.md, CHANGELOG.md and docs/ resolves: the file
(or directory) exists inside the repository, and an anchor into a Markdown file names one of
its headings as the link's reader spells it: GitHub for the files at the root (it shows them),
MkDocs for the pages under docs/ (it builds them into the site).

The pure parts (which links a text has, a heading's anchors) are tested with tables first, so
a link check that finds nothing cannot pass by accident."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = (
    ROOT / "README.md",
    ROOT / "CONTRIBUTING.md",
    ROOT / "CHANGELOG.md",
    *sorted((ROOT / "docs").rglob("*.md")),
)

_FENCE = re.compile(r"^\s*(```|~~~)")
_CODE_SPAN = re.compile(r"(`+).*?\1")
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REFERENCE = re.compile(r"^\s*\[[^\]]+\]:\s+(\S+)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_EXPLICIT_ID = re.compile(r"\{\s*#([\w-]+)[^}]*\}\s*$")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def prose_lines(text: str, *, code_spans: bool = False) -> list[tuple[int, str]]:
    """(line number, line) outside fenced code blocks, with code spans blanked unless
    ``code_spans`` (a heading's anchor is made from its code spans' text too)."""
    lines = []
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), 1):
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1) == fence:
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        lines.append((number, line if code_spans else _CODE_SPAN.sub("", line)))
    return lines


def links(text: str) -> list[tuple[int, str]]:
    """(line number, target) of every inline or reference-style link and image."""
    found = []
    for number, line in prose_lines(text):
        found += [(number, match.group(1)) for match in _LINK.finditer(line)]
        reference = _REFERENCE.match(line)
        if reference:
            found.append((number, reference.group(1)))
    return found


def _plain(heading: str) -> str:
    text = _EXPLICIT_ID.sub("", heading)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link's text only
    return text.replace("`", "").replace("*", "")


def github_anchor(heading: str) -> str:
    text = _plain(heading).strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in "-_ ")
    return text.replace(" ", "-")


def mkdocs_anchor(heading: str) -> str:
    """Python-Markdown's ``toc`` slugify (the default MkDocs uses)."""
    text = unicodedata.normalize("NFKD", _plain(heading)).encode("ascii", "ignore").decode()
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(text: str, slug: Callable[[str], str]) -> set[str]:
    """The anchors of ``text``'s headings as ``slug`` spells them, explicit ids and HTML
    anchors."""
    found: set[str] = set()
    for _, line in prose_lines(text, code_spans=True):
        heading = _HEADING.match(line)
        if heading:
            title = heading.group(2)
            explicit = _EXPLICIT_ID.search(title)
            if explicit:
                found.add(explicit.group(1))
            found.add(slug(title))
        found |= set(re.findall(r"<a\s+(?:name|id)=\"([^\"]+)\"", line))
    return found


def broken(page: Path, root: Path = ROOT) -> list[str]:
    text = page.read_text(encoding="utf-8")
    slug = mkdocs_anchor if page.is_relative_to(root / "docs") else github_anchor
    problems = []
    for number, target in links(text):
        if _SCHEME.match(target) or target.startswith("//"):
            continue  # another site: not checked here (no network)
        where = f"{page.relative_to(root)}:{number}: {target}"
        path_part, _, anchor = target.partition("#")
        resolved = (page.parent / path_part).resolve() if path_part else page
        if not resolved.is_relative_to(root):
            problems.append(f"{where}: outside the repository")
            continue
        if not resolved.exists():
            problems.append(f"{where}: no such file")
            continue
        if (
            anchor
            and resolved.suffix == ".md"
            and anchor not in anchors(resolved.read_text(encoding="utf-8"), slug)
        ):
            problems.append(f"{where}: no heading #{anchor}")
    return problems


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("see [the guide](docs/guide.md).", ["docs/guide.md"]),
        ("[a](x.md#part) and ![b](img/b.png)", ["x.md#part", "img/b.png"]),
        ('[t](y.md "a title")', ["y.md"]),
        ("[with [brackets] inside](z.md)", ["z.md"]),
        ("[ref]: docs/ref.md", ["docs/ref.md"]),
        ("`[not a link](nowhere.md)` in code", []),
        ("```\n[not a link](nowhere.md)\n```\n[after](a.md)", ["a.md"]),
        ("[web](https://example.org) [mail](mailto:x@y)", ["https://example.org", "mailto:x@y"]),
        ("no link [here] (x.md)", []),
    ],
)
def test_links_finds_every_link_outside_code(text: str, expected: list[str]) -> None:
    assert [target for _, target in links(text)] == expected


@pytest.mark.parametrize(
    ("heading", "github", "mkdocs"),
    [
        ("Getting started", "getting-started", "getting-started"),
        ("Host: `robota server`", "host-robota-server", "host-robota-server"),
        ("Setting up Feishu/Lark", "setting-up-feishulark", "setting-up-feishulark"),
        ("`transports.feishu`", "transportsfeishu", "transportsfeishu"),
        ("`agents.<name>`", "agentsname", "agentsname"),
        ("1. Layers and packages", "1-layers-and-packages", "1-layers-and-packages"),
        ("A -- B", "a----b", "a-b"),
        ("Tasks {#tasks-here}", "tasks", "tasks"),
    ],
)
def test_a_heading_has_the_anchors_github_and_mkdocs_give_it(
    heading: str, github: str, mkdocs: str
) -> None:
    assert github_anchor(heading) == github
    assert mkdocs_anchor(heading) == mkdocs


def test_an_explicit_id_and_an_html_anchor_count() -> None:
    text = '# Tasks {#tasks-here}\n\n<a id="old-name"></a>\n## Two\n## `robota task`\n'
    assert {"tasks-here", "tasks", "old-name", "two", "robota-task"} <= anchors(text, mkdocs_anchor)


def test_a_root_file_links_by_githubs_anchors_and_a_page_by_mkdocs(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "guide.md").write_text("# Print mode: `robota -p`\n")
    (root / "README.md").write_text("[a](docs/guide.md#print-mode-robota--p)\n")
    (root / "docs" / "index.md").write_text("[a](guide.md#print-mode-robota-p)\n")
    assert broken(root / "README.md", root) == []
    assert broken(root / "docs" / "index.md", root) == []
    (root / "README.md").write_text("[a](docs/guide.md#print-mode-robota-p)\n")
    assert broken(root / "README.md", root) == [
        "README.md:1: docs/guide.md#print-mode-robota-p: no heading #print-mode-robota-p"
    ]


def test_broken_finds_missing_files_anchors_and_escapes(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "getting-started.md").write_text("# Getting started\n## Where things live\n")
    (tmp_path / "outside.md").write_text("# Outside\n")
    page = root / "docs" / "index.md"
    page.write_text(
        "# Home\n[ok](getting-started.md#where-things-live) [gone](no-such-page.md)\n"
        "[bad anchor](getting-started.md#nope) [out](../../outside.md)\n"
        "[here](#home) [not here](#nowhere) [web](https://example.org/x.md)\n"
    )
    assert broken(page, root) == [
        "docs/index.md:2: no-such-page.md: no such file",
        "docs/index.md:3: getting-started.md#nope: no heading #nope",
        "docs/index.md:3: ../../outside.md: outside the repository",
        "docs/index.md:4: #nowhere: no heading #nowhere",
    ]


def test_the_pages_are_there() -> None:
    assert all(page.is_file() for page in PAGES)
    assert len(PAGES) > 10


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken(page) == []
