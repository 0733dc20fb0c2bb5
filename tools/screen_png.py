"""A terminal's screen, captured with its colours (``tmux capture-pane -p -e``), drawn as a PNG.

``parse`` is pure: the capture's text and SGR escapes become a grid of cells (a character, its
foreground and background as RGB, bold, italic, underline, dim and reverse already applied), one
row a line, each row padded to the screen's width. Wide characters (East Asian wide and full
width) take two cells, as the terminal drew them. Escapes other than SGR are dropped: a capture
holds no cursor movement, and a stray one must not draw as text.

``render`` draws the grid with Pillow in a monospace TrueType font (DejaVu Sans Mono, the
Debian/Ubuntu ``fonts-dejavu-core`` package, unless ``font`` names another). The block elements
the TUI draws its boxes with (``▊▔▁▎``...) are painted as rectangles filling their share of the
cell rather than as glyphs, so the box edges meet with no gap whatever the font's metrics. A
character the monospace font lacks is drawn from DejaVu Sans when that has it (braille
spinners); the hourglass of a waiting tool (``⏳``, in no font a Debian base has) is drawn as two
triangles; anything else shows as the font's missing-glyph box.

    .venv/bin/python tools/screen_png.py CAPTURE.ansi OUT.png [--width 100] [--height 30]
"""

from __future__ import annotations

import argparse
import re
import sys
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PIL import Image, ImageDraw, ImageFont

RGB = tuple[int, int, int]

DEFAULT_FG: RGB = (0xD4, 0xD4, 0xD4)
DEFAULT_BG: RGB = (0x1E, 0x1E, 0x1E)

# The 16 ANSI colours (xterm's defaults), then the 6x6x6 cube and the grey ramp of 256 colours.
_ANSI16: tuple[RGB, ...] = (
    (0x00, 0x00, 0x00), (0xCD, 0x00, 0x00), (0x00, 0xCD, 0x00), (0xCD, 0xCD, 0x00),
    (0x00, 0x00, 0xEE), (0xCD, 0x00, 0xCD), (0x00, 0xCD, 0xCD), (0xE5, 0xE5, 0xE5),
    (0x7F, 0x7F, 0x7F), (0xFF, 0x00, 0x00), (0x00, 0xFF, 0x00), (0xFF, 0xFF, 0x00),
    (0x5C, 0x5C, 0xFF), (0xFF, 0x00, 0xFF), (0x00, 0xFF, 0xFF), (0xFF, 0xFF, 0xFF),
)  # fmt: skip


def palette(index: int) -> RGB:
    """xterm's colour ``index`` (0-255)."""
    if index < 16:
        return _ANSI16[index]
    if index < 232:
        index -= 16
        steps = (0, 0x5F, 0x87, 0xAF, 0xD7, 0xFF)
        return (steps[index // 36], steps[index // 6 % 6], steps[index % 6])
    grey = 8 + 10 * (index - 232)
    return (grey, grey, grey)


@dataclass(frozen=True, slots=True)
class Style:
    fg: RGB | None = None
    bg: RGB | None = None
    bold: bool = False
    dim: bool = False
    italic: bool = False
    underline: bool = False
    reverse: bool = False


@dataclass(frozen=True, slots=True)
class Cell:
    """One cell as drawn: the colours with reverse and the defaults applied; ``char`` is ``""``
    for the right half of a wide character."""

    char: str
    fg: RGB
    bg: RGB
    bold: bool = False
    italic: bool = False
    underline: bool = False


_ESCAPE = re.compile(r"\x1b\[([0-9;:]*)([A-Za-z])|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b.")


def _extended(codes: list[int]) -> tuple[RGB | None, int]:
    """A ``38;5;n`` / ``38;2;r;g;b`` colour from the codes after 38 or 48, and how many it used."""
    if codes[:1] == [5] and len(codes) >= 2:
        return palette(codes[1] % 256), 2
    if codes[:1] == [2] and len(codes) >= 4:
        r, g, b = (min(max(c, 0), 255) for c in codes[1:4])
        return (r, g, b), 4
    return None, len(codes)


def sgr(style: Style, params: str) -> Style:
    """``style`` after one SGR sequence's parameters (``"1;38;5;208"``; empty is a reset)."""
    codes = [int(p) if p else 0 for p in re.split("[;:]", params)] if params else [0]
    fg, bg = style.fg, style.bg
    flags = {
        "bold": style.bold,
        "dim": style.dim,
        "italic": style.italic,
        "underline": style.underline,
        "reverse": style.reverse,
    }
    i = 0
    while i < len(codes):
        code = codes[i]
        i += 1
        if code == 0:
            fg, bg = None, None
            flags = dict.fromkeys(flags, False)
        elif code in _SET:
            flags[_SET[code]] = True
        elif code == 22:
            flags["bold"] = flags["dim"] = False
        elif code in _UNSET:
            flags[_UNSET[code]] = False
        elif 30 <= code <= 37:
            fg = palette(code - 30)
        elif 90 <= code <= 97:
            fg = palette(code - 90 + 8)
        elif 40 <= code <= 47:
            bg = palette(code - 40)
        elif 100 <= code <= 107:
            bg = palette(code - 100 + 8)
        elif code == 39:
            fg = None
        elif code == 49:
            bg = None
        elif code in (38, 48):
            colour, used = _extended(codes[i:])
            i += used
            if code == 38:
                fg = colour
            else:
                bg = colour
    return Style(fg, bg, **flags)


_SET = {1: "bold", 2: "dim", 3: "italic", 4: "underline", 7: "reverse"}
_UNSET = {23: "italic", 24: "underline", 27: "reverse"}


def _cell(char: str, style: Style) -> Cell:
    fg = style.fg or DEFAULT_FG
    bg = style.bg or DEFAULT_BG
    if style.reverse:
        fg, bg = bg, fg
    if style.dim:
        fg = tuple((f + b) // 2 for f, b in zip(fg, bg, strict=True))  # type: ignore[assignment]
    return Cell(char, fg, bg, style.bold, style.italic, style.underline)


def _wide(char: str) -> bool:
    return unicodedata.east_asian_width(char) in ("W", "F")


def _pieces(line: str) -> Iterator[tuple[str, str | None]]:
    """The line's text runs and SGR parameters, in order: (text, None) or ("", params)."""
    at = 0
    for match in _ESCAPE.finditer(line):
        if match.start() > at:
            yield line[at : match.start()], None
        if match.group(2) == "m":
            yield "", match.group(1)
        at = match.end()
    if at < len(line):
        yield line[at:], None


def parse(capture: str, width: int, height: int) -> list[list[Cell]]:
    """The screen of ``width`` x ``height`` cells that ``capture`` shows (rows past ``height``
    and cells past ``width`` are dropped; missing ones are blank in the default colours). tmux
    writes only what changed since the cell before, across lines too, so the style carries from
    one line into the next."""
    rows: list[list[Cell]] = []
    style = Style()
    for line in capture.split("\n")[:height]:
        row: list[Cell] = []
        for text, params in _pieces(line):
            if params is not None:
                style = sgr(style, params)
                continue
            for char in text:
                if unicodedata.category(char) in ("Cc", "Mn", "Me", "Cf"):
                    continue
                row.append(_cell(char, style))
                if _wide(char):
                    row.append(_cell("", style))
        row = row[:width]
        row.extend(_cell(" ", Style()) for _ in range(width - len(row)))
        rows.append(row)
    rows.extend([_cell(" ", Style()) for _ in range(width)] for _ in range(height - len(rows)))
    return rows


# Block elements as the share of the cell they fill: (left, top, right, bottom), in eighths.
BLOCKS: dict[str, tuple[int, int, int, int]] = {
    "▀": (0, 0, 8, 4), "▁": (0, 7, 8, 8), "▂": (0, 6, 8, 8), "▃": (0, 5, 8, 8),
    "▄": (0, 4, 8, 8), "▅": (0, 3, 8, 8), "▆": (0, 2, 8, 8), "▇": (0, 1, 8, 8),
    "█": (0, 0, 8, 8), "▉": (0, 0, 7, 8), "▊": (0, 0, 6, 8), "▋": (0, 0, 5, 8),
    "▌": (0, 0, 4, 8), "▍": (0, 0, 3, 8), "▎": (0, 0, 2, 8), "▏": (0, 0, 1, 8),
    "▐": (4, 0, 8, 8), "▔": (0, 0, 8, 1), "▕": (7, 0, 8, 8),
}  # fmt: skip

FONT_DIRS = (Path("/usr/share/fonts/truetype/dejavu"), Path("/usr/share/fonts/TTF"))


HOURGLASSES = frozenset("⏳⌛")


def find_font(name: str = "DejaVuSansMono") -> dict[str, Path]:
    """The regular and bold faces of ``name``, and the fallback face (``fonts-dejavu-core``
    on Debian)."""
    for folder in FONT_DIRS:
        regular, bold = folder / f"{name}.ttf", folder / f"{name}-Bold.ttf"
        if regular.exists():
            fallback = folder / "DejaVuSans.ttf"
            return {
                "regular": regular,
                "bold": bold if bold.exists() else regular,
                "fallback": fallback if fallback.exists() else regular,
            }
    folders = ", ".join(map(str, FONT_DIRS))
    raise SystemExit(f"no {name}.ttf in {folders}: apt-get install fonts-dejavu-core")


class _Faces:
    """The face each character is drawn in: the monospace one (bold or not) when it has the
    glyph, else the fallback (a face without a glyph draws the same mask as for a code point
    no font has)."""

    def __init__(self, faces: dict[str, Path], size: int) -> None:
        from PIL import ImageFont

        self.regular = ImageFont.truetype(str(faces["regular"]), size)
        self.bold = ImageFont.truetype(str(faces["bold"]), size)
        self.fallback = ImageFont.truetype(str(faces["fallback"]), size)
        self._missing = bytes(self.regular.getmask("\U000f0000"))
        self._has: dict[str, bool] = {}

    def face(self, char: str, bold: bool) -> ImageFont.FreeTypeFont:
        has = self._has.get(char)
        if has is None:
            has = self._has[char] = bytes(self.regular.getmask(char)) != self._missing
        if has:
            return self.bold if bold else self.regular
        return self.fallback


def cell_size(face: ImageFont.FreeTypeFont) -> tuple[int, int]:
    """A cell's width and height in pixels in ``face``: an M's advance, the line's height."""
    ascent, descent = face.getmetrics()
    return round(face.getlength("M")), ascent + descent + 2


def _hourglass(draw: ImageDraw.ImageDraw, box: tuple[int, int, int, int], fill: RGB) -> None:
    """Two triangles meeting at the box's centre, inset a quarter across and a fifth down."""
    x0, y0, x1, y1 = box
    inset_x, inset_y = (x1 - x0) // 4, (y1 - y0) // 5
    left, right, top, bottom = x0 + inset_x, x1 - inset_x, y0 + inset_y, y1 - inset_y
    centre = ((x0 + x1) // 2, (y0 + y1) // 2)
    draw.polygon([(left, top), (right, top), centre], fill=fill)
    draw.polygon([centre, (right, bottom), (left, bottom)], fill=fill)


def render(
    grid: list[list[Cell]], *, size: int = 15, font: dict[str, Path] | None = None
) -> Image.Image:
    """``grid`` drawn in a monospace font of ``size`` pixels, with a margin of one cell across
    and half a cell down, in the screen's own background (its first cell's)."""
    from PIL import Image, ImageDraw

    faces = _Faces(font or find_font(), size)
    ascent = faces.regular.getmetrics()[0]
    cell_w, cell_h = cell_size(faces.regular)
    margin_x, margin_y = cell_w, cell_h // 2
    width = max((len(row) for row in grid), default=0)
    around = grid[0][0].bg if grid and grid[0] else DEFAULT_BG
    image = Image.new(
        "RGB", (width * cell_w + 2 * margin_x, len(grid) * cell_h + 2 * margin_y), around
    )
    draw = ImageDraw.Draw(image)
    # Every background first: a wide character's glyph reaches over the cell to its right.
    for y, row in enumerate(grid):
        top = margin_y + y * cell_h
        for x, cell in enumerate(row):
            left = margin_x + x * cell_w
            draw.rectangle((left, top, left + cell_w - 1, top + cell_h - 1), fill=cell.bg)
    for y, row in enumerate(grid):
        top = margin_y + y * cell_h
        for x, cell in enumerate(row):
            left = margin_x + x * cell_w
            if not cell.char or cell.char == " ":
                continue
            block = BLOCKS.get(cell.char)
            if block is not None:
                x0, y0, x1, y1 = block
                box = (
                    left + cell_w * x0 // 8,
                    top + cell_h * y0 // 8,
                    left + cell_w * x1 // 8 - 1,
                    top + cell_h * y1 // 8 - 1,
                )
                draw.rectangle(box, fill=cell.fg)
            elif cell.char in HOURGLASSES:
                span = 2 * cell_w if _wide(cell.char) else cell_w
                _hourglass(draw, (left, top, left + span, top + cell_h), cell.fg)
            else:
                face = faces.face(cell.char, cell.bold)
                draw.text((left, top + 1), cell.char, font=face, fill=cell.fg)
            if cell.underline:
                line_y = top + ascent + 2
                draw.line((left, line_y, left + cell_w - 1, line_y), fill=cell.fg)
    return image


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("capture", type=Path, help="the output of tmux capture-pane -p -e")
    parser.add_argument("out", type=Path, help="the PNG to write")
    parser.add_argument("--width", type=int, default=100)
    parser.add_argument("--height", type=int, default=30)
    args = parser.parse_args(argv)
    grid = parse(args.capture.read_text(encoding="utf-8"), args.width, args.height)
    render(grid).save(args.out, optimize=True)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
