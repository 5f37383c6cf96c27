"""Move lists for test SGF games that need legal, capture-free 19x19 play."""


def non_touching_moves(count, shift):
    """Return count sgfmill (row, col) moves, alternately black and white, that never touch:
    black on points with both coordinates even, white on both odd, so nothing is captured."""
    black = [(r, c) for r in range(0, 19, 2) for c in range(0, 19, 2)]
    white = [(r, c) for r in range(1, 19, 2) for c in range(1, 19, 2)]
    black = black[shift:] + black[:shift]
    white = white[shift:] + white[:shift]
    return [(black if i % 2 == 0 else white)[i // 2] for i in range(count)]
