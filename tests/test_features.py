"""nets.features against a slow plain-Python recomputation, and the 8 board symmetries."""
import math
import random
from collections import deque

import numpy as np
import pytest

from asciiboard import game_from_diagram
from engine import board as bd
from engine.game import Game
from nets import features as feat
from test_ladder import LADDER, with_stone


def random_game(size, moves, seed, pass_rate=0.03):
    """Return (Game, [(color, x, y) or (color, None, None) for a pass]) of random legal moves."""
    rng = random.Random(seed)
    game = Game(size)
    record = []
    for _ in range(moves):
        color = game.to_play
        legal = game.legal_moves(color)
        if not legal or rng.random() < pass_rate:
            game.play(color, bd.PASS)
            record.append((color, None, None))
            continue
        p = rng.choice(legal)
        game.play(color, p)
        record.append((color, *game.xy(p)))
    return game, record


def slow_planes(game, color, rank=9, edge=False):
    """Recompute every plane from the stones alone, with flood fills instead of chain data."""
    n = game.size
    grid = {(x, y): game.color_at(game.point(x, y)) for x in range(n) for y in range(n)}
    opp = 3 - color
    out = np.zeros((feat.num_planes(edge), n, n), np.float32)

    def neighbours(x, y):
        return [(a, b) for a, b in ((x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1))
                if 0 <= a < n and 0 <= b < n]

    def liberties(x, y):
        colour, seen, libs, todo = grid[x, y], {(x, y)}, set(), [(x, y)]
        while todo:
            for q in neighbours(*todo.pop()):
                if grid[q] == bd.EMPTY:
                    libs.add(q)
                elif grid[q] == colour and q not in seen:
                    seen.add(q)
                    todo.append(q)
        return len(libs)

    def distances(colour):
        dist = {q: 0 for q in grid if grid[q] == colour}
        queue = deque(dist)
        while queue:
            q = queue.popleft()
            for r in neighbours(*q):
                if grid[r] == bd.EMPTY and r not in dist:
                    dist[r] = dist[q] + 1
                    queue.append(r)
        return dist

    # When each stone now on the board was played: the last move that put a stone there. A
    # setup stone, never played, is older than any move: its history is 0.
    moves_played = len(game.moves)
    placed = {}
    for i, (c, p) in enumerate(game.moves):
        if p != bd.PASS:
            placed[game.xy(p)] = i
    ours, theirs = distances(color), distances(opp)
    centre = (n - 1) / 2
    ko = game.board.info[bd.KO_POINT]
    if ko >= 0 and game.board.info[bd.KO_COLOR] == color:
        kx, ky = game.xy(ko)
        out[6, ky, kx] = 1
    for (x, y), s in grid.items():
        if s == bd.EMPTY:
            out[9, y, x] = 1
            do, dt = ours.get((x, y), math.inf), theirs.get((x, y), math.inf)
            if do < dt:
                out[23, y, x] = 1
            elif dt < do:
                out[24, y, x] = 1
        else:
            mine = s == color
            libs = min(liberties(x, y), 3)
            out[(0 if mine else 3) + libs - 1, y, x] = 1
            out[7 if mine else 8, y, x] = 1
            age = moves_played - 1 - placed.get((x, y), -math.inf)
            out[10 if mine else 11, y, x] = np.float32(np.exp(-0.1 * age))
        out[21, y, x] = x in (0, n - 1) or y in (0, n - 1)
        out[22, y, x] = np.exp(-0.5 * ((x - centre) ** 2 + (y - centre) ** 2))
        if edge:
            out[25, y, x] = 1
    if rank >= 9:
        out[12:21] = 1
    elif rank >= 1:
        out[12 + rank - 1] = 1
    return out


@pytest.mark.parametrize("size,moves,seed", [(9, 60, 1), (9, 120, 2), (13, 150, 3),
                                             (19, 200, 4), (19, 320, 5)])
def test_planes_match_slow_recomputation(size, moves, seed):
    game, _ = random_game(size, moves, seed)
    for color in (bd.BLACK, bd.WHITE):
        fast = feat.extract([game.board], [color])[0]
        slow = slow_planes(game, color)
        for plane in range(feat.NUM_PLANES):
            np.testing.assert_allclose(fast[plane], slow[plane], rtol=1e-6, atol=1e-7,
                                       err_msg=f"plane {plane}")


def test_setup_stones_read_as_old_stones_in_the_history_planes():
    # Four handicap stones, then a white and a black move: only the moves have a history.
    game = Game(9)
    game.set_handicap([game.point(x, y) for x, y in ((2, 2), (6, 2), (2, 6), (6, 6))])
    before = feat.extract([game.board], [bd.WHITE])[0]
    assert before[feat.THEIRS].sum() == 4 and before[feat.THEIR_HISTORY].sum() == 0
    game.play(bd.WHITE, game.point(4, 4))
    game.play(bd.BLACK, game.point(4, 6))
    planes = feat.extract([game.board], [bd.WHITE])[0]
    assert planes[feat.THEIR_HISTORY].max() == 1 and planes[feat.THEIR_HISTORY, 6, 4] == 1
    assert planes[feat.THEIR_HISTORY].sum() == 1
    assert planes[feat.OUR_HISTORY, 4, 4] == pytest.approx(math.exp(-0.1))
    np.testing.assert_allclose(planes, slow_planes(game, bd.WHITE), atol=1e-7)


def test_planes_after_ko_capture_mark_the_ko_point():
    # A ko shape: black captures at (2, 1); white may not retake at (1, 1) at once.
    game = Game(5)
    for color, x, y in [(1, 1, 0), (2, 2, 0), (1, 0, 1), (2, 3, 1), (1, 1, 2), (2, 2, 2),
                        (1, 4, 4), (2, 1, 1), (1, 2, 1)]:
        game.play(color, game.point(x, y))
    planes = feat.extract([game.board])[0]
    assert game.to_play == bd.WHITE and planes[feat.KO].sum() == 1 and planes[feat.KO, 1, 1] == 1
    np.testing.assert_allclose(planes, slow_planes(game, bd.WHITE), atol=1e-7)


@pytest.mark.parametrize("rank", [0, 1, 5, 9])
def test_rank_and_edge_planes(rank):
    game, _ = random_game(9, 30, 7)
    planes = feat.extract([game.board], rank=rank, edge=True)[0]
    assert planes.shape == (26, 9, 9)
    np.testing.assert_array_equal(planes, slow_planes(game, game.to_play, rank, edge=True))


def test_batch_mixes_boards_and_colors():
    boards = [random_game(19, m, m)[0].board for m in (10, 51, 90)]
    colors = [bd.BLACK, bd.WHITE, bd.BLACK]
    batch = feat.extract(boards, colors)
    assert batch.shape == (3, 25, 19, 19) and batch.dtype == np.float32
    for i, b in enumerate(boards):
        np.testing.assert_array_equal(batch[i], feat.extract([b], [colors[i]])[0])


def test_legal_mask_agrees_with_is_legal():
    game, _ = random_game(9, 70, 8)
    mask = feat.legal_masks([game.board])[0]
    for y in range(9):
        for x in range(9):
            assert mask[y * 9 + x] == bd.is_legal(game.board, game.point(x, y), game.to_play)


def test_index_point_roundtrip():
    idx = np.arange(361)
    p = feat.index_to_point(idx, 19)
    game = Game(19)
    assert [game.xy(int(q)) for q in p[:3]] == [(0, 0), (1, 0), (2, 0)]
    np.testing.assert_array_equal(feat.point_to_index(p, 19), idx)


@pytest.mark.parametrize("k", range(8))
def test_symmetry_index_matches_plane_transform(k):
    n = 7
    for idx in (0, 3, 10, 48):
        onehot = np.zeros(n * n, np.float32)
        onehot[idx] = 1
        moved = feat.transform_planes(onehot.reshape(n, n), k).reshape(-1)
        assert int(np.argmax(moved)) == int(feat.transform_index(idx, k, n))
        back = feat.transform_index(feat.transform_index(idx, k, n), feat.inverse_symmetry(k), n)
        assert int(back) == idx
    assert int(feat.transform_index(-1, k, n)) == -1


def test_eight_symmetric_games_give_the_eight_transformed_stacks():
    size = 9
    game, record = random_game(size, 70, 11)
    planes = feat.extract([game.board])[0]
    stacks = set()
    for k in range(8):
        other = Game(size)
        for color, x, y in record:
            if x is None:
                other.play(color, bd.PASS)
            else:
                other.play(color, other.point(*feat.transform_xy(x, y, k, size)))
        got = feat.extract([other.board])[0]
        np.testing.assert_array_equal(got, feat.transform_planes(planes, k), err_msg=f"sym {k}")
        stacks.add(got.tobytes())
    assert len(stacks) == 8  # a random position has no symmetry of its own


def test_ladder_planes_mark_the_working_atari_and_the_futile_escape():
    game = game_from_diagram(LADDER)
    e4 = vertex_index(game, "E4")
    planes = feat.extract([game.board], [bd.BLACK], ladder=True)[0]
    assert planes.shape == (feat.num_planes(ladder=True), 9, 9) == (27, 9, 9)
    np.testing.assert_array_equal(planes[:25], feat.extract([game.board], [bd.BLACK])[0])
    assert planes[25].sum() == 0
    assert planes[26].sum() == 1 and planes[26].flat[e4] == 1
    # White to move with D3 open: its atari at D3 starts the ladder, E4's does not.
    opened = game_from_diagram(with_stone(LADDER, "D3", "."))
    planes = feat.extract([opened.board], [bd.WHITE], ladder=True)[0]
    assert planes[25].sum() == 1 and planes[25].flat[vertex_index(opened, "D3")] == 1
    assert planes[26].sum() == 0
    # A breaker on the ladder's path empties both planes.
    broken = game_from_diagram(with_stone(LADDER, "F2", "X"))
    assert feat.extract([broken.board], [bd.BLACK], ladder=True)[0][25:].sum() == 0


def vertex_index(game, vertex):
    """Return the move index y * N + x of a vertex."""
    return int(feat.point_to_index(game.parse_vertex(vertex), game.board.info[bd.SIZE]))


def test_the_ladder_key_is_in_the_feature_spec_only_with_the_planes():
    assert "ladder" not in feat.feature_spec(9, False)
    assert feat.feature_spec(9, False, ladder=True) == {
        "version": feat.FEATURES_VERSION, "planes": 27, "rank": 9, "edge": False,
        "ladder": True}
