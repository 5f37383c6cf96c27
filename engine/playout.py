"""Monte-Carlo playouts in numba: a seeded xorshift generator and the uniform random policy.

The uniform policy plays random legal moves that never fill the mover's own one-point eye;
a game ends after two passes or a move cap, and is scored by Tromp-Taylor area.
"""
import numpy as np
from numba import njit

from engine.board import (BLACK, EMPTY, NEMPTY, PASS, SIZE, TO_PLAY, WHITE, area_owner,
                          copy_into, is_legal, is_true_eye_like, play)


def new_rng(seed):
    """Return a one-word xorshift64* state seeded from any integer (0 is remapped)."""
    state = np.array([np.uint64((seed * 0x9E3779B97F4A7C15 + 1) % (1 << 64))], np.uint64)
    if state[0] == 0:
        state[0] = np.uint64(0x2545F4914F6CDD1D)
    return state


@njit(cache=True, nogil=True, inline="always")
def rand_u64(rng):
    """Advance the xorshift64* state and return 64 random bits."""
    x = rng[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    rng[0] = x
    return x * np.uint64(0x2545F4914F6CDD1D)


@njit(cache=True, nogil=True, inline="always")
def rand_below(rng, n):
    """Return a uniform random integer in [0, n)."""
    return np.int64((rand_u64(rng) >> np.uint64(33)) % np.uint64(n))


@njit(cache=True, nogil=True, inline="always")
def rand_float(rng):
    """Return a uniform random float in [0, 1)."""
    return np.float64(rand_u64(rng) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True, nogil=True)
def random_move(b, color, rng):
    """Return a uniformly random legal point for color that is not its own eye, or PASS."""
    n = b.info[NEMPTY]
    if n == 0:
        return PASS
    start = rand_below(rng, n)
    for i in range(n):
        p = b.empties[(start + i) % n]
        if is_true_eye_like(b, p, color):
            continue
        if is_legal(b, p, color):
            return p
    return PASS


@njit(cache=True, nogil=True)
def random_playout(b, rng, max_moves):
    """Play b out with the uniform policy (in place) until two passes in a row (passes before
    the playout do not count) or max_moves; return the number of moves played."""
    moves = 0
    passes = 0
    while passes < 2 and moves < max_moves:
        color = b.info[TO_PLAY]
        p = random_move(b, color, rng)
        play(b, p, color)
        passes = passes + 1 if p == PASS else 0
        moves += 1
    return moves


@njit(cache=True, nogil=True)
def playout_ownership(b, komi, runs, rng, scratch, owner_sum):
    """Run `runs` uniform playouts from b; add +1 (black) / -1 (white) per owned point to
    owner_sum and return the fraction of runs black won. b is left unchanged."""
    owner = np.empty(b.stones.shape[0], np.int8)
    size = b.info[SIZE]
    max_moves = 3 * size * size
    black_wins = 0
    for _ in range(runs):
        copy_into(scratch, b)
        random_playout(scratch, rng, max_moves)
        area_owner(scratch, owner)
        score = -komi
        for p in range(owner.shape[0]):
            if owner[p] == BLACK:
                owner_sum[p] += 1.0
                score += 1.0
            elif owner[p] == WHITE:
                owner_sum[p] -= 1.0
                score -= 1.0
        if score > 0:
            black_wins += 1
    return black_wins / max(runs, 1)
