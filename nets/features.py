"""darkforest input planes (numba) computed from engine.board arrays, and the 8 board symmetries.

Planes are seen from the side to move ("our" = the colour about to play). A stack is float32
[C, N, N] indexed [plane, y, x] with y = 0 the bottom row, as engine points; a move index is
y * N + x. Plane order (25 planes, darkforest's standard 21 + extended 4):

    0-2   our stones with 1, 2, >=3 liberties        3-5   their stones with 1, 2, >=3 liberties
    6     simple-ko point (illegal for us now)        7-9   our stones, their stones, empty
    10-11 our / their history exp(-0.1 t), t = moves since the stone was placed (0 = last move;
          0 for setup stones, which count as placed long ago)
    12-20 opponent rank: kyu all zero, k dan plane k-1 set, 9d / pro all nine set
    21    border (first line)                         22    position mask exp(-0.5 d^2), d = distance
                                                            from the centre in points
    23-24 our / their territory: empty points strictly closer to our / their stones, distance
          measured by BFS from the stones through empty points (the Manhattan distance unless
          stones are in the way)

With ``edge=True`` a 26th plane of ones is appended (Clark & Storkey's edge encoding: the
convolutions zero-pad, so the first layer sees where this plane stops). With ``ladder=True``
two more planes come last, AlphaGo's ladder planes as engine.ladder reads them: the points
where our atari catches a chain in a working ladder, and the liberties of our chains in atari
whose extension is caught in one (ladder_planes).
"""
import numpy as np
from numba import njit

from engine import board as bd
from engine import ladder as ld

NUM_PLANES = 25
RANK_PLANES = 9
LADDER_PLANES = 2
# At most this many points of each ladder plane (no position comes near it).
MAX_LADDER_POINTS = 64
FEATURES_VERSION = 1

OUR_LIBS, THEIR_LIBS, KO, OURS, THEIRS, EMPTY_PLANE, OUR_HISTORY, THEIR_HISTORY, RANK, BORDER, \
    POSITION, OUR_TERRITORY, THEIR_TERRITORY = 0, 3, 6, 7, 8, 9, 10, 11, 12, 21, 22, 23, 24

HISTORY_DECAY = 0.1


def num_planes(edge=False, ladder=False):
    """Return the number of planes a stack has with or without the edge-encoding plane and
    the ladder planes."""
    return NUM_PLANES + (1 if edge else 0) + (LADDER_PLANES if ladder else 0)


def feature_spec(rank=9, edge=False, ladder=False):
    """Return the dict that describes these features inside a weights file (the ladder key
    only where the planes are on, so that files written before them still match)."""
    spec = {"version": FEATURES_VERSION, "planes": num_planes(edge, ladder), "rank": int(rank),
            "edge": bool(edge)}
    if ladder:
        spec["ladder"] = True
    return spec


@njit(cache=True, nogil=True)
def _territory_distance(b, color, dist):
    """Fill dist[S] with the BFS distance from color's stones through empty points (large if none)."""
    w = b.info[bd.WIDTH]
    npoints = b.stones.shape[0]
    big = npoints + 1
    queue = np.empty(npoints, np.int32)
    head = 0
    tail = 0
    for p in range(npoints):
        if b.stones[p] == color:
            dist[p] = 0
            queue[tail] = p
            tail += 1
        else:
            dist[p] = big
    while head < tail:
        q = queue[head]
        head += 1
        for d in (-w, -1, 1, w):
            n = q + d
            if b.stones[n] == bd.EMPTY and dist[n] == big:
                dist[n] = dist[q] + 1
                queue[tail] = n
                tail += 1



@njit(cache=True, nogil=True)
def board_planes(b, color, rank, edge, out):
    """Write the planes of board b seen by color (BLACK or WHITE) into out[C, N, N]; return nothing."""
    size = b.info[bd.SIZE]
    w = b.info[bd.WIDTH]
    move = b.info[bd.MOVE_NUMBER]
    opp = 3 - color
    out[:] = 0.0
    ko = b.info[bd.KO_POINT]
    if ko >= 0 and b.info[bd.KO_COLOR] == color:
        out[KO, ko // w - 1, ko % w - 1] = 1.0
    dours = np.empty(b.stones.shape[0], np.int32)
    dtheirs = np.empty(b.stones.shape[0], np.int32)
    _territory_distance(b, color, dours)
    _territory_distance(b, opp, dtheirs)
    centre = (size - 1) / 2.0
    for y in range(size):
        for x in range(size):
            p = (y + 1) * w + x + 1
            s = b.stones[p]
            if s == bd.EMPTY:
                out[EMPTY_PLANE, y, x] = 1.0
                if dours[p] < dtheirs[p]:
                    out[OUR_TERRITORY, y, x] = 1.0
                elif dtheirs[p] < dours[p]:
                    out[THEIR_TERRITORY, y, x] = 1.0
            else:
                libs = b.nlibs[b.chain[p]]
                li = 2 if libs >= 3 else libs - 1
                age = move - 1 - b.placed_at[p]
                hist = np.exp(-HISTORY_DECAY * age)
                if s == color:
                    out[OUR_LIBS + li, y, x] = 1.0
                    out[OURS, y, x] = 1.0
                    out[OUR_HISTORY, y, x] = hist
                else:
                    out[THEIR_LIBS + li, y, x] = 1.0
                    out[THEIRS, y, x] = 1.0
                    out[THEIR_HISTORY, y, x] = hist
            if x == 0 or y == 0 or x == size - 1 or y == size - 1:
                out[BORDER, y, x] = 1.0
            d2 = (x - centre) ** 2 + (y - centre) ** 2
            out[POSITION, y, x] = np.exp(-0.5 * d2)
            if edge:
                out[NUM_PLANES, y, x] = 1.0
    if rank >= RANK_PLANES:
        out[RANK:RANK + RANK_PLANES] = 1.0
    elif rank >= 1:
        out[RANK + rank - 1] = 1.0


@njit(cache=True, nogil=True)
def ladder_planes(b, color, scratch, out):
    """Write the two ladder planes of board b seen by color into out[2, N, N]: 1 where our
    atari catches a chain in a working ladder, and 1 on the liberty of our chain in atari
    whose extension is caught (engine.ladder.ladder_moves); scratch is new_ladder_scratch's."""
    w = b.info[bd.WIDTH]
    sc, captures, escapes, libs = scratch
    ncap, nesc = ld.ladder_moves(b, color, sc, captures, escapes, libs)
    out[:] = 0.0
    for i in range(ncap):
        out[0, captures[i] // w - 1, captures[i] % w - 1] = 1.0
    for i in range(nesc):
        out[1, escapes[i] // w - 1, escapes[i] % w - 1] = 1.0


def extract(boards, colors=None, rank=9, edge=False, out=None, ladder=False):
    """Return float32 [B, C, N, N] planes for a list of same-size boards.

    colors: the side to move for each board (default: each board's info[TO_PLAY]).
    Raises ValueError for an empty list or mixed board sizes.
    """
    if not boards:
        raise ValueError("no boards")
    n = int(boards[0].info[bd.SIZE])
    if any(int(b.info[bd.SIZE]) != n for b in boards):
        raise ValueError("boards of different sizes")
    c = num_planes(edge, ladder)
    if out is None:
        out = np.empty((len(boards), c, n, n), np.float32)
    sc = new_ladder_scratch(n) if ladder else None
    for i, b in enumerate(boards):
        color = int(b.info[bd.TO_PLAY]) if colors is None else int(colors[i])
        position_planes(b, color, rank, edge, sc, out[i])
    return out


def new_ladder_scratch(size):
    """Return the scratch of ladder_planes on size x size boards: the reader's
    (engine.ladder.new_ladder_scratch) and engine.ladder.ladder_moves' arrays."""
    return (ld.new_ladder_scratch((size + 2) ** 2), np.empty(MAX_LADDER_POINTS, np.int64),
            np.empty(MAX_LADDER_POINTS, np.int64), np.empty(2, np.int64))


def position_planes(b, color, rank, edge, ladder_scratch, out):
    """Write every plane of board b seen by color into out [C, N, N]: board_planes', then
    the ladder planes when ladder_scratch (new_ladder_scratch) is given."""
    base = num_planes(edge)
    board_planes(b, color, rank, edge, out[:base])
    if ladder_scratch is not None:
        ladder_planes(b, color, ladder_scratch, out[base:])


@njit(cache=True, nogil=True)
def legal_mask(b, color, out):
    """Write 1 into out[N*N] where color may legally play (simple ko, no suicide), else 0."""
    size = b.info[bd.SIZE]
    w = b.info[bd.WIDTH]
    for y in range(size):
        for x in range(size):
            out[y * size + x] = bd.is_legal(b, (y + 1) * w + x + 1, color)


def legal_masks(boards, colors=None):
    """Return bool [B, N*N] legal-move masks (no superko check) for a list of boards."""
    n = int(boards[0].info[bd.SIZE])
    out = np.zeros((len(boards), n * n), np.bool_)
    for i, b in enumerate(boards):
        color = int(b.info[bd.TO_PLAY]) if colors is None else int(colors[i])
        legal_mask(b, color, out[i])
    return out


# Symmetries ------------------------------------------------------------------------------
# Symmetry k in 0..7 maps (x, y): first swap x and y if k & 4, then x -> N-1-x if k & 1, then
# y -> N-1-y if k & 2. The identity is 0.

def transform_planes(planes, k):
    """Return planes [..., N, N] ([..., y, x]) under symmetry k (a view where possible)."""
    out = planes
    if k & 4:
        out = np.swapaxes(out, -1, -2)
    if k & 1:
        out = out[..., ::-1]
    if k & 2:
        out = out[..., ::-1, :]
    return out


def transform_xy(x, y, k, n):
    """Return (x, y) under symmetry k on an n x n board (works on numpy arrays too)."""
    if k & 4:
        x, y = y, x
    if k & 1:
        x = n - 1 - x
    if k & 2:
        y = n - 1 - y
    return x, y


def transform_index(idx, k, n):
    """Return move index (y * n + x, scalar or array; negatives pass through) under symmetry k."""
    idx = np.asarray(idx)
    x, y = transform_xy(idx % n, idx // n, k, n)
    return np.where(idx >= 0, y * n + x, idx)


def inverse_symmetry(k):
    """Return the symmetry that undoes k."""
    if k & 4:
        return 4 | ((k & 1) << 1) | ((k & 2) >> 1)
    return k


def index_to_point(idx, n):
    """Return the engine point of move index y*n+x (arrays too)."""
    return (idx // n + 1) * (n + 2) + idx % n + 1


def point_to_index(p, n):
    """Return the move index y*n+x of an engine point (arrays too)."""
    return (p // (n + 2) - 1) * n + p % (n + 2) - 1
