"""Ladder reading in numba, for the default policy's atari rules and the search's priors.

A chain in atari whose only escape gives it two liberties is often caught in a ladder (shicho):
the attacker keeps putting it back in atari until it is captured at the edge or runs into the
attacker's stones. Running out of a working ladder loses more stones with every move, so the
escape rules must not suggest it, and an atari that starts a working ladder is a good move.

The reader works on a private copy of the stones alone, with liberties from flood fills: the
defender extends at its last liberty, the attacker takes one of the two new liberties (and
removes any other defender chain that this captures; a log restores them on undo). The
defender escapes when it reaches three liberties or can capture an attacker chain next to it
(or next to its extension) that is in atari; the attacker tries both liberties at every step.
The reading stops after a budget of attacker moves or a depth; an unread ladder counts as an
escape, so that the rules stay as they were where the reader cannot tell.
"""
from collections import namedtuple

import numpy as np
from numba import njit

from engine.board import EMPTY, LAST_MOVE, NO_ALLOC, WIDTH, chain_liberties, first_liberty

# Attacker moves a reading may try, and ladder steps (extension + atari) it may follow.
MAX_ATTACKS = 200
MAX_STEPS = 80
# Flood-fill stamps are int32; a read makes far fewer than this many fills.
STAMP_LIMIT = (1 << 31) - (1 << 20)
# Outcomes of the defender's move.
ESCAPED, CAUGHT, CHASED = 0, 1, 2

LadderScratch = namedtuple("LadderScratch", [
    "stones",   # int8[S]: the position being read
    "mark",     # int32[S]: flood-fill stamps
    "stack",    # int32[2 * S]: stones of the chains being filled
    "steps",    # int32[MAX_STEPS, 5]: per step: extension, the two liberties, attacks tried,
                # the capture log's length before the attack
    "captured",  # int32[S]: log of defender stones the attacks removed
    "libs",     # int32[3]: liberties found by the last fill
    "counters",  # int64[3]: last stamp, attacker moves tried, capture log length
])


@njit(cache=True, nogil=True)
def new_ladder_scratch(points):
    """Return the scratch arrays for reading ladders on a board of `points` padded points."""
    return LadderScratch(np.empty(points, np.int8), np.zeros(points, np.int32),
                         np.empty(2 * points, np.int32), np.empty((MAX_STEPS, 5), np.int32),
                         np.empty(points, np.int32), np.empty(3, np.int32),
                         np.zeros(3, np.int64))


@njit(**NO_ALLOC)
def _fill(sc, start, w, base, max_libs):
    """Flood the chain at start with a fresh stamp, its stones into sc.stack[base:], counting
    distinct liberties (the first three into sc.libs) and stopping once there are max_libs.
    Return (stones found, liberties found, the stamp)."""
    sc.counters[0] += 1
    stamp = sc.counters[0]
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
                if libs < 3:
                    sc.libs[libs] = t
                libs += 1
                if libs >= max_libs:
                    return n, libs, stamp
    return n, libs, stamp


@njit(**NO_ALLOC)
def _in_atari_next_to(sc, p, attacker, w, base, since):
    """Return True if an attacker chain next to p, not filled since stamp `since`, is in
    atari."""
    for d in (-w, -1, 1, w):
        q = p + d
        if sc.stones[q] == attacker and sc.mark[q] <= since:
            if _fill(sc, q, w, base, 2)[1] == 1:
                return True
    return False


@njit(**NO_ALLOC)
def _defender_moves(sc, target, lib, w, last_extension, atari):
    """The defender's chain at target has one liberty, lib; the defender moves. Return
    ESCAPED when it can capture an attacker chain in atari next to the chain or to lib, or
    when extending at lib gives three liberties; CAUGHT when the extension leaves at most one;
    otherwise CHASED, with the extension made and its two liberties in sc.libs[:2].

    Only the attacker chains that the last step touched can have come into atari: those next
    to the last extension and the one holding the attacker's last atari stone (the others lost
    no liberty since they were checked), unless the extension joined other defender stones,
    whose neighbours are new: then every chain next to the defender is checked. Before the
    first atari (atari < 0), the caller has checked the chains next to the defender and lib."""
    defender = sc.stones[target]
    attacker = 3 - defender
    if atari >= 0:
        since = sc.counters[0]
        joined = 0
        for d in (-w, -1, 1, w):
            if sc.stones[last_extension + d] == defender:
                joined += 1
        if joined >= 2:
            n, _, stamp = _fill(sc, target, w, 0, 3)
            for i in range(n):
                if _in_atari_next_to(sc, sc.stack[i], attacker, w, n, stamp):
                    return ESCAPED
        elif _in_atari_next_to(sc, last_extension, attacker, w, 0, since):
            return ESCAPED
        if _fill(sc, atari, w, 0, 2)[1] == 1 or _in_atari_next_to(sc, lib, attacker, w, 0, since):
            return ESCAPED
    sc.stones[lib] = defender
    libs = _fill(sc, target, w, 0, 3)[1]
    if libs >= 3:
        sc.stones[lib] = EMPTY
        return ESCAPED
    if libs <= 1:
        sc.stones[lib] = EMPTY
        return CAUGHT
    return CHASED


@njit(**NO_ALLOC)
def _attack(sc, target, p, w):
    """Place an attacker stone at p and remove the defender chains other than target's that
    it captures, logging their stones; return False (with nothing changed) if the stone has
    no liberty."""
    defender = sc.stones[target]
    sc.stones[p] = 3 - defender
    for d in (-w, -1, 1, w):
        q = p + d
        if sc.stones[q] == defender:
            n, libs, _ = _fill(sc, q, w, 0, 1)
            if libs == 0:
                for i in range(n):
                    sc.stones[sc.stack[i]] = EMPTY
                    sc.captured[sc.counters[2]] = sc.stack[i]
                    sc.counters[2] += 1
    if _fill(sc, p, w, 0, 1)[1] == 0:
        sc.stones[p] = EMPTY
        return False
    return True


@njit(**NO_ALLOC)
def _take_back_attack(sc, p, defender, log_start):
    """Empty the attacker's point p and put back the stones it captured."""
    sc.stones[p] = EMPTY
    while sc.counters[2] > log_start:
        sc.counters[2] -= 1
        sc.stones[sc.captured[sc.counters[2]]] = defender


@njit(**NO_ALLOC)
def _read(sc, target, lib, w):
    """Return True if the attacker captures the defender's chain at target (one liberty, lib,
    defender to move, and no attacker chain in atari next to the chain or lib) in a ladder,
    reading on sc.stones (left changed)."""
    defender = sc.stones[target]
    sc.counters[1] = 0
    sc.counters[2] = 0
    outcome = _defender_moves(sc, target, lib, w, -1, -1)
    if outcome != CHASED:
        return outcome == CAUGHT
    steps = sc.steps
    depth = 0
    steps[0, 0] = lib
    steps[0, 1] = sc.libs[0]
    steps[0, 2] = sc.libs[1]
    steps[0, 3] = 0
    while depth >= 0:
        tried = steps[depth, 3]
        if tried == 2:
            # Both ataris fail: take back this extension and the atari that forced it.
            sc.stones[steps[depth, 0]] = EMPTY
            depth -= 1
            if depth >= 0:
                _take_back_attack(sc, steps[depth, steps[depth, 3]], defender, steps[depth, 4])
            continue
        steps[depth, 3] = tried + 1
        sc.counters[1] += 1
        if sc.counters[1] > MAX_ATTACKS or depth + 1 >= MAX_STEPS:
            return False
        atari = steps[depth, 1 + tried]
        escape = steps[depth, 2 - tried]
        steps[depth, 4] = sc.counters[2]
        if not _attack(sc, target, atari, w):
            continue
        outcome = _defender_moves(sc, target, escape, w, steps[depth, 0], atari)
        if outcome == CAUGHT:
            return True
        if outcome == ESCAPED:
            _take_back_attack(sc, atari, defender, steps[depth, 4])
            continue
        depth += 1
        steps[depth, 0] = escape
        steps[depth, 1] = sc.libs[0]
        steps[depth, 2] = sc.libs[1]
        steps[depth, 3] = 0
    return False


@njit(**NO_ALLOC)
def _load(sc, b):
    """Copy b's stones into the scratch. Stamps keep growing from read to read, so that the
    marks need clearing only when the counter nears the int32 limit."""
    for p in range(b.stones.shape[0]):
        sc.stones[p] = b.stones[p]
    if sc.counters[0] > STAMP_LIMIT:
        sc.mark[:] = 0
        sc.counters[0] = 0


@njit(**NO_ALLOC)
def _capture_escapes_on_board(b, head, lib, attacker, skip):
    """Return True if, on the board, an attacker chain in atari touches the chain at head or
    the point lib; chains touching the point skip (the attacker's new stone, whose chain the
    caller checks) are left out."""
    w = b.info[WIDTH]
    s = head
    while True:
        if _touches_attacker_in_atari(b, s, attacker, skip, w):
            return True
        s = b.chain_next[s]
        if s == head:
            break
    return _touches_attacker_in_atari(b, lib, attacker, skip, w)


@njit(**NO_ALLOC)
def _touches_attacker_in_atari(b, p, attacker, skip, w):
    """Return True if an attacker chain with one liberty on the board is next to p, leaving
    out chains next to skip."""
    for d in (-w, -1, 1, w):
        q = p + d
        if b.stones[q] != attacker or b.nlibs[b.chain[q]] != 1:
            continue
        if skip >= 0 and (b.chain[skip - w] == b.chain[q] or b.chain[skip - 1] == b.chain[q]
                          or b.chain[skip + 1] == b.chain[q]
                          or b.chain[skip + w] == b.chain[q]):
            continue
        return True
    return False


@njit(**NO_ALLOC)
def caught_in_ladder(b, target, sc):
    """Return True if the chain at target, which has exactly one liberty, is captured in a
    ladder with its owner to move (extending at the liberty does not save it)."""
    head = b.chain[target]
    lib = first_liberty(b, head)
    if _capture_escapes_on_board(b, head, lib, 3 - b.stones[target], -1):
        return False
    _load(sc, b)
    return _read(sc, target, lib, b.info[WIDTH])


@njit(**NO_ALLOC)
def atari_starts_ladder(b, p, target, sc):
    """Return True if the opponent of the two-liberty chain at target, playing its liberty
    p, catches the chain in a ladder. p must capture nothing."""
    w = b.info[WIDTH]
    _load(sc, b)
    attacker = 3 - b.stones[target]
    sc.stones[p] = attacker
    if _fill(sc, p, w, 0, 2)[1] <= 1:
        return False        # suicide, or a self-atari the defender captures
    n, libs, _ = _fill(sc, target, w, 0, 2)
    if libs != 1:
        return False
    lib = sc.libs[0]
    if _capture_escapes_on_board(b, b.chain[target], lib, attacker, p):
        return False
    return _read(sc, target, lib, w)


@njit(**NO_ALLOC)
def _among(points, n, p):
    """Return True if p is one of points[:n]."""
    for i in range(n):
        if points[i] == p:
            return True
    return False


@njit(**NO_ALLOC)
def futile_escapes(b, color, sc, out):
    """Write into out the liberties of color's chains in atari next to the last move whose
    extension there runs into a working ladder (caught_in_ladder), at most out's length;
    return how many. Each step of a ladder is such an atari, and each extension loses more
    stones; a network without ladder planes ranks it high, as the move that usually saves a
    chain in atari. Chains left in atari earlier are not asked about: their liberty may
    matter for other reasons, and nobody is chasing them."""
    last = b.info[LAST_MOVE]
    if last < 0:
        return 0
    w = b.info[WIDTH]
    n = 0
    for d in (-w, -1, 1, w):
        q = last + d
        if n == out.shape[0]:
            break
        if b.stones[q] != color or b.nlibs[b.chain[q]] != 1:
            continue
        lib = first_liberty(b, b.chain[q])
        if not _among(out, n, lib) and caught_in_ladder(b, q, sc):
            out[n] = lib
            n += 1
    return n


@njit(**NO_ALLOC)
def caught_escapes(b, color, sc, out):
    """Write into out the liberties of color's chains in atari, anywhere on the board, whose
    extension there runs into a working ladder (caught_in_ladder), each point once and at
    most out's length; return how many."""
    n = 0
    for p in range(b.stones.shape[0]):
        if n == out.shape[0]:
            break
        if b.stones[p] != color or b.chain[p] != p or b.nlibs[p] != 1:
            continue
        lib = first_liberty(b, p)
        if not _among(out, n, lib) and caught_in_ladder(b, p, sc):
            out[n] = lib
            n += 1
    return n


@njit(**NO_ALLOC)
def _captures_next_to(b, p, color):
    """Return True if color playing at p captures a chain of the other colour (one in atari
    next to p)."""
    w = b.info[WIDTH]
    for d in (-w, -1, 1, w):
        q = p + d
        if b.stones[q] == 3 - color and b.nlibs[b.chain[q]] == 1:
            return True
    return False


@njit(**NO_ALLOC)
def ladder_moves(b, color, sc, captures, escapes, libs):
    """Write into captures the points where color's atari catches a chain of the other colour
    with two liberties in a working ladder (atari_starts_ladder; ataris that capture
    something are left out), and into escapes the liberties of color's chains in atari whose
    extension runs into a working ladder (caught_in_ladder), each point once and at most the
    arrays' lengths; libs (two or more ints) is scratch. Return (captures, escapes) found.
    These are AlphaGo's ladder capture and ladder escape input planes, the second as the
    escapes that fail: the network cannot read a ladder across the board, and these moves
    are the ones it gets wrong."""
    opp = 3 - color
    ncap = 0
    for p in range(b.stones.shape[0]):
        if b.stones[p] != opp or b.chain[p] != p or b.nlibs[p] != 2:
            continue
        chain_liberties(b, p, libs)
        for i in range(2):
            lib = libs[i]
            if ncap == captures.shape[0] or _captures_next_to(b, lib, color):
                continue
            if not _among(captures, ncap, lib) and atari_starts_ladder(b, lib, p, sc):
                captures[ncap] = lib
                ncap += 1
    return ncap, caught_escapes(b, color, sc, escapes)
