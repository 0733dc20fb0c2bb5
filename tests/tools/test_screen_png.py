"""tools/screen_png.py: a terminal capture's SGR escapes become cells of the right colours, and the
cells become pixels of those colours (the TUI screenshot of docs/pictures.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tools import screen_png as png  # noqa: E402

RED, GREEN = (0xCD, 0x00, 0x00), (0x00, 0xCD, 0x00)


@pytest.mark.parametrize(
    ("index", "rgb"),
    [
        (0, (0, 0, 0)),
        (1, RED),
        (15, (255, 255, 255)),
        (16, (0, 0, 0)),
        (196, (255, 0, 0)),
        (208, (255, 0x87, 0)),
        (231, (255, 255, 255)),
        (232, (8, 8, 8)),
        (255, (238, 238, 238)),
    ],
)
def test_palette(index: int, rgb: tuple[int, int, int]) -> None:
    assert png.palette(index) == rgb


BOLD_RED = png.Style(fg=RED, bold=True)


@pytest.mark.parametrize(
    ("before", "params", "after"),
    [
        (BOLD_RED, "", png.Style()),
        (BOLD_RED, "0", png.Style()),
        (png.Style(), "1;31", BOLD_RED),
        (png.Style(), "38;5;208", png.Style(fg=(255, 0x87, 0))),
        (png.Style(), "38:5:208", png.Style(fg=(255, 0x87, 0))),
        (png.Style(), "48;2;1;2;3", png.Style(bg=(1, 2, 3))),
        (png.Style(), "38;2;300;2;3", png.Style(fg=(255, 2, 3))),
        (png.Style(), "92;104", png.Style(fg=png.palette(10), bg=png.palette(12))),
        (png.Style(), "42", png.Style(bg=GREEN)),
        (png.Style(bold=True, dim=True), "22", png.Style()),
        (BOLD_RED, "39", png.Style(bold=True)),
        (png.Style(bg=GREEN), "49", png.Style()),
        (png.Style(), "3;4;7", png.Style(italic=True, underline=True, reverse=True)),
        (png.Style(italic=True, underline=True, reverse=True), "23;24;27", png.Style()),
        (png.Style(), "38;5", png.Style()),  # a colour cut short sets nothing
        (png.Style(), "5", png.Style()),  # blink: not drawn
    ],
)
def test_sgr(before: png.Style, params: str, after: png.Style) -> None:
    assert png.sgr(before, params) == after


def chars(row: list[png.Cell]) -> str:
    return "".join(cell.char or "_" for cell in row)


@pytest.mark.parametrize(
    ("capture", "rows"),
    [
        ("ab", ["ab  "]),
        ("abcdef", ["abcd"]),
        ("中x", ["中_x "]),  # a wide character takes two cells
        ("a\x1b]8;;http://x\x1b\\b\x1b[2Kc", ["abc "]),  # escapes other than SGR are dropped
        ("a\tb\x07", ["ab  "]),  # so are control characters
        ("1\n2\n3\n4", ["1   ", "2   ", "3   "]),
        ("", ["    ", "    ", "    "]),
    ],
)
def test_parse_lays_out_cells(capture: str, rows: list[str]) -> None:
    height = 3 if len(rows) == 3 else 1
    assert [chars(row) for row in png.parse(capture, 4, height)] == rows


def test_parse_applies_colours_reverse_and_dim_and_carries_them_across_lines() -> None:
    grid = png.parse("\x1b[1;31ma\x1b[7mb\x1b[0mc\n\x1b[42md\nx\x1b[2;49my", 4, 3)
    a, b, c = grid[0][:3]
    assert a == png.Cell("a", RED, png.DEFAULT_BG, bold=True)
    assert b == png.Cell("b", png.DEFAULT_BG, RED, bold=True)  # reverse swaps the colours drawn
    assert c == png.Cell("c", png.DEFAULT_FG, png.DEFAULT_BG)
    assert grid[0][3] == png.Cell(" ", png.DEFAULT_FG, png.DEFAULT_BG)
    assert grid[1][0] == png.Cell("d", png.DEFAULT_FG, GREEN)
    # The capture writes only changes: line 3 starts on line 2's green until it says otherwise.
    assert grid[2][0] == png.Cell("x", png.DEFAULT_FG, GREEN)
    halfway = tuple((f + b) // 2 for f, b in zip(png.DEFAULT_FG, png.DEFAULT_BG, strict=True))
    assert grid[2][1] == png.Cell("y", halfway, png.DEFAULT_BG)  # type: ignore[arg-type]


def test_render_paints_each_cells_colours_in_a_monospace_grid() -> None:
    from PIL import ImageFont

    faces = png.find_font()
    width, height = png.cell_size(ImageFont.truetype(str(faces["regular"]), 15))
    image = png.render(
        png.parse("\x1b[41m \x1b[0m\x1b[32m█\x1b[0m▔⏳ W", 6, 2), size=15, font=faces
    )
    assert image.size == ((6 + 2) * width, 2 * height + 2 * (height // 2))

    def at(x: int, y: int, dx: int, dy: int) -> tuple[int, int, int]:
        """The pixel ``dx``, ``dy`` into cell ``x``, ``y``."""
        pixel = image.getpixel((width + x * width + dx, height // 2 + y * height + dy))
        assert isinstance(pixel, tuple)
        return (pixel[0], pixel[1], pixel[2])

    assert at(0, 0, width // 2, height // 2) == RED  # the background of a space
    assert at(1, 0, width // 2, height // 2) == GREEN  # a full block, in its foreground
    assert at(2, 0, width // 2, 0) == png.DEFAULT_FG  # an upper eighth block's top row
    assert at(2, 0, width // 2, height // 2) == png.DEFAULT_BG  # and not its middle
    assert at(3, 0, width, height // 5 + 1) == png.DEFAULT_FG  # the hourglass spans two cells
    assert at(0, 1, width // 2, height // 2) == png.DEFAULT_BG  # a row the capture did not have
    assert image.getpixel((0, 0)) == RED  # the margin takes the first cell's background
