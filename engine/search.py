"""The Search driver: runs engine.tree's numba workers on threads over one tree, with the
network's evaluation server (nets.server) expanding leaves, keeps the tree between moves of a
game (reusing the subtree of the moves played), stops for time (engine.time_policy), and
reports the root as a SearchResult of MoveStats."""
import logging
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from engine import board as bd
from engine import playout as po
from engine.ladder import caught_escapes, new_ladder_scratch
from engine.shapes import cached_model, empty_model
from engine.time_policy import DECIDED_MIN_PLAYOUTS, TIME_CHECK_INTERVAL, time_verdict
from engine.tree import (C_EDGES, C_NODES, C_PLAYOUTS_CLAIMED, C_PLAYOUTS_DONE,
                         DECIDED_CHECK_EVERY, EXPANDED, MAX_DEPTH, P_PRIOR_EQEX, P_SHAPE_EQEX,
                         P_TOP_CUMULATIVE, P_TOP_K, P_VALUE_WEIGHT, STOP_DECIDED, VALUE_SCALE,
                         backup_value, decided, expand, fill_edges, find_child, new_tree,
                         playout_scratch, release_claims, reset_tree, search_step,
                         search_worker)
from nets.server import EvalServer

log = logging.getLogger("search")

# Futile ladder escapes pruned at one expansion, at most.
ESCAPES_PRUNED = 16
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



class Search:
    """A reusable UCT search: keeps its tree between moves of the same game. With an evaluator
    (a nets.model.Policy), new leaves are expanded by a batched network server."""

    def __init__(self, config, size, evaluator=None, replicas=()):
        """replicas: more Policies with the evaluator's network, each on a device of its own
        (darkforest spread its evaluations over 4 GPUs): each gets a server, and search thread
        i hands its leaves to server i modulo their number; the first server evaluates roots."""
        self.config = config
        self.size = size
        self.tree = new_tree(config.max_nodes, config.max_edges)
        self.root = reset_tree(self.tree)
        self.policy = config.policy.build()
        policies = [] if evaluator is None else [evaluator, *replicas]
        self.servers = [EvalServer(policy, self._on_priors) for policy in policies]
        self.shapes = (cached_model(config.shapes) if config.shapes and evaluator is None
                       else empty_model())
        self._root_moves = None        # the game's move list (color, point) at the root
        self._root_setup = None
        self._root_color = None        # the colour the root was searched for
        self._root_komi = None         # the komi the tree's results were counted under
        self._rngs = [po.new_rng(config.seed * 1000 + i + 1)
                      for i in range(max(1, config.threads))]
        self._params = None

    def forget(self):
        """Empty the tree for a new game on the same board size, keeping the pools."""
        self.root = reset_tree(self.tree)
        self._root_moves = None
        self._root_setup = None

    def close(self):
        """Stop the network server threads, if any."""
        for server in self.servers:
            server.close()

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
        expects there, under the same komi, and the side to move is the one the reached node
        was searched for (not so for a genmove or analysis for the side not to move: the
        edges there are the other side's moves)."""
        moves = list(game.moves)
        reuse_ok = (self._root_moves is not None and self._root_setup == game.setup
                    and self._root_komi == game.scoring_komi
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
        if not self.servers:
            expand(tree, self.root, board, allowed, np.zeros(allowed.shape[0], np.float32),
                   1 << 30, 2.0, self.policy.patterns, np.int32(self.config.prior_eqex),
                   new_ladder_scratch(board.stones.shape[0]), self.shapes,
                   np.int32(self.config.as_array(0.0)[P_SHAPE_EQEX]))
        else:
            try:
                priors = self.servers[0].evaluate_now([board])[0][0]
            except Exception:
                log.exception("network evaluation of the root failed; uniform priors instead")
                priors = np.zeros(allowed.shape[0], np.float32)
            _, root_top_k, cumulative = self.config.breadth()
            ladder = new_ladder_scratch(board.stones.shape[0])
            expand(tree, self.root, board, allowed, self._pruned(board, priors, ladder),
                   root_top_k, cumulative, self.policy.patterns, np.int32(0), ladder,
                   self.shapes, np.int32(0))

    def _pruned(self, board, priors, ladder):
        """Return the network's priors for expanding board, the futile ladder escapes of the
        side to move (engine.ladder.caught_escapes: the extension of any of its chains in atari
        into a ladder that catches it) given none when the config prunes them (unless nothing
        else has any). ladder is the reader's scratch, the one the expansion then uses."""
        if not self.config.prune_futile_escapes:
            return priors
        escapes = np.empty(ESCAPES_PRUNED, np.int32)
        found = caught_escapes(board, board.info[bd.TO_PLAY], ladder, escapes)
        if not found:
            return priors
        pruned = priors.copy()
        pruned[escapes[:found]] = 0.0
        return pruned if pruned.sum() > 0 else priors

    def _on_priors(self, tag, priors, value):
        """Server callback: expand the claimed leaf with the network's priors and back its
        value up the path that reached it."""
        node, board, path = tag
        try:
            if priors is None:
                priors = np.zeros(board.stones.shape[0], np.float32)
            allow_all = np.ones(board.stones.shape[0], np.bool_)
            ladder = new_ladder_scratch(board.stones.shape[0])
            fill_edges(self.tree, node, board, allow_all, self._pruned(board, priors, ladder),
                       np.int64(self._params[P_TOP_K]), self._params[P_TOP_CUMULATIVE],
                       self.policy.patterns, np.int32(self._params[P_PRIOR_EQEX]), ladder,
                       self.shapes, np.int32(0))
        except Exception:   # a later descent may claim the leaf again
            release_claims(self.tree, np.array([node], np.int64))
            raise
        if value is not None:
            backup_value(self.tree, path, len(path), value)

    def _evaluate_here(self, server, tag):
        """Evaluate a claimed leaf on this thread and expand it at once (deterministic mode);
        a failed evaluation expands it with uniform priors, as the server's callback does, and
        an answer that cannot be used (an exception) leaves it to be claimed again, as the
        server does."""
        try:
            priors, values = server.evaluate_now([tag[1]])
            priors, value = priors[0], None if values is None else float(values[0])
        except Exception:
            log.exception("network evaluation of a leaf failed; uniform priors instead")
            priors, value = None, None
        try:
            self._on_priors(tag, priors, value)
        except Exception:
            log.exception("the answer for a leaf could not be used; it stays unexpanded")

    def _net_worker(self, server, board, rng, params, budget, stop):
        """One search thread with the network: numba steps, leaves handed to its server."""
        tree = self.tree
        points = board.stones.shape[0]
        scratch, leaf = bd.copy_board(board), bd.copy_board(board)
        path_nodes = np.empty(MAX_DEPTH, np.int32)
        path_edges = np.empty(MAX_DEPTH, np.int32)
        allow_all = np.ones(points, np.bool_)
        uniform = np.zeros(points, np.float32)
        request = np.zeros(2, np.int64)
        record, first_play, ladder = playout_scratch(board)
        steps = 0
        while stop[0] == 0:
            steps += 1
            if steps % DECIDED_CHECK_EVERY == 0 and decided(tree, self.root, params, budget):
                stop[0] = STOP_DECIDED
                break
            request[0] = 0 if server.has_room() else -1
            if not search_step(tree, self.root, board, scratch, leaf, self.policy, rng, params,
                               budget, request, path_nodes, path_edges, allow_all, uniform,
                               record, first_play, ladder, self.shapes):
                break
            if request[0] > 0:
                tag = (int(request[0]) - 1, leaf, path_edges[:request[1]].copy())
                if self.config.deterministic:
                    self._evaluate_here(server, tag)
                else:
                    server.submit(tag, leaf)
                    leaf = bd.copy_board(board)

    def run(self, game, playouts, move_time=None, stop_event=None, progress=None):
        """Search the game's position for up to `playouts` new playouts (within move_time, a
        MoveTime, if given, and until stop_event is set); return a SearchResult.

        progress, if given, is (interval in seconds, callback): the callback gets the
        SearchResult so far every interval while the search runs (for analysis output)."""
        started = time.perf_counter()
        board = bd.copy_board(game.board)
        board.info[bd.TO_PLAY] = game.to_play
        reads_values = self.config.uses_value(int(game.board.info[bd.MOVE_NUMBER]))
        for server in self.servers:
            server.komi = game.scoring_komi
            server.values = reads_values
        evaluated_before = self.evaluations()
        self._place_root(game)
        self._expand_root(game, board)
        tree = self.tree
        tree.counters[C_PLAYOUTS_CLAIMED] = 0
        tree.counters[C_PLAYOUTS_DONE] = 0
        params = self.config.as_array(game.scoring_komi, net=bool(self.servers),
                                      size=game.size,
                                      moves_played=int(game.board.info[bd.MOVE_NUMBER]))
        self._params = params
        stop = np.zeros(1, np.int64)
        if not self.servers:
            threads = [threading.Thread(target=search_worker,
                                        args=(tree, self.root, board, bd.copy_board(board),
                                              self.policy, rng, params, playouts, stop,
                                              self.shapes),
                                        daemon=True)
                       for rng in self._rngs]
        else:
            threads = [threading.Thread(target=self._net_worker,
                                        args=(self.servers[i % len(self.servers)], board, rng,
                                              params, playouts, stop), daemon=True)
                       for i, rng in enumerate(self._rngs)]
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
            for server in self.servers:
                dropped = server.cancel_pending()
                release_claims(tree, np.array([tag[0] for tag in dropped], np.int64))
        if stopped_by is None:
            stopped_by = "decided" if stop[0] == STOP_DECIDED else "playouts"
        result = self.result(game, time.perf_counter() - started, stopped_by)
        if self.servers:
            result.evaluations = self.evaluations() - evaluated_before
        return result

    def evaluations(self):
        """Return the leaves the network servers have evaluated so far, together (roots and
        --deterministic's leaves, evaluated on the caller's thread, are not counted)."""
        return sum(server.evaluated for server in self.servers)

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

