"""Pictures of the review statistics, drawn by code: SVG for pages (inline, nothing external to
load) and a PNG for files, written with zlib alone so reports need no plotting library. Pure."""
from __future__ import annotations

import struct
import zlib
from html import escape

CELL = 34
MARGIN = 60  # the smallest room left of and above the matrix for the ids
CHAR_PX = 7  # width of one character at font-size 11, generously
EMPTY = "no decisions yet: accept or correct a triage to fill this in"
COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]


def _shade(value: int, top: int) -> tuple[int, int, int]:
    """White for zero, deepening blue as ``value`` approaches ``top``."""
    t = value / top if top else 0.0
    return (int(255 - 200 * t), int(255 - 150 * t), 255)


def confusion_svg(labels: list[str], matrix: list[list[int]], title: str = "") -> str:
    """Heatmap: rows = the bot's id, columns = the maintainer's id, counts in the cells. The room
    for the ids grows with the longest one and the column ids are slanted, so ``unknown`` or
    ``R4.10`` beside each other stay readable; an empty matrix says so inside a chart wide enough
    for the sentence."""
    n = len(labels)
    margin = max(MARGIN, 24 + CHAR_PX * max((len(x) for x in labels), default=0))
    size = margin + n * CELL + 10
    width = size if labels else margin + 6 * len(EMPTY) + 10  # room to say it is empty
    top = max((v for row in matrix for v in row), default=0)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{size + 20}" '
             f'role="img" aria-label="confusion matrix {escape(title)}" font-family="sans-serif" '
             'font-size="11">',
             f'<text x="{margin}" y="12">maintainer →</text>',
             f'<text x="4" y="{margin + 4}" transform="rotate(90 4 {margin + 4})">bot →</text>']
    for i, label in enumerate(labels):
        pos = margin + i * CELL + CELL // 2
        parts.append(f'<text x="{pos}" y="{margin - 8}" transform="rotate(-45 {pos} {margin - 8})">'
                     f'{escape(label)}</text>')
        parts.append(f'<text x="{margin - 6}" y="{pos + 4}" text-anchor="end">{escape(label)}</text>')
    for r, row in enumerate(matrix):
        for c, value in enumerate(row):
            parts.append(_cell(margin + c * CELL, margin + r * CELL, value, top))
    if not labels:
        parts.append(f'<text x="{margin}" y="{margin}">{EMPTY}</text>')
    return "".join(parts) + "</svg>"


def _cell(x: int, y: int, value: int, top: int) -> str:
    red, green, blue = _shade(value, top)
    ink = "#fff" if top and value / top > 0.6 else "#000"
    return (f'<rect x="{x}" y="{y}" width="{CELL - 2}" height="{CELL - 2}" '
            f'fill="rgb({red},{green},{blue})" stroke="#999"/>'
            f'<text x="{x + CELL // 2 - 1}" y="{y + CELL // 2 + 3}" text-anchor="middle" '
            f'fill="{ink}">{value}</text>')


def acceptance_svg(series: dict[str, dict[str, tuple[int, int]]], width: int = 520) -> str:
    """Acceptance rate per dimension and week, one line each (0-100 %). Week labels are thinned
    so they never overlap however many weeks there are; with no decisions yet, the empty axes
    say so."""
    weeks = sorted({w for per in series.values() for w in per})
    height, left, bottom = 180, 40, 150
    step = (width - left - 40) / max(len(weeks) - 1, 1)
    every = max(1, -(-CHAR_PX * 9 // max(int(step), 1)))  # "2026-W47" is 8 characters
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height + 20 * len(series)}" '
             'role="img" aria-label="acceptance rate per dimension" font-family="sans-serif" '
             'font-size="11">',
             f'<line x1="{left}" y1="{bottom}" x2="{width - 10}" y2="{bottom}" stroke="#999"/>',
             f'<text x="2" y="{bottom - 120 + 4}">100%</text><text x="10" y="{bottom + 4}">0%</text>']
    if not weeks:
        parts.append(f'<text x="{left + 10}" y="{bottom - 60}">no decisions yet</text>')
    for i, week in enumerate(weeks):
        if i % every == 0:
            parts.append(f'<text x="{left + i * step:.0f}" y="{bottom + 16}" text-anchor="middle">'
                         f'{escape(week)}</text>')
    for k, (dim, per) in enumerate(sorted(series.items())):
        colour = COLOURS[k % len(COLOURS)]
        points = " ".join(f"{left + weeks.index(w) * step:.0f},{bottom - 120 * a / n:.0f}"
                          for w, (a, n) in per.items() if n)
        parts.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for point in points.split():
            x, y = point.split(",")
            parts.append(f'<circle cx="{x}" cy="{y}" r="3" fill="{colour}"/>')
        parts.append(f'<text x="{left}" y="{height + 14 + 20 * k}" fill="{colour}">'
                     f'{escape(dim)}</text>')
    return "".join(parts) + "</svg>"


# PNG -----------------------------------------------------------------------------------------
_FONT = {  # 3x5 glyphs, one string of 15 bits per character (rows top to bottom)
    "0": "111101101101111", "1": "010110010010111", "2": "111001111100111",
    "3": "111001111001111", "4": "101101111001001", "5": "111100111001111",
    "6": "111100111101111", "7": "111001001001001", "8": "111101111101111",
    "9": "111101111001111", ".": "000000000000010", "S": "111100111001111",
    "R": "110101110101101", "F": "111100110100100", "?": "111001011000010",
    "y": "101101111001111", "n": "000110101101101", "e": "111101111100111",
    "s": "011100111001110", "o": "000111101101111",
}
SCALE = 2
PX = 28  # pixels per matrix cell


def png(width: int, height: int, pixels: list[bytearray]) -> bytes:
    """An RGB PNG from rows of ``3 * width`` bytes."""
    raw = b"".join(b"\x00" + bytes(row) for row in pixels)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9))
            + chunk(b"IEND", b""))


class Canvas:
    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.rows = [bytearray(b"\xff" * 3 * width) for _ in range(height)]

    def fill(self, x: int, y: int, w: int, h: int, rgb: tuple[int, int, int]) -> None:
        for row in self.rows[max(y, 0): min(y + h, self.height)]:
            for px in range(max(x, 0), min(x + w, self.width)):
                row[3 * px: 3 * px + 3] = bytes(rgb)

    def text(self, x: int, y: int, label: str, rgb: tuple[int, int, int] = (0, 0, 0)) -> None:
        for i, char in enumerate(label):
            glyph = _FONT.get(char, _FONT["?"])
            for bit, on in enumerate(glyph):
                if on == "1":
                    gx, gy = x + i * 4 * SCALE + (bit % 3) * SCALE, y + (bit // 3) * SCALE
                    self.fill(gx, gy, SCALE, SCALE, rgb)


def short(label: str) -> str:
    """Labels in the PNG's tiny font: ``unknown`` becomes ``?``, ``R4.10`` keeps its digits."""
    return "?" if label == "unknown" else label


def confusion_png(labels: list[str], matrix: list[list[int]]) -> bytes:
    """The confusion matrix as a PNG heatmap with row/column ids and counts."""
    pad = 4 + max((len(short(x)) for x in labels), default=1) * 4 * SCALE
    size = pad + max(len(labels), 1) * PX + 4
    canvas = Canvas(size, size)
    top = max((v for row in matrix for v in row), default=0)
    for i, label in enumerate(labels):
        canvas.text(pad + i * PX + 4, 4, short(label))
        canvas.text(2, pad + i * PX + 8, short(label))
    for r, row in enumerate(matrix):
        for c, value in enumerate(row):
            x, y = pad + c * PX, pad + r * PX
            canvas.fill(x, y, PX - 2, PX - 2, _shade(value, top))
            ink = (255, 255, 255) if top and value / top > 0.6 else (0, 0, 0)
            canvas.text(x + 4, y + 8, str(value), ink)
    return png(canvas.width, canvas.height, canvas.rows)
