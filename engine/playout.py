"""Monte-Carlo playouts in numba: a seeded xorshift generator and the default policy.

The default policy follows Pachi's moggy: ordered rules around the last move, each tried with
its own probability, then a random move. The rules: capture or escape for groups put in atari
by the last move (no escape into a ladder that engine.ladder reads as lost); ko recapture
after a threat; atari on 2-liberty groups of the last move; the vital point of a 3-6 point eye
space (nakade); 3x3 patterns around the last two moves.
Every candidate must be legal, must not fill the mover's own eye, and (except nakade) must not
be a self-atari of more than `selfatari_max` stones that captures nothing, unless it is a
throw-in that leaves the opponent capturing a dead shape (is_nakade_throw_in). With every
rule's probability at 0 and self-atari allowed, the policy is the uniform random one.
"""
from collections import namedtuple
from dataclasses import dataclass

import numpy as np
from numba import njit

from engine.board import (BLACK, EMPTY, LAST_KO_COLOR, LAST_KO_MOVE, LAST_KO_POINT, LAST_MOVE,
                          LAST_MOVE2, MOVE_NUMBER, NEMPTY, NO_ALLOC, NO_ALLOC_INLINE,
                          PASS, SIZE, TO_PLAY, WHITE, WIDTH, area_owner, copy_into,
                          first_liberty, is_legal, is_true_eye_like, lowest_bit_index,
                          play_inlined, popcount64)
from engine.ladder import caught_in_ladder, new_ladder_scratch
from engine.patterns import pattern_table

# Slots of the policy parameter array.
(R_CAPTURE, R_KO, R_ATARI2, R_NAKADE, R_PATTERN, R_SELFATARI_MAX,
 R_SELFATARI_REJECT) = range(7)
POLICY_SLOTS = 7
MAX_CANDIDATES = 64

Policy = namedtuple("Policy", [
    "rates",      # float64[POLICY_SLOTS]
    "patterns",   # bool[65536]: 3x3 codes of pattern moves
])


@dataclass
class PolicyConfig:
    """Probabilities of the default policy's rules (0 disables a rule)."""
    capture: float = 0.9
    ko: float = 0.2
    atari2: float = 0.5
    nakade: float = 0.8
    pattern: float = 0.9
    selfatari_max: int = 1
    selfatari_reject: float = 0.95

    def build(self):
        """Return the Policy tuple the jitted playouts read."""
        rates = np.zeros(POLICY_SLOTS, np.float64)
        rates[R_CAPTURE] = self.capture
        rates[R_KO] = self.ko
        rates[R_ATARI2] = self.atari2
        rates[R_NAKADE] = self.nakade
        rates[R_PATTERN] = self.pattern
        rates[R_SELFATARI_MAX] = self.selfatari_max
        rates[R_SELFATARI_REJECT] = self.selfatari_reject
        return Policy(rates, pattern_table())


def uniform_policy():
    """Return a Policy that plays uniformly random legal moves except own eyes."""
    return PolicyConfig(0.0, 0.0, 0.0, 0.0, 0.0, 1000, 0.0).build()


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


# Tactics ---------------------------------------------------------------------------------

@njit(**NO_ALLOC)
def captures_something(b, p, color):
    """Return True if color playing p captures an opponent chain (one in atari next to p)."""
    w = b.info[WIDTH]
    opponent = 3 - color
    for d in (-w, -1, 1, w):
        n = p + d
        if b.stones[n] == opponent and b.nlibs[b.chain[n]] == 1:
            return True
    return False


@njit(**NO_ALLOC)
def liberties_after(b, p, color, words):
    """Return the liberty count of color's chain at p after playing there, ignoring captures.

    words is a scratch uint64 array with one word per 64 board points.
    """
    w = b.info[WIDTH]
    for k in range(words.shape[0]):         # a slice assignment would call memset
        words[k] = 0
    for d in (-w, -1, 1, w):
        n = p + d
        s = b.stones[n]
        if s == EMPTY:
            words[n >> 6] |= np.uint64(1) << np.uint64(n & 63)
        elif s == color:
            head = b.chain[n]
            for k in range(words.shape[0]):
                words[k] |= b.libs[head, k]
    words[p >> 6] &= ~(np.uint64(1) << np.uint64(p & 63))
    total = 0
    for k in range(words.shape[0]):
        total += popcount64(words[k])
    return total


@njit(**NO_ALLOC)
def joined_chains(b, p, color):
    """Return (size, h0, h1, h2, h3) of color's chain at p after playing there: its stone
    count and the heads of the chains of color that p joins (-1 for none)."""
    w = b.info[WIDTH]
    total = 1
    h0 = -1
    h1 = -1
    h2 = -1
    h3 = -1
    for d in (-w, -1, 1, w):
        n = p + d
        if b.stones[n] == color:
            head = b.chain[n]
            if head != h0 and head != h1 and head != h2:
                total += b.chain_size[head]
                if h0 < 0:
                    h0 = head
                elif h1 < 0:
                    h1 = head
                elif h2 < 0:
                    h2 = head
                else:
                    h3 = head
    return total, h0, h1, h2, h3


@njit(**NO_ALLOC)
def stones_after(b, p, color):
    """Return the size of color's chain at p after playing there."""
    return joined_chains(b, p, color)[0]


@njit(**NO_ALLOC_INLINE)
def _surely_two_liberties(b, p, color):
    """Return True when color's chain at p surely has two liberties or more after color plays
    there: p has two empty neighbours, or joins a chain of color with three liberties (losing
    p still leaves it two). False means: count them."""
    w = b.info[WIDTH]
    empty_neighbours = 0
    for d in (-w, -1, 1, w):
        n = p + d
        s = b.stones[n]
        if s == EMPTY:
            empty_neighbours += 1
        elif s == color and b.nlibs[b.chain[n]] >= 3:
            return True
    return empty_neighbours >= 2


@njit(**NO_ALLOC_INLINE)
def is_bad_selfatari(b, p, color, max_stones, words):
    """Return True if playing p leaves color's chain with one liberty, captures nothing and
    the chain has more than max_stones stones, and it is no nakade throw-in."""
    # Compiled into the caller: this quick part settles most points without a call.
    if _surely_two_liberties(b, p, color):
        return False
    return _short_of_liberties(b, p, color, max_stones, words)


@njit(**NO_ALLOC)
def _short_of_liberties(b, p, color, max_stones, words):
    """The rest of is_bad_selfatari, for a point with at most one empty neighbour."""
    if captures_something(b, p, color):
        return False
    if liberties_after(b, p, color, words) >= 2:
        return False
    return stones_after(b, p, color) > max_stones and not is_nakade_throw_in(b, p, color)


@njit(**NO_ALLOC)
def _in_new_chain(b, q, p, color, h0, h1, h2, h3):
    """Return True if q belongs to color's chain once color plays p: p itself or a stone of
    one of the chains with heads h0-h3 (-1 for none) that p joins."""
    if q == p:
        return True
    if b.stones[q] != color:
        return False
    head = b.chain[q]
    return head == h0 or head == h1 or head == h2 or head == h3


@njit(**NO_ALLOC)
def _has_liberty(b, head, q):
    """Return True if q is a liberty of the chain with this head."""
    return ((b.libs[head, q >> 6] >> np.uint64(q & 63)) & np.uint64(1)) != 0


@njit(**NO_ALLOC)
def _throw_in_links(b, s, p, color, h0, h1, h2, h3, liberty):
    """Return how many neighbours of s, a stone of color's chain once color plays p, are in
    that chain; -1 if some opponent chain next to s keeps a liberty other than `liberty`."""
    w = b.info[WIDTH]
    links = 0
    for d in (-w, -1, 1, w):
        n = s + d
        if b.stones[n] == 3 - color:
            head = b.chain[n]
            kept = b.nlibs[head] - (1 if _has_liberty(b, head, p) else 0)
            if kept != 1 or not _has_liberty(b, head, liberty):
                return -1
        elif _in_new_chain(b, n, p, color, h0, h1, h2, h3):
            links += 1
    return links


@njit(**NO_ALLOC)
def is_nakade_throw_in(b, p, color):
    """Return True if color's self-atari at p, which must capture nothing, is a throw-in that
    kills from the inside: the new chain (at most six stones) leaves every opponent chain it
    touches with one liberty, the new chain's own, so the opponent has no eye or liberty
    elsewhere and must capture, and the captured stones make a dead shape, one that the
    thrower, moving next, reduces to one eye: up to three points, the square or pyramid
    four, the bulky or crossed five, the rabbity six. Playouts that never throw in count
    such a group alive (Pachi's self-atari check lets nakade through for the same reason)."""
    stones, h0, h1, h2, h3 = joined_chains(b, p, color)
    if stones > 6:
        return False
    # The new chain's one liberty: an empty neighbour of p, or a joined chain's other one.
    w = b.info[WIDTH]
    liberty = -1
    for d in (-w, -1, 1, w):
        if b.stones[p + d] == EMPTY:
            liberty = p + d
    for head in (h0, h1, h2, h3):
        if head >= 0 and liberty < 0:
            liberty = _other_liberty(b, head, p)
    if liberty < 0:
        return False
    links = _throw_in_links(b, p, p, color, h0, h1, h2, h3, liberty)
    if links < 0:
        return False
    most_links = links
    for head in (h0, h1, h2, h3):
        if head < 0:
            continue
        s = head
        while True:
            own = _throw_in_links(b, s, p, color, h0, h1, h2, h3, liberty)
            if own < 0:
                return False
            links += own
            most_links = max(most_links, own)
            s = b.chain_next[s]
            if s == head:
                break
    edges = links // 2
    if stones <= 3:
        return True
    if stones == 4:
        return most_links == 3 or edges == 4
    if stones == 5:
        return most_links == 4 or edges == 5
    return most_links == 4 and edges == 6


@njit(**NO_ALLOC)
def _other_liberty(b, head, p):
    """Return a liberty of the chain with this head other than p, or -1."""
    for word in range(b.libs.shape[1]):
        bits = b.libs[head, word]
        while bits != 0:
            q = word * 64 + lowest_bit_index(bits)
            if q != p:
                return q
            bits &= bits - np.uint64(1)
    return -1


@njit(**NO_ALLOC_INLINE)
def _acceptable(b, p, color, policy, words, rng):
    """Return True if p is legal for color, not its own eye, and not a rejected self-atari."""
    if p < 0 or b.stones[p] != EMPTY:
        return False
    if is_true_eye_like(b, p, color) or not is_legal(b, p, color):
        return False
    if is_bad_selfatari(b, p, color, policy.rates[R_SELFATARI_MAX], words):
        return rand_float(rng) >= policy.rates[R_SELFATARI_REJECT]
    return True


@njit(**NO_ALLOC)
def add_candidate(cands, n, p):
    """Append p to the candidate list unless full or already there; return the new count."""
    if n >= cands.shape[0]:
        return n
    for i in range(n):
        if cands[i] == p:
            return n
    cands[n] = p
    return n + 1


@njit(**NO_ALLOC_INLINE)
def _pick(b, color, cands, n, policy, words, rng):
    """Return a candidate drawn uniformly among the acceptable ones, or PASS. Draws without
    replacement, shuffling cands as it goes: scanning on from a random start would give a
    candidate listed after unacceptable ones their share too."""
    for i in range(n):
        j = i + rand_below(rng, n - i)
        p = cands[j]
        cands[j] = cands[i]
        cands[i] = p
        if _acceptable(b, p, color, policy, words, rng):
            return p
    return PASS


@njit(**NO_ALLOC_INLINE)
def atari_moves(b, color, last, cands, words, ladder):
    """Write capture and escape moves for the atari situations around the last move into
    cands; return how many. Captures the last move's chain if it is in atari; for our chains
    next to it that it put in atari: capture an adjacent opponent chain in atari, or extend
    at the liberty when that gives three liberties, or two and no ladder catches the chain
    (ladder is the reader's scratch)."""
    w = b.info[WIDTH]
    opponent = 3 - color
    n = 0
    if b.stones[last] == opponent and b.nlibs[b.chain[last]] == 1:
        n = add_candidate(cands, n, first_liberty(b, b.chain[last]))
    for d in (-w, -1, 1, w):
        q = last + d
        if b.stones[q] != color or b.nlibs[b.chain[q]] != 1:
            continue
        head = b.chain[q]
        s = head
        while True:
            for e in (-w, -1, 1, w):
                t = s + e
                if b.stones[t] == opponent and b.nlibs[b.chain[t]] == 1:
                    n = add_candidate(cands, n, first_liberty(b, b.chain[t]))
            s = b.chain_next[s]
            if s == head:
                break
        lib = first_liberty(b, head)
        if captures_something(b, lib, color) or escapes_atari(b, lib, color, head, words,
                                                              ladder):
            n = add_candidate(cands, n, lib)
    return n


@njit(**NO_ALLOC)
def escapes_atari(b, lib, color, head, words, ladder):
    """Return True if color extending its chain (head) at its last liberty lib gets three
    liberties, or two and the chain is not caught in a ladder."""
    libs = liberties_after(b, lib, color, words)
    return libs >= 3 or libs == 2 and not caught_in_ladder(b, head, ladder)


@njit(**NO_ALLOC_INLINE)
def atari2_moves(b, color, last, cands, words):
    """Write the liberties of the last move's chain when it has two (playing one puts it in
    atari) into cands, when that is no self-atari; return how many. (The opponent's stones
    next to the last move all belong to that chain.)"""
    n = 0
    if b.stones[last] != 3 - color:
        return n
    head = b.chain[last]
    if b.nlibs[head] != 2:
        return n
    for k in range(b.libs.shape[1]):
        bits = b.libs[head, k]
        while bits != 0:
            p = k * 64 + popcount64((bits & (~bits + np.uint64(1))) - np.uint64(1))
            bits &= bits - np.uint64(1)
            if _two_liberties_after(b, p, color, words):
                n = add_candidate(cands, n, p)
    return n


@njit(**NO_ALLOC_INLINE)
def _two_liberties_after(b, p, color, words):
    """Return liberties_after(b, p, color, words) >= 2, without its bit sets where
    _surely_two_liberties settles it."""
    return _surely_two_liberties(b, p, color) or liberties_after(b, p, color, words) >= 2


@njit(**NO_ALLOC_INLINE)
def nakade_point(b, last, region):
    """Return the vital point of a 3-6 point empty region next to the last move that is
    bordered by stones of one colour only, or -1 (also when the shape has no unique one).
    region is int64 scratch of at least 6 entries."""
    w = b.info[WIDTH]
    own = b.stones[last]
    if own != BLACK and own != WHITE:
        return -1
    # The last move's stone borders every candidate region, so meeting the other colour
    # rules a region out at once (most regions in open play end the search that way).
    other = 3 - own
    count = 0
    for d in (-w, -1, 1, w):
        start = last + d
        if b.stones[start] != EMPTY:
            continue
        # The answer is the same from every point of a region: skip a start that the last
        # search reached (in open play the last move's liberties are one region).
        explored = False
        for j in range(count):
            if region[j] == start:
                explored = True
                break
        if explored:
            continue
        count = 1
        region[0] = start
        i = 0
        rejected = False
        while i < count and not rejected:
            q = region[i]
            i += 1
            for e in (-w, -1, 1, w):
                t = q + e
                s = b.stones[t]
                if s == EMPTY:
                    seen = False
                    for j in range(count):
                        if region[j] == t:
                            seen = True
                            break
                    if not seen:
                        if count == 6:
                            rejected = True
                            break
                        region[count] = t
                        count += 1
                elif s == other:
                    rejected = True
                    break
        if rejected or count < 3:
            continue
        best = -1
        best_links = -1
        unique = False
        for j in range(count):
            links = 0
            for e in (-w, -1, 1, w):
                for k in range(count):
                    if region[k] == region[j] + e:
                        links += 1
            if links > best_links:
                best_links = links
                best = region[j]
                unique = True
            elif links == best_links:
                unique = False
        if unique and best_links >= 2:
            return best
    return -1


@njit(**NO_ALLOC_INLINE)
def pattern_moves(b, policy, last, last2, cands):
    """Write empty points around the last two moves whose 3x3 shape matches a pattern into
    cands; return how many."""
    w = b.info[WIDTH]
    n = 0
    for m in (last, last2):
        if m == PASS:
            continue
        for d in (-w - 1, -w, -w + 1, -1, 1, w - 1, w, w + 1):
            q = m + d
            if b.stones[q] == EMPTY and policy.patterns[b.nbr_code[q]]:
                n = add_candidate(cands, n, q)
    return n


@njit(**NO_ALLOC_INLINE)
def random_move(b, color, policy, words, rng):
    """Return a random acceptable point for color (legal, not its own eye, no rejected
    self-atari), or PASS when there is none."""
    n = b.info[NEMPTY]
    # Draws without replacement, as _pick does, shuffling the empty list (whose order is
    # free) as it goes, so each acceptable point is equally likely whatever the list's order.
    for i in range(n):
        j = i + rand_below(rng, n - i)
        p = b.empties[j]
        q = b.empties[i]
        b.empties[i] = p
        b.empty_index[p] = i
        b.empties[j] = q
        b.empty_index[q] = j
        if _acceptable(b, p, color, policy, words, rng):
            return p
    return PASS


@njit(**NO_ALLOC_INLINE)
def policy_move(b, color, policy, cands, words, ladder, rng):
    """Return the default policy's move for color: the first rule (in order, each tried with
    its probability) that yields an acceptable move, else a random move."""
    last = b.info[LAST_MOVE]
    rates = policy.rates
    if last != PASS:
        if rates[R_CAPTURE] > 0 and rand_float(rng) < rates[R_CAPTURE]:
            p = _pick(b, color, cands, atari_moves(b, color, last, cands, words, ladder), policy,
                      words, rng)
            if p != PASS:
                return p
        if rates[R_KO] > 0 and b.info[LAST_KO_COLOR] == color \
                and b.info[LAST_KO_MOVE] == b.info[MOVE_NUMBER] - 3 \
                and rand_float(rng) < rates[R_KO]:
            p = b.info[LAST_KO_POINT]
            if b.stones[p] == EMPTY and is_legal(b, p, color):
                return p
        if rates[R_ATARI2] > 0 and rand_float(rng) < rates[R_ATARI2]:
            p = _pick(b, color, cands, atari2_moves(b, color, last, cands, words), policy,
                      words, rng)
            if p != PASS:
                return p
        if rates[R_NAKADE] > 0 and rand_float(rng) < rates[R_NAKADE]:
            p = nakade_point(b, last, cands)
            if p >= 0 and is_legal(b, p, color):
                return p
        if rates[R_PATTERN] > 0 and rand_float(rng) < rates[R_PATTERN]:
            n = pattern_moves(b, policy, last, b.info[LAST_MOVE2], cands)
            p = _pick(b, color, cands, n, policy, words, rng)
            if p != PASS:
                return p
    return random_move(b, color, policy, words, rng)


@njit(cache=True, nogil=True)
def run_playout(b, policy, rng, max_moves, record, ladder):
    """Play b out with the default policy (in place) until two passes in a row (passes before
    the playout do not count) or max_moves; return the number of moves played, whose points
    (PASS included; colours alternate from the side to move) go into record[:moves]. ladder
    is the ladder reader's scratch (engine.ladder.new_ladder_scratch)."""
    cands = np.empty(MAX_CANDIDATES, np.int64)
    words = np.empty(b.libs.shape[1], np.uint64)
    return _play_out(b, policy, rng, max_moves, record, ladder, cands, words)


@njit(**NO_ALLOC)
def _play_out(b, policy, rng, max_moves, record, ladder, cands, words):
    """run_playout's move loop, with the policy compiled into it."""
    moves = 0
    passes = 0
    while passes < 2 and moves < max_moves:
        color = b.info[TO_PLAY]
        p = policy_move(b, color, policy, cands, words, ladder, rng)
        play_inlined(b, p, color)
        record[moves] = p
        passes = passes + 1 if p == PASS else 0
        moves += 1
    return moves


@njit(cache=True, nogil=True)
def playout_ownership(b, komi, runs, policy, rng, scratch, owner_sum):
    """Run `runs` playouts from b; add +1 (black) / -1 (white) per owned point to owner_sum
    and return the fraction of runs black won, a jigo counting half. b is left unchanged."""
    owner = np.empty(b.stones.shape[0], np.int8)
    size = b.info[SIZE]
    max_moves = 3 * size * size
    record = np.empty(max_moves, np.int32)
    ladder = new_ladder_scratch(b.stones.shape[0])
    black_wins = 0.0
    for _ in range(runs):
        copy_into(scratch, b)
        run_playout(scratch, policy, rng, max_moves, record, ladder)
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
            black_wins += 1.0
        elif score == 0:
            black_wins += 0.5
    return black_wins / max(runs, 1)
