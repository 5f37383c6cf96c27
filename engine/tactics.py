"""Capture and liberty-race reading in numba, for the search's priors near the last move.

The playouts judge a fight by random continuations, so a chain with two or three liberties
that the side to move must save (or may kill) looks no different from a settled one until the
tree happens to read the capture. This reader answers the local question directly, in the
manner of GNU Go's attack/defend readers, only much smaller: the attacker plays the chain's
liberties (or saves its own chains in atari next to it), the defender extends at its
liberties, captures attacker chains in atari next to it or takes liberties from attacker
chains no better off than itself (a capturing race). A chain in atari with the defender to
move is handed to the ladder reader; a chain with four liberties or more has escaped.

Reading is depth-first on a stack of board copies (one per ply), bounded by MAX_PLIES and a
budget of positions; anything left unread counts as an escape, so that a killing move is
only claimed when it is read out, and a chain only called in danger when its capture is.
"""
from collections import namedtuple

import numpy as np
from numba import njit

from engine import board as bd
from engine.ladder import caught_in_ladder, new_ladder_scratch
from engine.playout import add_candidate

# Plies a reading may go down, positions one question may visit, and positions all the
# questions of one tactical_moves call may visit (its worst case on 19x19 game positions was
# 55 ms before this cap, its mean 0.46 ms).
MAX_PLIES = 10
READ_BUDGET = 300
CALL_BUDGET = 1500
# A chain with more liberties than this (the attacker to move) is not read: it escapes.
MAX_LIBERTIES = 3
# Candidate moves per ply, and chains per query.
MAX_CANDIDATES = 12
MAX_CHAINS = 16

TacticsScratch = namedtuple("TacticsScratch", [
    "boards",    # tuple of MAX_PLIES + 1 Boards: the position at each ply
    "moves",     # int32[MAX_PLIES + 1, MAX_CANDIDATES]: candidates at each ply
    "libs",      # int32[S]: liberties of one chain
    "heads",     # int32[MAX_CHAINS]: chains met by the current scan
    "chains",    # int32[MAX_CHAINS]: the chains one tactical_moves call asks about
    "first",     # int32[MAX_CANDIDATES]: the side to move's candidates against one of them
    "plies",     # int32[2, MAX_PLIES + 1]: candidates at each ply, and how many are tried
    "ladder",    # the ladder reader's scratch
    "counters",  # int64[2]: positions visited by the current question, by the current call
])


def new_tactics_scratch(board):
    """Return the reader's scratch for boards like `board` (a Board of the game's size)."""
    boards = tuple(bd.copy_board(board) for _ in range(MAX_PLIES + 1))
    points = board.stones.shape[0]
    return TacticsScratch(boards, np.zeros((MAX_PLIES + 1, MAX_CANDIDATES), np.int32),
                          np.zeros(points, np.int32), np.zeros(MAX_CHAINS, np.int32),
                          np.zeros(MAX_CHAINS, np.int32), np.zeros(MAX_CANDIDATES, np.int32),
                          np.zeros((2, MAX_PLIES + 1), np.int32), new_ladder_scratch(points),
                          np.zeros(2, np.int64))


@njit(**bd.NO_ALLOC)
def _neighbour_chains(b, head, color, max_libs, heads):
    """Write into heads the chains of color next to the chain at head with at most max_libs
    liberties; return how many."""
    w = b.info[bd.WIDTH]
    n = 0
    s = head
    while True:
        for d in (-w, -1, 1, w):
            q = s + d
            if b.stones[q] == color and b.nlibs[b.chain[q]] <= max_libs:
                n = add_candidate(heads, n, b.chain[q])
        s = b.chain_next[s]
        if s == head:
            break
    return n


@njit(**bd.NO_ALLOC)
def _add_liberties(b, head, out, n, libs):
    """Append the liberties of the chain at head to out[:n]; return the new count."""
    k = bd.chain_liberties(b, head, libs)
    for i in range(k):
        n = add_candidate(out, n, libs[i])
    return n


@njit(**bd.NO_ALLOC)
def _attack_moves(sc, b, head, out):
    """The attacker's candidates against the chain at head: its liberties, then the
    liberties of the attacker's chains in atari next to it (saving a cutting stone)."""
    n = _add_liberties(b, head, out, 0, sc.libs)
    attacker = 3 - b.stones[head]
    k = _neighbour_chains(b, head, attacker, 1, sc.heads)
    for i in range(k):
        n = _add_liberties(b, sc.heads[i], out, n, sc.libs)
    return n


@njit(**bd.NO_ALLOC)
def _defence_moves(sc, b, head, out):
    """The defender's candidates for the chain at head: the liberties of attacker chains
    next to it in atari (captures), its own liberties, then the liberties of attacker chains
    next to it with no more liberties than it has (a liberty race)."""
    attacker = 3 - b.stones[head]
    own = b.nlibs[head]
    k = _neighbour_chains(b, head, attacker, own, sc.heads)
    n = 0
    for i in range(k):
        if b.nlibs[sc.heads[i]] == 1:
            n = _add_liberties(b, sc.heads[i], out, n, sc.libs)
    n = _add_liberties(b, head, out, n, sc.libs)
    for i in range(k):
        if b.nlibs[sc.heads[i]] > 1:
            n = _add_liberties(b, sc.heads[i], out, n, sc.libs)
    return n


@njit(**bd.NO_ALLOC)
def _settled(sc, ply, target, defender, attacker_to_move):
    """Return 1 if the defender's chain at target is captured in sc.boards[ply], 0 if it has
    escaped or may not be read further, -1 if the reading goes on."""
    b = sc.boards[ply]
    if b.stones[target] != defender:
        return 1
    libs = b.nlibs[b.chain[target]]
    if libs == 1:
        if attacker_to_move or caught_in_ladder(b, target, sc.ladder):
            return 1
        return 0
    if libs > MAX_LIBERTIES or ply >= MAX_PLIES or sc.counters[0] >= READ_BUDGET:
        return 0
    return -1


@njit(**bd.NO_ALLOC)
def _candidates(sc, ply, target, attacker_to_move):
    """Fill sc.moves[ply] with the candidates of the side to move at ply; return how many."""
    b = sc.boards[ply]
    if attacker_to_move:
        return _attack_moves(sc, b, b.chain[target], sc.moves[ply])
    return _defence_moves(sc, b, b.chain[target], sc.moves[ply])


@njit(**bd.NO_ALLOC)
def _captured(sc, target, defender, attacker_to_move):
    """Return True if the attacker captures the defender's chain at target in sc.boards[0],
    the attacker moving first when attacker_to_move. An AND/OR search with an explicit stack
    (numba's cache cannot hold recursive functions): at a ply where the attacker moves, one
    capturing line is enough; where the defender moves, every line must capture. Unread
    lines count as escapes."""
    settled = _settled(sc, 0, target, defender, attacker_to_move)
    if settled >= 0:
        return settled == 1
    count = sc.plies[0]
    tried = sc.plies[1]
    tried[0] = 0
    count[0] = _candidates(sc, 0, target, attacker_to_move)
    ply = 0
    while True:
        attacking = attacker_to_move == (ply % 2 == 0)
        if tried[ply] >= count[ply]:
            value = not attacking       # every move at this ply failed its side
        else:
            p = sc.moves[ply, tried[ply]]
            tried[ply] += 1
            child = sc.boards[ply + 1]
            bd.copy_into(child, sc.boards[ply])
            if bd.play(child, p, 3 - defender if attacking else defender) != bd.OK:
                continue
            sc.counters[0] += 1
            settled = _settled(sc, ply + 1, target, defender, not attacking)
            if settled < 0:
                ply += 1
                tried[ply] = 0
                count[ply] = _candidates(sc, ply, target, not attacking)
                continue
            value = settled == 1
            if value != attacking:
                continue                # this move fails its side: try the next one
        # The ply is decided with value; hand it up until a ply that must look further.
        while True:
            if ply == 0:
                return value
            ply -= 1
            if value != (attacker_to_move == (ply % 2 == 0)):
                break


@njit(cache=True, nogil=True)
def captured_after(sc, b, p, mover, target, attacker_to_move):
    """Play p for mover on a copy of b (p < 0: no move) and return True if the chain at
    target is then captured, the attacker moving first when attacker_to_move; False also
    when p is illegal."""
    root = sc.boards[0]
    bd.copy_into(root, b)
    if p >= 0 and bd.play(root, p, mover) != bd.OK:
        return False
    sc.counters[0] = 0
    captured = _captured(sc, target, b.stones[target], attacker_to_move)
    sc.counters[1] += sc.counters[0]
    return captured


@njit(cache=True, nogil=True)
def tactical_moves(b, color, sc, out):
    """Write into out the moves for color that settle a fight at the last move: for each
    chain there (the last move's, those next to it and next to its chain) with at most
    MAX_LIBERTIES liberties, the moves that kill an opponent chain the opponent could
    otherwise save, and the moves that save a chain of color's that the opponent could
    otherwise capture. Return how many (at most out's length). The questions stop once
    they have visited CALL_BUDGET positions."""
    last = b.info[bd.LAST_MOVE]
    if last < 0 or b.stones[last] == bd.EMPTY:
        return 0
    w = b.info[bd.WIDTH]
    chains = sc.chains
    k = add_candidate(chains, 0, b.chain[last])
    for d in (-w, -1, 1, w):
        q = last + d
        if b.stones[q] == bd.BLACK or b.stones[q] == bd.WHITE:
            k = add_candidate(chains, k, b.chain[q])
    for owner in (bd.BLACK, bd.WHITE):
        found = _neighbour_chains(b, b.chain[last], owner, MAX_LIBERTIES, sc.heads)
        for i in range(found):
            k = add_candidate(chains, k, sc.heads[i])
    candidates = sc.first
    # A typed "no move" and a computed side (not the constants -1, True, False): numba
    # compiles a callee once per literal argument, and captured_after is the reader's bulk.
    no_move = np.int32(-1)
    n = 0
    sc.counters[1] = 0
    for c in range(k):
        head = chains[c]
        if b.nlibs[head] > MAX_LIBERTIES or sc.counters[1] >= CALL_BUDGET:
            continue
        # Our chain: is it captured with the opponent moving first, and which of our moves
        # saves it? Theirs: does it live with them moving first, and which move kills it?
        # Either way a move counts when the answer after it differs from `ours`.
        ours = b.stones[head] == color
        if captured_after(sc, b, no_move, color, head, ours) != ours:
            continue        # our chain is safe anyway, or theirs is dead anyway
        if ours:
            m = _defence_moves(sc, b, head, candidates)
        else:
            m = _attack_moves(sc, b, head, candidates)
        for i in range(m):
            if bd.is_legal(b, candidates[i], color) \
                    and captured_after(sc, b, candidates[i], color, head, ours) != ours:
                n = add_candidate(out, n, candidates[i])
    return n


def warm_up():
    """Compile tactical_moves (or load it from the cache) on a race that reads every kind of
    question: a chain to save, one to kill, a ladder."""
    b = bd.new_board(7)
    w = b.info[bd.WIDTH]
    rows = ("XXXX...", "OOOX...", "XXOX...")     # rows 4 down to 2, from A: tests' RACE
    for i, row in enumerate(rows):
        for x, c in enumerate(row):
            if c != ".":
                bd.place_stone(b, (4 - i) * w + x + 1, bd.BLACK if c == "X" else bd.WHITE)
    bd.play(b, w + 3, bd.WHITE)       # C1
    tactical_moves(b, bd.BLACK, new_tactics_scratch(b), np.zeros(MAX_CANDIDATES, np.int32))
