"""Game history and setup: handicap placement, setup stones, undo, hash_after, coordinates."""
import numpy as np
import pytest

from asciiboard import board_rows, diagram, game_from_diagram
from engine import board as bd
from engine.game import Game, IllegalMove, Rules, handicap_points, vertex_to_xy, xy_to_vertex


def vertices(points):
    """Return the set of GTP vertex texts of (x, y) points."""
    return {xy_to_vertex(x, y) for x, y in points}


def arrays(board):
    """Return copies of every array a Board owns (the shared Zobrist table left out)."""
    return [a.copy() for a in board[:-1]]


def same_arrays(a, b):
    """Return True if two arrays() results are identical, element for element."""
    return all(np.array_equal(x, y) for x, y in zip(a, b))


def scratch_hash(board):
    """Return the Zobrist hash of the position recomputed from the stones."""
    h = 0
    for p, s in enumerate(board.stones):
        if s in (bd.BLACK, bd.WHITE):
            h ^= int(board.zobrist[s, p])
    return h


# GTP 2 spec, section 4.1.1: stones 2-4 on the corners, 5 adds the centre, 6 the sides, 7 the
# centre again, 8 top and bottom, 9 all; the 4th line from 13x13 up, the 3rd line below.
GTP_HANDICAP = {
    19: ["D4", "Q16", "D16", "Q4", "K10", "D10", "Q10", "K4", "K16"],
    13: ["D4", "K10", "D10", "K4", "G7", "D7", "K7", "G4", "G10"],
    9: ["C3", "G7", "C7", "G3", "E5", "C5", "G5", "E3", "E7"],
    7: ["C3", "E5", "C5", "E3"],
    8: ["C3", "F6", "C6", "F3"],
    10: ["C3", "H8", "C8", "H3"],
    12: ["C3", "K10", "C10", "K3"],
    14: ["D4", "L11", "D11", "L4"],
}


def gtp_handicap(size, stones):
    """Return the GTP fixed handicap vertices as the spec's table lists them."""
    table = GTP_HANDICAP[size]
    corners, centre = table[:4], table[4:5]
    if stones <= 4:
        return set(corners[:stones])
    sides = table[5:7]
    top_bottom = table[7:9]
    extra = {5: centre, 6: sides, 7: sides + centre, 8: sides + top_bottom,
             9: sides + top_bottom + centre}[stones]
    return set(corners) | set(extra)


@pytest.mark.parametrize("size,stones", [(s, n) for s in (19, 13, 9) for n in range(2, 10)]
                         + [(s, n) for s in (7, 8, 10, 12, 14) for n in range(2, 5)])
def test_fixed_handicap_matches_gtp(size, stones):
    assert vertices(handicap_points(size, stones)) == gtp_handicap(size, stones)


@pytest.mark.parametrize("size,stones", [
    (6, 2), (5, 4), (2, 2),              # below 7x7 there is no fixed handicap
    (19, 1), (19, 0), (19, 10),          # at least 2, at most 9
    (7, 5), (8, 5), (10, 5), (14, 9),    # 7x7 and even sizes stop at 4
])
def test_fixed_handicap_refuses(size, stones):
    with pytest.raises(ValueError):
        handicap_points(size, stones)


def test_set_handicap_places_black_stones_and_white_moves_first():
    game = Game(19)
    points = [game.point(x, y) for x, y in handicap_points(19, 9)]
    game.set_handicap(points)
    assert game.handicap == 9 and game.to_play == bd.WHITE
    assert game.board.info[bd.TO_PLAY] == bd.WHITE
    assert sorted(p for p in game.on_board_points() if game.color_at(p) == bd.BLACK) == sorted(points)
    assert not game.moves and game.board.info[bd.MOVE_NUMBER] == 0
    assert game._hashes == [scratch_hash(game.board)]   # one starting position, no partial ones
    game.play(bd.WHITE, game.parse_vertex("C3"))


@pytest.mark.parametrize("vertices_", [
    ["D4"],                 # fewer than two
    ["D4", "D4"],           # repeated
    ["D4", "pass"],         # pass is no stone
])
def test_set_handicap_refuses_bad_lists_and_leaves_the_board_empty(vertices_):
    game = Game(19)
    with pytest.raises(ValueError):
        game.set_handicap([game.parse_vertex(v) for v in vertices_])
    assert not game.setup and game.handicap == 0 and game.board.info[bd.NEMPTY] == 19 * 19


def test_set_handicap_refuses_a_full_board_and_a_board_with_stones():
    game = Game(2)
    with pytest.raises(ValueError):
        game.set_handicap(game.on_board_points())
    assert game.board.info[bd.NEMPTY] == 4
    game = Game(9)
    game.play(bd.BLACK, game.parse_vertex("E5"))
    with pytest.raises(ValueError, match="not empty"):
        game.set_handicap([game.parse_vertex("C3"), game.parse_vertex("G7")])


KO = """
   A B C D E
 5 . . . . .
 4 . X O . .
 3 X O . O .
 2 . X O . .
 1 . . . . .
"""


def test_place_stone_is_a_setup_stone_not_a_move():
    game = game_from_diagram(KO)
    game.play(bd.BLACK, game.parse_vertex("C3"))           # takes the ko
    b = game.board
    assert b.info[bd.KO_POINT] == game.parse_vertex("B3")
    info = b.info.copy()
    p = game.parse_vertex("E5")
    assert bd.place_stone(b, p, bd.WHITE) == bd.OK
    assert b.stones[p] == bd.WHITE
    for slot in (bd.TO_PLAY, bd.MOVE_NUMBER, bd.PASSES, bd.LAST_MOVE, bd.LAST_MOVE2):
        assert b.info[slot] == info[slot]
    assert b.info[bd.KO_POINT] == -1                       # the position changed: no ko ban
    assert b.info[bd.HASH] == info[bd.HASH] ^ b.zobrist[bd.WHITE, p] == scratch_hash(b)
    assert b.info[bd.NEMPTY] == info[bd.NEMPTY] - 1


def test_place_stone_captures_like_a_move():
    game = game_from_diagram("""
       A B C D E
     5 . . . . .
     4 . X . . .
     3 X O . . .
     2 . X . . .
     1 . . . . .
    """)
    assert bd.place_stone(game.board, game.parse_vertex("C3"), bd.BLACK) == bd.OK
    assert game.color_at(game.parse_vertex("B3")) == bd.EMPTY
    assert game.board.info[bd.HASH] == scratch_hash(game.board)
    assert game.board.info[bd.MOVE_NUMBER] == 0


KO_AND_EYE = """
   A B C D E
 5 . . . X .
 4 . X O . X
 3 X O . O .
 2 . X O . .
 1 . . . . .
"""


@pytest.mark.parametrize("vertex,color,status", [
    ("C4", bd.BLACK, bd.OCCUPIED),      # occupied
    ("E5", bd.WHITE, bd.SUICIDE),       # no liberties after captures
    (None, bd.BLACK, bd.OFF_BOARD),     # pass is no stone
])
def test_place_stone_refuses_and_leaves_the_board_unchanged(vertex, color, status):
    game = game_from_diagram(KO_AND_EYE)
    game.play(bd.BLACK, game.parse_vertex("C3"))            # a ko ban that must survive a refusal
    before, setup, hashes = arrays(game.board), list(game.setup), list(game._hashes)
    p = bd.PASS if vertex is None else game.parse_vertex(vertex)
    assert bd.place_stone(game.board, p, color) == status
    assert same_arrays(before, arrays(game.board))
    with pytest.raises(IllegalMove):
        game.place_setup(color, p)
    assert (game.setup, game._hashes) == (setup, hashes)
    walls = [0, game.board.info[bd.WIDTH] - 1, game.board.stones.shape[0] - 1]
    for wall in walls:
        assert bd.place_stone(game.board, wall, bd.BLACK) == bd.OFF_BOARD


def test_setup_stages_do_not_count_for_superko():
    """White's capture below recreates the position after four of five setup stones, which
    never occurred in the game: it must be legal."""
    game = Game(5)
    for color, vertex in [(bd.BLACK, "B2"), (bd.BLACK, "C2"), (bd.BLACK, "D1"),
                          (bd.WHITE, "A2"), (bd.WHITE, "B1"), (bd.WHITE, "C1")]:
        game.place_setup(color, game.parse_vertex(vertex))
    assert len(game._hashes) == 1
    game.play(bd.BLACK, game.parse_vertex("A1"))             # takes B1 and C1
    assert game.play(bd.WHITE, game.parse_vertex("B1")) is False   # takes A1, no repetition


UNDO_MOVES = [("b", "C3"), ("w", "E1"), ("b", "pass"), ("w", "B3"), ("b", "E2"),
              ("w", "D1"), ("b", "C3"), ("w", "pass"), ("b", "pass")]


def test_undo_restores_board_hash_and_ko_exactly():
    game = game_from_diagram(KO)
    history = []
    for color, vertex in UNDO_MOVES:
        history.append((arrays(game.board), game.to_play, list(game._hashes),
                        dict(game._hash_counts), list(game.moves)))
        game.play(1 if color == "b" else 2, game.parse_vertex(vertex))
    while history:
        board, to_play, hashes, counts, moves = history.pop()
        game.undo()
        assert same_arrays(board, arrays(game.board)), diagram(game)
        assert (game.to_play, game._hashes, game._hash_counts, game.moves) == (
            to_play, hashes, counts, moves)
    with pytest.raises(IndexError):
        game.undo()


def test_undo_brings_the_ko_ban_back():
    game = game_from_diagram(KO)
    game.play(bd.BLACK, game.parse_vertex("C3"))
    game.play(bd.WHITE, game.parse_vertex("E1"))
    game.play(bd.BLACK, game.parse_vertex("E2"))
    retake = game.parse_vertex("B3")
    assert game.is_legal(retake, bd.WHITE)
    game.undo()
    game.undo()
    assert not game.is_legal(retake, bd.WHITE)
    with pytest.raises(IllegalMove, match="^ko$"):
        game.play(bd.WHITE, retake)


def test_undo_of_an_allowed_repetition_keeps_the_earlier_position():
    game = game_from_diagram(KO)
    game.play(bd.BLACK, game.parse_vertex("C3"))
    game.play(bd.WHITE, bd.PASS)
    game.play(bd.BLACK, bd.PASS)
    retake = game.parse_vertex("B3")
    assert game.play(bd.WHITE, retake, superko=False) is True
    game.undo()
    assert game.repeats_position(retake, bd.WHITE)          # the start is still in the history
    assert not game.is_legal(retake, bd.WHITE)


HASH_POSITIONS = [KO, """
   A B C D E F G
 7 . . . . . . .
 6 . . . X . . .
 5 . . X O X . .
 4 . X O . O X .
 3 . . X O X . .
 2 . . . X . . .
 1 . . . . . . .
""", """
   A B C D E F G
 7 . . . . . . .
 6 . . X . . . .
 5 . X O X . . .
 4 X X O X X X .
 3 O O . O O O X
 2 X X X X X X .
 1 . . . . . . .
""", """
   A B C D
 4 X X O O
 3 X X O O
 2 X X O O
 1 X . O O
"""]


@pytest.mark.parametrize("text", HASH_POSITIONS)
def test_hash_after_equals_the_hash_after_play(text):
    game = game_from_diagram(text)
    assert game.board.info[bd.HASH] == scratch_hash(game.board)
    for color in (bd.BLACK, bd.WHITE):
        for p in game.legal_moves(color, superko=False) + [bd.PASS]:
            board = bd.copy_board(game.board)
            expected = bd.hash_after(game.board, p, color)
            assert bd.play(board, p, color) == bd.OK
            assert board.info[bd.HASH] == expected == scratch_hash(board), game.vertex(p)


def test_vertices_are_gtp():
    assert vertex_to_xy("A1", 19) == (0, 0)
    assert vertex_to_xy("j10", 19) == (8, 9)               # I is skipped
    assert vertex_to_xy("T19", 19) == (18, 18)
    assert vertex_to_xy("Pass", 19) is None
    assert xy_to_vertex(8, 0) == "J1"
    game = Game(9)
    assert game.xy(game.parse_vertex("C7")) == (2, 6)
    assert game.vertex(game.point(4, 4)) == "E5"


@pytest.mark.parametrize("text", ["I1", "A0", "A20", "U1", "Z5", "", "A", "11", "D-4"])
def test_bad_vertices_are_refused(text):
    with pytest.raises(ValueError):
        vertex_to_xy(text, 19)


def test_diagram_round_trip():
    game = game_from_diagram(HASH_POSITIONS[1])
    assert board_rows(game_from_diagram(diagram(game))) == board_rows(game)


def test_komi_is_always_a_float_so_the_jitted_scoring_compiles_once():
    game = Game(5, Rules(komi=7))
    assert type(game.rules.komi) is float and game.rules.komi == 7.0
    assert game.tromp_taylor_score() == -7.0


def test_scoring_komi_adds_the_rules_handicap_compensation():
    for compensation, scoring in (("none", 0.5), ("stones", 4.5), ("stones_but_one", 3.5)):
        game = Game(9, Rules(komi=0.5, handicap_compensation=compensation))
        assert game.scoring_komi == 0.5
        game.set_handicap([game.point(x, y) for x, y in handicap_points(9, 4)])
        assert game.scoring_komi == scoring
    with pytest.raises(ValueError):
        Rules(handicap_compensation="chinese")
