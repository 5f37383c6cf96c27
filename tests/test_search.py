"""Search behaviour: tree invariants after multithreaded searches, superko at the root, tree
reuse, a full node pool, determinism at a fixed seed."""
import threading
import time

import numpy as np
import pytest

from engine import board as bd
from engine import playout as po
from engine.ladder import new_ladder_scratch
from engine.game import Game
from engine.patterns import pattern_table
from engine.shapes import empty_model
from engine.search import Search
from engine.search_config import SearchConfig
from engine.time_policy import MoveTime, time_verdict, unclear
from engine.tree import C_EDGES, C_NODES, EXPANDED, UNEXPANDED, find_child
from asciiboard import game_from_diagram


def tree_nodes(search):
    """Yield every allocated node index reachable from the root."""
    tree, stack, seen = search.tree, [search.root], set()
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        yield node
        if tree.node_state[node] == EXPANDED:
            first, count = tree.node_first[node], tree.node_count[node]
            stack += [int(c) for c in tree.edge_child[first:first + count] if c >= 0]


def check_invariants(search, expand_visits, threads, waits_for_network=False):
    tree = search.tree
    for node in tree_nodes(search):
        if tree.node_state[node] != EXPANDED:
            continue
        first, count = tree.node_first[node], tree.node_count[node]
        edges = slice(first, first + count)
        assert (tree.edge_virtual[edges] == 0).all(), "virtual loss left behind"
        child_sum = int(tree.edge_visits[edges].sum())
        # Descents that stopped at the node before it had children: with one thread at most
        # the expansion threshold plus the one that expanded it. With more, also every
        # descent another thread finished while this one filled the node's edges (rating
        # each move's heuristic prior takes as long as several 9x9 playouts, longer when the
        # thread is preempted: 25 under a load of 8); with the network, also those that
        # arrived while its evaluation was on its way (darkforest's leaf playouts).
        stopped = tree.node_visits[node] - child_sum
        assert stopped >= 0
        assert waits_for_network or threads > 1 or stopped <= expand_visits + 1
        for e in range(first, first + count):
            child = tree.edge_child[e]
            if child >= 0:
                assert tree.edge_visits[e] == tree.node_visits[child]
            assert 0 <= tree.edge_wins[e] <= 2 * tree.edge_visits[e]
            # Every playout through an edge also counts for it as all-moves-as-first.
            assert tree.edge_amaf_visits[e] >= tree.edge_visits[e]
            assert 0 <= tree.edge_amaf_wins[e] <= 2 * tree.edge_amaf_visits[e]


@pytest.mark.parametrize("size,threads", [(9, 1), (9, 2), (13, 2)])
def test_tree_invariant_after_search(size, threads):
    config = SearchConfig(threads=threads, seed=3, max_nodes=50_000, max_edges=2_000_000,
                          early_stop=False)
    search = Search(config, size)
    game = Game(size)
    result = search.run(game, 3000)
    assert result.playouts == 3000
    assert search.tree.node_visits[search.root] == 3000
    check_invariants(search, config.expand_visits_for(size), threads)


def test_same_seed_same_single_thread_search():
    results = []
    for _ in range(2):
        search = Search(SearchConfig(threads=1, seed=11), 9)
        r = search.run(Game(9), 1500)
        results.append([(m.point, m.visits) for m in r.children])
    assert results[0] == results[1]


def test_root_never_offers_a_superko_repetition():
    game = Game(5)
    for v in ["B4", "C4", "A3", "B3", "B2", "C2", "E5", "D3", "C3", "pass", "pass"]:
        game.play(game.to_play, game.parse_vertex(v))
    game.play(game.to_play, game.parse_vertex("B3"), superko=False)   # white's repetition
    game.play(game.to_play, bd.PASS)
    game.play(game.to_play, bd.PASS)
    retake = game.parse_vertex("C3")
    assert bd.is_legal(game.board, retake, bd.BLACK)
    assert game.repeats_position(retake, bd.BLACK)
    search = Search(SearchConfig(seed=1), 5)
    result = search.run(game, 500)
    assert retake not in [m.point for m in result.children]
    assert result.children


def test_tree_is_reused_after_moves():
    game = Game(9)
    search = Search(SearchConfig(seed=2, early_stop=False), 9)
    result = search.run(game, 2000)
    best = result.best.point
    old_root = search.root
    child = find_child(search.tree, old_root, best)
    visits_before = int(search.tree.node_visits[child])
    assert visits_before > 0
    game.play(bd.BLACK, best)
    search.run(game, 100)
    assert search.root == child
    assert search.tree.node_visits[child] == visits_before + 100


def test_a_new_komi_searches_a_fresh_tree():
    # The kept tree's win rates were counted under the old komi (GUIs let a user change it in
    # the middle of an analysis).
    from engine.game import Rules
    game = Game(9)
    search = Search(SearchConfig(seed=2, early_stop=False), 9)
    search.run(game, 1000)
    search.run(game, 100)
    assert search.tree.node_visits[search.root] > 1000        # the same komi keeps the tree
    game.rules = Rules(komi=0.5)
    search.run(game, 100)
    assert search.tree.node_visits[search.root] <= 100


def test_full_node_pool_stops_growth_not_the_search():
    config = SearchConfig(seed=4, max_nodes=50, max_edges=400, early_stop=False)
    search = Search(config, 9)
    result = search.run(Game(9), 2000)
    assert result.playouts == 2000
    assert search.tree.counters[C_EDGES] >= 0
    assert result.best is not None
    used = min(int(search.tree.counters[C_NODES]), config.max_nodes)
    assert used <= config.max_nodes


def test_a_full_edge_pool_leaves_leaves_for_good_without_the_network():
    # Once the edges run out, a leaf that cannot get children is played out from, not
    # claimed and rated again at every descent that reaches it.
    config = SearchConfig(seed=4, max_nodes=5000, max_edges=300, early_stop=False)
    search = Search(config, 9)
    result = search.run(Game(9), 3000)
    assert result.playouts == 3000
    tree = search.tree
    assert tree.counters[C_EDGES] > config.max_edges   # the pool did run out
    threshold = config.expand_visits_for(9)
    nodes = list(tree_nodes(search))
    assert not any(tree.node_state[n] == UNEXPANDED and tree.node_visits[n] > threshold
                   for n in nodes)
    assert any(tree.node_state[n] == EXPANDED and tree.node_count[n] == 0 for n in nodes)


def test_a_full_edge_pool_sends_no_leaf_to_the_network_twice():
    # With the edges gone the network's answer cannot give the leaf children; it must not be
    # asked again, nor its value backed up again, each time a descent reaches the leaf. Each
    # leaf is evaluated on the search thread, so the tree does not depend on the server's
    # timing, and every evaluation is one value backed up through a root edge.
    config = SearchConfig(seed=5, max_nodes=5000, max_edges=400, early_stop=False,
                          value_weight=0.5, deterministic=True)
    search = Search(config, 9, evaluator=tiny_evaluator())
    try:
        search.run(Game(9), 2000)
        tree = search.tree
        assert tree.counters[C_EDGES] > config.max_edges
        evaluated_leaves = [n for n in tree_nodes(search)
                            if n != search.root and tree.node_state[n] == EXPANDED]
        root = slice(tree.node_first[search.root],
                     tree.node_first[search.root] + tree.node_count[search.root])
        assert tree.edge_value_visits[root].sum() == len(evaluated_leaves)
    finally:
        search.close()


def tiny_evaluator(fail=False):
    """Return an untrained tiny network (or one whose forward pass raises) as an evaluator."""
    from nets.model import Policy, PolicyNet, make_config
    policy = Policy(model=PolicyNet(make_config("tiny")), device="cpu")
    if fail:
        def broken(boards, colors=None, komi=0.0, value=True):
            raise RuntimeError("no network today")
        policy.point_evaluate = broken
    return policy


@pytest.mark.parametrize("threads,tree_policy,expand_visits,servers", [
    (1, "darkforest", 4, 1), (2, "darkforest", 4, 1), (2, "puct", 4, 1), (2, "puct", 1, 1),
    (2, "puct", 4, 2), (3, "darkforest", 4, 2)])
def test_network_search_keeps_the_invariants_and_leaves_no_claim_behind(threads, tree_policy,
                                                                         expand_visits,
                                                                         servers):
    config = SearchConfig(threads=threads, seed=6, tree_policy=tree_policy, value_weight=0.5,
                          early_stop=False, net_expand_visits=expand_visits)
    top_k, root_top_k, _ = config.breadth()
    evaluator = tiny_evaluator()
    replicas = [evaluator.replica("cpu") for _ in range(servers - 1)]
    search = Search(config, 9, evaluator=evaluator, replicas=replicas)
    try:
        result = search.run(Game(9), 2000)
        assert result.playouts == 2000
        assert 0 < len(result.children) <= root_top_k
        # Each server (one a device) took leaves: search thread i feeds server i % servers.
        assert len(search.servers) == servers
        assert all(server.evaluated > 0 for server in search.servers)
        assert result.evaluations == search.evaluations() == sum(
            server.evaluated for server in search.servers)
        # Every evaluated leaf (the tiny net has a value head) is backed up through a root edge.
        root = slice(search.tree.node_first[search.root],
                     search.tree.node_first[search.root] + search.tree.node_count[search.root])
        assert search.tree.edge_value_visits[root].sum() == search.evaluations()
        used = int(search.tree.counters[C_NODES])
        assert not (search.tree.node_state[:used] == 1).any()   # no node left EXPANDING
        check_invariants(search, config.net_expand_visits, threads, waits_for_network=True)
        for node in tree_nodes(search):
            if search.tree.node_state[node] == EXPANDED and node != search.root:
                assert search.tree.node_count[node] <= top_k
    finally:
        search.close()


@pytest.mark.parametrize("config,moves,reads_values", [
    (dict(), 0, False),
    (dict(value_weight=0.3), 0, True),
    (dict(value_weight=0.3, value_until=4), 3, True),
    (dict(value_weight=0.3, value_until=4), 4, False)])
def test_the_network_server_skips_the_value_head_when_the_search_reads_no_values(
        config, moves, reads_values):
    search = Search(SearchConfig(seed=8, early_stop=False, **config), 9,
                    evaluator=tiny_evaluator())
    try:
        game = Game(9)
        for vertex in ["E5", "C3", "G7", "C7"][:moves]:
            game.play(game.to_play, game.parse_vertex(vertex))
        search.run(game, 300)
        assert search.servers[0].values == reads_values
        assert search.servers[0].evaluated > 0
        assert (search.tree.edge_value_visits.sum() > 0) == reads_values
    finally:
        search.close()


def test_a_failing_progress_callback_leaves_no_leaf_queued_or_claimed():
    evaluator = tiny_evaluator()
    evaluate = evaluator.point_evaluate

    def slow(*args, **kwargs):      # so that leaves queue up behind the batch in flight
        time.sleep(0.1)
        return evaluate(*args, **kwargs)
    evaluator.point_evaluate = slow
    search = Search(SearchConfig(seed=9, early_stop=False), 9, evaluator=evaluator)
    reports = []

    def broken(result):
        reports.append(result)
        if len(reports) >= 5 and search.servers[0]._queue.qsize() > 0:
            raise BrokenPipeError("the GUI went away")
    try:
        with pytest.raises(BrokenPipeError):
            search.run(Game(9), 100_000, progress=(0.05, broken))
        assert search.servers[0]._queue.qsize() == 0
        used = int(search.tree.counters[C_NODES])
        assert not (search.tree.node_state[:used] == 1).any()   # no node left EXPANDING
        evaluated = search.servers[0].evaluated
        time.sleep(0.1)
        assert search.servers[0].evaluated == evaluated   # nothing left to answer
        assert search.run(Game(9), 200).playouts == 200
    finally:
        search.close()


@pytest.mark.parametrize("deterministic", [False, True])
def test_a_leaf_whose_answer_cannot_be_used_is_claimed_again_later(deterministic, monkeypatch):
    from engine import search as search_module
    search = Search(SearchConfig(seed=10, early_stop=False, deterministic=deterministic), 9,
                    evaluator=tiny_evaluator())
    fill_edges = search_module.fill_edges
    calls, failures = [], []

    def sometimes_broken(*args):
        calls.append(1)
        if len(calls) <= 3:          # the first three leaves' answers
            failures.append(1)
            raise RuntimeError("a bug in the leaf's expansion")
        return fill_edges(*args)
    monkeypatch.setattr(search_module, "fill_edges", sometimes_broken)
    try:
        result = search.run(Game(9), 1000)
        assert result.playouts == 1000 and len(failures) == 3
        used = int(search.tree.counters[C_NODES])
        assert not (search.tree.node_state[:used] == 1).any()   # no node left EXPANDING
        assert search.run(Game(9), 500).playouts == 500
    finally:
        search.close()


def test_network_failure_falls_back_to_uniform_expansion():
    search = Search(SearchConfig(seed=7, early_stop=False), 9, evaluator=tiny_evaluator())
    try:
        search.servers[0].policy = tiny_evaluator(fail=True)
        result = search.run(Game(9), 1000)
        assert result.playouts == 1000 and result.best is not None
    finally:
        search.close()


def test_amaf_credits_moves_the_mover_played_first_later():
    from engine.tree import backup_amaf, expand, new_tree, reset_tree
    game = Game(5)
    tree = new_tree(100, 1000)
    root = reset_tree(tree)
    allowed = np.ones(game.board.stones.shape[0], np.bool_)
    expand(tree, root, game.board, allowed, np.zeros(allowed.shape[0], np.float32), 1000, 2.0,
           pattern_table(), np.int32(0), new_ladder_scratch(game.board.stones.shape[0]),
           empty_model(), np.int32(0))
    first, count = tree.node_first[root], tree.node_count[root]
    edge_of = {game.vertex(int(tree.edge_move[e])): e for e in range(first, first + count)}
    a1, b2, c3 = (game.parse_vertex(v) for v in ("A1", "B2", "C3"))
    # The tree took A1 for black, then the playout went W B2, B C3, pass, pass: black's
    # root edges A1 and C3 share black's win; B2 was white's, so its edge gets nothing.
    path_nodes = np.array([root, -1], np.int32)
    path_edges = np.array([edge_of["A1"]], np.int32)
    record = np.array([b2, c3, bd.PASS, bd.PASS], np.int32)
    first_play = np.zeros(game.board.stones.shape[0], np.int32)

    backup_amaf(tree, path_nodes, path_edges, 1, bd.BLACK, bd.BLACK, record, 4, first_play)
    assert not first_play.any()
    credited = {v: (int(tree.edge_amaf_visits[e]), int(tree.edge_amaf_wins[e]))
                for v, e in edge_of.items() if tree.edge_amaf_visits[e]}
    assert credited == {"A1": (1, 2), "C3": (1, 2)}


def expanded_root(game, eqex=10):
    """Return (tree, root): a fresh root for the side to move, expanded without a network
    and with heuristic priors worth eqex playouts."""
    from engine.tree import expand, new_tree, reset_tree
    tree = new_tree(10, 1000)
    root = reset_tree(tree)
    board = game.board
    board.info[bd.TO_PLAY] = game.to_play
    allowed = np.ones(board.stones.shape[0], np.bool_)
    expand(tree, root, board, allowed, np.zeros(allowed.shape[0], np.float32), 1 << 30, 2.0,
           pattern_table(), np.int32(eqex), new_ladder_scratch(board.stones.shape[0]),
           empty_model(), np.int32(0))
    return tree, root


def root_priors(game, eqex=10):
    """Expand a fresh root for the side to move; return {vertex: (prior visits, half wins)}."""
    tree, root = expanded_root(game, eqex)
    first, count = tree.node_first[root], tree.node_count[root]
    return {game.vertex(int(tree.edge_move[e])):
            (int(tree.edge_prior_visits[e]), int(tree.edge_prior_wins[e]))
            for e in range(first, first + count)}


def prior_rate(entry):
    visits, half_wins = entry
    return 0.5 * half_wins / visits


def test_heuristic_prior_favours_capture_and_escape_and_punishes_self_atari():
    # Black to play. B3 captures the white stone at B2; G4 takes the black stone at G5 out of
    # atari; A9 connects to the black stone at B9 in atari and leaves the pair one liberty.
    game = game_from_diagram("""
        . X O . . . . . .
        . O . . . . . . .
        . . . . . . . . .
        . . . . . . O . .
        . . . . . O X O .
        . . . . . . . . .
        . . . . . . . . .
        X O X . . . . . .
        . X . . . . . . .
    """)
    priors = root_priors(game)
    assert prior_rate(priors["B3"]) > 0.5
    assert prior_rate(priors["G4"]) > 0.5
    assert prior_rate(priors["A9"]) < 0.5
    assert priors["E3"] == (10, 10)                # nothing applies to an empty area
    assert all(v >= 10 and 0 <= w <= 2 * v for v, w in priors.values())


def test_selection_at_a_fresh_node_follows_the_heuristic_prior():
    from engine.tree import select_edge
    game = game_from_diagram("""
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . O . .
        . . . . . O X O .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
    """)
    tree, root = expanded_root(game)
    params = SearchConfig(noise=0.0, rave_bias=-1.0).as_array(7.0)
    edge = select_edge(tree, root, params, po.new_rng(1))
    assert game.vertex(int(tree.edge_move[edge])) == "G4"   # the only way out of the atari


def test_heuristic_prior_likes_nearness_to_the_last_move():
    game = Game(9)
    game.play(bd.BLACK, game.parse_vertex("E5"))
    priors = root_priors(game)
    assert prior_rate(priors["E6"]) > 0.5 and prior_rate(priors["F6"]) > 0.5
    assert prior_rate(priors["C5"]) > 0.5                     # Manhattan distance 2
    assert priors["B5"] == (10, 10)                           # distance 3 is not near
    assert priors["A1"] == (10, 10)


def test_heuristic_prior_on_big_boards_prefers_third_line_to_first_in_the_open():
    priors = root_priors(Game(19))
    assert prior_rate(priors["C10"]) > 0.5
    assert prior_rate(priors["A10"]) < 0.5
    assert priors["K10"] == (10, 10)


def test_heuristic_priors_only_shape_selection_not_visit_counts():
    config = SearchConfig(threads=2, seed=5, max_nodes=50_000, max_edges=2_000_000,
                          prior_eqex=20, early_stop=False)
    search = Search(config, 9)
    result = search.run(Game(9), 2000)
    assert result.playouts == 2000
    check_invariants(search, config.expand_visits_for(9), 2)


def test_value_backup_alternates_the_mover_up_the_path():
    from engine.tree import VALUE_SCALE, backup_value, new_tree
    tree = new_tree(10, 10)
    path = np.array([0, 1, 2], np.int32)
    backup_value(tree, path, 3, 0.6)     # the leaf's side to move expects to win 80%
    assert tree.edge_value_visits[:3].tolist() == [1, 1, 1]
    assert tree.edge_value_wins[:3].tolist() == [round(0.2 * VALUE_SCALE),
                                                 round(0.8 * VALUE_SCALE),
                                                 round(0.2 * VALUE_SCALE)]
    assert tree.edge_prior_visits[:3].tolist() == [0, 0, 0]


def puct_root(priors, wins_visits=()):
    """Return (tree, root, params): a root with one edge per prior (moves 0, 1, ...), edge i
    given (half wins, visits) from wins_visits, and PUCT parameters without noise."""
    from engine.tree import new_tree, reset_tree
    tree = new_tree(10, 10)
    root = reset_tree(tree)
    tree.node_first[root], tree.node_count[root], tree.node_state[root] = 0, len(priors), \
        EXPANDED
    tree.edge_prior[:len(priors)] = priors
    tree.edge_move[:len(priors)] = np.arange(len(priors))
    for i, (wins, visits) in enumerate(wins_visits):
        tree.edge_wins[i], tree.edge_visits[i] = wins, visits
    tree.node_visits[root] = int(tree.edge_visits.sum())
    params = SearchConfig(tree_policy="puct", noise=0.0,
                          net_rave_bias=-1.0).as_array(7.5, net=True)
    return tree, root, params


def test_puct_follows_the_prior_until_the_results_disagree():
    from engine.tree import select_edge
    tree, root, params = puct_root([0.2, 0.7, 0.1])
    assert select_edge(tree, root, params, po.new_rng(1)) == 1
    # A favourite that loses every playout gives way; the next by prior is tried.
    tree, root, params = puct_root([0.2, 0.7, 0.1], [(0, 0), (0, 40)])
    assert select_edge(tree, root, params, po.new_rng(1)) == 0
    # A modest lead in win rate does not beat a much stronger prior at few visits.
    tree, root, params = puct_root([0.1, 0.9], [(12, 10), (10, 10)])
    assert select_edge(tree, root, params, po.new_rng(1)) == 1


def test_value_weight_mixes_the_network_into_the_win_rate():
    from engine.tree import VALUE_SCALE, edge_winrate
    tree, _, _ = puct_root([1.0], [(20, 20)])           # playouts: 50%
    tree.edge_value_visits[0], tree.edge_value_wins[0] = 4, 4 * VALUE_SCALE   # the net: 100%
    assert edge_winrate(tree, 0, 20, -1.0, 0.0) == pytest.approx(0.5)
    assert edge_winrate(tree, 0, 20, -1.0, 0.5) == pytest.approx(0.75)
    assert edge_winrate(tree, 0, 20, -1.0, 1.0) == pytest.approx(1.0)


def test_value_until_turns_the_value_off_for_the_endgame():
    from engine.tree import P_VALUE_WEIGHT
    config = SearchConfig(value_weight=0.4, value_until=200)
    assert config.value_weight_at(0) == config.value_weight_at(199) == 0.4
    assert config.value_weight_at(200) == config.value_weight_at(300) == 0.0
    assert config.as_array(7.5, net=True, moves_played=150)[P_VALUE_WEIGHT] == 0.4
    assert config.as_array(7.5, net=True, moves_played=250)[P_VALUE_WEIGHT] == 0.0
    assert config.as_array(7.5, net=False, moves_played=150)[P_VALUE_WEIGHT] == 0.0
    always = SearchConfig(value_weight=0.4, value_until=0)
    assert always.as_array(7.5, net=True, moves_played=300)[P_VALUE_WEIGHT] == 0.4


def test_decided_once_no_other_move_can_catch_up():
    from engine.tree import C_PLAYOUTS_DONE, P_EARLY_STOP, decided
    tree, root, params = puct_root([0.5, 0.5], [(0, 700), (0, 100)])
    tree.counters[C_PLAYOUTS_DONE] = 800
    assert decided(tree, root, params, 1000)            # 600 ahead, 200 to come
    assert not decided(tree, root, params, 1500)        # 700 to come
    tree.counters[C_PLAYOUTS_DONE] = 300
    assert not decided(tree, root, params, 1000)        # not half the budget yet
    params[P_EARLY_STOP] = 0.0
    tree.counters[C_PLAYOUTS_DONE] = 800
    assert not decided(tree, root, params, 1000)


# A black chain with two liberties in white's wall: the search soon settles on one move.
SETTLING_POSITION = """
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . O . .
    . . . . . O X O .
    . . . . . . X . .
    . . . . . . O . .
    . . . . . . . . .
    . . . . . . . . .
"""


def test_early_stop_leaves_the_most_visited_move_unchanged():
    game = game_from_diagram(SETTLING_POSITION)
    budget = 4000
    result = Search(SearchConfig(seed=3), 9).run(game, budget)
    full = Search(SearchConfig(seed=3, early_stop=False), 9).run(game, budget)
    assert full.playouts == budget
    assert result.playouts < budget
    best, second = result.children[0].visits, result.children[1].visits
    assert best - second > budget - result.playouts


def test_a_move_is_unclear_while_a_rival_is_close_or_better_or_the_win_rate_fell():
    visits = np.array([1000, 300, 50])
    winrates = np.array([0.55, 0.54, 0.70])
    assert not unclear(visits, winrates)
    assert unclear(np.array([1000, 700, 50]), winrates)                 # close second
    assert unclear(visits, np.array([0.55, 0.60, 0.70]))                # better, well visited
    assert not unclear(visits, winrates, previous_winrate=0.6)
    assert unclear(visits, winrates, previous_winrate=0.7)              # fell by 15 points
    assert not unclear(np.zeros(3, np.int32), winrates)


def test_time_verdict_stops_at_normal_time_goes_on_while_unclear_never_past_maximum():
    clear = (np.array([1000, 300]), np.array([0.6, 0.5]))
    close = (np.array([1000, 900]), np.array([0.6, 0.5]))
    move_time = MoveTime(normal=2.0, maximum=6.0)
    assert time_verdict(2.1, move_time, *clear, 100.0) == "time"
    assert time_verdict(2.1, move_time, *close, 100.0) is None
    assert time_verdict(6.0, move_time, *close, 100.0) == "time"
    # Before the normal time: decided once the rest of it could not close the gap of 700.
    assert time_verdict(1.0, move_time, *clear, 600.0) == "decided"
    assert time_verdict(1.0, move_time, *clear, 800.0) is None
    assert time_verdict(1.0, move_time, *close, 1.0) is None             # unclear: no
    assert time_verdict(0.2, move_time, *clear, 1.0) is None             # too soon to judge
    assert time_verdict(1.0, move_time, *clear, 600.0, early_stop=False) is None
    assert time_verdict(1.0, move_time, *clear, 0.0) is None    # no rate yet: no judgement


def test_a_timed_search_says_what_stopped_it():
    game = game_from_diagram(SETTLING_POSITION)
    search = Search(SearchConfig(seed=3), 9)
    without_early_stop = Search(SearchConfig(seed=3, early_stop=False), 9)
    assert without_early_stop.run(game, 300).stopped_by == "playouts"
    assert search.run(game, 4000).stopped_by == "decided"        # see the test above
    timed = without_early_stop.run(game, 10 ** 8, MoveTime(0.3, 0.3))
    assert timed.stopped_by == "time" and timed.playouts < 10 ** 8
    # The search settles: the lead soon outruns what the time left could change.
    decided = search.run(game, 10 ** 8, MoveTime(30.0, 30.0))
    assert decided.stopped_by == "decided" and decided.seconds < 30.0
    stop = threading.Event()
    stop.set()
    assert search.run(game, 10 ** 8, stop_event=stop).stopped_by == "interrupted"


def test_a_root_searched_for_one_colour_is_not_reused_for_the_other():
    game = Game(9)
    game.play(bd.BLACK, game.parse_vertex("E5"))
    search = Search(SearchConfig(seed=5, early_stop=False), 9)
    search.run(game, 300)                    # White to move
    game.to_play = bd.BLACK                  # the same moves, asked for the side not to move
    search.run(game, 200)
    assert search.tree.node_visits[search.root] == 200
    search.run(game, 100)                    # asked again for Black: reused
    assert search.tree.node_visits[search.root] == 300


def test_a_fresh_tree_carries_no_score_from_the_last_one():
    # The edge pool is reused after each reset: a new edge must start with no score, or a
    # move's mean score (lz-analyze's scoreMean) mixes in an old tree's.
    search = Search(SearchConfig(seed=7, early_stop=False), 9)
    search.run(Game(9), 2000)
    game = Game(9)
    game.play(bd.BLACK, game.parse_vertex("J9"))
    game.play(bd.WHITE, game.parse_vertex("A9"))
    search.run(game, 30)                     # no child of the old root: a fresh tree
    tree = search.tree
    edges = slice(tree.node_first[search.root],
                  tree.node_first[search.root] + tree.node_count[search.root])
    visits, sums = tree.edge_visits[edges], tree.edge_score_sum[edges]
    assert (sums[visits == 0] == 0).all()
    result = search.result(game)
    assert sums.sum() == round(sum(2 * m.score * m.visits for m in result.children))
    assert abs(result.root_score) <= 81 + 7.5


def test_backup_adds_the_final_score_for_each_mover():
    from engine.tree import backup, new_tree, reset_tree
    tree = new_tree(10, 10)
    reset_tree(tree)
    path_nodes = np.array([0, -1, -1, -1], np.int32)
    path_edges = np.array([0, 1, 2], np.int32)
    params = SearchConfig().as_array(7.5)
    backup(tree, path_nodes, path_edges, 3, bd.BLACK, bd.BLACK, 10.5, params)
    backup(tree, path_nodes, path_edges, 3, bd.BLACK, bd.WHITE, -3.5, params)
    assert tree.edge_score_sum[:3].tolist() == [14, -14, 14]     # half points: +7 for Black


def test_uct_and_rave_settings_apply_to_the_search_they_name():
    from engine.tree import P_RAVE_BIAS, P_UCT_C
    config = SearchConfig(uct_c=0.1, rave_bias=0.001, net_uct_c=0.7, net_rave_bias=-1.0)
    without, with_net = config.as_array(7.5), config.as_array(7.5, net=True)
    assert (without[P_UCT_C], without[P_RAVE_BIAS]) == (0.1, 0.001)
    assert (with_net[P_UCT_C], with_net[P_RAVE_BIAS]) == (0.7, -1.0)


def favouring(evaluator, point, mover=None):
    """Return evaluator with its point_evaluate giving point 0.99 of the prior in every
    position where it is empty (only where mover is to play, when given)."""
    evaluate = evaluator.point_evaluate

    def favoured(boards, colors=None, komi=0.0, value=True):
        priors, values = evaluate(boards, colors, komi, value)
        for row, b in zip(priors, boards):
            if b.stones[point] == bd.EMPTY and mover in (None, b.info[bd.TO_PLAY]):
                row *= 0.01 / row.sum()
                row[point] = 0.99
        return priors, values
    evaluator.point_evaluate = favoured
    return evaluator


def ladder_game(tenuki=()):
    """Return tests/test_ladder.py's LADDER reached by moves: White's D3 puts Black D4 in
    atari, and extending at E4 runs into a ladder that catches the chain; then the tenuki
    moves."""
    game = Game(9)
    for i, vertex in enumerate(("D4", "D5", "A9", "E5", "C9", "C4", "A7", "D3") + tenuki):
        game.play(bd.BLACK if i % 2 == 0 else bd.WHITE, game.parse_vertex(vertex))
    return game


@pytest.mark.parametrize("prune,tenuki", [(False, ()), (True, ()), (True, ("A5", "J9"))])
def test_pruning_keeps_the_futile_ladder_escape_out_of_the_tree(prune, tenuki):
    # tests/test_ladder.py's LADDER reached by moves: White's D3 puts Black D4 in atari, and
    # extending at E4 runs into a ladder that catches the chain (also after a tenuki, White's
    # last move then elsewhere). The network favours E4.
    game = ladder_game(tenuki)
    escape = game.parse_vertex("E4")
    config = SearchConfig(seed=3, threads=1, early_stop=False, prune_futile_escapes=prune)
    search = Search(config, 9, evaluator=favouring(tiny_evaluator(), escape))
    try:
        result = search.run(game, 300)
    finally:
        search.close()
    moves = {c.point: c for c in result.children}
    if prune:
        assert escape not in moves and result.best.point != escape
    else:
        assert moves[escape].prior > 0.9 and result.best.point == escape


def test_pruning_applies_at_every_network_expansion(monkeypatch):
    # The ladder position above after a Black tenuki, White to move, the network favouring
    # Black's E4: below the root, wherever Black's D4 is still in atari (White did not take
    # it), the leaf's priors give E4 nothing. Deterministic, so the leaves are the same on a
    # loaded machine.
    import engine.search as search_module
    from engine.ladder import caught_escapes
    game = ladder_game(("A5",))
    escape = game.parse_vertex("E4")
    expansions = []
    fill_edges = search_module.fill_edges

    def recorded(tree, node, b, allowed, priors, *rest):
        expansions.append((bd.copy_board(b), priors.copy()))
        return fill_edges(tree, node, b, allowed, priors, *rest)
    monkeypatch.setattr(search_module, "fill_edges", recorded)
    config = SearchConfig(seed=4, threads=1, early_stop=False, prune_futile_escapes=True,
                          net_expand_visits=1, deterministic=True)
    search = Search(config, 9, evaluator=favouring(tiny_evaluator(), escape, bd.BLACK))
    try:
        search.run(game, 400)
    finally:
        search.close()
    pruned = 0
    for b, priors in expansions:
        out = np.zeros(16, np.int32)
        found = caught_escapes(b, b.info[bd.TO_PLAY], new_ladder_scratch(b.stones.shape[0]), out)
        assert not priors[out[:found]].any()
        pruned += found > 0
    assert pruned > 0
