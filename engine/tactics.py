"""Tactical reading in numba: can a chain with few liberties be captured, and which moves
capture or save it; for the search's priors and pruning.

The network judges shape, not sequences: it does not see that a chain is caught in a net, that
a capture works only after an atari elsewhere, or that running from an atari gains nothing.
engine.ladder reads the one sequence of a ladder. This module reads the general case, as GNU
Go's reading.c and Pachi's tactics do in a small way: a depth-first search, in which the
attacker plays the chain's liberties (and, while the reading is shallow, the points next to
them, which is how nets close) and the defender extends at its liberties or captures an
attacker chain in atari next to it. A chain that reaches SAFE_LIBS liberties has escaped; one
with three liberties is attacked only at the first move of a reading. Simple ko is respected
(the stone that just took a single stone back cannot be retaken at once).

The reader works on a private copy of the stones with liberties counted by flood fills, and
every move it tries is taken back, so the copy is unchanged after a reading. A reading stops
after a budget of nodes; such a reading is unknown, and the callers then change nothing.
"""
from collections import namedtuple

import numpy as np
from numba import njit

from engine.board import EMPTY, NO_ALLOC, WIDTH

# Liberties at which a chain has escaped; a chain with SAFE_LIBS - 1 is attacked only by the
# first move of a reading.
SAFE_LIBS = 4
# Chains with at most this many liberties are read by tactical_moves.
READ_LIBS = 3
# Nodes one reading may visit, and the depth (moves) it may reach.
NODE_BUDGET = 400
MAX_DEPTH = 60
# Below this depth the attacker also tries the empty points next to the liberties (nets).
NET_DEPTH = 5
MAX_CANDIDATES = 16
# Outcomes of a reading.
FAILS, WORKS, UNKNOWN = 0, 1, 2
# Slots of the counters.
STAMP, NODES, LOG_LENGTH, ABORTED = range(4)
# Flood-fill stamps are int32; clear the marks before they overflow.
STAMP_LIMIT = (1 << 31) - (1 << 20)

TacticsScratch = namedtuple("TacticsScratch", [
    "stones",      # int8[S]: the position being read
    "mark",        # int32[S]: flood-fill stamps
    "stack",       # int32[2 * S]: stones of the chains being filled
    "libs",        # int32[SAFE_LIBS]: liberties found by the last fill
    "candidates",  # int32[MAX_DEPTH + 1, MAX_CANDIDATES]: the moves tried at each depth
    "frames",      # int32[MAX_DEPTH + 1, 5]: per depth: next move to try, moves, ko point,
                   # the move being read below, the capture log's length before it
    "captured",    # int32[2 * S]: log of the stones the moves read removed
    "counters",    # int64[4]: last stamp, nodes visited, capture log length, aborted
])


@njit(cache=True, nogil=True)
def new_tactics_scratch(points):
    """Return the scratch arrays for tactical reading on a board of `points` padded points."""
    return TacticsScratch(np.empty(points, np.int8), np.zeros(points, np.int32),
                          np.empty(2 * points, np.int32), np.empty(SAFE_LIBS, np.int32),
                          np.empty((MAX_DEPTH + 1, MAX_CANDIDATES), np.int32),
                          np.empty((MAX_DEPTH + 1, 5), np.int32),
                          np.empty(2 * points, np.int32), np.zeros(4, np.int64))


@njit(**NO_ALLOC)
def _fill(sc, start, w, base, max_libs):
    """Flood the chain at start with a fresh stamp, its stones into sc.stack[base:], counting
    its liberties (the first SAFE_LIBS into sc.libs) and stopping once there are max_libs.
    Return (stones found, liberties found, the stamp)."""
    sc.counters[STAMP] += 1
    stamp = sc.counters[STAMP]
    stones = sc.stones
    color = stones[start]
    sc.stack[base] = start
    sc.mark[start] = stamp
    n = 1
    libs = 0
    i = 0
    while i < n:
        q = sc.stack[base + i]
        i += 1
        for d in (-w, -1, 1, w):
            t = q + d
            if sc.mark[t] == stamp:
                continue
            s = stones[t]
            if s == color:
                sc.mark[t] = stamp
                sc.stack[base + n] = t
                n += 1
            elif s == EMPTY:
                sc.mark[t] = stamp
                if libs < SAFE_LIBS:
                    sc.libs[libs] = t
                libs += 1
                if libs >= max_libs:
                    return n, libs, stamp
    return n, libs, stamp


@njit(**NO_ALLOC)
def _liberties(sc, p, w):
    """Return the liberties of the chain at p, counted up to SAFE_LIBS."""
    return _fill(sc, p, w, 0, SAFE_LIBS)[1]


@njit(**NO_ALLOC)
def _play(sc, p, color, w):
    """Place color's stone at p and remove the chains of the other colour it captures, logging
    their stones. Return the point of the single stone captured when the move is a ko capture
    (it took one stone and its own stone stands alone with that one liberty), -1 when the
    move is legal otherwise, and -2 (with nothing changed) when it is suicide or the log is
    full."""
    other = 3 - color
    sc.stones[p] = color
    start = sc.counters[LOG_LENGTH]
    for d in (-w, -1, 1, w):
        q = p + d
        if sc.stones[q] != other:
            continue
        n, libs, _ = _fill(sc, q, w, 0, 1)
        if libs:
            continue
        if sc.counters[LOG_LENGTH] + n > sc.captured.shape[0]:
            _take_back(sc, p, color, start)
            return -2
        for i in range(n):
            sc.stones[sc.stack[i]] = EMPTY
            sc.captured[sc.counters[LOG_LENGTH]] = sc.stack[i]
            sc.counters[LOG_LENGTH] += 1
    taken = sc.counters[LOG_LENGTH] - start
    n, libs, _ = _fill(sc, p, w, 0, 2)
    if libs == 0:
        _take_back(sc, p, color, start)
        return -2
    if taken == 1 and n == 1 and libs == 1:
        return sc.captured[start]
    return -1


@njit(**NO_ALLOC)
def _take_back(sc, p, color, log_start):
    """Empty p (color's stone) and put back the stones it captured."""
    sc.stones[p] = EMPTY
    while sc.counters[LOG_LENGTH] > log_start:
        sc.counters[LOG_LENGTH] -= 1
        sc.stones[sc.captured[sc.counters[LOG_LENGTH]]] = 3 - color


@njit(**NO_ALLOC)
def _add(row, n, p):
    """Append p to row[:n] unless it is there or row is full; return the new length."""
    for i in range(n):
        if row[i] == p:
            return n
    if n < row.shape[0]:
        row[n] = p
        n += 1
    return n


@njit(**NO_ALLOC)
def _empty_neighbours(sc, p, w):
    """Return how many of p's neighbours are empty."""
    n = 0
    for d in (-w, -1, 1, w):
        if sc.stones[p + d] == EMPTY:
            n += 1
    return n


@njit(**NO_ALLOC)
def _attacker_candidates(sc, target, w, depth):
    """Write the attacker's moves against the chain at target (at most three liberties) into
    sc.candidates[depth]; return how many. The liberties come first, the one with more empty
    neighbours first (it leaves the defender the poorer extension, as in a ladder); below
    NET_DEPTH, against two liberties, the empty points next to them follow (nets)."""
    row = sc.candidates[depth]
    libs = _liberties(sc, target, w)
    n = 0
    for i in range(libs):
        n = _add(row, n, sc.libs[i])
    if n == 2 and _empty_neighbours(sc, row[1], w) > _empty_neighbours(sc, row[0], w):
        row[0], row[1] = row[1], row[0]
    if libs == 2 and depth < NET_DEPTH:
        first, second = row[0], row[1]
        for lib in (first, second):
            for d in (-w, -1, 1, w):
                q = lib + d
                if sc.stones[q] == EMPTY:
                    n = _add(row, n, q)
    return n


@njit(**NO_ALLOC)
def _defender_candidates(sc, target, w, depth):
    """Write the defender's moves for the chain at target into sc.candidates[depth]: the
    liberties of attacker chains in atari next to it (captures) first, then its own
    liberties; return how many."""
    row = sc.candidates[depth]
    stones, libs, stamp = _fill(sc, target, w, 0, SAFE_LIBS)
    n = 0
    attacker = 3 - sc.stones[target]
    for i in range(stones):
        q = sc.stack[i]
        for d in (-w, -1, 1, w):
            t = q + d
            if sc.stones[t] == attacker and sc.mark[t] != stamp:
                # Filled from past the target's stones; its own stamp marks it as seen for
                # this fill only, so a chain touching the target twice is filled twice.
                if _fill(sc, t, w, stones, 2)[1] == 1:
                    n = _add(row, n, sc.libs[0])
    _fill(sc, target, w, 0, SAFE_LIBS)
    for i in range(min(libs, SAFE_LIBS)):
        n = _add(row, n, sc.libs[i])
    return n


@njit(**NO_ALLOC)
def _open(sc, target, w, attacker_moves, depth, ko, budget):
    """Enter a node of the reading: return 1 if the side to move has already won the fight
    for the chain at target, 0 if it has lost (or the reading is aborted: past the budget or
    MAX_DEPTH, the counter set), -1 when its moves must be tried: then they are in
    sc.candidates[depth] and sc.frames[depth] is (next move to try, moves, ko)."""
    sc.counters[NODES] += 1
    libs = _liberties(sc, target, w)
    if attacker_moves:
        if libs == 1:
            return 1 if sc.libs[0] != ko else 0
        if libs >= SAFE_LIBS or (libs == SAFE_LIBS - 1 and depth > 0):
            return 0
    elif libs >= SAFE_LIBS - 1:
        return 1
    if depth >= MAX_DEPTH or sc.counters[NODES] > budget:
        sc.counters[ABORTED] = 1
        return 0
    if attacker_moves:
        n = _attacker_candidates(sc, target, w, depth)
    else:
        n = _defender_candidates(sc, target, w, depth)
    sc.frames[depth, 0] = 0
    sc.frames[depth, 1] = n
    sc.frames[depth, 2] = ko
    return -1


@njit(**NO_ALLOC)
def _read(sc, target, w, attacker_moves, ko, budget):
    """Return True if the side to move wins the fight for the chain at target: the attacker
    (attacker_moves) captures it, or the defender keeps it. ko is the point that may not be
    taken at once (-1: none). A depth-first search over an explicit stack of frames (numba
    cannot cache a recursive function); past the budget or MAX_DEPTH the reading is aborted
    (the counter set) and the answer is meaningless."""
    defender = sc.stones[target]
    depth = 0
    value = _open(sc, target, w, attacker_moves, 0, ko, budget)
    while True:
        if value < 0:
            # Try the next move of the node at depth (attacker to move at even depths when
            # the attacker moves first).
            attacker_here = attacker_moves == (depth % 2 == 0)
            i = sc.frames[depth, 0]
            if i == sc.frames[depth, 1]:
                value = 0
                continue
            sc.frames[depth, 0] = i + 1
            p = sc.candidates[depth, i]
            if p == sc.frames[depth, 2]:
                continue
            color = 3 - defender if attacker_here else defender
            log_start = sc.counters[LOG_LENGTH]
            next_ko = _play(sc, p, color, w)
            if next_ko == -2:
                continue
            if not attacker_here:
                after = _liberties(sc, target, w)
                if after != 2:
                    _take_back(sc, p, color, log_start)
                    if after >= SAFE_LIBS - 1:
                        value = 1
                    continue
            sc.frames[depth, 3] = p
            sc.frames[depth, 4] = log_start
            depth += 1
            value = _open(sc, target, w, not attacker_here, depth, next_ko, budget)
            continue
        # The node at depth is decided (value 1: its mover wins); return it to its parent,
        # or unwind every move when the reading is aborted.
        if sc.counters[ABORTED]:
            while depth > 0:
                depth -= 1
                attacker_here = attacker_moves == (depth % 2 == 0)
                _take_back(sc, sc.frames[depth, 3], 3 - defender if attacker_here else defender,
                           sc.frames[depth, 4])
            return False
        if depth == 0:
            return value == 1
        depth -= 1
        attacker_here = attacker_moves == (depth % 2 == 0)
        _take_back(sc, sc.frames[depth, 3], 3 - defender if attacker_here else defender,
                   sc.frames[depth, 4])
        value = 1 if value == 0 else -1


@njit(**NO_ALLOC)
def load(sc, b):
    """Copy b's stones into the scratch. Stamps keep growing from read to read, so that the
    marks need clearing only when the counter nears the int32 limit."""
    for p in range(b.stones.shape[0]):
        sc.stones[p] = b.stones[p]
    sc.counters[LOG_LENGTH] = 0
    if sc.counters[STAMP] > STAMP_LIMIT:
        sc.mark[:] = 0
        sc.counters[STAMP] = 0


@njit(**NO_ALLOC)
def read(sc, target, w, attacker_moves, ko, budget):
    """Return WORKS if the side to move (the attacker when attacker_moves, else the owner)
    wins the fight for the chain at target in the loaded position, FAILS if it does not,
    UNKNOWN when the reading ran past its budget of nodes."""
    sc.counters[NODES] = 0
    sc.counters[ABORTED] = 0
    won = _read(sc, target, w, attacker_moves, ko, budget)
    if sc.counters[ABORTED]:
        return UNKNOWN
    return WORKS if won else FAILS


@njit(**NO_ALLOC)
def _moves_that_work(sc, target, w, attacker_moves, ko, budget, out, n_out, weight, weights):
    """Append to out (with weight in weights) the first moves of the side to move that win
    the fight for the chain at target; return the new length (the old one, nothing appended,
    if a reading was unknown)."""
    n_start = n_out
    if attacker_moves:
        n = _attacker_candidates(sc, target, w, 0)
    else:
        n = _defender_candidates(sc, target, w, 0)
    color = 3 - sc.stones[target] if attacker_moves else sc.stones[target]
    moves = sc.candidates[MAX_DEPTH]
    for i in range(n):
        moves[i] = sc.candidates[0, i]
    for i in range(n):
        p = moves[i]
        if p == ko or n_out >= out.shape[0]:
            continue
        log_start = sc.counters[LOG_LENGTH]
        next_ko = _play(sc, p, color, w)
        if next_ko == -2:
            continue
        if attacker_moves:
            if sc.stones[target] == EMPTY:
                result = FAILS
            else:
                result = read(sc, target, w, False, next_ko, budget)
            works = result == FAILS
        else:
            after = _liberties(sc, target, w)
            if after >= SAFE_LIBS - 1:
                result = FAILS
            elif after <= 1:
                result = WORKS
            else:
                result = read(sc, target, w, True, next_ko, budget)
            works = result == FAILS
        _take_back(sc, p, color, log_start)
        if result == UNKNOWN:
            return n_start
        if works:
            out[n_out] = p
            weights[n_out] = weight
            n_out += 1
    return n_out


@njit(**NO_ALLOC)
def tactical_moves(b, color, sc, ko, budget, urgent, weights):
    """Read every chain with at most READ_LIBS liberties for color to move, and write into
    urgent, with the stones at stake in weights, color's moves that save one of its chains
    the opponent could capture, and that capture an opponent chain which would live if its
    owner moved first (a move may appear once for each chain). ko is the point color may not
    take at once (-1: none); a chain whose reading runs past the budget adds nothing. Return
    how many moves were written."""
    w = b.info[WIDTH]
    load(sc, b)
    n_urgent = 0
    for h in range(b.stones.shape[0]):
        if b.chain[h] != h or b.nlibs[h] > READ_LIBS or b.stones[h] == EMPTY:
            continue
        ours = b.stones[h] == color
        threat = read(sc, h, w, True, -1 if ours else ko, budget)
        if threat != WORKS:
            continue
        stones = b.chain_size[h]
        if ours:
            n_urgent = _moves_that_work(sc, h, w, False, ko, budget, urgent, n_urgent, stones,
                                        weights)
        elif read(sc, h, w, False, -1, budget) == WORKS:
            n_urgent = _moves_that_work(sc, h, w, True, ko, budget, urgent, n_urgent, stones,
                                        weights)
    return n_urgent
