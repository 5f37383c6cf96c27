"""The ladder reader: drawn ladders that work and fail, and a randomized comparison with a slow
reader that plays the ladder out on a plain grid with real captures."""
import random

import numpy as np
import pytest

from asciiboard import game_from_diagram
from engine import board as bd
from engine.game import Game, IllegalMove
from engine.ladder import (atari_starts_ladder, caught_escapes, caught_in_ladder,
                           futile_escapes, ladder_moves, new_ladder_scratch)
from test_consistency import flood, neighbours

# Black D4 is in atari at E4; extending there gives two liberties, and white chases the chain
# down and right (F4, E2, G3, ...) to the bottom edge.
LADDER = """
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . O O . . . .
    . . O X . . . . .
    . . . O . . . . .
    . . . . . . . . .
    . . . . . . . . .
    """


def with_stone(diagram, vertex, symbol):
    """Return the diagram with symbol drawn at vertex (9x9, rows top first)."""
    rows = [line.split() for line in diagram.strip().splitlines()]
    x = "ABCDEFGHJ".index(vertex[0])
    rows[9 - int(vertex[1:])][x] = symbol
    return "\n".join(" ".join(row) for row in rows)


def caught(diagram, vertex="D4"):
    game = game_from_diagram(diagram)
    scratch = new_ladder_scratch(game.board.stones.shape[0])
    return caught_in_ladder(game.board, game.parse_vertex(vertex), scratch)


def test_a_ladder_to_the_edge_catches_the_chain():
    assert caught(LADDER)


def test_a_stone_on_the_ladders_path_breaks_it():
    assert not caught(with_stone(LADDER, "F2", "X"))
    assert not caught(with_stone(LADDER, "G2", "X"))


def test_a_stone_off_the_path_does_not_break_it():
    assert caught(with_stone(LADDER, "H8", "X"))
    assert caught(with_stone(LADDER, "B8", "X"))


def test_capturing_an_attacker_in_atari_escapes():
    # White D3 is in atari (black C3 and D2 next to it); black takes it at E3 instead of
    # running.
    diagram = with_stone(with_stone(LADDER, "C3", "X"), "D2", "X")
    assert not caught(diagram)


def test_the_atari_from_the_right_side_starts_the_ladder():
    game = game_from_diagram(with_stone(LADDER, "D3", "."))
    scratch = new_ladder_scratch(game.board.stones.shape[0])
    d4 = game.parse_vertex("D4")
    assert atari_starts_ladder(game.board, game.parse_vertex("D3"), d4, scratch)
    assert not atari_starts_ladder(game.board, game.parse_vertex("E4"), d4, scratch)


def chased(diagram, vertex, color):
    """Return the Game of the diagram, vertex left empty, after color plays there."""
    game = game_from_diagram(with_stone(diagram, vertex, "."))
    game.play(color, game.parse_vertex(vertex))
    return game


def escapes(game, finder=futile_escapes):
    """Return the sorted vertices that finder (futile_escapes or caught_escapes) gives the side
    to move."""
    out = np.zeros(4, np.int32)
    to_play = game.board.info[bd.TO_PLAY]
    n = finder(game.board, to_play, new_ladder_scratch(game.board.stones.shape[0]), out)
    return sorted(game.vertex(int(p)) for p in out[:n])


def test_futile_escapes_are_the_extensions_a_ladder_catches():
    assert escapes(chased(LADDER, "D3", bd.WHITE)) == ["E4"]
    assert escapes(chased(with_stone(LADDER, "F2", "X"), "D3", bd.WHITE)) == []  # the breaker
    # Only a chain the last move put in atari is asked about: one left in atari earlier has
    # nobody chasing it, and its liberty may matter for other reasons.
    assert escapes(game_from_diagram(LADDER)) == []
    assert escapes(chased(with_stone(LADDER, "H9", "O"), "H9", bd.WHITE)) == []
    # E8, put in atari by E9, extends at E7 to three liberties: no futile escape.
    boxed = LADDER
    for vertex, symbol in (("E8", "X"), ("D8", "O"), ("F8", "O")):
        boxed = with_stone(boxed, vertex, symbol)
    assert escapes(chased(boxed, "E9", bd.WHITE)) == []


def test_caught_escapes_are_asked_about_every_chain_in_atari():
    assert escapes(chased(LADDER, "D3", bd.WHITE), caught_escapes) == ["E4"]
    # Also a chain left in atari earlier (White's last move elsewhere), which futile_escapes
    # leaves out: extending it still runs into the ladder.
    tenuki = chased(with_stone(LADDER, "H9", "O"), "H9", bd.WHITE)
    assert escapes(tenuki, caught_escapes) == ["E4"]
    assert escapes(chased(with_stone(LADDER, "F2", "X"), "D3", bd.WHITE),
                   caught_escapes) == []  # the breaker


def moves_of(game, color):
    """Return (ladder captures, futile escapes) of color as sorted vertices."""
    board = game.board
    captures, escapes_out = np.zeros(16, np.int64), np.zeros(16, np.int64)
    ncap, nesc = ladder_moves(board, color, new_ladder_scratch(board.stones.shape[0]), captures,
                              escapes_out, np.zeros(2, np.int64))
    return (sorted(game.vertex(int(p)) for p in captures[:ncap]),
            sorted(game.vertex(int(p)) for p in escapes_out[:nesc]))


def test_ladder_moves_name_the_working_atari_and_the_futile_extension():
    assert moves_of(game_from_diagram(LADDER), bd.BLACK) == ([], ["E4"])
    assert moves_of(game_from_diagram(with_stone(LADDER, "F2", "X")), bd.BLACK) == ([], [])
    open_ladder = game_from_diagram(with_stone(LADDER, "D3", "."))
    assert moves_of(open_ladder, bd.WHITE) == (["D3"], [])
    # With a ladder breaker on the path, neither atari catches the chain.
    assert moves_of(game_from_diagram(with_stone(with_stone(LADDER, "D3", "."), "F2", "X")),
                    bd.WHITE) == ([], [])


@pytest.mark.parametrize("seed", range(3))
def test_ladder_moves_ask_the_reader_about_every_chain(seed):
    rng = random.Random(seed)
    for _ in range(15):
        game = random_position(rng, 9, rng.randrange(20, 70))
        board = game.board
        scratch = new_ladder_scratch(board.stones.shape[0])
        for color in (bd.BLACK, bd.WHITE):
            want_captures, want_escapes = set(), set()
            for head in {int(board.chain[p]) for p in game.on_board_points()
                         if game.color_at(p) != bd.EMPTY}:
                libs = [p for p in game.on_board_points() if game.color_at(p) == bd.EMPTY
                        and any(board.chain[p + d] == head for d in (-11, -1, 1, 11))]
                owner = game.color_at(head)
                if owner == color and len(libs) == 1 and caught_in_ladder(board, head, scratch):
                    want_escapes.add(game.vertex(libs[0]))
                if owner != color and len(libs) == 2:
                    for lib in libs:
                        takes = any(game.color_at(lib + d) == owner and board.nlibs[
                            board.chain[lib + d]] == 1 for d in (-11, -1, 1, 11))
                        if not takes and atari_starts_ladder(board, lib, head, scratch):
                            want_captures.add(game.vertex(lib))
            assert moves_of(game, color) == (sorted(want_captures), sorted(want_escapes))


# The slow reader ---------------------------------------------------------------------------

def reference_caught(grid, x, y):
    """The chain at (x, y) has one liberty and its owner moves: True if the opponent captures
    it by ataris on one of the two liberties after each extension. The owner escapes by
    taking an opponent chain in atari next to the chain or the extension point."""
    size = len(grid)
    defender = grid[y][x]
    attacker = 3 - defender
    stones, liberties = flood(grid, x, y)
    (lx, ly), = liberties
    for sx, sy in stones | {(lx, ly)}:
        for nx, ny in neighbours(size, sx, sy):
            if grid[ny][nx] == attacker and len(flood(grid, nx, ny)[1]) == 1:
                return False
    extended = [row[:] for row in grid]
    extended[ly][lx] = defender
    liberties = flood(extended, x, y)[1]
    if len(liberties) != 2:
        return len(liberties) < 2
    for ax, ay in sorted(liberties):
        chased = [row[:] for row in extended]
        chased[ay][ax] = attacker
        for nx, ny in neighbours(size, ax, ay):
            if chased[ny][nx] == defender and not flood(chased, nx, ny)[1]:
                for sx, sy in flood(chased, nx, ny)[0]:
                    chased[sy][sx] = bd.EMPTY
        if not flood(chased, ax, ay)[1]:
            continue
        if len(flood(chased, x, y)[1]) == 1 and reference_caught(chased, x, y):
            return True
    return False


def random_position(rng, size, moves):
    """Return a Game after up to `moves` random legal moves."""
    game = Game(size)
    for _ in range(moves):
        color = game.to_play
        empty = [p for p in game.on_board_points() if game.color_at(p) == bd.EMPTY]
        rng.shuffle(empty)
        for p in empty:
            try:
                game.play(color, p)
                break
            except IllegalMove:
                continue
    return game


def grid_of(game):
    size = game.board.info[bd.SIZE]
    grid = [[bd.EMPTY] * size for _ in range(size)]
    for p in game.on_board_points():
        x, y = game.xy(p)
        grid[y][x] = game.color_at(p)
    return grid


@pytest.mark.parametrize("seed", range(6))
def test_the_reader_agrees_with_a_slow_one_on_random_positions(seed):
    rng = random.Random(seed)
    checked = 0
    for _ in range(20):
        game = random_position(rng, 9, rng.randrange(20, 70))
        board = game.board
        grid = grid_of(game)
        scratch = new_ladder_scratch(board.stones.shape[0])
        heads = [int(board.chain[p]) for p in game.on_board_points()
                 if game.color_at(p) != bd.EMPTY]
        for head in sorted(set(heads)):
            x, y = game.xy(head)
            libs = int(board.nlibs[head])
            if libs == 1:
                assert caught_in_ladder(board, head, scratch) == reference_caught(grid, x, y), \
                    (game.vertex(head), grid)
                checked += 1
            elif libs == 2:
                attacker = 3 - game.color_at(head)
                for lx, ly in sorted(flood(grid, x, y)[1]):
                    p = game.point(lx, ly)
                    trial = [row[:] for row in grid]
                    trial[ly][lx] = attacker
                    if any(trial[ny][nx] == 3 - attacker and not flood(trial, nx, ny)[1]
                           for nx, ny in neighbours(9, lx, ly)) or not flood(trial, lx, ly)[1]:
                        continue     # captures, or suicide: not an atari
                    expected = reference_caught(trial, x, y)
                    assert atari_starts_ladder(board, p, head, scratch) == expected, \
                        (game.vertex(p), game.vertex(head), grid)
                    checked += 1
    assert checked > 50
