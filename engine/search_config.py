"""The search's parameters: SearchConfig, one object that travels from the command line to
the workers, and its as_array, the float64 array the numba kernels read (slots
engine.tree.P_*)."""
from dataclasses import dataclass, field

import numpy as np

from engine import playout as po
from engine.tree import (DARKFOREST, P_EARLY_STOP, P_EXPAND_VISITS, P_FPU, P_FPU_REDUCTION,
                         P_KOMI, P_NET, P_NOISE, P_PRIOR_EQEX, P_PRIOR_WEIGHT, P_PUCT_C,
                         P_RAVE_BIAS, P_SHAPE_EQEX, P_TOP_CUMULATIVE, P_TOP_K, P_TREE_POLICY,
                         P_UCT_C, P_VALUE_WEIGHT, P_VIRTUAL_LOSS, PARAM_SLOTS, TREE_POLICIES)


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
    # 0.02 and 10 of 12 on 9x9 (benchmarks/history/, RAVE).
    uct_c: float = 0.0
    rave_bias: float = 0.00025
    net_uct_c: float = 0.3
    net_rave_bias: float = 0.02
    first_play_urgency: float = 1.1
    noise: float = 0.02
    # Without the net: playouts a leaf takes before it grows children, or "auto": by
    # board size (expand_visits_for).
    expand_visits: int | str = "auto"
    virtual_loss: int = 3
    prior_weight: float = 0.0
    net_prior_weight: float = 1.0
    # Without the net: playouts' worth of each heuristic prior (with it, none: the heuristics
    # worth 10 playouts on top of the net's priors won 1 of 5 games, benchmarks/history/).
    prior_eqex: int = 10
    # Without the net: winning playouts of sqrt(p) * shape_eqex for a move the shape model
    # (engine.shapes, loaded from the file `shapes`; "" for none) gives probability p, as
    # Pachi weighs its pattern model's probabilities. 200 won 10 of 10 games against 0 on
    # 19x19 at 2,000 playouts (benchmarks/history/, shape model).
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
    # Share of the network's value in a move's win rate (engine.config.NET_VALUE_WEIGHT with
    # a net that has a value head), mixed only before value_until moves of the game (0:
    # always): the head judges the endgame worse than the playouts (benchmarks/history/).
    value_weight: float = 0.0
    value_until: int = 200
    early_stop: bool = True        # stop once no other root move can catch the most visited
    # With the network: give a futile ladder escape (engine.ladder.caught_escapes: extending
    # a chain in atari into a ladder that catches it) no prior, so the tree never runs a lost
    # ladder out for either side (benchmarks/RESULTS.md G3, S3).
    prune_futile_escapes: bool = True
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
        second; 8 on 9x9 lost (benchmarks/history/, expansion)."""
        if self.expand_visits != "auto":
            return self.expand_visits
        return min(8, max(3, round(size * size / 45)))

    def value_weight_at(self, moves_played):
        """Return the network value's share in the win rates after moves_played moves: the
        value head judges the middle game better mixed with the playouts than the playouts
        alone, the endgame worse (benchmarks/history/, value head), hence value_until."""
        return self.value_weight if self.before_value_until(moves_played) else 0.0

    def before_value_until(self, moves_played):
        """Return whether value_until lets the network's value enter the search after
        moves_played moves."""
        return not self.value_until or moves_played < self.value_until

    def uses_value(self, moves_played):
        """Return whether a network search after moves_played moves reads the network's
        values (value_weight_at); when not, the network server skips the value head."""
        return self.value_weight_at(moves_played) > 0

    def as_array(self, komi, net=False, size=19, moves_played=0):
        """Return the float64 parameter array the numba workers read. With net, leaves are
        expanded by the network server (top moves by prior) and tree_policy applies; without,
        selection is darkforest's UCB1 with RAVE and heuristic priors. moves_played, the
        game's moves so far, sets the value's weight (value_weight_at)."""
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
        params[P_PRIOR_EQEX] = 0 if net else self.prior_eqex
        params[P_TREE_POLICY] = TREE_POLICIES[self.tree_policy] if net else DARKFOREST
        params[P_PUCT_C] = self.puct_c
        params[P_FPU_REDUCTION] = self.fpu_reduction
        params[P_VALUE_WEIGHT] = self.value_weight_at(moves_played) if net else 0.0
        params[P_EARLY_STOP] = 1.0 if self.early_stop else 0.0
        params[P_SHAPE_EQEX] = self.shape_eqex if self.shapes and not net else 0
        return params
