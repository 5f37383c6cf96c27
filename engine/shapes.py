"""Move shapes learnt from 9-dan games: a fast move prior for the search without the network.

In the manner of Pachi's pattern model (itself after Coulom's "Computing Elo ratings of move
patterns"), every candidate move has a few features, each with a learnt weight, and a move's
probability is the softmax of its summed weights over the candidates. The features are:

- tactics: the size of a capture, escaping an atari (and whether the chain then lives past a
  ladder), giving an atari (and whether it starts a working ladder), the liberties the stone
  will have, a self-atari of more than one stone;
- distance to the last and second-last move, in Pachi's gridcular metric dx + dy + max(dx, dy);
- the line (1 to 5+), and whether no stone lies within distance 2;
- spatial patterns: the 3x3 square with the liberty counts (1, 2, 3+) of its stones, and the
  colours of nested gridcular neighbourhoods of radius 3 to MAX_RADIUS (up to 70 points), for
  each one that was seen often enough in the training games.

Colours are relative to the player (own, opponent), so one weight serves both. A pattern is
hashed Zobrist-style over its points; training ties the 8 rotations and reflections of a pattern
together (the smallest of their 8 hashes), and the loaded model's table holds all 8 hashes of
every pattern, so the search hashes each neighbourhood once, in the board's own orientation.

nets/train_shapes.py learns the weights; the file format is in load_model.
"""
import functools
import os
from collections import namedtuple

import numpy as np
from numba import njit

from engine import board as bd
from engine import playout as po
from engine.ladder import atari_starts_ladder

# The shipped model, used by the search without the network.
DEFAULT_SHAPES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                              "weights", "shapes.npz")
MAX_RADIUS = 10
# Fixed features, then one per learnt pattern.
F_CAPTURE_ONE, F_CAPTURE_FEW, F_CAPTURE_MANY = 0, 1, 2       # 1, 2-5, 6+ stones
F_ESCAPE, F_ESCAPE_FAILS = 3, 4
F_BAD_SELFATARI = 5
F_LIBERTIES = 6            # 6, 7, 8: one, two, three liberties after the move (4+: none)
F_ATARI_LADDER, F_ATARI = 9, 10
DISTANCE_BUCKETS = 16      # gridcular distance 2 .. 16, and 17 or more
F_DISTANCE = 11            # to the last move
F_DISTANCE2 = F_DISTANCE + DISTANCE_BUCKETS        # to the second-last move
F_LINE = F_DISTANCE2 + DISTANCE_BUCKETS            # (line 1..5+) x (stones near or not)
N_FIXED = F_LINE + 10
MAX_FEATURES = 32          # fixed (at most 7) and spatial (1 + radii) features of one move

# Point states of the spatial patterns, relative to the player.
S_EMPTY, S_OFF, S_OWN, S_THEIRS = 0, 1, 2, 3
# The 3x3 pattern's states: empty, off the board, own stone with 1/2/3+ liberties, opponent's.
LIBERTY_STATES = 8


def gridcular(dx, dy):
    """Return Pachi's gridcular distance between two points dx, dy apart."""
    ax, ay = abs(dx), abs(dy)
    return ax + ay + max(ax, ay)


def _pattern_points():
    points = [(dx, dy) for dx in range(-MAX_RADIUS, MAX_RADIUS + 1)
              for dy in range(-MAX_RADIUS, MAX_RADIUS + 1)
              if (dx, dy) != (0, 0) and gridcular(dx, dy) <= MAX_RADIUS]
    return sorted(points, key=lambda d: (gridcular(*d), d))


POINTS = _pattern_points()
# Radii of the colour patterns and how many POINTS each covers. The first 8 points (radius 3)
# are the 3x3 square.
RADII = list(range(3, MAX_RADIUS + 1))
RING_ENDS = np.array([sum(1 for d in POINTS if gridcular(*d) <= r) for r in RADII], np.int32)
assert RING_ENDS[0] == 8    # pattern_score reads the square before the rings
N_HASHES = 1 + len(RADII)        # the 3x3 liberty pattern, then one per radius


def _symmetry_permutations():
    """Return int32[8, len(POINTS)]: row s maps point k to the point that symmetry s sends
    it to, so that a pattern read as states[k] reads as states[perm[s, k]] turned by s.
    Row 0 is the identity."""
    index = {d: k for k, d in enumerate(POINTS)}
    transforms = [lambda x, y: (x, y), lambda x, y: (-x, y), lambda x, y: (x, -y),
                  lambda x, y: (-x, -y), lambda x, y: (y, x), lambda x, y: (-y, x),
                  lambda x, y: (y, -x), lambda x, y: (-y, -x)]
    return np.array([[index[t(*d)] for d in POINTS] for t in transforms], np.int32)


PERMUTATIONS = _symmetry_permutations()
DX = np.array([d[0] for d in POINTS], np.int32)
DY = np.array([d[1] for d in POINTS], np.int32)

# keys: open-addressing table of pattern hashes (0 = free slot, hashes are odd), values: each
# slot's weight. fixed: the fixed features' weights. zobrist [points, 4] and zobrist_3x3 [8,
# LIBERTY_STATES] key the states; salts [N_HASHES] the pattern kinds.
ShapeModel = namedtuple("ShapeModel", ["fixed", "keys", "values", "zobrist", "zobrist_3x3",
                                       "salts", "dx", "dy", "ring_ends"])


def new_zobrist(seed=20261125):
    """Return (zobrist, zobrist_3x3, salts): the random keys a model's hashes are made of."""
    rng = np.random.default_rng(seed)
    draw = lambda *shape: rng.integers(1, 1 << 63, size=shape, dtype=np.int64).astype(np.uint64)
    return draw(len(POINTS), 4), draw(8, LIBERTY_STATES), draw(N_HASHES)


@njit(**bd.NO_ALLOC)
def read_states(b, p, color, dx, dy, states, states_3x3):
    """Read the neighbourhood of p for color into states (S_*, one per POINTS entry) and the
    3x3 square with liberty counts into states_3x3."""
    size = b.info[bd.SIZE]
    w = b.info[bd.WIDTH]
    x = p % w
    y = p // w
    for k in range(dx.shape[0]):
        xx = x + dx[k]
        yy = y + dy[k]
        if xx < 1 or xx > size or yy < 1 or yy > size:
            states[k] = S_OFF
            continue
        s = b.stones[yy * w + xx]
        states[k] = S_EMPTY if s == bd.EMPTY else (S_OWN if s == color else S_THEIRS)
    for k in range(8):
        s = states[k]
        if s == S_OWN or s == S_THEIRS:
            libs = min(b.nlibs[b.chain[p + dy[k] * w + dx[k]]], 3)
            states_3x3[k] = (1 if s == S_OWN else 4) + libs
        else:
            states_3x3[k] = s


@njit(**bd.NO_ALLOC)
def pattern_hashes(states, states_3x3, perm, zobrist, zobrist_3x3, salts, ring_ends, out):
    """Write the N_HASHES hashes of a neighbourhood read by read_states, turned by the
    symmetry whose permutation is perm, into out: the 3x3 liberty pattern, then the colour
    pattern of each radius. Hashes are odd (0 marks a free table slot)."""
    h = salts[0]
    for k in range(8):
        h ^= zobrist_3x3[k, states_3x3[perm[k]]]
    out[0] = h | np.uint64(1)
    h = np.uint64(0)
    k = 0
    for r in range(ring_ends.shape[0]):
        while k < ring_ends[r]:
            h ^= zobrist[k, states[perm[k]]]
            k += 1
        out[1 + r] = (h ^ salts[1 + r]) | np.uint64(1)


@njit(**bd.NO_ALLOC)
def nothing_near(b, p, x, y):
    """Return True when no stone lies within Manhattan distance 2 of p (at column x, row y
    counted from 1)."""
    w = b.info[bd.WIDTH]
    size = b.info[bd.SIZE]
    for dy in range(-2, 3):
        for dx in range(abs(dy) - 2, 3 - abs(dy)):
            if 1 <= x + dx <= size and 1 <= y + dy <= size:
                s = b.stones[p + dy * w + dx]
                if s == bd.BLACK or s == bd.WHITE:
                    return False
    return True


@njit(**bd.NO_ALLOC)
def _distance_feature(b, p, other, first):
    w = b.info[bd.WIDTH]
    d = gridcular_jit(p % w - other % w, p // w - other // w)
    return first + min(max(d, 2), DISTANCE_BUCKETS + 1) - 2   # 0: p is a recaptured point


@njit(**bd.NO_ALLOC_INLINE)
def gridcular_jit(dx, dy):
    """gridcular, compiled."""
    ax = abs(dx)
    ay = abs(dy)
    return ax + ay + max(ax, ay)


@njit(**bd.NO_ALLOC)
def fixed_features(b, p, color, out, words, ladder):
    """Write the fixed features of color playing p into out; return how many."""
    n = 0
    w = b.info[bd.WIDTH]
    opponent = 3 - color
    captured = 0
    h0 = -1
    h1 = -1
    h2 = -1
    for d in (-w, -1, 1, w):
        q = p + d
        if b.stones[q] == opponent and b.nlibs[b.chain[q]] == 1:
            head = b.chain[q]
            if head != h0 and head != h1 and head != h2:
                captured += b.chain_size[head]
                if h0 < 0:
                    h0 = head
                elif h1 < 0:
                    h1 = head
                else:
                    h2 = head
    if captured > 0:
        out[n] = F_CAPTURE_ONE if captured == 1 else (F_CAPTURE_FEW if captured < 6
                                                      else F_CAPTURE_MANY)
        n += 1
    else:
        for d in (-w, -1, 1, w):
            q = p + d
            if b.stones[q] == color and b.nlibs[b.chain[q]] == 1:
                out[n] = F_ESCAPE if po.escapes_atari(b, p, color, b.chain[q], words,
                                                      ladder) else F_ESCAPE_FAILS
                n += 1
                break
        for d in (-w, -1, 1, w):
            q = p + d
            if b.stones[q] == opponent and b.nlibs[b.chain[q]] == 2:
                out[n] = F_ATARI_LADDER if atari_starts_ladder(b, p, q, ladder) else F_ATARI
                n += 1
                break
        libs = po.liberties_after(b, p, color, words)
        if libs <= 3:
            out[n] = F_LIBERTIES + max(libs, 1) - 1
            n += 1
            if libs <= 1 and po.stones_after(b, p, color) > 1:
                out[n] = F_BAD_SELFATARI
                n += 1
    last = b.info[bd.LAST_MOVE]
    if last >= 0:
        out[n] = _distance_feature(b, p, last, F_DISTANCE)
        n += 1
    last2 = b.info[bd.LAST_MOVE2]
    if last2 >= 0:
        out[n] = _distance_feature(b, p, last2, F_DISTANCE2)
        n += 1
    size = b.info[bd.SIZE]
    x = p % w
    y = p // w
    line = min(min(x, y), min(size + 1 - x, size + 1 - y), 5)
    out[n] = F_LINE + 2 * (line - 1) + (1 if nothing_near(b, p, x, y) else 0)
    return n + 1


@njit(**bd.NO_ALLOC_INLINE)
def table_slot(keys, h):
    """Return the slot of hash h in an open-addressing table of keys, or -1."""
    mask = keys.shape[0] - 1
    i = np.int64(h & np.uint64(mask))
    while keys[i] != 0:
        if keys[i] == h:
            return i
        i = (i + 1) & mask
    return -1


@njit(**bd.NO_ALLOC_INLINE)
def _colour_state(b, x, y, color):
    """Return the S_* state of point (x, y) for color."""
    size = b.info[bd.SIZE]
    if x < 1 or x > size or y < 1 or y > size:
        return S_OFF
    s = b.stones[y * b.info[bd.WIDTH] + x]
    return S_EMPTY if s == bd.EMPTY else (S_OWN if s == color else S_THEIRS)


@njit(**bd.NO_ALLOC)
def pattern_score(b, p, color, model):
    """Return the summed weights of the spatial patterns around p for color that the model
    knows: the hashes of read_states and pattern_hashes (identity symmetry), with the board
    read one ring at a time. A colour pattern is kept only when seen often enough, so a
    pattern of a larger radius is never kept without every smaller one around the same
    point: the first radius missing from the table ends the reading."""
    w = b.info[bd.WIDTH]
    x = p % w
    y = p // w
    dx = model.dx
    dy = model.dy
    h3 = model.salts[0]
    h = np.uint64(0)
    for k in range(8):
        s = _colour_state(b, x + dx[k], y + dy[k], color)
        h ^= model.zobrist[k, s]
        if s == S_OWN or s == S_THEIRS:
            libs = min(b.nlibs[b.chain[p + dy[k] * w + dx[k]]], 3)
            h3 ^= model.zobrist_3x3[k, (1 if s == S_OWN else 4) + libs]
        else:
            h3 ^= model.zobrist_3x3[k, s]
    score = 0.0
    slot = table_slot(model.keys, h3 | np.uint64(1))
    if slot >= 0:
        score += model.values[slot]
    k = 8
    for r in range(model.ring_ends.shape[0]):
        while k < model.ring_ends[r]:
            h ^= model.zobrist[k, _colour_state(b, x + dx[k], y + dy[k], color)]
            k += 1
        slot = table_slot(model.keys, (h ^ model.salts[1 + r]) | np.uint64(1))
        if slot < 0:
            break
        score += model.values[slot]
    return score


@njit(cache=True, nogil=True)
def rate_moves(b, color, moves, n, model, out, words, ladder):
    """Write the model's probability of each of the n candidate moves (points) into
    out[point]; words and ladder are the playouts' scratch."""
    ids = np.empty(MAX_FEATURES, np.int32)
    scores = np.empty(n, np.float64)
    best = -1e300
    for i in range(n):
        p = moves[i]
        score = pattern_score(b, p, color, model)
        for k in range(fixed_features(b, p, color, ids, words, ladder)):
            score += model.fixed[ids[k]]
        scores[i] = score
        best = max(best, score)
    total = 0.0
    for i in range(n):
        scores[i] = np.exp(scores[i] - best)
        total += scores[i]
    for i in range(n):
        out[moves[i]] = scores[i] / total


@njit(cache=True)
def _fill_table(keys, values, hashes, weights):
    """Insert every hash with its weight into the open-addressing table (keys, values)."""
    mask = keys.shape[0] - 1
    for j in range(hashes.shape[0]):
        h = hashes[j]
        i = np.int64(h & np.uint64(mask))
        while keys[i] != 0 and keys[i] != h:
            i = (i + 1) & mask
        keys[i] = h
        values[i] = weights[j]


@njit(cache=True)
def _variant_hashes(kinds, states, perms, zobrist, zobrist_3x3, salts, ring_ends, out):
    hashes = np.empty(N_HASHES, np.uint64)
    for i in range(kinds.shape[0]):
        for s in range(perms.shape[0]):
            pattern_hashes(states[i], states[i, :8], perms[s], zobrist, zobrist_3x3, salts,
                           ring_ends, hashes)
            out[i, s] = hashes[kinds[i]]


def variant_hashes(kinds, states, zobrist, zobrist_3x3, salts):
    """Return uint64[len(kinds), 8]: the hashes of each pattern (its kind: 0 the 3x3 liberty
    pattern, r >= 1 the colour pattern of RADII[r - 1]; its states as read_states writes them,
    the 3x3 ones in the first 8) under the 8 symmetries."""
    out = np.zeros((len(kinds), 8), np.uint64)
    _variant_hashes(np.asarray(kinds, np.int64), np.asarray(states, np.int8), PERMUTATIONS,
                    zobrist, zobrist_3x3, salts, RING_ENDS, out)
    return out


def build_model(fixed, kinds, states, weights, zobrist, zobrist_3x3, salts):
    """Return a ShapeModel: the fixed weights and every pattern's 8 hashes with its weight."""
    hashes = variant_hashes(kinds, states, zobrist, zobrist_3x3, salts)
    size = 1 << max(4, int(np.ceil(np.log2(2 * hashes.size + 1))))
    keys = np.zeros(size, np.uint64)
    values = np.zeros(size, np.float32)
    _fill_table(keys, values, hashes.ravel(), np.repeat(weights.astype(np.float32), 8))
    return ShapeModel(np.asarray(fixed, np.float32), keys, values, zobrist, zobrist_3x3, salts,
                      DX, DY, RING_ENDS)


def empty_model():
    """Return a model with no patterns and zero weights (every move alike)."""
    zobrist, zobrist_3x3, salts = new_zobrist()
    return ShapeModel(np.zeros(N_FIXED, np.float32), np.zeros(16, np.uint64),
                      np.zeros(16, np.float32), zobrist, zobrist_3x3, salts, DX, DY, RING_ENDS)


@functools.lru_cache(maxsize=4)
def cached_model(path):
    """Return load_model(path), read once per process."""
    return load_model(path)


FORMAT = "shapes-1"


def save_model(path, fixed, kinds, states, weights, zobrist, zobrist_3x3, salts, card):
    """Write a model file (numpy .npz, no pickles): format, the fixed and pattern weights,
    each pattern's kind and states, the Zobrist keys, and a card of training figures."""
    np.savez_compressed(path, format=np.array(FORMAT), max_radius=np.array(MAX_RADIUS),
                        fixed=np.asarray(fixed, np.float32), kinds=kinds.astype(np.int8),
                        states=states.astype(np.int8), weights=weights.astype(np.float32),
                        zobrist=zobrist, zobrist_3x3=zobrist_3x3, salts=salts,
                        card=np.array(card))


def load_model(path):
    """Read a model file written by save_model; raise ValueError for anything else (a file
    cut short or corrupted, fields of the wrong type, shape or range, weights not finite)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            fields = {k: data[k] for k in ("format", "max_radius", "fixed", "kinds", "states",
                                           "weights", "zobrist", "zobrist_3x3", "salts")}
        if (fields["format"].shape != () or str(fields["format"]) != FORMAT
                or fields["max_radius"].shape != () or int(fields["max_radius"]) != MAX_RADIUS):
            raise ValueError(f"not a {FORMAT} shape model of radius {MAX_RADIUS}")
        kinds, states = fields["kinds"].astype(np.int64), fields["states"].astype(np.int64)
        fixed, weights = fields["fixed"].astype(np.float32), fields["weights"].astype(np.float32)
        keys = [fields[k].astype(np.uint64) for k in ("zobrist", "zobrist_3x3", "salts")]
    except Exception as exc:  # noqa: BLE001 - numpy and zipfile raise many kinds for a bad file
        raise ValueError(f"{path}: not a readable shape model ({exc})") from None
    n = kinds.shape[0]
    # Columns past the 3x3 square hold colours (0-3) in every row: the colour hashes of
    # every row are computed from them.
    if (fixed.shape != (N_FIXED,) or kinds.shape != (n,)
            or states.shape != (n, len(POINTS)) or weights.shape != (n,)
            or keys[0].shape != (len(POINTS), 4) or keys[1].shape != (8, LIBERTY_STATES)
            or keys[2].shape != (N_HASHES,)
            or (n and (kinds.min() < 0 or kinds.max() >= N_HASHES or states.min() < 0
                       or states[:, :8].max() >= LIBERTY_STATES
                       or states[kinds > 0].max(initial=0) >= 4
                       or states[:, 8:].max(initial=0) >= 4))):
        raise ValueError(f"{path}: shape model arrays of the wrong shape or range")
    if not (np.isfinite(fixed).all() and np.isfinite(weights).all()):
        raise ValueError(f"{path}: shape model weights that are not finite numbers")
    return build_model(fixed, kinds, states.astype(np.int8), weights, *keys)
