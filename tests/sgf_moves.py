"""Move lists for test SGF games that need legal, capture-free 19x19 play."""


def non_touching_moves(count, shift):
    """Return count sgfmill (row, col) moves, alternately black and white, that never touch:
    black on points with both coordinates even, white on both odd, so nothing is captured."""
    black = [(r, c) for r in range(0, 19, 2) for c in range(0, 19, 2)]
    white = [(r, c) for r in range(1, 19, 2) for c in range(1, 19, 2)]
    black = black[shift:] + black[:shift]
    white = white[shift:] + white[:shift]
    return [(black if i % 2 == 0 else white)[i // 2] for i in range(count)]


def game_sgf(moves, result, setup=""):
    """Return the SGF text of a 19x19 game, komi 6.5, with result RE, the setup properties
    given and sgfmill (row, col) moves, alternately black and white from black."""
    body = "".join(f";{'BW'[i % 2]}[{chr(97 + c)}{chr(97 + r)}]" for i, (r, c) in enumerate(moves))
    return f"(;FF[4]GM[1]SZ[19]KM[6.5]RE[{result}]{setup}{body})"
