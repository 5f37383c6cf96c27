"""ASCII board diagrams for tests: parse them into a Game, draw a Game back as one.

A diagram is one row per line, top row first: ``X`` black, ``O`` white, ``.`` or ``+`` empty,
cells optionally separated by spaces. Row numbers (left and/or right) and a column header
(``A B C ...``, GTP letters without I) are optional; where given they must be right::

       A B C D E
     5 . . . . .
     4 . X O . .
     3 X O . O .
     2 . X O . .
     1 . . . . .

So the top-left cell is A5 and the bottom-left A1, as in GTP.
"""
import re

from engine import board as bd
from engine.game import COLUMNS, Game, Rules

SYMBOLS = {".": bd.EMPTY, "+": bd.EMPTY, "X": bd.BLACK, "O": bd.WHITE}
CHARS = {bd.EMPTY: ".", bd.BLACK: "X", bd.WHITE: "O"}

_ROW = re.compile(r"^\s*(\d+)?\s*([.+XO][.+XO ]*?)\s*(\d+)?\s*$")


def is_header(line):
    """Return True if the line is a column header such as 'A B C D E'."""
    tokens = line.split()
    return bool(tokens) and tokens[0] == "A" and all(len(t) == 1 and t in COLUMNS for t in tokens)


def is_diagram_line(line):
    """Return True if the line is a diagram row or a column header."""
    return is_header(line) or bool(_ROW.match(line))


def parse_diagram(text):
    """Return rows[y][x] of EMPTY/BLACK/WHITE with y = 0 the bottom row; ValueError if malformed."""
    rows, numbers, header = [], [], None
    for line in text.splitlines():
        if not line.strip():
            continue
        if is_header(line):
            header = "".join(line.split())
            continue
        match = _ROW.match(line)
        if not match:
            raise ValueError(f"bad diagram line {line!r}")
        left, cells, right = match.groups()
        if left and right and left != right:
            raise ValueError(f"row numbers disagree in {line!r}")
        rows.append([SYMBOLS[c] for c in cells.replace(" ", "")])
        numbers.append(left or right)
    size = len(rows)
    if not bd.MIN_SIZE <= size <= bd.MAX_SIZE or any(len(row) != size for row in rows):
        raise ValueError(f"diagram is not a square board of {bd.MIN_SIZE}..{bd.MAX_SIZE} rows")
    for i, number in enumerate(numbers):
        if number is not None and int(number) != size - i:
            raise ValueError(f"row {number} is drawn where row {size - i} belongs")
    if header is not None and header != COLUMNS[:size]:
        raise ValueError(f"column header {header!r} does not fit size {size}")
    return rows[::-1]


def game_from_diagram(text, komi=7.5):
    """Return a Game holding the diagram's stones as setup stones, Black to play, no ko.

    Raises ValueError if a chain in the diagram has no liberties (the position could not occur).
    """
    rows = parse_diagram(text)
    game = Game(len(rows), Rules(komi=komi))
    for y, row in enumerate(rows):
        for x, color in enumerate(row):
            if color != bd.EMPTY:
                game.place_setup(color, game.point(x, y))
    if board_rows(game) != rows:
        raise ValueError("the diagram has a chain without liberties")
    return game


def board_rows(game):
    """Return rows[y][x] of EMPTY/BLACK/WHITE for the game's position, y = 0 the bottom row."""
    return [[game.color_at(game.point(x, y)) for x in range(game.size)] for y in range(game.size)]


def diagram(game):
    """Return the game's position as a diagram with coordinates (for assertion messages)."""
    size = game.size
    lines = ["    " + " ".join(COLUMNS[:size])]
    for y in range(size - 1, -1, -1):
        cells = " ".join(CHARS[game.color_at(game.point(x, y))] for x in range(size))
        lines.append(f"{y + 1:>3} {cells}")
    return "\n".join(lines)
