"""Randomized consistency: the numba board against a slow, obvious reference, move by move.

Seeded random games try points anywhere (empty, occupied, walls, far off the board), passes and
now and then a setup stone. For every try, `is_legal` must agree with `play` on a copy and with
the reference (same status code, same resulting position, same hash as `hash_after`); after
every move the incremental bookkeeping (chains, sizes, liberty bit sets and counts, the empties
list, the Zobrist hash, the info slots) must agree with a flood-fill recomputation.
"""
import copy
import random
from collections import Counter

import numpy as np
import pytest

from engine import board as bd
from engine.game import Game, IllegalMove

EMPTY, BLACK, WHITE = bd.EMPTY, bd.BLACK, bd.WHITE
REASONS = {bd.OCCUPIED: "occupied point", bd.SUICIDE: "suicide", bd.KO: "ko",
           bd.OFF_BOARD: "off board"}


# The reference: a plain 2D list, rules done the obvious way --------------------------------

def neighbours(size, x, y):
    """Yield the on-board neighbours of (x, y)."""
    for nx, ny in ((x, y - 1), (x - 1, y), (x + 1, y), (x, y + 1)):
        if 0 <= nx < size and 0 <= ny < size:
            yield nx, ny


def flood(grid, x, y):
    """Return (stones, liberties) of the chain at (x, y) as sets of (x, y), by flood fill."""
    size, color = len(grid), grid[y][x]
    stones, liberties, todo = {(x, y)}, set(), [(x, y)]
    while todo:
        cx, cy = todo.pop()
        for nx, ny in neighbours(size, cx, cy):
            if grid[ny][nx] == EMPTY:
                liberties.add((nx, ny))
            elif grid[ny][nx] == color and (nx, ny) not in stones:
                stones.add((nx, ny))
                todo.append((nx, ny))
    return stones, liberties


def chains(grid):
    """Return every chain of the grid as (color, stones, liberties)."""
    seen, found = set(), []
    for y, row in enumerate(grid):
        for x, color in enumerate(row):
            if color != EMPTY and (x, y) not in seen:
                stones, liberties = flood(grid, x, y)
                seen |= stones
                found.append((color, stones, liberties))
    return found


class Reference:
    """A Go position on a 2D list (grid[y][x]); simple ko as 'no move may recreate the position
    before the opponent's last move'."""

    def __init__(self, size):
        self.size = size
        self.grid = [[EMPTY] * size for _ in range(size)]
        self.ko_grid, self.ko_color = None, None
        self.prisoners = {BLACK: 0, WHITE: 0}
        self.move_number = self.passes = 0
        self.last = self.last2 = bd.PASS
        self.to_play = BLACK

    def result(self, xy, color, setup=False):
        """Return (status, grid after, stones captured) of color playing at xy (None: off board)."""
        if xy is None:
            return bd.OFF_BOARD, None, 0
        x, y = xy
        if self.grid[y][x] != EMPTY:
            return bd.OCCUPIED, None, 0
        grid = [row[:] for row in self.grid]
        grid[y][x] = color
        captured = 0
        for nx, ny in neighbours(self.size, x, y):
            if grid[ny][nx] == 3 - color:
                stones, liberties = flood(grid, nx, ny)
                if not liberties:
                    for sx, sy in stones:
                        grid[sy][sx] = EMPTY
                    captured += len(stones)
        if not flood(grid, x, y)[1]:
            return bd.SUICIDE, None, 0
        if not setup and color == self.ko_color and grid == self.ko_grid:
            return bd.KO, None, 0
        return bd.OK, grid, captured

    def play(self, xy, p, color, grid, captured):
        """Make the move whose result() was OK (xy None for a pass)."""
        self.last2, self.last = self.last, p
        self.move_number += 1
        self.to_play = 3 - color
        if xy is None:
            self.passes += 1
            self.ko_grid = None
            return
        self.passes = 0
        self.ko_grid, self.ko_color = self.grid, 3 - color
        self.place(xy, color, grid, captured)

    def setup(self, xy, color, grid, captured):
        """Put a setup stone whose result(setup=True) was OK."""
        self.ko_grid = None
        self.place(xy, color, grid, captured)

    def place(self, xy, color, grid, captured):
        self.grid = grid
        self.prisoners[color] += captured


# Driving the engine and the reference side by side ----------------------------------------

def set_bits(words):
    """Return the indices of the set bits of a uint64 array (bit i of word w is w * 64 + i)."""
    little = words.astype("<u8").view(np.uint8)
    return {int(i) for i in np.flatnonzero(np.unpackbits(little, bitorder="little"))}


class Pair:
    """An engine board and a reference that should always hold the same position."""

    def __init__(self, size, rng, stats):
        self.size, self.rng, self.stats = size, rng, stats
        self.board = bd.new_board(size)
        self.scratch = bd.new_board(size)
        self.ref = Reference(size)
        self.width = size + 2
        self.placed_at = {}

    def xy(self, p):
        """Return (x, y) of a flat index, or None if it is off the board."""
        if not 0 <= p < self.width * self.width:
            return None
        x, y = p % self.width - 1, p // self.width - 1
        return (x, y) if 0 <= x < self.size and 0 <= y < self.size else None

    def point(self, x, y):
        return (y + 1) * self.width + x + 1

    def random_point(self):
        """Return a random point to try: mostly empty points, also anything else and passes."""
        r = self.rng.random()
        npoints = self.width * self.width
        if r < 0.03:
            return bd.PASS
        if r < 0.05:
            return self.rng.choice([self.rng.randrange(-1000, -1), self.rng.randrange(npoints, 2000)])
        if r < 0.12 and self.board.info[bd.KO_POINT] != -1:
            return int(self.board.info[bd.KO_POINT])   # banned for one colour, fine for the other
        if r < 0.30:
            return self.rng.randrange(npoints)
        empties = [(x, y) for y in range(self.size) for x in range(self.size)
                   if self.ref.grid[y][x] == EMPTY]
        if not empties:
            return bd.PASS
        return self.point(*self.rng.choice(empties))

    def try_move(self, p, color):
        """Check is_legal, play on a copy and the reference against each other; return status."""
        b = self.board
        legal = bool(bd.is_legal(b, p, color))
        bd.copy_into(self.scratch, b)
        status = int(bd.play(self.scratch, p, color))
        assert legal == (status == bd.OK), (p, color, status)
        xy = self.xy(p)
        if p == bd.PASS:
            assert status == bd.OK
            assert bd.hash_after(b, p, color) == b.info[bd.HASH]
            return status
        ref_status, grid, captured = self.ref.result(xy, color)
        assert status == ref_status, (xy, color, status, ref_status)
        self.stats[status] += 1
        if status != bd.OK:
            for mine, copy in zip(b[:-1], self.scratch[:-1]):
                assert np.array_equal(mine, copy), "a refused play changed the board"
            return status
        assert self.stones_grid(self.scratch) == grid, (xy, color)
        assert bd.hash_after(b, p, color) == self.scratch.info[bd.HASH]
        return status

    def move(self, color):
        """Try random points until one is legal (or give up with a pass); play it on both."""
        for _ in range(50):
            p = self.random_point()
            if self.try_move(p, color) == bd.OK:
                break
        else:
            p = bd.PASS
        xy = self.xy(p) if p != bd.PASS else None
        status, grid, captured = (bd.OK, None, 0) if xy is None else self.ref.result(xy, color)
        if captured > 1:
            self.stats["multi-stone capture"] += 1
        if xy is not None and self.captured_chains(xy, color) > 1:
            self.stats["several chains at once"] += 1
        assert bd.play(self.board, p, color) == bd.OK
        self.ref.play(xy, p, color, grid, captured)
        if xy is not None:
            self.placed_at[xy] = self.ref.move_number - 1
        self.check()

    def setup_stone(self):
        """Try a setup stone at a random point; check place_stone against the reference."""
        color = self.rng.choice((BLACK, WHITE))
        p = self.random_point()
        xy = self.xy(p) if p != bd.PASS else None
        status = int(bd.place_stone(self.board, p, color))
        ref_status, grid, captured = self.ref.result(xy, color, setup=True)
        assert status == ref_status, (xy, color, status, ref_status)
        self.stats["setup"] += 1
        if status == bd.OK:
            self.ref.setup(xy, color, grid, captured)
            self.placed_at[xy] = bd.SETUP_PLACED_AT     # older than any move
        self.check()

    def captured_chains(self, xy, color):
        """Return how many enemy chains the move at xy would capture."""
        grid = [row[:] for row in self.ref.grid]
        grid[xy[1]][xy[0]] = color
        heads = set()
        for nx, ny in neighbours(self.size, *xy):
            if grid[ny][nx] == 3 - color:
                stones, liberties = flood(grid, nx, ny)
                if not liberties:
                    heads.add(min(stones))
        return len(heads)

    def stones_grid(self, b):
        """Return the engine's position as a 2D list like the reference's."""
        return [[int(b.stones[self.point(x, y)]) for x in range(self.size)]
                for y in range(self.size)]

    def check(self):
        """Assert that the engine's bookkeeping agrees with a recomputation from the reference."""
        b, ref, w = self.board, self.ref, self.width
        assert self.stones_grid(b) == ref.grid
        on_board = {self.point(x, y) for y in range(self.size) for x in range(self.size)}
        for p in range(w * w):
            if p not in on_board:
                assert b.stones[p] == bd.WALL and b.chain[p] == -1 and b.empty_index[p] == -1
        # Chains: one head each, a circular list through exactly its stones, size and liberties.
        in_chain = set()
        for color, stones, liberties in chains(ref.grid):
            points = {self.point(x, y) for x, y in stones}
            in_chain |= points
            heads = {int(b.chain[p]) for p in points}
            assert len(heads) == 1, "one chain, several heads"
            head = heads.pop()
            assert head in points
            walk, s = [], head
            while True:
                walk.append(s)
                s = int(b.chain_next[s])
                if s == head or len(walk) > len(points):
                    break
            assert sorted(walk) == sorted(points), "chain_next does not cycle through the chain"
            assert b.chain_size[head] == len(points)
            lib_points = {self.point(x, y) for x, y in liberties}
            assert set_bits(b.libs[head]) == lib_points, "liberty bit set"
            assert b.nlibs[head] == len(lib_points) > 0
        for p in on_board - in_chain:
            assert b.chain[p] == -1 and b.chain_next[p] == -1
        # Empties: exactly the empty points, each at its index.
        n = int(b.info[bd.NEMPTY])
        empties = [int(p) for p in b.empties[:n]]
        assert sorted(empties) == sorted(on_board - in_chain)
        for i, p in enumerate(empties):
            assert b.empty_index[p] == i
        for p in in_chain:
            assert b.empty_index[p] == -1
        # Incremental 3x3 codes (2 bits per neighbour, first neighbour highest), where present.
        if hasattr(b, "nbr_code"):
            points = np.array(sorted(on_board))
            code = np.zeros(len(points), np.int64)
            for k, d in enumerate((-w - 1, -w, -w + 1, -1, 1, w - 1, w, w + 1)):
                code |= b.stones[points + d].astype(np.int64) << (2 * (7 - k))
            assert np.array_equal(b.nbr_code[points], code), "3x3 codes"
        # Zobrist hash from scratch, placement times and the scalar slots.
        h = 0
        for p in in_chain:
            h ^= int(b.zobrist[b.stones[p], p])
        assert b.info[bd.HASH] == h
        for xy, moment in self.placed_at.items():
            if ref.grid[xy[1]][xy[0]] != EMPTY:
                assert b.placed_at[self.point(*xy)] == moment
        assert b.info[bd.SIZE] == self.size and b.info[bd.WIDTH] == w
        assert b.info[bd.MOVE_NUMBER] == ref.move_number
        assert b.info[bd.PASSES] == ref.passes
        assert b.info[bd.LAST_MOVE] == ref.last and b.info[bd.LAST_MOVE2] == ref.last2
        assert b.info[bd.TO_PLAY] == ref.to_play
        assert b.info[bd.CAPTURED_BY_BLACK] == ref.prisoners[BLACK]
        assert b.info[bd.CAPTURED_BY_WHITE] == ref.prisoners[WHITE]

    def sweep(self):
        """Check is_legal for every point and both colours against the reference."""
        for y in range(self.size):
            for x in range(self.size):
                for color in (BLACK, WHITE):
                    status = self.ref.result((x, y), color)[0]
                    self.stats["sweep ko"] += status == bd.KO
                    assert bool(bd.is_legal(self.board, self.point(x, y), color)) == (
                        status == bd.OK), ((x, y), color, status)


def random_games(size, moves, seed, sweep_every):
    """Play `moves` random moves (several games) with every check; return the statistics."""
    rng = random.Random(seed)
    stats = Counter()
    pair = None
    for i in range(moves):
        if pair is None or pair.ref.passes >= 2 or pair.ref.move_number >= 3 * size * size:
            pair = Pair(size, rng, stats)
            stats["games"] += 1
        if rng.random() < 0.02:
            pair.setup_stone()
            continue
        color = pair.ref.to_play if rng.random() < 0.95 else rng.choice((BLACK, WHITE))
        pair.move(color)
        if i % sweep_every == 0:
            pair.sweep()
    return stats


@pytest.mark.parametrize("size,moves,seed,sweep_every", [
    (2, 400, 1, 1),
    (5, 1500, 2, 1),
    (9, 2500, 3, 5),
    (19, 1200, 4, 40),
    (25, 250, 5, 100),
])
def test_board_agrees_with_reference(size, moves, seed, sweep_every):
    stats = random_games(size, moves, seed, sweep_every)
    # The run must have reached the rules it is meant to check.
    assert stats[bd.OK] and stats[bd.OCCUPIED] and stats[bd.OFF_BOARD] and stats["setup"]
    if size <= 9:
        assert stats[bd.SUICIDE] and stats["multi-stone capture"]
    if 5 <= size <= 9:                   # a 2x2 board has no ko shape
        assert stats[bd.KO] and stats["sweep ko"]
    if size == 9:
        assert stats["several chains at once"]


# Game level: positional superko and undo against the reference's history ------------------

def position_key(grid):
    return tuple(tuple(row) for row in grid)


@pytest.mark.parametrize("size,moves,seed", [(3, 2000, 11), (4, 1500, 12), (7, 1500, 13)])
def test_game_superko_and_undo_agree_with_reference(size, moves, seed):
    rng = random.Random(seed)
    stats = Counter()
    game = Game(size)
    pair = Pair(size, rng, stats)
    history = [position_key(pair.ref.grid)]   # positions after the start and every move
    saved = []                                # (arrays, reference state) before each move
    for _ in range(moves):
        if game.moves and rng.random() < 0.15:
            arrays, ref_state, length = saved.pop()
            game.undo()
            pair.ref = ref_state
            del history[length:]
            assert all(np.array_equal(a, b) for a, b in zip(arrays, game.board[:-1]))
            assert game.to_play == pair.ref.to_play
            stats["undo"] += 1
            continue
        color = game.to_play
        p = pair.random_point()
        xy = pair.xy(p) if p != bd.PASS else None
        if p == bd.PASS:
            status, grid, captured = bd.OK, pair.ref.grid, 0
        else:
            status, grid, captured = pair.ref.result(xy, color)
        repeats = p != bd.PASS and status == bd.OK and position_key(grid) in set(history)
        assert game.is_legal(p, color, superko=False) == (status == bd.OK)
        assert game.is_legal(p, color) == (status == bd.OK and not repeats)
        if status == bd.OK and p != bd.PASS:
            assert (p in game.legal_moves(color)) == (not repeats)
        if status != bd.OK:
            with pytest.raises(IllegalMove, match=f"^{REASONS[status]}$"):
                game.play(color, p)
            continue
        if repeats:
            stats["superko"] += 1
            with pytest.raises(IllegalMove, match="^positional superko$"):
                game.play(color, p)
            if rng.random() < 0.5:
                continue
        saved.append(([a.copy() for a in game.board[:-1]], copy.deepcopy(pair.ref), len(history)))
        assert game.play(color, p, superko=not repeats) is repeats
        stats["moves"] += 1
        pair.ref.play(xy, p, color, grid, captured)
        history.append(position_key(pair.ref.grid))
        pair.board = game.board
        assert pair.stones_grid(game.board) == pair.ref.grid
        assert game.board.info[bd.HASH] == game._hashes[-1]
    assert stats["undo"] and stats["moves"]
    if size == 3:                         # repetitions beyond simple ko need a tiny board
        assert stats["superko"]
