"""The default policy's rules on drawn positions: each rule alone (probability 1, the others 0)
must choose the move the rule exists for."""
import numpy as np
import pytest

from asciiboard import game_from_diagram
from engine import board as bd
from engine import playout as po
from engine.ladder import new_ladder_scratch
from engine.patterns import PATTERNS, build_table, symmetries, swap_colours


def only(rule, **extra):
    """Return a Policy with one rule at probability 1 and the others off."""
    rates = dict(capture=0.0, ko=0.0, atari2=0.0, nakade=0.0, pattern=0.0,
                 selfatari_max=1, selfatari_reject=1.0)
    rates[rule] = 1.0
    rates.update(extra)
    return po.PolicyConfig(**rates).build()


def position(diagram, last_moves):
    """Return a Game from the diagram after playing last_moves (colour, vertex) in order."""
    game = game_from_diagram(diagram)
    for color, vertex in last_moves:
        game.play(color, game.parse_vertex(vertex))
    return game


def policy_moves(game, policy, trials=50, seed=1):
    """Return the set of vertices the policy chooses for the side to move over many trials."""
    rng = po.new_rng(seed)
    cands = np.empty(po.MAX_CANDIDATES, np.int64)
    words = np.empty(game.board.libs.shape[1], np.uint64)
    ladder = new_ladder_scratch(game.board.stones.shape[0])
    return {game.vertex(po.policy_move(game.board, game.to_play, policy, cands, words, ladder,
                                       rng))
            for _ in range(trials)}


def test_escapes_the_atari_the_last_move_made():
    game = position("""
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . O X . . .
        . . . O . . .
        . . . . . . .
        . . . . . . .
        """, [(bd.WHITE, "E4")])
    assert policy_moves(game, only("capture")) == {"D5"}


def test_captures_a_chain_the_last_move_left_in_atari():
    game = position("""
        . . . . . . .
        . . . X . . .
        . . X . X . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        """, [(bd.WHITE, "D5")])
    assert policy_moves(game, only("capture")) == {"D4"}


def test_never_plays_a_self_atari_of_three_stones():
    game = position("""
        . . . . .
        O O O O .
        X X . O .
        . O O O .
        . . . . .
        """, [(bd.WHITE, "E1")])
    c3 = game.parse_vertex("C3")
    words = np.empty(game.board.libs.shape[1], np.uint64)
    assert po.is_bad_selfatari(game.board, c3, bd.BLACK, 1, words)
    assert bd.is_legal(game.board, c3, bd.BLACK)
    rng = po.new_rng(3)
    policy = po.PolicyConfig(selfatari_reject=1.0).build()
    for _ in range(300):
        assert po.random_move(game.board, bd.BLACK, policy, words, rng) != c3


def test_self_atari_that_captures_is_allowed():
    game = position("""
        . . . . .
        . . . . .
        . . . . .
        O X . . .
        . O X . .
        """, [(bd.WHITE, "E5")])
    a1, e1 = game.parse_vertex("A1"), game.parse_vertex("E4")
    words = np.empty(game.board.libs.shape[1], np.uint64)
    assert po.captures_something(game.board, a1, bd.BLACK)
    assert po.liberties_after(game.board, a1, bd.BLACK, words) == 0
    assert not po.is_bad_selfatari(game.board, a1, bd.BLACK, 0, words)
    assert not po.is_bad_selfatari(game.board, e1, bd.BLACK, 0, words)


# White's bent three F7 G7 G6 holds a black stone on its vital point, G7, and White has no
# other liberty: the shape of game 13 of benchmarks/records/m_pachi10k_92.tar.xz in a 7x7 corner.
BENT_THREE_TAKEN = """
    . . . X O . X
    . . . X O O .
    . . . X X O O
    . . . . X X X
    . . . . . . .
    . . . . . . .
    . . . . . . .
    """


def test_a_throw_in_that_leaves_a_dead_shape_is_no_bad_self_atari():
    # Black F7 (or G6) puts two stones and White in atari at once; White takes at G6 and is
    # left with the two-point eye F7 G7. White filling either point only puts itself in atari.
    game = game_from_diagram(BENT_THREE_TAKEN)
    b = game.board
    words = np.empty(b.libs.shape[1], np.uint64)
    for vertex in ("F7", "G6"):
        p = game.parse_vertex(vertex)
        assert po.is_nakade_throw_in(b, p, bd.BLACK)
        assert not po.is_bad_selfatari(b, p, bd.BLACK, 1, words)
        assert not po.is_nakade_throw_in(b, p, bd.WHITE)
        assert po.is_bad_selfatari(b, p, bd.WHITE, 1, words)


def test_a_throw_in_that_makes_a_square_four_kills():
    # Black B2 makes the square A1 B1 A2 B2 in atari with White's last liberty, C1.
    game = game_from_diagram("""
        . . . . . . .
        . . . . . . .
        . . . . . . .
        X X X X . . .
        O O O X X . .
        X . O O X . .
        X X . O X . .
        """)
    assert po.is_nakade_throw_in(game.board, game.parse_vertex("B2"), bd.BLACK)


@pytest.mark.parametrize("diagram,mover,move", [
    # White A1 makes a straight five that Black's capture turns into two eyes: a seki.
    ("""
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        O O O O O O O
        X X X X X X X
        . O O O O . X
        """, bd.WHITE, "A1"),
    # Black A1 extends into atari and White A3 keeps its liberties: no throw-in.
    ("""
        . . . . .
        . . . . .
        O . . . .
        X O . . .
        . . . . .
        """, bd.BLACK, "A1"),
], ids=["seki-of-a-straight-five", "extension-on-the-edge"])
def test_no_throw_in_where_the_capture_lives_or_the_opponent_keeps_liberties(diagram, mover,
                                                                             move):
    game = game_from_diagram(diagram)
    b = game.board
    p = game.parse_vertex(move)
    words = np.empty(b.libs.shape[1], np.uint64)
    assert not po.is_nakade_throw_in(b, p, mover)
    assert po.is_bad_selfatari(b, p, mover, 1, words)


def test_ownership_playouts_kill_a_group_whose_eye_holds_the_vital_stone():
    game = game_from_diagram(BENT_THREE_TAKEN)
    b = game.board
    owner_sum = np.zeros(b.stones.shape[0])
    runs = 200
    po.playout_ownership(b, 7.0, runs, po.PolicyConfig().build(), po.new_rng(5),
                         bd.copy_board(b), owner_sum)
    assert owner_sum[game.parse_vertex("E7")] / runs > 0.8


def test_plays_the_nakade_point_of_a_straight_three():
    # White E4 closes a straight three (B4 C4 D4); its vital point is the middle, C4.
    game = position("""
        . . . . . . .
        . . . . . . .
        . O O O O O .
        O . . . . . .
        O O O O O . .
        . . . . . . .
        . . . . . . .
        """, [(bd.WHITE, "E4")])
    assert po.nakade_point(game.board, game.parse_vertex("E4"), np.empty(8, np.int64)) == game.parse_vertex("C4")
    assert policy_moves(game, only("nakade")) == {"C4"}


def test_plays_the_nakade_point_of_a_bent_three():
    # White D3 closes a bent three (B4 B3 C3); its vital point is the corner, B3.
    game = position("""
        . . . . . .
        O O O . . .
        O . O O . .
        O . . . . .
        O O O O . .
        . . . . . .
        """, [(bd.WHITE, "D3")])
    assert policy_moves(game, only("nakade")) == {"B3"}


def test_no_nakade_point_in_a_square_four():
    game = position("""
        . . . . . .
        . O O O O .
        O . . O . .
        O . . O . .
        O O O . . .
        . . . . . .
        """, [(bd.WHITE, "D2")])
    assert po.nakade_point(game.board, game.parse_vertex("D2"), np.empty(8, np.int64)) == -1


def test_plays_the_vital_point_of_a_rabbity_six():
    # White D4 closes a six-point space (B5 C5 D5 C6 B4 C4), the largest the rule reads;
    # C5 touches four of the other five, more than any other point.
    game = position("""
        . . O . . . .
        . O . O . . .
        O . . . O . .
        O . . . . . .
        . O O . . . .
        . . . . . . .
        . . . . . . .
        """, [(bd.WHITE, "D4")])
    assert po.nakade_point(game.board, game.parse_vertex("D4"), np.empty(8, np.int64)) == game.parse_vertex("C5")


def test_no_nakade_point_in_a_seven_point_space():
    # White D4 closes seven points (B5 C5 D5 C6 D6 B4 C4): a living eye space, where a
    # vital-point move only throws a stone in.
    game = position("""
        . . O O . . .
        . O . . O . .
        O . . . O . .
        O . . . . . .
        . O O . . . .
        . . . . . . .
        . . . . . . .
        """, [(bd.WHITE, "D4")])
    assert po.nakade_point(game.board, game.parse_vertex("D4"), np.empty(8, np.int64)) == -1


def test_puts_a_two_liberty_chain_of_the_last_move_in_atari():
    game = position("""
        . . . . . . .
        . . . . . . .
        . . X X . . .
        . X O . . . .
        . . X . . . .
        . . . . . . .
        . . . . . . .
        """, [(bd.WHITE, "D4")])
    assert policy_moves(game, only("atari2")) == {"D3", "E4"}


def test_retakes_a_ko_after_a_threat():
    game = position("""
        . . . . .
        . O X . .
        O X . X .
        . O X . .
        . . . . .
        """, [(bd.WHITE, "C3"),      # white takes the ko at B3
              (bd.BLACK, "E1"),      # black plays a threat
              (bd.WHITE, "D1")])     # white answers it
    assert game.to_play == bd.BLACK
    assert policy_moves(game, only("ko")) == {"B3"}


def test_no_ko_retake_rule_right_after_the_capture():
    game = position("""
        . . . . .
        . O X . .
        O X . X .
        . O X . .
        . . . . .
        """, [(bd.WHITE, "C3")])
    assert "B3" not in policy_moves(game, only("ko"))


def test_pattern_table_is_closed_under_symmetry_and_colour():
    table = build_table()
    for _, rows in PATTERNS:
        for variant in symmetries(rows) + symmetries(swap_colours(rows)):
            assert build_table([("v", variant)]).sum() == build_table([("v", rows)]).sum()
    assert table.sum() > 0


def test_pattern_move_found_next_to_the_last_move():
    # White D4 attaches on top of black D3: the hane and cut shapes lie around D4.
    game = position("""
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . X . . .
        . . . . . . .
        . . . . . . .
        """, [(bd.WHITE, "D4")])
    moves = policy_moves(game, only("pattern"), trials=100)
    around_last = {"C5", "D5", "E5", "C4", "E4", "C3", "E3"}
    assert moves and moves <= around_last
    table = build_table()
    for vertex in moves:
        assert table[game.board.nbr_code[game.parse_vertex(vertex)]]


def test_never_fills_its_own_true_eye():
    game = position("""
        . X . X .
        X X X X X
        . . . . .
        . . . . .
        . . . . .
        """, [(bd.WHITE, "E1")])
    rng = po.new_rng(9)
    words = np.empty(game.board.libs.shape[1], np.uint64)
    policy = po.PolicyConfig().build()
    eyes = {game.parse_vertex("A5"), game.parse_vertex("C5"), game.parse_vertex("E5")}
    for _ in range(300):
        assert po.random_move(game.board, bd.BLACK, policy, words, rng) not in eyes


def reorder_empties(board, first):
    """Put the vertices' points first in the board's empty list, the rest after in their
    order: the list's order is free, so no choice may depend on it."""
    points = list(first) + [p for p in board.empties[:board.info[bd.NEMPTY]] if p not in first]
    for i, p in enumerate(points):
        board.empties[i] = p
        board.empty_index[p] = i


def test_a_random_move_is_uniform_over_the_acceptable_points_in_any_list_order():
    # Black's twelve eyes are never played; A1, B1 and C1 each have a third of the draws,
    # wherever the eyes stand in the empty list.
    game = position("""
        . X . X . X .
        X X X X X X X
        . X . X . X .
        X X X X X X X
        . X . X . X .
        X X X X X X X
        . . . X X X X
        """, [])
    b = game.board
    open_points = [game.parse_vertex(v) for v in ("A1", "B1", "C1")]
    eyes = [p for p in b.empties[:b.info[bd.NEMPTY]] if p not in open_points]
    words = np.empty(b.libs.shape[1], np.uint64)
    policy = po.PolicyConfig().build()
    for order in (eyes + open_points, open_points[::-1] + eyes, eyes[:6] + open_points + eyes[6:]):
        reorder_empties(b, order)
        rng = po.new_rng(11)
        draws = [po.random_move(b, bd.BLACK, policy, words, rng) for _ in range(3000)]
        assert set(draws) == set(open_points)
        for p in open_points:
            assert 0.29 < draws.count(p) / len(draws) < 0.38
        empties = b.empties[:b.info[bd.NEMPTY]]
        assert sorted(empties) == sorted(eyes + open_points)    # shuffled, still consistent
        assert all(b.empty_index[p] == i for i, p in enumerate(empties))


def test_a_rule_picks_uniformly_among_its_acceptable_candidates():
    # A5 and B4 are suicide for Black; E1, D2 and C1 must share the draws evenly, though
    # E1 comes right after both in the candidate list.
    game = position("""
        . O . . .
        O . O . .
        . O . . .
        . . . . .
        . . . . .
        """, [])
    b = game.board
    listed = [game.parse_vertex(v) for v in ("A5", "B4", "E1", "D2", "C1")]
    words = np.empty(b.libs.shape[1], np.uint64)
    policy = po.PolicyConfig().build()
    rng = po.new_rng(12)
    cands = np.empty(po.MAX_CANDIDATES, np.int64)
    draws = []
    for _ in range(3000):
        cands[:len(listed)] = listed
        draws.append(po._pick(b, bd.BLACK, cands, len(listed), policy, words, rng))
    assert set(draws) == set(listed[2:])
    for p in listed[2:]:
        assert 0.29 < draws.count(p) / len(draws) < 0.38


@pytest.mark.parametrize("size", [5, 9, 19])
def test_playouts_end_and_leave_a_consistent_board(size):
    game = game_from_diagram("\n".join(["." * size] * size))
    policy = po.PolicyConfig().build()
    rng = po.new_rng(size)
    for _ in range(5):
        b = bd.copy_board(game.board)
        record = np.empty(3 * size * size, np.int32)
        moves = po.run_playout(b, policy, rng, 3 * size * size, record,
                               new_ladder_scratch(b.stones.shape[0]))
        assert 0 < moves <= 3 * size * size
        assert record[moves - 1] == bd.PASS and record[moves - 2] == bd.PASS
        assert b.info[bd.NEMPTY] == int((b.stones == bd.EMPTY).sum())


def test_a_jigo_is_half_a_win_in_the_ownership_playouts():
    # Eight points each and no komi: every playout ends in a jigo, half a win for Black, as
    # the search's playouts count it.
    game = game_from_diagram("""
        . X O .
        X X O O
        . X O .
        X X O O
        """, komi=0)
    b = game.board
    owner_sum = np.zeros(b.stones.shape[0])
    policy = po.PolicyConfig().build()
    assert po.playout_ownership(b, 0.0, 50, policy, po.new_rng(4), bd.copy_board(b),
                                owner_sum) == 0.5
