"""3x3 shape patterns of the playout policy, written as ASCII and expanded at load time.

These are the moggy shapes (after Pachi and GNU Go's Monte-Carlo patterns): the centre is the
empty point to play. Legend: X and O are stones of the two colours, '.' empty, '?' anything,
'x' not X (O or empty), 'o' not O (X or empty), '#' off the board. Each pattern is expanded to
its 8 rotations and reflections and to both colours, then written into a table indexed by the
board's incremental 3x3 neighbourhood code (engine.board nbr_code), so that matching a point in
a playout is one array lookup.
"""
import functools

import numpy as np

from engine.board import BLACK, EMPTY, WALL, WHITE

# (name, rows top to bottom). The centre of every pattern is the empty point to play.
PATTERNS = [
    ("hane enclosing", ["XOX",
                        "...",
                        "???"]),
    ("hane non-cutting", ["XO.",
                          "...",
                          "?.?"]),
    ("hane magari", ["XO?",
                     "X..",
                     "x.?"]),
    ("katatsuke or diagonal attachment", [".O.",
                                          "X..",
                                          "..."]),
    ("cut unprotected", ["XO?",
                         "O.o",
                         "?o?"]),
    ("cut peeping", ["XO?",
                     "O.X",
                     "???"]),
    ("cut de", ["?X?",
                "O.O",
                "ooo"]),
    ("cut keima", ["OX?",
                   "o.O",
                   "???"]),
    ("side chase", ["X.?",
                    "O.?",
                    "###"]),
    ("side block cut", ["OX?",
                        "X.O",
                        "###"]),
    ("side block connection", ["?X?",
                               "x.O",
                               "###"]),
    ("side sagari", ["?XO",
                     "x.x",
                     "###"]),
    ("side cut", ["?OX",
                  "X.O",
                  "###"]),
]

# Grid cells in 3x3-code order (engine.board neighbour_code_offsets): the offsets are
# (-w-1, -w, -w+1, -1, +1, w-1, w, w+1) with +w one row up, i.e. bottom row first.
_CODE_CELLS = [(2, 0), (2, 1), (2, 2), (1, 0), (1, 2), (0, 0), (0, 1), (0, 2)]

_ALLOWED = {
    "X": {BLACK}, "O": {WHITE}, ".": {EMPTY}, "?": {EMPTY, BLACK, WHITE, WALL},
    "x": {EMPTY, WHITE}, "o": {EMPTY, BLACK}, "#": {WALL},
}


def symmetries(rows):
    """Return the 8 rotations and reflections of a 3x3 pattern (as lists of 3 strings)."""
    grid = [list(r) for r in rows]
    result = []
    for _ in range(4):
        grid = [list(r) for r in zip(*grid[::-1])]       # rotate 90 degrees
        result.append(["".join(r) for r in grid])
        result.append(["".join(r[::-1]) for r in grid])  # and its mirror image
    return result


def swap_colours(rows):
    """Return the pattern with X/O and x/o exchanged."""
    return [r.translate(str.maketrans("XOxo", "OXox")) for r in rows]


def build_table(patterns=PATTERNS):
    """Return a bool[65536] table: True where a 3x3 code matches some expanded pattern."""
    codes = np.arange(1 << 16)
    values = np.stack([(codes >> (2 * (7 - k))) & 3 for k in range(8)], axis=1)
    table = np.zeros(1 << 16, np.bool_)
    for _, rows in patterns:
        for variant in symmetries(rows) + symmetries(swap_colours(rows)):
            match = np.ones(1 << 16, np.bool_)
            for k, (r, c) in enumerate(_CODE_CELLS):
                allowed = np.zeros(4, np.bool_)
                allowed[sorted(_ALLOWED[variant[r][c]])] = True
                match &= allowed[values[:, k]]
            table |= match
    return table


@functools.lru_cache(maxsize=1)
def pattern_table():
    """Return the expanded pattern table, built once per process."""
    return build_table()
