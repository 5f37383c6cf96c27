"""Multithreaded UCT over a preallocated node pool, with numba workers that run without the GIL.

Each expanded node owns a contiguous run of edges; the children's statistics (move, visits,
wins, virtual loss, prior, child node) live in flat edge arrays, so selection is one loop over a
slice. Worker threads descend with virtual loss and darkforest's uniform noise on win rates,
claim expansions and node slots with atomic compare-and-swap, run a playout from the leaf and
back the result up with atomic adds. Wins are counted in half points (2 per win, 1 per jigo).

Two tree policies choose among a node's edges: darkforest's (UCB1 over the net's top moves, the
prior only a bias that fades with visits) and PUCT (AlphaGo's and Leela's: the prior scales the
exploration term, so the search spends its playouts where the net looks unless the results
say otherwise). With a value head, the net's evaluation of each expanded leaf is backed up
along its path into separate statistics and mixed with the playouts' win rate (AlphaGo).
Score-aware search (KataGo's score utility): each playout's final score is backed up too, and
a move's mean score, measured from the root's expected score, gives a utility mixed into the
win rate by score_weight, so that a decided game still tells moves apart by the points they keep.
"""
import logging
import math
import threading
import time
from collections import namedtuple
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from engine import board as bd
from engine import playout as po
from engine.atomics import atomic_add, atomic_cas
from engine.ladder import atari_starts_ladder, futile_escapes, new_ladder_scratch
from engine.shapes import cached_model, empty_model, nothing_near, rate_moves
from engine.tactics import new_tactics_scratch, tactical_moves
from nets.server import EvalServer

log = logging.getLogger("search")

UNEXPANDED, EXPANDING, EXPANDED = 0, 1, 2

# Slots of the float64 parameter array handed to the workers.
(P_UCT_C, P_FPU, P_NOISE, P_EXPAND_VISITS, P_VIRTUAL_LOSS, P_KOMI, P_PRIOR_WEIGHT, P_NET,
 P_TOP_K, P_TOP_CUMULATIVE, P_RAVE_BIAS, P_PRIOR_EQEX, P_TREE_POLICY, P_PUCT_C,
 P_FPU_REDUCTION, P_VALUE_WEIGHT, P_EARLY_STOP, P_SCORE_WEIGHT, P_SCORE_CENTER,
 P_SCORE_SCALE, P_SHAPE_EQEX, P_RAVE_DISTANCE, P_VALUE_EQEX) = range(23)
PARAM_SLOTS = 23
# Search steps between checks whether the move is decided (see decided).
DECIDED_CHECK_EVERY = 64
# What a worker writes into the stop flag when it finds the move decided (others write 1).
STOP_DECIDED = 2

# Tree policies (P_TREE_POLICY).
DARKFOREST, PUCT = 0, 1
TREE_POLICIES = {"darkforest": DARKFOREST, "puct": PUCT}

# Network values are backed up as integer wins of VALUE_SCALE per won evaluation (atomic adds
# are integer only).
VALUE_SCALE = 1000

# Slots of the tree's counters.
C_NODES, C_EDGES, C_PLAYOUTS_DONE, C_PLAYOUTS_CLAIMED = range(4)

MAX_DEPTH = 2048

Tree = namedtuple("Tree", [
    "node_first",    # int32[nodes]: index of the node's first edge (valid when EXPANDED)
    "node_count",    # int32[nodes]: number of edges
    "node_visits",   # int32[nodes]: finished descents through the node
    "node_state",    # int32[nodes]: UNEXPANDED, EXPANDING or EXPANDED
    "edge_move",     # int32[edges]: board point of the move
    "edge_visits",   # int32[edges]: finished descents through the edge
    "edge_wins",     # int32[edges]: half-point wins for the player who makes the move
    "edge_virtual",  # int32[edges]: descents in flight (virtual losses)
    "edge_amaf_visits",  # int32[edges]: playouts below the node where the mover played here
    "edge_amaf_wins",    # int32[edges]: half-point wins among those (all-moves-as-first)
    "edge_prior",    # float32[edges]: prior probability of the move
    "edge_prior_visits",  # int32[edges]: equivalent experience of the heuristic prior
    "edge_prior_wins",    # int32[edges]: its half-point wins (merged into the move's stats)
    "edge_child",    # int32[edges]: node reached by the move, -1 until first visited
    "edge_value_visits",  # int32[edges]: network evaluations of leaves below the edge
    "edge_value_wins",    # int32[edges]: their value for the mover, VALUE_SCALE per win
    "edge_score_sum",     # int64[edges]: the mover's final playout scores, in half points
    "counters",      # int64[4]: nodes used, edges used, playouts done, playouts claimed
])
# Heuristic prior playouts are stored as int32 half-points (up to 9 x eqex): keep them far
# from overflow.
MAX_PRIOR_EQEX = 1_000_000
# Moves engine.tactics may hand one expansion.
MAX_TACTICAL_MOVES = 16


@dataclass
class SearchConfig:
    """Search parameters; one object travels from the command line to the workers.

    With the network, tree_policy picks darkforest's selection or PUCT; each has its own
    breadth (top_k / root_top_k / top_cumulative against the puct_ ones)."""
    tree_policy: str = "puct"      # 9 of 10 games against darkforest's at 1,000 playouts
    # UCB1's exploration constant and RAVE's blend (Silver's 4 b^2; negative turns RAVE
    # off), without the network and with it (net_: there they matter only to darkforest's
    # tree policy, and RAVE to PUCT's win rates too). Without the network Pachi's values (no
    # exploration term, RAVE worth 4,000 playouts) won 8 of 8 games on 19x19 against 0.3 and
    # 0.02 and 9 of 11 on 9x9 (benchmarks/RESULTS.md, RAVE).
    uct_c: float = 0.0
    rave_bias: float = 0.00025
    net_uct_c: float = 0.3
    net_rave_bias: float = 0.02
    # An AMAF result counts 1 + rave_distance * (moves from the move on) // (moves from the
    # node on, plus one) times: up to rave_distance times for a move played soon after the
    # node, as Pachi's distance_rave (3 there); 0 and 1 count every move once.
    rave_distance: int = 0
    first_play_urgency: float = 1.1
    noise: float = 0.02
    # Without the net: playouts a leaf takes before it grows children, or "auto": by
    # board size (expand_visits_for).
    expand_visits: int | str = "auto"
    virtual_loss: int = 3
    prior_weight: float = 0.0
    net_prior_weight: float = 1.0
    prior_eqex: int = 10           # playouts' worth of each heuristic prior without the net
    net_prior_eqex: int = 0        # the same with the net
    tactics_prior: float = 0.0     # with the net: prior added to engine.tactics' moves
    # With the net: factor on the prior of an escape from the last move's atari that runs into
    # a working ladder (engine.ladder.futile_escapes); 1 leaves the network's prior as it is.
    ladder_escape_factor: float = 1.0
    # Without the net: winning playouts of sqrt(p) * shape_eqex for a move the shape model
    # (engine.shapes, loaded from the file `shapes`; "" for none) gives probability p, as
    # Pachi weighs its pattern model's probabilities. 200 won 10 of 10 games against 0 on
    # 19x19 at 2,000 playouts (benchmarks/RESULTS.md, shape model).
    shape_eqex: int = 200
    shapes: str = ""
    net_expand_visits: int = 4
    top_k: int = 10
    top_cumulative: float = 0.95
    root_top_k: int = 25
    puct_c: float = 1.5
    fpu_reduction: float = 0.1     # PUCT: an unvisited move's value is its parent's less this
    puct_top_k: int = 40
    puct_root_top_k: int = 100
    puct_top_cumulative: float = 0.999
    value_weight: float = 0.0      # share of the network's value in a move's win rate
    value_until: int = 0           # mix the value only before this many moves (0: always)
    # With the net: playouts' worth of experience at the value head's win rate given to the
    # move into each evaluated leaf; it fades as the move's own playouts come in, as a prior
    # does, instead of staying in every ancestor's win rate as value_weight's mix does.
    value_eqex: int = 0
    score_weight: float = 0.0      # share of the score utility in a move's win rate
    score_scale: float = 0.5       # points per line of board width for a utility of tanh(1)
    early_stop: bool = True        # stop once no other root move can catch the most visited
    # Evaluate each leaf on its search thread instead of the server's: slower, but with one
    # thread the tree no longer depends on when the server answers (same seed, same moves).
    deterministic: bool = False
    threads: int = 1
    max_nodes: int = 400_000
    max_edges: int = 8_000_000
    seed: int = 0
    policy: po.PolicyConfig = field(default_factory=po.PolicyConfig)

    def breadth(self):
        """Return (top_k, root_top_k, top_cumulative): how many of the net's moves a node
        keeps under this tree policy."""
        if self.tree_policy == "puct":
            return self.puct_top_k, self.puct_root_top_k, self.puct_top_cumulative
        return self.top_k, self.root_top_k, self.top_cumulative

    def expand_visits_for(self, size):
        """Return the visits a leaf takes before it grows children without the network on a
        size x size board. Growing a node rates every candidate move with the priors and the
        shape model, a cost in proportion to the board's points, so "auto" expands every
        points / 45 visits, within 3 to 8: 3 on 9x9 and 8 on 19x19 (Pachi's expand_p), each
        even at equal playouts with the 2 of before and 1.3x and 1.5x its playouts per CPU
        second; 8 on 9x9 lost (benchmarks/RESULTS.md, expansion)."""
        if self.expand_visits != "auto":
            return self.expand_visits
        return min(8, max(3, round(size * size / 45)))

    def value_weight_at(self, moves_played):
        """Return the network value's share in the win rates after moves_played moves: the
        value head judges the middle game better mixed with the playouts than the playouts
        alone, the endgame worse (benchmarks/RESULTS.md, value head), hence value_until."""
        return self.value_weight if self.before_value_until(moves_played) else 0.0

    def value_eqex_at(self, moves_played, net):
        """Return the playouts' worth of experience each evaluated leaf's value gives the move
        into it after moves_played moves (0 without the network or from value_until on)."""
        return self.value_eqex if net and self.before_value_until(moves_played) else 0

    def before_value_until(self, moves_played):
        """Return whether value_until lets the network's value enter the search after
        moves_played moves."""
        return not self.value_until or moves_played < self.value_until

    def uses_value(self, moves_played):
        """Return whether a network search after moves_played moves reads the network's
        values, in its win rates (value_weight) or as experience (value_eqex); when not, the
        network server skips the value head."""
        return self.value_weight_at(moves_played) > 0 or (
            self.value_eqex > 0 and self.before_value_until(moves_played))

    def as_array(self, komi, net=False, size=19, score_center=0.0, moves_played=0):
        """Return the float64 parameter array the numba workers read. With net, leaves are
        expanded by the network server (top moves by prior) and tree_policy applies; without,
        selection is darkforest's UCB1 with RAVE and heuristic priors. score_center is
        Black's expected score, the zero of the score utility; moves_played, the game's moves
        so far, sets the value's weight (value_weight_at)."""
        if self.tree_policy not in TREE_POLICIES:
            raise ValueError(f"unknown tree policy {self.tree_policy!r}")
        top_k, _, cumulative = self.breadth()
        params = np.zeros(PARAM_SLOTS, np.float64)
        params[P_UCT_C] = self.net_uct_c if net else self.uct_c
        params[P_FPU] = self.first_play_urgency
        params[P_NOISE] = self.noise
        params[P_EXPAND_VISITS] = self.net_expand_visits if net else self.expand_visits_for(size)
        params[P_VIRTUAL_LOSS] = self.virtual_loss
        params[P_KOMI] = komi
        params[P_PRIOR_WEIGHT] = self.net_prior_weight if net else self.prior_weight
        params[P_NET] = 1.0 if net else 0.0
        params[P_TOP_K] = top_k if net else 1 << 30
        params[P_TOP_CUMULATIVE] = cumulative if net else 2.0
        params[P_RAVE_BIAS] = self.net_rave_bias if net else self.rave_bias
        params[P_RAVE_DISTANCE] = self.rave_distance
        params[P_PRIOR_EQEX] = self.net_prior_eqex if net else self.prior_eqex
        params[P_TREE_POLICY] = TREE_POLICIES[self.tree_policy] if net else DARKFOREST
        params[P_PUCT_C] = self.puct_c
        params[P_FPU_REDUCTION] = self.fpu_reduction
        params[P_VALUE_WEIGHT] = self.value_weight_at(moves_played) if net else 0.0
        params[P_VALUE_EQEX] = self.value_eqex_at(moves_played, net)
        params[P_EARLY_STOP] = 1.0 if self.early_stop else 0.0
        params[P_SCORE_WEIGHT] = self.score_weight
        params[P_SCORE_CENTER] = score_center
        params[P_SCORE_SCALE] = self.score_scale * size
        params[P_SHAPE_EQEX] = self.shape_eqex if self.shapes and not net else 0
        return params


def new_tree(max_nodes, max_edges):
    """Return an empty Tree with pools of the given sizes."""
    return Tree(
        node_first=np.zeros(max_nodes, np.int32),
        node_count=np.zeros(max_nodes, np.int32),
        node_visits=np.zeros(max_nodes, np.int32),
        node_state=np.zeros(max_nodes, np.int32),
        edge_move=np.zeros(max_edges, np.int32),
        edge_visits=np.zeros(max_edges, np.int32),
        edge_wins=np.zeros(max_edges, np.int32),
        edge_virtual=np.zeros(max_edges, np.int32),
        edge_amaf_visits=np.zeros(max_edges, np.int32),
        edge_amaf_wins=np.zeros(max_edges, np.int32),
        edge_prior=np.zeros(max_edges, np.float32),
        edge_prior_visits=np.zeros(max_edges, np.int32),
        edge_prior_wins=np.zeros(max_edges, np.int32),
        edge_child=np.full(max_edges, -1, np.int32),
        edge_value_visits=np.zeros(max_edges, np.int32),
        edge_value_wins=np.zeros(max_edges, np.int32),
        edge_score_sum=np.zeros(max_edges, np.int64),
        counters=np.zeros(4, np.int64),
    )


@njit(**bd.NO_ALLOC)
def reset_tree(tree):
    """Empty the tree and allocate a fresh root; returns the root's index (0)."""
    tree.counters[:] = 0
    tree.counters[C_NODES] = 1
    tree.node_state[0] = UNEXPANDED
    tree.node_visits[0] = 0
    tree.node_count[0] = 0
    return 0


@njit(**bd.NO_ALLOC)
def _new_node(tree):
    """Claim a node slot; return its index or -1 when the pool is full."""
    node = atomic_add(tree.counters, C_NODES, 1)
    if node >= tree.node_state.shape[0]:
        return -1
    tree.node_state[node] = UNEXPANDED
    tree.node_visits[node] = 0
    tree.node_count[node] = 0
    return node


@njit(**bd.NO_ALLOC)
def candidate_moves(b, color, allowed, out):
    """Write the tree's candidate moves for color into out: legal, not filling an own eye,
    allowed[p] true; return how many."""
    n = 0
    for i in range(b.info[bd.NEMPTY]):
        p = b.empties[i]
        if allowed[p] and not bd.is_true_eye_like(b, p, color) and bd.is_legal(b, p, color):
            out[n] = p
            n += 1
    return n


@njit(cache=True, nogil=True)
def expand(tree, node, b, allowed, priors, top_k, cumulative, patterns, eqex, ladder, shapes,
           shape_eqex):
    """Give an UNEXPANDED node its edges; return False when another thread holds the
    expansion or the edge pool is full (the node is then a leaf with no edges for good). See
    fill_edges for the other arguments."""
    if atomic_cas(tree.node_state, node, UNEXPANDED, EXPANDING) != UNEXPANDED:
        return False
    return fill_edges(tree, node, b, allowed, priors, top_k, cumulative, patterns, eqex,
                      ladder, shapes, shape_eqex)


@njit(**bd.NO_ALLOC)
def heuristic_prior(b, p, color, patterns, eqex, words, ladder):
    """Return (visits, half-point wins) of prior knowledge about color playing p, in the
    manner of MoGo and Pachi: every move starts at an even eqex playouts, and each heuristic
    that applies adds eqex won or lost playouts. Good: capturing, escaping an atari (bad:
    running from one into a ladder that catches the chain), an atari that starts a working
    ladder, a 3x3 pattern of the default policy, nearness to the last move; on boards of 13
    and up, the first line far from other stones is bad and the third line good. A self-atari
    of more than one stone (a nakade throw-in aside) gets a lost playout and nothing else.
    words and ladder are scratch."""
    visits = eqex
    wins = eqex
    if po.is_bad_selfatari(b, p, color, 1, words):
        return visits + eqex, wins
    w = b.info[bd.WIDTH]
    if po.captures_something(b, p, color):
        visits += eqex
        wins += 2 * eqex
    else:
        for d in (-w, -1, 1, w):
            q = p + d
            if b.stones[q] == color and b.nlibs[b.chain[q]] == 1:
                visits += eqex
                if po.escapes_atari(b, p, color, b.chain[q], words, ladder):
                    wins += 2 * eqex
                break
        for d in (-w, -1, 1, w):
            q = p + d
            if b.stones[q] == 3 - color and b.nlibs[b.chain[q]] == 2 \
                    and atari_starts_ladder(b, p, q, ladder):
                visits += eqex
                wins += 2 * eqex
                break
    if patterns[b.nbr_code[p]]:
        visits += eqex
        wins += 2 * eqex
    x, y = p % w, p // w
    last = b.info[bd.LAST_MOVE]
    if last != bd.PASS:
        distance = abs(last % w - x) + abs(last // w - y)
        if distance <= 2:
            visits += eqex
            wins += 2 * eqex
    size = b.info[bd.SIZE]
    if size >= 13:
        line = min(min(x, y), min(size + 1 - x, size + 1 - y))
        if (line == 1 or line == 3) and nothing_near(b, p, x, y):
            visits += eqex
            wins += 2 * eqex if line == 3 else 0
    return visits, wins


@njit(cache=True, nogil=True)
def fill_edges(tree, node, b, allowed, priors, top_k, cumulative, patterns, eqex, ladder,
               shapes, shape_eqex):
    """Give a node this thread has claimed (EXPANDING) its edges and mark it EXPANDED; return
    False when the edge pool is full, leaving the node EXPANDED with no edges: a leaf for
    good, played out from, never claimed and rated (or sent to the network) again.

    Candidates are the legal moves that do not fill an own eye and are allowed. When priors
    has any weight on them, they are taken by falling prior until their summed prior reaches
    `cumulative` or there are `top_k` (darkforest's tree policy); otherwise all are kept with
    uniform priors. With eqex > 0 each edge also gets heuristic_prior's experience (patterns
    is the default policy's 3x3 pattern table; ladder the ladder reader's scratch). With
    shape_eqex > 0 the shape model `shapes` writes its probabilities into priors (scratch
    then) and each move gets sqrt(probability) * shape_eqex won playouts of prior.
    """
    color = b.info[bd.TO_PLAY]
    moves = np.empty(b.info[bd.NEMPTY] + 1, np.int32)
    words = np.empty(b.libs.shape[1], np.uint64)
    n = candidate_moves(b, color, allowed, moves)
    if shape_eqex > 0:
        rate_moves(b, color, moves, n, shapes, priors, words, ladder)
    weights = np.empty(n, np.float64)
    total = 0.0
    for i in range(n):
        weights[i] = priors[moves[i]]
        total += weights[i]
    if total > 0:
        order = np.argsort(-weights)
        kept = 0
        running = 0.0
        while kept < n and kept < top_k and running < cumulative * total:
            running += weights[order[kept]]
            kept += 1
        chosen = np.empty(kept, np.int32)
        for i in range(kept):
            chosen[i] = moves[order[i]]
        moves = chosen
        n = kept
    first = atomic_add(tree.counters, C_EDGES, n)
    if first + n > tree.edge_move.shape[0]:
        tree.node_first[node] = 0
        tree.node_count[node] = 0
        atomic_cas(tree.node_state, node, EXPANDING, EXPANDED)
        return False
    for i in range(n):
        e = first + i
        tree.edge_move[e] = moves[i]
        tree.edge_visits[e] = 0
        tree.edge_wins[e] = 0
        tree.edge_virtual[e] = 0
        tree.edge_amaf_visits[e] = 0
        tree.edge_amaf_wins[e] = 0
        tree.edge_child[e] = -1
        tree.edge_value_visits[e] = 0
        tree.edge_value_wins[e] = 0
        tree.edge_score_sum[e] = 0
        tree.edge_prior[e] = priors[moves[i]] / total if total > 0 else 1.0 / n
        if eqex > 0:
            tree.edge_prior_visits[e], tree.edge_prior_wins[e] = heuristic_prior(
                b, moves[i], color, patterns, eqex, words, ladder)
        else:
            tree.edge_prior_visits[e] = 0
            tree.edge_prior_wins[e] = 0
        if shape_eqex > 0:
            won = np.int32(math.sqrt(tree.edge_prior[e]) * shape_eqex + 0.5)
            tree.edge_prior_visits[e] += won
            tree.edge_prior_wins[e] += 2 * won
    tree.node_first[node] = first
    tree.node_count[node] = n
    atomic_cas(tree.node_state, node, EXPANDING, EXPANDED)
    return True


@njit(cache=True, nogil=True, inline="always")
def score_utility(score, center, scale):
    """Return the utility in [0, 1] of a mean score (points for the mover, komi counted)
    against the mover's expected score center: 0.5 at the center, rising as tanh with scale."""
    return 0.5 + 0.5 * math.tanh((score - center) / scale)


@njit(**bd.NO_ALLOC)
def edge_winrate(tree, e, n, rave_bias, value_weight, score_weight, score_center, score_scale):
    """Return the mover's win rate of edge e with n visits (real, virtual and heuristic
    prior; n + AMAF visits > 0): the playouts' rate with the prior's experience merged in, as
    Pachi does, blended with the all-moves-as-first (RAVE) rate by Silver's beta (rave_bias
    < 0: none), then mixed with the network's values backed up through the edge, if any, by
    value_weight, and with the score utility of the playouts' mean score (score_center is
    the mover's expected score) by score_weight."""
    amaf = tree.edge_amaf_visits[e]
    q = 0.5 * (tree.edge_wins[e] + tree.edge_prior_wins[e]) / n if n > 0 else 0.0
    if amaf > 0 and rave_bias >= 0:
        beta = amaf / (n + amaf + rave_bias * n * amaf)
        q = (1.0 - beta) * q + beta * 0.5 * tree.edge_amaf_wins[e] / amaf
    evaluations = tree.edge_value_visits[e]
    if value_weight > 0 and evaluations > 0:
        value = tree.edge_value_wins[e] / (VALUE_SCALE * evaluations)
        q = (1.0 - value_weight) * q + value_weight * value
    finished = tree.edge_visits[e]
    if score_weight > 0 and finished > 0:
        utility = score_utility(0.5 * tree.edge_score_sum[e] / finished, score_center,
                                score_scale)
        q = (1.0 - score_weight) * q + score_weight * utility
    return q


@njit(cache=True, nogil=True, inline="always")
def _mover_center(params, mover):
    """Return the score utility's center (Black's expected score) from mover's view."""
    return params[P_SCORE_CENTER] if mover == bd.BLACK else -params[P_SCORE_CENTER]


@njit(**bd.NO_ALLOC)
def select_edge(tree, node, params, rng, mover):
    """Return the edge of an EXPANDED node with the highest value for mover (the colour to
    play there), or -1. Darkforest's policy: the win rate (edge_winrate) plus UCB1
    exploration, darkforest's uniform noise and a network prior bias that fades with visits;
    unvisited moves get the first-play urgency. PUCT: see select_puct."""
    first = tree.node_first[node]
    count = tree.node_count[node]
    if count == 0:
        return -1
    if params[P_TREE_POLICY] == PUCT:
        return select_puct(tree, node, params, rng, mover)
    log_parent = math.log(tree.node_visits[node] + 1.0)
    c = params[P_UCT_C]
    noise = params[P_NOISE]
    prior_weight = params[P_PRIOR_WEIGHT]
    rave_bias = params[P_RAVE_BIAS]
    value_weight = params[P_VALUE_WEIGHT]
    score_weight = params[P_SCORE_WEIGHT]
    score_center = _mover_center(params, mover)
    score_scale = params[P_SCORE_SCALE]
    best = -1
    best_value = -1e300
    for e in range(first, first + count):
        n = tree.edge_visits[e] + tree.edge_virtual[e] + tree.edge_prior_visits[e]
        if n == 0 and (tree.edge_amaf_visits[e] == 0 or rave_bias < 0):
            value = params[P_FPU]
        else:
            value = edge_winrate(tree, e, n, rave_bias, value_weight, score_weight,
                                 score_center, score_scale) \
                + c * math.sqrt(log_parent / (n + 1.0))
        value += noise * po.rand_float(rng) + prior_weight * tree.edge_prior[e] / (1.0 + n)
        if value > best_value:
            best_value = value
            best = e
    return best


@njit(**bd.NO_ALLOC)
def select_puct(tree, node, params, rng, mover):
    """PUCT selection: the edge maximising win rate + puct_c * prior * sqrt(N) / (1 + n),
    with N the node's descents (finished and in flight) and n the edge's. The win rate is
    edge_winrate's; a move with no experience yet gets first-play urgency: the mean win rate
    of the node's visited moves less fpu_reduction (0.5 less it before any). Darkforest's
    uniform noise keeps threads apart."""
    first = tree.node_first[node]
    count = tree.node_count[node]
    rave_bias = params[P_RAVE_BIAS]
    value_weight = params[P_VALUE_WEIGHT]
    score_weight = params[P_SCORE_WEIGHT]
    score_center = _mover_center(params, mover)
    score_scale = params[P_SCORE_SCALE]
    noise = params[P_NOISE]
    visits = 0
    half_wins = 0
    for e in range(first, first + count):
        visits += tree.edge_visits[e] + tree.edge_virtual[e]
        half_wins += tree.edge_wins[e]
    fpu = (0.5 * half_wins / visits if visits > 0 else 0.5) - params[P_FPU_REDUCTION]
    scale = params[P_PUCT_C] * math.sqrt(visits + 1.0)
    best = -1
    best_value = -1e300
    for e in range(first, first + count):
        taken = tree.edge_visits[e] + tree.edge_virtual[e]
        n = taken + tree.edge_prior_visits[e]
        if n == 0 and (tree.edge_amaf_visits[e] == 0 or rave_bias < 0):
            q = fpu
        else:
            q = edge_winrate(tree, e, n, rave_bias, value_weight, score_weight, score_center,
                             score_scale)
        value = q + scale * tree.edge_prior[e] / (1.0 + taken) + noise * po.rand_float(rng)
        if value > best_value:
            best_value = value
            best = e
    return best


@njit(**bd.NO_ALLOC)
def backup_value(tree, path_edges, depth, value, eqex):
    """Add a network evaluation of the leaf reached by path_edges[0..depth-1] to every edge
    on the path: value in [-1, 1] is for the side to move at the leaf, which is not the mover
    of the last edge. With eqex > 0 the last edge also gains eqex visits of prior experience
    at the value's win rate."""
    win = 0.5 * (1.0 - value)      # for the last edge's mover
    if eqex > 0 and depth > 0:
        atomic_add(tree.edge_prior_visits, path_edges[depth - 1], eqex)
        atomic_add(tree.edge_prior_wins, path_edges[depth - 1], np.int32(round(2 * eqex * win)))
    for i in range(depth - 1, -1, -1):
        atomic_add(tree.edge_value_wins, path_edges[i], np.int32(round(VALUE_SCALE * win)))
        atomic_add(tree.edge_value_visits, path_edges[i], 1)
        win = 1.0 - win


@njit(cache=True, nogil=True)
def descend(tree, root, b, params, rng, path_nodes, path_edges, allow_all, uniform, request,
            patterns, ladder, shapes):
    """Walk from root to a leaf, playing the moves on b and adding virtual loss; return depth.

    path_nodes[0..depth] are the visited nodes, path_edges[0..depth-1] the edges taken.
    A leaf visited often enough is expanded with uniform priors (or the shape model's, into
    the scratch uniform, when P_SHAPE_EQEX > 0), or, with the network
    (P_NET), claimed for evaluation when request[0] == 0: then request[0] is set to the leaf
    node + 1 and the caller sends the leaf position to the network server.
    """
    node = root
    depth = 0
    vl = np.int32(params[P_VIRTUAL_LOSS])
    while depth < MAX_DEPTH - 1:
        path_nodes[depth] = node
        state = tree.node_state[node]
        if state == UNEXPANDED and tree.node_visits[node] + 1 >= params[P_EXPAND_VISITS]:
            if params[P_NET] == 0:
                expand(tree, node, b, allow_all, uniform, np.int64(params[P_TOP_K]),
                       params[P_TOP_CUMULATIVE], patterns, np.int32(params[P_PRIOR_EQEX]),
                       ladder, shapes, np.int32(params[P_SHAPE_EQEX]))
                state = tree.node_state[node]
            elif request[0] == 0:
                if atomic_cas(tree.node_state, node, UNEXPANDED, EXPANDING) == UNEXPANDED:
                    request[0] = node + 1
                break
        if state != EXPANDED:
            break
        e = select_edge(tree, node, params, rng, b.info[bd.TO_PLAY])
        if e < 0:
            break
        atomic_add(tree.edge_virtual, e, vl)
        path_edges[depth] = e
        bd.play(b, tree.edge_move[e], b.info[bd.TO_PLAY])
        depth += 1
        child = tree.edge_child[e]
        if child < 0:
            fresh = _new_node(tree)
            if fresh < 0:
                path_nodes[depth] = -1
                return depth
            child = atomic_cas(tree.edge_child, e, -1, fresh)
            if child == -1:
                child = fresh
        node = child
    path_nodes[depth] = node
    return depth


@njit(cache=True, nogil=True, inline="always")
def _half_points(winner, mover):
    """Return 2 if mover won, 1 for a jigo, 0 if mover lost."""
    if winner == mover:
        return 2
    if winner == 0:
        return 1
    return 0


@njit(**bd.NO_ALLOC)
def backup(tree, path_nodes, path_edges, depth, root_color, winner, score, params):
    """Add one finished playout (its winner and Black's area score) to every node and edge
    on the path and drop its virtual loss."""
    vl = np.int32(params[P_VIRTUAL_LOSS])
    half_points = np.int64(round(2.0 * score))
    mover = root_color
    for i in range(depth + 1):
        if path_nodes[i] >= 0:
            atomic_add(tree.node_visits, path_nodes[i], 1)
        if i == depth:
            break
        e = path_edges[i]
        atomic_add(tree.edge_score_sum, e, half_points if mover == bd.BLACK else -half_points)
        atomic_add(tree.edge_wins, e, _half_points(winner, mover))
        atomic_add(tree.edge_visits, e, 1)
        atomic_add(tree.edge_virtual, e, -vl)
        mover = 3 - mover


@njit(**bd.NO_ALLOC)
def backup_amaf(tree, path_nodes, path_edges, depth, root_color, winner, record, moves,
                first_play, distance_weight):
    """Credit every edge on the path's nodes whose move its mover played first later in the
    game (tree moves, then the playout's `moves` moves in record) with the result, weighted
    by how soon after the node it was played (distance_weight, P_RAVE_DISTANCE).

    first_play is scratch (int32 per point): the first play's index in the game from the
    root, plus one, negated for White; it is left all zero.
    """
    length = depth + moves
    leaf_color = root_color if depth % 2 == 0 else 3 - root_color
    leaf_sign = 1 if leaf_color == bd.BLACK else -1
    for k in range(moves - 1, -1, -1):
        p = record[k]
        if p != bd.PASS:
            first_play[p] = (leaf_sign if k % 2 == 0 else -leaf_sign) * (depth + k + 1)
    for i in range(depth - 1, -1, -1):
        mover = root_color if i % 2 == 0 else 3 - root_color
        sign = 1 if mover == bd.BLACK else -1
        first_play[tree.edge_move[path_edges[i]]] = sign * (i + 1)
        node = path_nodes[i]
        win = _half_points(winner, mover)
        first = tree.node_first[node]
        for e in range(first, first + tree.node_count[node]):
            played = sign * first_play[tree.edge_move[e]]
            if played > 0:
                weight = 1
                if distance_weight > 0:
                    weight += distance_weight * (length - played + 1) // (length - i + 1)
                atomic_add(tree.edge_amaf_visits, e, weight)
                atomic_add(tree.edge_amaf_wins, e, weight * win)
    for k in range(moves):
        if record[k] != bd.PASS:
            first_play[record[k]] = 0
    for i in range(depth):
        first_play[tree.edge_move[path_edges[i]]] = 0


@njit(cache=True, nogil=True)
def playout_winner(b, policy, rng, komi, record, ladder):
    """Play b out with the default policy; return (winner, moves, score): BLACK, WHITE or 0
    for a jigo, the number of playout moves written into record (ladder: the ladder reader's
    scratch) and Black's area score less komi."""
    size = b.info[bd.SIZE]
    moves = po.run_playout(b, policy, rng, 3 * size * size, record, ladder)
    score = bd.area_score(b, komi)
    if score > 0:
        return bd.BLACK, moves, score
    if score < 0:
        return bd.WHITE, moves, score
    return 0, moves, score


@njit(cache=True, nogil=True)
def search_step(tree, root, root_board, scratch, leaf_board, policy, rng, params, budget,
                request, path_nodes, path_edges, allow_all, uniform, record, first_play,
                sequence, ladder, shapes):
    """Run one descent + playout + backup; return False once `budget` playouts are claimed.

    request[0] tells whether this step may claim a leaf for the network (0) or not (-1); when
    it claims one, request[0] becomes the leaf node + 1, request[1] its depth (path_edges[0..
    depth-1] lead to it) and leaf_board holds its position.
    """
    if atomic_add(tree.counters, C_PLAYOUTS_CLAIMED, 1) >= budget:
        return False
    bd.copy_into(scratch, root_board)
    depth = descend(tree, root, scratch, params, rng, path_nodes, path_edges, allow_all,
                    uniform, request, policy.patterns, ladder, shapes)
    if request[0] > 0:
        bd.copy_into(leaf_board, scratch)
        request[1] = depth
    winner, moves, score = playout_winner(scratch, policy, rng, params[P_KOMI], record, ladder)
    root_color = root_board.info[bd.TO_PLAY]
    backup(tree, path_nodes, path_edges, depth, root_color, winner, score, params)
    if policy.rates[po.R_REPLY] > 0:
        learn_from_playout(tree, path_edges, depth, record, moves, root_color, winner, policy,
                           sequence)
    if params[P_RAVE_BIAS] >= 0:
        backup_amaf(tree, path_nodes, path_edges, depth, root_color, winner, record, moves,
                    first_play, int(params[P_RAVE_DISTANCE]))
    atomic_add(tree.counters, C_PLAYOUTS_DONE, 1)
    return True


@njit(**bd.NO_ALLOC)
def learn_from_playout(tree, path_edges, depth, record, moves, root_color, winner, policy,
                       sequence):
    """Teach the playout policy's reply tables the whole descent: the tree moves, then the
    playout's (sequence is scratch for the joined move list)."""
    for i in range(depth):
        sequence[i] = tree.edge_move[path_edges[i]]
    for k in range(moves):
        sequence[depth + k] = record[k]
    po.learn_replies(policy, sequence, depth + moves, root_color, winner)


@njit(cache=True, nogil=True)
def playout_scratch(b):
    """Return the per-thread arrays a search step needs: playout move record, first-play map,
    room for the tree moves and playout moves together, and the ladder reader's scratch."""
    size = b.info[bd.SIZE]
    return (np.empty(3 * size * size, np.int32), np.zeros(b.stones.shape[0], np.int32),
            np.empty(MAX_DEPTH + 3 * size * size, np.int32),
            new_ladder_scratch(b.stones.shape[0]))


@njit(**bd.NO_ALLOC)
def decided(tree, root, params, budget):
    """Return True when the search may stop before its budget (P_EARLY_STOP): half of it has
    run and the most visited root move leads the next by more visits than the playouts still
    to come could give the other, so the move by most visits can no longer change."""
    done = tree.counters[C_PLAYOUTS_DONE]
    if params[P_EARLY_STOP] == 0 or 2 * done < budget or tree.node_state[root] != EXPANDED:
        return False
    best = 0
    second = 0
    first = tree.node_first[root]
    for e in range(first, first + tree.node_count[root]):
        visits = tree.edge_visits[e]
        if visits > best:
            second = best
            best = visits
        elif visits > second:
            second = visits
    return best - second > budget - done


@njit(**bd.NO_ALLOC)
def root_mean_score(tree, root):
    """Return the mean final playout score through the root's edges for the side to move
    at the root, and the playouts it averages (0 before any)."""
    if tree.node_state[root] != EXPANDED:
        return 0.0, 0
    half_points = 0
    visits = 0
    first = tree.node_first[root]
    for e in range(first, first + tree.node_count[root]):
        half_points += tree.edge_score_sum[e]
        visits += tree.edge_visits[e]
    return (0.5 * half_points / visits if visits > 0 else 0.0), visits


@njit(**bd.NO_ALLOC)
def follow_score_center(tree, root, params, root_color):
    """With a score utility, move its center (Black's expected score) to the root's mean
    playout score so far: the utility then measures each move against what the position
    is worth now. Called by the workers every DECIDED_CHECK_EVERY steps, so that one thread
    with a seed still repeats its moves."""
    if params[P_SCORE_WEIGHT] > 0:
        mean, visits = root_mean_score(tree, root)
        if visits > 0:
            params[P_SCORE_CENTER] = mean if root_color == bd.BLACK else -mean


@njit(cache=True, nogil=True)
def search_worker(tree, root, root_board, scratch, policy, rng, params, budget, stop, shapes):
    """Run search steps without the network until `budget` playouts are claimed or stop[0]
    is set; return how many this worker ran. root_board must not change while workers run."""
    path_nodes = np.empty(MAX_DEPTH, np.int32)
    path_edges = np.empty(MAX_DEPTH, np.int32)
    allow_all = np.ones(root_board.stones.shape[0], np.bool_)
    uniform = np.zeros(root_board.stones.shape[0], np.float32)
    request = np.full(2, -1, np.int64)
    record, first_play, sequence, ladder = playout_scratch(root_board)
    done = 0
    while stop[0] == 0:
        if not search_step(tree, root, root_board, scratch, scratch, policy, rng, params,
                           budget, request, path_nodes, path_edges, allow_all, uniform,
                           record, first_play, sequence, ladder, shapes):
            break
        done += 1
        if done % DECIDED_CHECK_EVERY == 0:
            follow_score_center(tree, root, params, root_board.info[bd.TO_PLAY])
            if decided(tree, root, params, budget):
                stop[0] = STOP_DECIDED
    return done


@njit(**bd.NO_ALLOC)
def release_claims(tree, nodes):
    """Put nodes claimed for evaluation but never answered back to UNEXPANDED."""
    for node in nodes:
        atomic_cas(tree.node_state, node, EXPANDING, UNEXPANDED)


@njit(**bd.NO_ALLOC)
def find_child(tree, node, move):
    """Return the child node reached from node by move, or -1 if it is not in the tree."""
    if tree.node_state[node] != EXPANDED:
        return -1
    first = tree.node_first[node]
    for e in range(first, first + tree.node_count[node]):
        if tree.edge_move[e] == move:
            return tree.edge_child[e]
    return -1


# Root children given a principal variation in a SearchResult, and its longest length.
PV_CHILDREN = 10
PV_MAX_MOVES = 20


@dataclass
class MoveStats:
    """One root child: its move, visits, win rate for the mover, prior, the mover's mean
    playout score (area, komi counted), and the principal variation that starts with it (most
    visited replies; empty beyond the PV_CHILDREN most visited children)."""
    point: int
    visits: int
    winrate: float
    prior: float
    score: float = 0.0
    pv: list = field(default_factory=list)


@dataclass
class SearchResult:
    """What a search found: the root's children sorted by visits, and totals. stopped_by says
    what ended it: 'playouts' (the budget ran out), 'decided' (no other move could catch the
    most visited), 'time' or 'interrupted' (stop_event)."""
    children: list
    playouts: int
    root_winrate: float   # for the side to move, over all playouts through the root's edges
    seconds: float
    stopped_by: str = "playouts"
    root_score: float = 0.0   # the side to move's mean playout score, the same way
    # Leaves the network evaluated during the search (0 without it): the search goes on with
    # playouts while the network is busy, so a slow network expands fewer of them.
    evaluations: int = 0

    @property
    def best(self):
        """Return the most visited child's MoveStats, or None when there were no candidates."""
        return self.children[0] if self.children else None


# Seconds between a timed search's looks at the root (see time_verdict).
TIME_CHECK_INTERVAL = 0.05
# The most visited root move is unclear while the second has more than this share of its
# visits, ...
CLOSE_SECOND = 0.6
# ... or a move with at least CONTENDER_VISITS of its visits has a win rate CONTENDER_MARGIN
# higher, ...
CONTENDER_VISITS = 0.2
CONTENDER_MARGIN = 0.03
# ... or its win rate is WINRATE_FALL below the mover's win rate at its previous move.
WINRATE_FALL = 0.1
# A timed search stops as decided no sooner than this share of its normal time, and once its
# playout rate is known: after this many playouts of its own (a reused tree's lead alone
# proves nothing about what the time left could do).
DECIDED_AFTER = 0.2
DECIDED_MIN_PLAYOUTS = 64


@dataclass(frozen=True)
class MoveTime:
    """A timed search's wall-clock allowance: it searches for `normal` seconds, goes on up to
    `maximum` while the move is unclear, and stops sooner once no other move can catch up
    (see time_verdict). previous_winrate: the mover's win rate at its previous move, if any."""
    normal: float
    maximum: float
    previous_winrate: float | None = None


def unclear(visits, winrates, previous_winrate=None):
    """Return True while the most visited root move is not clearly the one to play: the second
    has nearly as many visits, a well-visited move has a clearly higher win rate, or the win
    rate fell since the mover's previous move (Pachi and Fuego spend more time then)."""
    if len(visits) == 0 or visits.max() == 0:
        return False
    order = np.argsort(visits)[::-1]
    best = order[0]
    if len(order) > 1 and visits[order[1]] > CLOSE_SECOND * visits[best]:
        return True
    contenders = visits >= CONTENDER_VISITS * visits[best]
    if (winrates[contenders] > winrates[best] + CONTENDER_MARGIN).any():
        return True
    return previous_winrate is not None and winrates[best] < previous_winrate - WINRATE_FALL


def time_verdict(elapsed, move_time, visits, winrates, playouts_per_second, early_stop=True):
    """Return why a timed search should stop now, 'time' or 'decided', or None to go on.

    visits and winrates are the root's edges' (win rates for the mover). Past the normal time
    the search goes on only while the move is unclear, and never past the maximum; before it,
    with early_stop, it stops once the most visited move leads the next by more visits than
    the rest of the normal time could give at the rate so far (the move can no longer change,
    and the time saved goes to later moves)."""
    if elapsed >= move_time.maximum:
        return "time"
    doubtful = unclear(visits, winrates, move_time.previous_winrate)
    if elapsed >= move_time.normal:
        return None if doubtful else "time"
    if (not early_stop or doubtful or elapsed < DECIDED_AFTER * move_time.normal
            or playouts_per_second <= 0):
        return None
    top = np.sort(visits)[::-1]
    lead = int(top[0]) - (int(top[1]) if len(top) > 1 else 0) if len(top) else 0
    return "decided" if lead > playouts_per_second * (move_time.normal - elapsed) else None


class Search:
    """A reusable UCT search: keeps its tree between moves of the same game. With an evaluator
    (a nets.model.Policy), new leaves are expanded by a batched network server."""

    def __init__(self, config, size, evaluator=None):
        self.config = config
        self.size = size
        self.tree = new_tree(config.max_nodes, config.max_edges)
        self.root = reset_tree(self.tree)
        self.policy = config.policy.build()
        self.server = None if evaluator is None else EvalServer(evaluator, self._on_priors)
        self.shapes = (cached_model(config.shapes) if config.shapes and evaluator is None
                       else empty_model())
        self._root_moves = None        # the game's move list (color, point) at the root
        self._root_setup = None
        self._root_color = None        # the colour the root was searched for
        self._root_komi = None         # the komi the tree's results were counted under
        self._root_value_eqex = None   # and the value's experience per evaluation
        self._rngs = [po.new_rng(config.seed * 1000 + i + 1)
                      for i in range(max(1, config.threads))]
        self._params = None
        self._score_center = 0.0    # Black's expected score where the last search left it
        self._tactics = threading.local()   # the reader's scratch, one per evaluating thread

    def forget(self):
        """Empty the tree and the playout policy's learnt replies for a new game on the same
        board size, keeping the pools."""
        self.root = reset_tree(self.tree)
        po.forget_replies(self.policy)
        self._root_moves = None
        self._root_setup = None
        self._score_center = 0.0

    def close(self):
        """Stop the network server thread, if any."""
        if self.server is not None:
            self.server.close()

    def pools_held(self):
        """Return (nodes, edges) the tree holds. The pool counters go on past a full pool,
        counting claims that found no room, so each is at most its pool."""
        return (min(int(self.tree.counters[C_NODES]), self.config.max_nodes),
                min(int(self.tree.counters[C_EDGES]), self.config.max_edges))

    def pools_used(self):
        """Return the larger of the shares of the node and edge pools the tree takes (the
        next search reuses the tree only while both are under half: _place_root)."""
        nodes, edges = self.pools_held()
        return max(nodes / self.config.max_nodes, edges / self.config.max_edges)

    def _place_root(self, game):
        """Move the root to the game's position, reusing the subtree when the game went on
        from the previous root by the moves recorded in between, each by the colour the tree
        expects there, under the same komi and value experience (from value_until on, the
        value's experience must leave the win rates), and the side to move is the one the
        reached node was searched for (not so for a genmove or analysis for the side not to
        move: the edges there are the other side's moves)."""
        moves = list(game.moves)
        value_eqex = self.config.value_eqex_at(int(game.board.info[bd.MOVE_NUMBER]),
                                               self.server is not None)
        reuse_ok = (self._root_moves is not None and self._root_setup == game.setup
                    and self._root_komi == game.scoring_komi
                    and self._root_value_eqex == value_eqex
                    and moves[:len(self._root_moves)] == self._root_moves
                    and self.tree.counters[C_NODES] < self.config.max_nodes // 2
                    and self.tree.counters[C_EDGES] < self.config.max_edges // 2)
        node = self.root
        if reuse_ok:
            mover = self._root_color
            for color, point in moves[len(self._root_moves):]:
                if color != mover or point == bd.PASS:
                    node = -1
                    break
                node = find_child(self.tree, node, point)
                mover = 3 - mover
                if node < 0:
                    break
            reuse_ok = mover == game.to_play
        if not reuse_ok or node < 0:
            node = reset_tree(self.tree)
        self.root = node
        self._root_moves = moves
        self._root_setup = list(game.setup)
        self._root_color = game.to_play
        self._root_komi = game.scoring_komi
        self._root_value_eqex = value_eqex

    def _expand_root(self, game, board):
        """Expand the root with superko-violating moves left out (by the network's priors when
        there is one); a reused root that offers such a move is searched afresh."""
        tree = self.tree
        color = game.to_play
        if tree.node_state[self.root] == EXPANDED:
            first, count = tree.node_first[self.root], tree.node_count[self.root]
            if not any(game.repeats_position(int(tree.edge_move[e]), color)
                       for e in range(first, first + count)):
                return
            self.root = reset_tree(tree)
        allowed = np.zeros(board.stones.shape[0], np.bool_)
        for p in game.legal_moves(color):
            allowed[p] = True
        if self.server is None:
            expand(tree, self.root, board, allowed, np.zeros(allowed.shape[0], np.float32),
                   1 << 30, 2.0, self.policy.patterns, np.int32(self.config.prior_eqex),
                   new_ladder_scratch(board.stones.shape[0]), self.shapes,
                   np.int32(self.config.as_array(0.0)[P_SHAPE_EQEX]))
        else:
            try:
                priors = self.server.evaluate_now([board])[0][0]
            except Exception:
                log.exception("network evaluation of the root failed; uniform priors instead")
                priors = np.zeros(allowed.shape[0], np.float32)
            _, root_top_k, cumulative = self.config.breadth()
            priors = self._adjusted(board, priors)
            expand(tree, self.root, board, allowed, priors, root_top_k, cumulative,
                   self.policy.patterns, np.int32(self.config.net_prior_eqex),
                   new_ladder_scratch(board.stones.shape[0]), self.shapes, np.int32(0))

    def _on_priors(self, tag, priors, value):
        """Server callback: expand the claimed leaf with the network's priors and back its
        value up the path that reached it."""
        node, board, path = tag
        try:
            if priors is None:
                priors = np.zeros(board.stones.shape[0], np.float32)
            else:
                priors = self._adjusted(board, priors)
            allow_all = np.ones(board.stones.shape[0], np.bool_)
            fill_edges(self.tree, node, board, allow_all, priors,
                       np.int64(self._params[P_TOP_K]), self._params[P_TOP_CUMULATIVE],
                       self.policy.patterns, np.int32(self._params[P_PRIOR_EQEX]),
                       new_ladder_scratch(board.stones.shape[0]), self.shapes, np.int32(0))
        except Exception:   # a later descent may claim the leaf again
            release_claims(self.tree, np.array([node], np.int64))
            raise
        if value is not None:
            backup_value(self.tree, path, len(path), value,
                         np.int32(self._params[P_VALUE_EQEX]))

    def _adjusted(self, board, priors):
        """Return the network's priors for board with the reader's knowledge applied:
        engine.tactics' moves raised, escapes into working ladders lowered."""
        return self._with_ladders(board, self._with_tactics(board, priors))

    def _with_ladders(self, board, priors):
        """Return priors with the share of the total held by the escapes from the last move's
        atari that a ladder catches scaled by config.ladder_escape_factor, the mass taken spread
        over the other moves in proportion to their priors; priors itself is left as it was.

        The network has no ladder planes and ranks such an extension as high as one that saves
        the chain (0.9985 at move 105 of runs/pachi10k_gpu2/game-002), and the playouts can
        rate it well too: against Pachi the search ran a ladder for ten moves, rating each
        extension 0.52-0.67, and lost the chain (benchmarks/RESULTS.md). Scaling the escape
        alone would change nothing where the network is that sure, since the tree divides
        each prior by the total: 0.05 x 0.9985 is still 97% of what is left."""
        factor = self.config.ladder_escape_factor
        if factor == 1.0:
            return priors
        local = self._tactics
        if getattr(local, "ladder", None) is None:
            local.ladder = new_ladder_scratch(board.stones.shape[0])
            local.escapes = np.zeros(MAX_TACTICAL_MOVES, np.int32)
        n = futile_escapes(board, board.info[bd.TO_PLAY], local.ladder, local.escapes)
        if n == 0:
            return priors
        scaled = priors.astype(np.float32, copy=True)
        escapes = np.unique(local.escapes[:n])
        total = float(scaled.sum())
        escaping = float(scaled[escapes].sum())
        rest = total - escaping
        if rest > 0:
            scaled *= np.float32((total - factor * escaping) / rest)
        scaled[escapes] = priors[escapes] * np.float32(factor)
        return scaled

    def _with_tactics(self, board, priors):
        """Return the network's priors with config.tactics_prior added to each move that
        engine.tactics finds for the side to move (a capture or rescue that settles a fight
        at the last move; the weight is a share of the priors' total, so that the top-k cut
        keeps the move and PUCT visits it); priors itself is left as it was."""
        weight = self.config.tactics_prior
        if weight <= 0:
            return priors
        local = self._tactics
        if getattr(local, "scratch", None) is None:
            local.scratch = new_tactics_scratch(board)
            local.moves = np.zeros(MAX_TACTICAL_MOVES, np.int32)
        n = tactical_moves(board, board.info[bd.TO_PLAY], local.scratch, local.moves)
        if n == 0:
            return priors
        boosted = priors.astype(np.float32, copy=True)
        boosted[local.moves[:n]] += weight * float(priors.sum())
        return boosted

    def _evaluate_here(self, tag):
        """Evaluate a claimed leaf on this thread and expand it at once (deterministic mode);
        a failed evaluation expands it with uniform priors, as the server's callback does, and
        an answer that cannot be used (an exception) leaves it to be claimed again, as the
        server does."""
        try:
            priors, values = self.server.evaluate_now([tag[1]])
            priors, value = priors[0], None if values is None else float(values[0])
        except Exception:
            log.exception("network evaluation of a leaf failed; uniform priors instead")
            priors, value = None, None
        try:
            self._on_priors(tag, priors, value)
        except Exception:
            log.exception("the answer for a leaf could not be used; it stays unexpanded")

    def _net_worker(self, board, rng, params, budget, stop):
        """One search thread with the network: numba steps, leaves handed to the server."""
        tree = self.tree
        points = board.stones.shape[0]
        scratch, leaf = bd.copy_board(board), bd.copy_board(board)
        path_nodes = np.empty(MAX_DEPTH, np.int32)
        path_edges = np.empty(MAX_DEPTH, np.int32)
        allow_all = np.ones(points, np.bool_)
        uniform = np.zeros(points, np.float32)
        request = np.zeros(2, np.int64)
        record, first_play, sequence, ladder = playout_scratch(board)
        steps = 0
        while stop[0] == 0:
            steps += 1
            if steps % DECIDED_CHECK_EVERY == 0:
                follow_score_center(tree, self.root, params, board.info[bd.TO_PLAY])
                if decided(tree, self.root, params, budget):
                    stop[0] = STOP_DECIDED
                    break
            request[0] = 0 if self.server.has_room() else -1
            if not search_step(tree, self.root, board, scratch, leaf, self.policy, rng, params,
                               budget, request, path_nodes, path_edges, allow_all, uniform,
                               record, first_play, sequence, ladder, self.shapes):
                break
            if request[0] > 0:
                tag = (int(request[0]) - 1, leaf, path_edges[:request[1]].copy())
                if self.config.deterministic:
                    self._evaluate_here(tag)
                else:
                    self.server.submit(tag, leaf)
                    leaf = bd.copy_board(board)

    def run(self, game, playouts, move_time=None, stop_event=None, progress=None):
        """Search the game's position for up to `playouts` new playouts (within move_time, a
        MoveTime, if given, and until stop_event is set); return a SearchResult.

        progress, if given, is (interval in seconds, callback): the callback gets the
        SearchResult so far every interval while the search runs (for analysis output)."""
        started = time.perf_counter()
        board = bd.copy_board(game.board)
        board.info[bd.TO_PLAY] = game.to_play
        if self.server is not None:
            self.server.komi = game.scoring_komi
            self.server.values = self.config.uses_value(int(game.board.info[bd.MOVE_NUMBER]))
        evaluated_before = 0 if self.server is None else self.server.evaluated
        self._place_root(game)
        self._expand_root(game, board)
        tree = self.tree
        tree.counters[C_PLAYOUTS_CLAIMED] = 0
        tree.counters[C_PLAYOUTS_DONE] = 0
        params = self.config.as_array(game.scoring_komi, net=self.server is not None,
                                      size=game.size,
                                      score_center=self._starting_score_center(game),
                                      moves_played=int(game.board.info[bd.MOVE_NUMBER]))
        self._params = params
        stop = np.zeros(1, np.int64)
        if self.server is None:
            threads = [threading.Thread(target=search_worker,
                                        args=(tree, self.root, board, bd.copy_board(board),
                                              self.policy, rng, params, playouts, stop,
                                              self.shapes),
                                        daemon=True)
                       for rng in self._rngs]
        else:
            threads = [threading.Thread(target=self._net_worker,
                                        args=(board, rng, params, playouts, stop), daemon=True)
                       for rng in self._rngs]
        for t in threads:
            t.start()
        workers_started = time.perf_counter()
        stopped_by = None
        next_time_check = None if move_time is None else started + TIME_CHECK_INTERVAL
        next_report = None if progress is None else started + progress[0]
        try:
            while True:
                alive = [t for t in threads if t.is_alive()]
                if not alive:
                    break
                now = time.perf_counter()
                if next_time_check is not None and now >= next_time_check and stop[0] == 0:
                    verdict = self._time_verdict(now - started, now - workers_started,
                                                 move_time)
                    if verdict is not None:
                        stopped_by, stop[0] = verdict, 1
                    next_time_check = now + TIME_CHECK_INTERVAL
                if next_report is not None and now >= next_report:
                    progress[1](self.result(game, now - started))
                    next_report = now + progress[0]
                if stop_event is not None and stop_event.is_set() and stop[0] == 0:
                    stopped_by, stop[0] = "interrupted", 1
                # One thread per pass: waiting on each in turn would look at the clock only
                # every threads x 5 ms.
                alive[0].join(timeout=0.005)
        finally:
            # A failing progress callback (a GUI gone away) must leave no worker running on
            # the tree, and no leaf queued for a later search, on a tree perhaps reset, to expand.
            if stop[0] == 0:
                stop[0] = 1
            for t in threads:
                t.join()
            if self.server is not None:
                dropped = self.server.cancel_pending()
                release_claims(tree, np.array([tag[0] for tag in dropped], np.int64))
        if stopped_by is None:
            stopped_by = "decided" if stop[0] == STOP_DECIDED else "playouts"
        self._score_center = float(params[P_SCORE_CENTER])
        result = self.result(game, time.perf_counter() - started, stopped_by)
        if self.server is not None:
            result.evaluations = self.server.evaluated - evaluated_before
        return result

    def _starting_score_center(self, game):
        """Return Black's expected score where the score utility's center starts: the mean
        playout score through the root as placed (a reused subtree's), else where the
        previous search left it, else 0 (the workers move it as they go)."""
        mean, visits = root_mean_score(self.tree, self.root)
        if visits > 0:
            return mean if game.to_play == bd.BLACK else -mean
        return self._score_center

    def _time_verdict(self, elapsed, searching, move_time):
        """Return time_verdict for the root as it stands `elapsed` seconds into the move, of
        which the workers have run `searching` (the playout rate is theirs; none is known
        before DECIDED_MIN_PLAYOUTS)."""
        _, visits, winrates, _, _ = self._root_stats()
        done = int(self.tree.counters[C_PLAYOUTS_DONE])
        rate = done / max(searching, 1e-9) if done >= DECIDED_MIN_PLAYOUTS else 0.0
        return time_verdict(elapsed, move_time, visits, winrates, rate, self.config.early_stop)

    def principal_variation(self, move):
        """Return the root move followed by the most visited reply at each node below it,
        while such a reply has been visited (at most PV_MAX_MOVES moves)."""
        tree = self.tree
        pv = [move]
        node = find_child(tree, self.root, move)
        while 0 <= node and tree.node_state[node] == EXPANDED and len(pv) < PV_MAX_MOVES:
            first = tree.node_first[node]
            count = tree.node_count[node]
            if count == 0:
                break
            e = first + int(np.argmax(tree.edge_visits[first:first + count]))
            if tree.edge_visits[e] == 0:
                break
            pv.append(int(tree.edge_move[e]))
            node = tree.edge_child[e]
        return pv

    def _root_stats(self):
        """Return the root's edges as arrays: moves, visits, win rates for the mover (the
        playouts' mixed with the network's values by value_weight, without RAVE and without
        the score utility: the chances of winning, for reports and the pass and resign
        rules), priors and the mover's mean playout scores; empty before the root is
        expanded."""
        tree = self.tree
        if tree.node_state[self.root] != EXPANDED:
            empty = np.zeros(0, np.float64)
            return np.zeros(0, np.int32), np.zeros(0, np.int32), empty, empty, empty
        edges = slice(tree.node_first[self.root],
                      tree.node_first[self.root] + tree.node_count[self.root])
        # Workers add wins before visits: reading the wins first keeps a snapshot taken while
        # they run at most a few wins ahead of the visits.
        wins = tree.edge_wins[edges].copy()
        value_wins = tree.edge_value_wins[edges].copy()
        score_sums = tree.edge_score_sum[edges].copy()
        visits = tree.edge_visits[edges].copy()
        evaluations = tree.edge_value_visits[edges].copy()
        seen = np.maximum(visits, 1)
        winrates = np.where(visits > 0, np.minimum(1.0, 0.5 * wins / seen), 0.0)
        value_weight = self._params[P_VALUE_WEIGHT] if self._params is not None else 0.0
        if value_weight > 0:
            values = np.minimum(1.0, value_wins / (
                np.maximum(evaluations, 1).astype(np.float64) * VALUE_SCALE))
            mixed = (1.0 - value_weight) * winrates + value_weight * values
            winrates = np.where((visits > 0) & (evaluations > 0), mixed, winrates)
        scores = np.where(visits > 0, 0.5 * score_sums / seen, 0.0)
        return (tree.edge_move[edges].copy(), visits, winrates,
                tree.edge_prior[edges].astype(np.float64), scores)

    def result(self, game, seconds=0.0, stopped_by="playouts"):
        """Return the root's statistics as a SearchResult (win rates as _root_stats gives
        them)."""
        moves, visits, winrates, priors, scores = self._root_stats()
        children = [MoveStats(int(m), int(v), float(w), float(p), float(s))
                    for m, v, w, p, s in zip(moves, visits, winrates, priors, scores)]
        children.sort(key=lambda m: (m.visits, m.winrate), reverse=True)
        for m in children[:PV_CHILDREN]:
            if m.visits > 0:
                m.pv = self.principal_variation(m.point)
        total = sum(m.visits for m in children)
        winrate = sum(m.winrate * m.visits for m in children) / total if total else 0.5
        score = sum(m.score * m.visits for m in children) / total if total else 0.0
        return SearchResult(children, int(self.tree.counters[C_PLAYOUTS_DONE]), winrate, seconds,
                            stopped_by, score)
