"""The search tree and its numba kernels: a preallocated node pool, expansion, selection,
backup, and the search step and worker that multithreaded UCT runs without the GIL.

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
Each playout's final score is backed up too, for the mean scores the search reports.

The kernels read their settings from a float64 array whose slots are the P_* constants here
(engine.search_config.SearchConfig.as_array fills it); engine.search drives them.
"""
import math
from collections import namedtuple

import numpy as np
from numba import njit

from engine import board as bd
from engine import playout as po
from engine.atomics import atomic_add, atomic_cas
from engine.ladder import atari_starts_ladder, new_ladder_scratch
from engine.shapes import nothing_near, rate_moves


UNEXPANDED, EXPANDING, EXPANDED = 0, 1, 2

# Slots of the float64 parameter array handed to the workers.
(P_UCT_C, P_FPU, P_NOISE, P_EXPAND_VISITS, P_VIRTUAL_LOSS, P_KOMI, P_PRIOR_WEIGHT, P_NET,
 P_TOP_K, P_TOP_CUMULATIVE, P_RAVE_BIAS, P_PRIOR_EQEX, P_TREE_POLICY, P_PUCT_C,
 P_FPU_REDUCTION, P_VALUE_WEIGHT, P_EARLY_STOP, P_SHAPE_EQEX) = range(18)
PARAM_SLOTS = 18
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
        # A move without prior (a pruned futile ladder escape) is never kept, also where
        # rounding leaves running just short of total at cumulative 1.
        while kept < n and kept < top_k and running < cumulative * total \
                and weights[order[kept]] > 0:
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


@njit(**bd.NO_ALLOC)
def edge_winrate(tree, e, n, rave_bias, value_weight):
    """Return the mover's win rate of edge e with n visits (real, virtual and heuristic
    prior; n + AMAF visits > 0): the playouts' rate with the prior's experience merged in, as
    Pachi does, blended with the all-moves-as-first (RAVE) rate by Silver's beta (rave_bias
    < 0: none), then mixed with the network's values backed up through the edge, if any, by
    value_weight."""
    amaf = tree.edge_amaf_visits[e]
    q = 0.5 * (tree.edge_wins[e] + tree.edge_prior_wins[e]) / n if n > 0 else 0.0
    if amaf > 0 and rave_bias >= 0:
        beta = amaf / (n + amaf + rave_bias * n * amaf)
        q = (1.0 - beta) * q + beta * 0.5 * tree.edge_amaf_wins[e] / amaf
    evaluations = tree.edge_value_visits[e]
    if value_weight > 0 and evaluations > 0:
        value = tree.edge_value_wins[e] / (VALUE_SCALE * evaluations)
        q = (1.0 - value_weight) * q + value_weight * value
    return q


@njit(**bd.NO_ALLOC)
def select_edge(tree, node, params, rng):
    """Return the edge of an EXPANDED node with the highest value for the colour to play
    there, or -1. Darkforest's policy: the win rate (edge_winrate) plus UCB1
    exploration, darkforest's uniform noise and a network prior bias that fades with visits;
    unvisited moves get the first-play urgency. PUCT: see select_puct."""
    first = tree.node_first[node]
    count = tree.node_count[node]
    if count == 0:
        return -1
    if params[P_TREE_POLICY] == PUCT:
        return select_puct(tree, node, params, rng)
    log_parent = math.log(tree.node_visits[node] + 1.0)
    c = params[P_UCT_C]
    noise = params[P_NOISE]
    prior_weight = params[P_PRIOR_WEIGHT]
    rave_bias = params[P_RAVE_BIAS]
    value_weight = params[P_VALUE_WEIGHT]
    best = -1
    best_value = -1e300
    for e in range(first, first + count):
        n = tree.edge_visits[e] + tree.edge_virtual[e] + tree.edge_prior_visits[e]
        if n == 0 and (tree.edge_amaf_visits[e] == 0 or rave_bias < 0):
            value = params[P_FPU]
        else:
            value = edge_winrate(tree, e, n, rave_bias, value_weight) \
                + c * math.sqrt(log_parent / (n + 1.0))
        value += noise * po.rand_float(rng) + prior_weight * tree.edge_prior[e] / (1.0 + n)
        if value > best_value:
            best_value = value
            best = e
    return best


@njit(**bd.NO_ALLOC)
def select_puct(tree, node, params, rng):
    """PUCT selection: the edge maximising win rate + puct_c * prior * sqrt(N) / (1 + n),
    with N the node's descents (finished and in flight) and n the edge's. The win rate is
    edge_winrate's; a move with no experience yet gets first-play urgency: the mean win rate
    of the node's visited moves less fpu_reduction (0.5 less it before any). Darkforest's
    uniform noise keeps threads apart."""
    first = tree.node_first[node]
    count = tree.node_count[node]
    rave_bias = params[P_RAVE_BIAS]
    value_weight = params[P_VALUE_WEIGHT]
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
            q = edge_winrate(tree, e, n, rave_bias, value_weight)
        value = q + scale * tree.edge_prior[e] / (1.0 + taken) + noise * po.rand_float(rng)
        if value > best_value:
            best_value = value
            best = e
    return best


@njit(**bd.NO_ALLOC)
def backup_value(tree, path_edges, depth, value):
    """Add a network evaluation of the leaf reached by path_edges[0..depth-1] to every edge
    on the path: value in [-1, 1] is for the side to move at the leaf, which is not the mover
    of the last edge."""
    win = 0.5 * (1.0 - value)      # for the last edge's mover
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
        e = select_edge(tree, node, params, rng)
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
                first_play):
    """Credit every edge on the path's nodes whose move its mover played first later in the
    game (tree moves, then the playout's `moves` moves in record) with the result.

    first_play is scratch (int32 per point): who played there first from the root, +1 for
    Black, -1 for White, 0 for nobody; it is left all zero.
    """
    leaf_color = root_color if depth % 2 == 0 else 3 - root_color
    leaf_sign = 1 if leaf_color == bd.BLACK else -1
    for k in range(moves - 1, -1, -1):
        p = record[k]
        if p != bd.PASS:
            first_play[p] = leaf_sign if k % 2 == 0 else -leaf_sign
    for i in range(depth - 1, -1, -1):
        mover = root_color if i % 2 == 0 else 3 - root_color
        sign = 1 if mover == bd.BLACK else -1
        first_play[tree.edge_move[path_edges[i]]] = sign
        node = path_nodes[i]
        win = _half_points(winner, mover)
        first = tree.node_first[node]
        for e in range(first, first + tree.node_count[node]):
            if sign * first_play[tree.edge_move[e]] > 0:
                atomic_add(tree.edge_amaf_visits, e, 1)
                atomic_add(tree.edge_amaf_wins, e, win)
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
                request, path_nodes, path_edges, allow_all, uniform, record, first_play, ladder,
                shapes):
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
    if params[P_RAVE_BIAS] >= 0:
        backup_amaf(tree, path_nodes, path_edges, depth, root_color, winner, record, moves,
                    first_play)
    atomic_add(tree.counters, C_PLAYOUTS_DONE, 1)
    return True


@njit(cache=True, nogil=True)
def playout_scratch(b):
    """Return the per-thread arrays a search step needs: playout move record, first-play map
    and the ladder reader's scratch."""
    size = b.info[bd.SIZE]
    return (np.empty(3 * size * size, np.int32), np.zeros(b.stones.shape[0], np.int32),
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


@njit(cache=True, nogil=True)
def search_worker(tree, root, root_board, scratch, policy, rng, params, budget, stop, shapes):
    """Run search steps without the network until `budget` playouts are claimed or stop[0]
    is set; return how many this worker ran. root_board must not change while workers run."""
    path_nodes = np.empty(MAX_DEPTH, np.int32)
    path_edges = np.empty(MAX_DEPTH, np.int32)
    allow_all = np.ones(root_board.stones.shape[0], np.bool_)
    uniform = np.zeros(root_board.stones.shape[0], np.float32)
    request = np.full(2, -1, np.int64)
    record, first_play, ladder = playout_scratch(root_board)
    done = 0
    while stop[0] == 0:
        if not search_step(tree, root, root_board, scratch, scratch, policy, rng, params,
                           budget, request, path_nodes, path_edges, allow_all, uniform,
                           record, first_play, ladder, shapes):
            break
        done += 1
        if done % DECIDED_CHECK_EVERY == 0 and decided(tree, root, params, budget):
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
