"""Numba rules core: a padded flat board with chains, liberty bit sets and Zobrist hashing.

Points are indices into a flat array of (size + 2) ** 2 cells; the outer ring holds WALL so that
neighbour lookups need no bounds checks. A point on the board is ``(y + 1) * width + (x + 1)``
with ``width = size + 2``, ``x`` the column from the left and ``y`` the row from the bottom, as in
GTP. Each chain (string of stones) is a circular list through ``chain_next`` with its head's
index in ``chain`` for every stone; the head owns the chain's size and its liberties, kept both
as a bit set (one bit per point) and as a count, updated incrementally on every move.

This module alone writes the board arrays. Jitted functions return status codes; the Python
layer (engine.game) turns them into exceptions and GTP errors.
"""
from collections import namedtuple

import numpy as np
from numba import njit

# Options for jitted functions that never allocate. Without numba's reference counting (NRT),
# reading the Board tuple's arrays costs no atomic incref/decref per access: playouts ran 3.7x
# (moggy) to 5.7x (uniform) faster. Numba compiles a callee with its caller's NRT setting, so
# nothing such a function calls may allocate either (pass scratch arrays in instead).
NO_ALLOC = dict(cache=True, nogil=True, _nrt=False)
# The same, compiled into each caller (numba's IR inlining) rather than called. Numba passes
# every array of the Board tuple to a call as its 7 to 9 fields, about 90 words pushed on the
# stack per call (130 to 190 with the playout policy and the ladder scratch): for the small
# hot functions of a playout that cost more than their bodies. The caller's NRT setting
# applies to the inlined code, so inline these only into NO_ALLOC callers.
NO_ALLOC_INLINE = dict(NO_ALLOC, inline="always")

EMPTY, BLACK, WHITE, WALL = 0, 1, 2, 3
PASS = -1

# Status codes of play().
OK, OCCUPIED, SUICIDE, KO, OFF_BOARD = 0, 1, 2, 3, 4

# Slots of the info array.
SIZE, WIDTH, KO_POINT, KO_COLOR, NEMPTY, HASH, LAST_MOVE, LAST_MOVE2, \
    CAPTURED_BY_BLACK, CAPTURED_BY_WHITE, MOVE_NUMBER, PASSES, TO_PLAY, \
    LAST_KO_POINT, LAST_KO_COLOR, LAST_KO_MOVE = range(16)
INFO_SLOTS = 16

# placed_at of a setup stone (handicap, SGF AB/AW): long before any move, so that the
# network's history planes, which fade with a stone's age, read it as an old stone rather
# than as the stone just played (training saw every stone played by a move).
SETUP_PLACED_AT = -(1 << 20)

MIN_SIZE, MAX_SIZE = 2, 25

Board = namedtuple("Board", [
    "stones",       # int8[S]: EMPTY, BLACK, WHITE or WALL
    "chain",        # int32[S]: head point of the chain a stone belongs to, -1 on empty points
    "chain_next",   # int32[S]: next stone of the same chain (circular list)
    "chain_size",   # int32[S]: stones in the chain, valid at heads
    "nlibs",        # int32[S]: liberty count, valid at heads; always equals popcount(libs[head])
    "libs",         # uint64[S, words]: liberty bit set, valid at heads
    "empties",      # int32[S]: the NEMPTY empty points, in no order
    "empty_index",  # int32[S]: position of an empty point inside empties
    "placed_at",    # int32[S]: MOVE_NUMBER when the stone on the point was placed (SETUP_PLACED_AT
                    # for a setup stone)
    "nbr_code",     # int32[S]: 3x3 code, 2 bits per neighbour (see neighbour_code_offsets)
    "info",         # int64[INFO_SLOTS]: scalars, see the slot names above
    "zobrist",      # int64[3, S]: random keys, shared between copies of a board
])

_ZOBRIST_SEED = 20160101
_zobrist_tables = {}


def zobrist_table(size):
    """Return the (3, S) int64 Zobrist keys for a board size, the same in every process."""
    if size not in _zobrist_tables:
        points = (size + 2) ** 2
        rng = np.random.default_rng(_ZOBRIST_SEED + size)
        keys = rng.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, size=(3, points),
                            dtype=np.int64)
        keys[EMPTY] = 0
        _zobrist_tables[size] = keys
    return _zobrist_tables[size]


def new_board(size):
    """Return an empty Board of the given size; raises ValueError outside 2..25."""
    if not MIN_SIZE <= size <= MAX_SIZE:
        raise ValueError(f"board size {size} outside {MIN_SIZE}..{MAX_SIZE}")
    width = size + 2
    points = width * width
    words = (points + 63) // 64
    board = Board(
        stones=np.full(points, WALL, np.int8),
        chain=np.full(points, -1, np.int32),
        chain_next=np.full(points, -1, np.int32),
        chain_size=np.zeros(points, np.int32),
        nlibs=np.zeros(points, np.int32),
        libs=np.zeros((points, words), np.uint64),
        empties=np.zeros(points, np.int32),
        empty_index=np.full(points, -1, np.int32),
        placed_at=np.zeros(points, np.int32),
        nbr_code=np.zeros(points, np.int32),
        info=np.zeros(INFO_SLOTS, np.int64),
        zobrist=zobrist_table(size),
    )
    board.info[SIZE] = size
    board.info[WIDTH] = width
    board.info[KO_POINT] = -1
    board.info[LAST_MOVE] = PASS
    board.info[LAST_MOVE2] = PASS
    board.info[TO_PLAY] = BLACK
    board.info[LAST_KO_POINT] = -1
    board.info[LAST_KO_MOVE] = -100
    _clear(board)
    return board


@njit(**NO_ALLOC)
def _clear(b):
    size = b.info[SIZE]
    width = b.info[WIDTH]
    n = 0
    for y in range(size):
        for x in range(size):
            p = (y + 1) * width + x + 1
            b.stones[p] = EMPTY
            b.empties[n] = p
            b.empty_index[p] = n
            n += 1
    b.info[NEMPTY] = n
    for p in range(b.stones.shape[0]):
        _set_point_in_codes(b, p, b.stones[p])


@njit(cache=True, nogil=True, inline="always")
def _set_point_in_codes(b, p, value):
    """Record value (EMPTY/BLACK/WHITE/WALL) at p in the 3x3 codes of its 8 neighbours."""
    w = b.info[WIDTH]
    k = 0
    for d in (-w - 1, -w, -w + 1, -1, 1, w - 1, w, w + 1):
        q = p - d   # p lies at offset d from q, so it fills q's slot k
        if 0 <= q < b.stones.shape[0]:
            shift = 2 * (7 - k)
            b.nbr_code[q] = (b.nbr_code[q] & ~(3 << shift)) | (np.int32(value) << shift)
        k += 1


@njit(cache=True, nogil=True)
def neighbour_code_offsets(b):
    """Return the 8 offsets in 3x3-code order: bits 15-14 hold the first, bits 1-0 the last."""
    w = b.info[WIDTH]
    return np.array((-w - 1, -w, -w + 1, -1, 1, w - 1, w, w + 1), np.int64)


@njit(cache=True, nogil=True)
def copy_board(b):
    """Return an independent copy of b (the Zobrist table is shared, it never changes)."""
    return Board(b.stones.copy(), b.chain.copy(), b.chain_next.copy(), b.chain_size.copy(),
                 b.nlibs.copy(), b.libs.copy(), b.empties.copy(), b.empty_index.copy(),
                 b.placed_at.copy(), b.nbr_code.copy(), b.info.copy(), b.zobrist)


@njit(cache=True, nogil=True)
def copy_into(dst, src):
    """Overwrite dst with src's position; both must have the same size. Returns nothing."""
    dst.stones[:] = src.stones
    dst.chain[:] = src.chain
    dst.chain_next[:] = src.chain_next
    dst.chain_size[:] = src.chain_size
    dst.nlibs[:] = src.nlibs
    dst.libs[:, :] = src.libs
    dst.empties[:] = src.empties
    dst.empty_index[:] = src.empty_index
    dst.placed_at[:] = src.placed_at
    dst.nbr_code[:] = src.nbr_code
    dst.info[:] = src.info


@njit(**NO_ALLOC)
def popcount64(x):
    """Return the number of set bits of a uint64."""
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@njit(**NO_ALLOC)
def lowest_bit_index(x):
    """Return the index of the lowest set bit of a nonzero uint64."""
    lowest = x & (~x + np.uint64(1))
    return popcount64(lowest - np.uint64(1))


@njit(cache=True, nogil=True, inline="always")
def _lib_add(b, head, p):
    word = p >> 6
    bit = np.uint64(1) << np.uint64(p & 63)
    if (b.libs[head, word] & bit) == 0:
        b.libs[head, word] |= bit
        b.nlibs[head] += 1


@njit(cache=True, nogil=True, inline="always")
def _lib_remove(b, head, p):
    word = p >> 6
    bit = np.uint64(1) << np.uint64(p & 63)
    if (b.libs[head, word] & bit) != 0:
        b.libs[head, word] &= ~bit
        b.nlibs[head] -= 1


@njit(**NO_ALLOC)
def first_liberty(b, head):
    """Return the lowest liberty point of the chain with this head, or -1 if it has none."""
    for word in range(b.libs.shape[1]):
        bits = b.libs[head, word]
        if bits != 0:
            return word * 64 + lowest_bit_index(bits)
    return -1


@njit(**NO_ALLOC)
def chain_liberties(b, head, out):
    """Write the liberties of the chain with this head into out; return how many."""
    n = 0
    for word in range(b.libs.shape[1]):
        bits = b.libs[head, word]
        while bits != 0:
            out[n] = word * 64 + lowest_bit_index(bits)
            n += 1
            bits &= bits - np.uint64(1)
    return n


@njit(**NO_ALLOC)
def is_legal(b, p, color):
    """Return True if color may play at p: on board, empty, not the simple-ko point, not suicide.

    PASS is always legal. Positional superko is the history layer's business (engine.game).
    """
    if p == PASS:
        return True
    if p < 0 or p >= b.stones.shape[0] or b.stones[p] != EMPTY:
        return False
    if p == b.info[KO_POINT] and color == b.info[KO_COLOR]:
        return False
    return not _is_suicide(b, p, color)


@njit(**NO_ALLOC)
def _is_suicide(b, p, color):
    w = b.info[WIDTH]
    for d in (-w, -1, 1, w):
        n = p + d
        s = b.stones[n]
        if s == EMPTY:
            return False
        if s == WALL:
            continue
        libs = b.nlibs[b.chain[n]]
        if s == color and libs > 1:
            return False
        if s != color and libs == 1:
            return False
    return True


@njit(**NO_ALLOC)
def _remove_empty(b, p):
    i = b.empty_index[p]
    last = b.empties[b.info[NEMPTY] - 1]
    b.empties[i] = last
    b.empty_index[last] = i
    b.empty_index[p] = -1
    b.info[NEMPTY] -= 1


@njit(**NO_ALLOC)
def _add_empty(b, p):
    n = b.info[NEMPTY]
    b.empties[n] = p
    b.empty_index[p] = n
    b.info[NEMPTY] = n + 1


@njit(**NO_ALLOC_INLINE)
def _merge_chains(b, a, c):
    """Merge the chains with heads a and c; return the surviving head."""
    if b.chain_size[a] < b.chain_size[c]:
        a, c = c, a
    s = c
    while True:
        b.chain[s] = a
        s = b.chain_next[s]
        if s == c:
            break
    b.chain_next[a], b.chain_next[c] = b.chain_next[c], b.chain_next[a]
    b.chain_size[a] += b.chain_size[c]
    total = 0
    for word in range(b.libs.shape[1]):
        b.libs[a, word] |= b.libs[c, word]
        total += popcount64(b.libs[a, word])
    b.nlibs[a] = total
    return a


@njit(**NO_ALLOC_INLINE)
def _remove_chain(b, head, capturer):
    """Take the chain off the board, giving its points as liberties to capturer's chains."""
    w = b.info[WIDTH]
    color = b.stones[head]
    s = head
    while True:
        nxt = b.chain_next[s]
        b.stones[s] = EMPTY
        _set_point_in_codes(b, s, EMPTY)
        b.info[HASH] ^= b.zobrist[color, s]
        b.chain[s] = -1
        b.chain_next[s] = -1
        _add_empty(b, s)
        for d in (-w, -1, 1, w):
            n = s + d
            if b.stones[n] == capturer:
                _lib_add(b, b.chain[n], s)
        s = nxt
        if s == head:
            break


@njit(**NO_ALLOC)
def play(b, p, color):
    """Play color at p (or PASS) if legal by the simple-ko rule; return a status code.

    On any status other than OK the board is unchanged. Positional superko is checked one
    layer up, by comparing the resulting HASH with the game's history.
    """
    return play_inlined(b, p, color)


@njit(**NO_ALLOC_INLINE)
def play_inlined(b, p, color):
    """play(), compiled into its caller: for the playout loop, which calls it every move."""
    if p == PASS:
        b.info[KO_POINT] = -1
        b.info[PASSES] += 1
        b.info[LAST_MOVE2] = b.info[LAST_MOVE]
        b.info[LAST_MOVE] = PASS
        b.info[MOVE_NUMBER] += 1
        b.info[TO_PLAY] = 3 - color
        return OK
    if p < 0 or p >= b.stones.shape[0] or b.stones[p] == WALL:
        return OFF_BOARD
    if b.stones[p] != EMPTY:
        return OCCUPIED
    if p == b.info[KO_POINT] and color == b.info[KO_COLOR]:
        return KO
    if _is_suicide(b, p, color):
        return SUICIDE

    w = b.info[WIDTH]
    opponent = 3 - color
    b.stones[p] = color
    _set_point_in_codes(b, p, color)
    b.info[HASH] ^= b.zobrist[color, p]
    b.placed_at[p] = b.info[MOVE_NUMBER]
    _remove_empty(b, p)
    b.chain[p] = p
    b.chain_next[p] = p
    b.chain_size[p] = 1
    b.nlibs[p] = 0
    for word in range(b.libs.shape[1]):     # a slice assignment would call memset
        b.libs[p, word] = 0
    for d in (-w, -1, 1, w):
        n = p + d
        s = b.stones[n]
        if s == EMPTY:
            _lib_add(b, p, n)
        elif s != WALL:
            _lib_remove(b, b.chain[n], p)
    for d in (-w, -1, 1, w):
        n = p + d
        if b.stones[n] == color and b.chain[n] != b.chain[p]:
            _merge_chains(b, b.chain[p], b.chain[n])
    captured = 0
    ko_candidate = -1
    for d in (-w, -1, 1, w):
        n = p + d
        if b.stones[n] == opponent and b.nlibs[b.chain[n]] == 0:
            captured += b.chain_size[b.chain[n]]
            ko_candidate = n
            _remove_chain(b, b.chain[n], color)
    if color == BLACK:
        b.info[CAPTURED_BY_BLACK] += captured
    else:
        b.info[CAPTURED_BY_WHITE] += captured
    head = b.chain[p]
    if captured == 1 and b.chain_size[head] == 1 and b.nlibs[head] == 1:
        b.info[KO_POINT] = ko_candidate
        b.info[KO_COLOR] = opponent
        b.info[LAST_KO_POINT] = ko_candidate
        b.info[LAST_KO_COLOR] = opponent
        b.info[LAST_KO_MOVE] = b.info[MOVE_NUMBER]
    else:
        b.info[KO_POINT] = -1
    b.info[PASSES] = 0
    b.info[LAST_MOVE2] = b.info[LAST_MOVE]
    b.info[LAST_MOVE] = p
    b.info[MOVE_NUMBER] += 1
    b.info[TO_PLAY] = opponent
    return OK


@njit(**NO_ALLOC)
def place_stone(b, p, color):
    """Put a setup stone (handicap, SGF AB/AW) without a turn; return a status code.

    Refuses PASS (OFF_BOARD), an occupied point and a stone that would have no liberties after
    captures. Captures like a move does and clears the ko, but leaves TO_PLAY, the move number,
    the passes and the last moves alone; the stone counts as placed at SETUP_PLACED_AT.
    """
    if p == PASS:
        return OFF_BOARD
    to_play = b.info[TO_PLAY]
    last, last2 = b.info[LAST_MOVE], b.info[LAST_MOVE2]
    moves, passes = b.info[MOVE_NUMBER], b.info[PASSES]
    ko, ko_color = b.info[KO_POINT], b.info[KO_COLOR]
    b.info[KO_POINT] = -1
    status = play(b, p, color)
    b.info[TO_PLAY] = to_play
    b.info[LAST_MOVE], b.info[LAST_MOVE2] = last, last2
    b.info[MOVE_NUMBER], b.info[PASSES] = moves, passes
    if status != OK:
        b.info[KO_POINT], b.info[KO_COLOR] = ko, ko_color
    else:
        b.info[KO_POINT] = -1
        b.placed_at[p] = SETUP_PLACED_AT
    return status


@njit(**NO_ALLOC)
def hash_after(b, p, color):
    """Return the position hash that playing a legal move p would produce, without playing it."""
    h = b.info[HASH]
    if p == PASS:
        return h
    w = b.info[WIDTH]
    h ^= b.zobrist[color, p]
    opponent = 3 - color
    seen0 = -1
    seen1 = -1
    seen2 = -1
    for d in (-w, -1, 1, w):
        n = p + d
        if b.stones[n] != opponent:
            continue
        head = b.chain[n]
        if b.nlibs[head] != 1 or head == seen0 or head == seen1 or head == seen2:
            continue
        if seen0 == -1:
            seen0 = head
        elif seen1 == -1:
            seen1 = head
        else:
            seen2 = head
        s = head
        while True:
            h ^= b.zobrist[opponent, s]
            s = b.chain_next[s]
            if s == head:
                break
    return h


@njit(**NO_ALLOC)
def is_eyeish(b, p, color):
    """Return True if every on-board neighbour of the empty point p is a stone of color."""
    w = b.info[WIDTH]
    for d in (-w, -1, 1, w):
        s = b.stones[p + d]
        if s != color and s != WALL:
            return False
    return True


@njit(**NO_ALLOC)
def is_true_eye_like(b, p, color):
    """Return True if p is a one-point eye of color that filling would usually spoil.

    The classic test: all neighbours ours, and at most one diagonal held by the opponent
    (none at all on the edge or in the corner).
    """
    if not is_eyeish(b, p, color):
        return False
    w = b.info[WIDTH]
    bad = 0
    at_edge = 0
    for d in (-w - 1, -w + 1, w - 1, w + 1):
        s = b.stones[p + d]
        if s == WALL:
            at_edge = 1
        elif s == 3 - color:
            bad += 1
    return bad + at_edge < 2


@njit(cache=True, nogil=True)
def area_owner(b, owner):
    """Fill owner[S] with Tromp-Taylor owners (BLACK, WHITE or EMPTY for dame); return nothing.

    A stone belongs to its colour; an empty region belongs to a colour if it touches only
    stones of that colour.
    """
    w = b.info[WIDTH]
    npoints = b.stones.shape[0]
    owner[:] = EMPTY
    visited = np.zeros(npoints, np.bool_)
    stack = np.empty(npoints, np.int32)
    region = np.empty(npoints, np.int32)
    for p in range(npoints):
        s = b.stones[p]
        if s == BLACK or s == WHITE:
            owner[p] = s
        elif s == EMPTY and not visited[p]:
            touches = 0
            top = 0
            count = 0
            stack[top] = p
            top += 1
            visited[p] = True
            while top > 0:
                top -= 1
                q = stack[top]
                region[count] = q
                count += 1
                for d in (-w, -1, 1, w):
                    n = q + d
                    t = b.stones[n]
                    if t == EMPTY:
                        if not visited[n]:
                            visited[n] = True
                            stack[top] = n
                            top += 1
                    elif t == BLACK:
                        touches |= 1
                    elif t == WHITE:
                        touches |= 2
            if touches == 1 or touches == 2:
                for i in range(count):
                    owner[region[i]] = touches


@njit(cache=True, nogil=True)
def area_score(b, komi):
    """Return the Tromp-Taylor area score black minus white minus komi."""
    owner = np.empty(b.stones.shape[0], np.int8)
    area_owner(b, owner)
    score = 0.0
    for p in range(owner.shape[0]):
        if owner[p] == BLACK:
            score += 1.0
        elif owner[p] == WHITE:
            score -= 1.0
    return score - komi
