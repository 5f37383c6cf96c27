"""Player decisions: time budget per move, pass after the opponent's pass when it wins,
resignation, dead stones and seki."""
import io
import os

import pytest

import gtp_main
from asciiboard import game_from_diagram
from engine import board as bd
from engine import config
from engine.game import Game
from engine.player import (MIN_OWNERSHIP_RUNS, OWNERSHIP_SECONDS_PER_RUN_POINT, Player,
                           PlayerConfig, robust_choice, seki_points)
from engine.search import MoveStats, SearchResult
from engine.search_config import SearchConfig
from engine.time_policy import MOVE_OVERHEAD, Clock, TimeControl
from nets import DEFAULT_WEIGHTS, POLICY_ONLY_WEIGHTS


# Black owns 36 points on the left, White 45 on the right.
WALLS = """
    . . . X O . . . .
    . . . X O . . . .
    . . . X O . . . .
    . . . X O . . . .
    . . . X O . . . .
    . . . X O . . . .
    . . . X O . . . .
    . . . X O . . . .
    . . . X O . . . .
    """


def player(rollouts=300, **kw):
    return Player(PlayerConfig(rollouts=rollouts, ownership_runs=200,
                               search=SearchConfig(seed=1), **kw), 9)


def test_no_time_settings_means_the_rollout_budget():
    p = player()
    game = game_from_diagram("\n".join(["." * 9] * 9))
    assert p.move_time(game, bd.BLACK) is None


@pytest.mark.parametrize("tc,clock,low,high,longest", [
    (TimeControl(600, 0, 0, 0, False), Clock(600, 0, True), 1.0, 30.0, 90.0),   # absolute
    (TimeControl(0, 30, 5, 0, False), Clock(30, 5, True), 4.0, 5.0, 10.0),       # canadian
    (TimeControl(0, 30, 5, 0, False), Clock(6, 1, True), 4.0, 5.0, 5.0),         # last stone
    (TimeControl(0, 30, 5, 0, False), Clock(3, 2, True), 0.3, 0.5, 0.95),        # keeps a lag
    (TimeControl(0, 30, 1, 3, False), Clock(30, 1, True), 28.0, 29.0, 29.0),     # byo-yomi
    (TimeControl(0, 30, 1, 3, False), Clock(30, 3, True), 28.0, 29.0, 29.0),     # 3 periods
    (TimeControl(60, 0, 0, 0, False), Clock(1.0, 0, True), 0.04, 0.06, 0.06),    # nearly out
])
def test_move_time_keeps_a_safety_margin(tc, clock, low, high, longest):
    p = player(lag_buffer=1.0)
    p.time = tc
    p.clocks[bd.BLACK] = clock
    game = game_from_diagram("\n".join(["." * 9] * 9))
    move_time = p.move_time(game, bd.BLACK)
    assert low <= move_time.normal <= high
    assert move_time.normal <= move_time.maximum <= longest
    assert move_time.maximum < clock.seconds


def test_main_time_ending_in_byo_yomi_counts_the_first_period():
    p = player(lag_buffer=1.0)
    p.time = TimeControl(10, 5, 1, 1, False)         # 10 s main, then one 5 s period
    p.clocks[bd.BLACK] = Clock(0.5, 0, True)         # half a second of main time left
    game = game_from_diagram("\n".join(["." * 9] * 9))
    move_time = p.move_time(game, bd.BLACK)
    assert 3.8 <= move_time.normal <= move_time.maximum <= 4.5


def test_a_move_remembers_its_win_rate_to_notice_a_fall():
    p = player()
    p.time = TimeControl(600, 0, 0, 0, False)
    game = game_from_diagram("\n".join(["." * 9] * 9))
    assert p.move_time(game, bd.BLACK).previous_winrate is None
    p._last_winrate[bd.BLACK] = 0.7
    assert p.move_time(game, bd.BLACK).previous_winrate == 0.7


def clock_after(tc, *moves):
    """Return BLACK's (seconds, stones) after charging it the moves' seconds under tc."""
    p = player()
    p.time = tc
    for seconds in moves:
        p.charge(bd.BLACK, seconds)
    clock = p.clocks[bd.BLACK]
    return (clock.seconds, clock.stones) if clock.known else None


def test_the_engine_keeps_its_clock_without_time_left():
    absolute = TimeControl(60, 0, 0, 0, False)
    assert clock_after(absolute, 10) == (50, 0)
    assert clock_after(absolute, 10, 55) == (0, 0)                      # lost on time
    japanese = TimeControl(10, 5, 1, 2, False)                          # 10 s, 2 periods of 5
    assert clock_after(japanese, 12) == (5, 2)        # 2 s into the first period: kept
    assert clock_after(japanese, 12, 7) == (5, 1)     # a move over 5 s uses a period up
    assert clock_after(japanese, 12, 7, 3) == (5, 1)
    assert clock_after(japanese, 18) == (5, 1)        # main time and a whole period
    canadian = TimeControl(0, 30, 3, 0, False)                          # 3 stones in 30 s
    assert clock_after(canadian, 5) == (25, 2)
    assert clock_after(canadian, 5, 5) == (20, 1)
    assert clock_after(canadian, 5, 5, 5) == (30, 3)                    # a new period
    assert clock_after(TimeControl(10, 30, 3, 0, False), 12) == (28, 2)
    assert clock_after(TimeControl(), 12) is None                       # no limit: no clock


def test_time_left_corrects_the_engines_clock():
    p = player()
    p.time = TimeControl(600, 0, 0, 0, False)
    game = game_from_diagram("\n".join(["." * 9] * 9))
    p.charge(bd.BLACK, 500)
    kept = p.move_time(game, bd.BLACK).normal
    p.clocks[bd.BLACK] = Clock(600, 0, True)                            # time_left 600 0
    assert p.move_time(game, bd.BLACK).normal > 5 * kept


def test_absolute_time_keeps_the_lag_of_every_move_to_come():
    p = player(lag_buffer=1.0)
    p.time = TimeControl(60, 0, 0, 0, False)
    game = game_from_diagram("\n".join(["." * 9] * 9))                # 27 moves to come
    lag = 1.0 + MOVE_OVERHEAD
    assert p.move_time(game, bd.BLACK).normal == pytest.approx((60 - 27 * lag) / 27)
    p.clocks[bd.BLACK] = Clock(20, 0, True)          # less than a lag per move to come
    assert p.move_time(game, bd.BLACK).normal == pytest.approx(0.05)


def test_a_timed_search_leaves_time_for_the_settledness_check_after_it():
    p = player()
    game = game_from_diagram("\n".join(["." * 9] * 9))
    expected = OWNERSHIP_SECONDS_PER_RUN_POINT * 200 * 81     # ownership runs x points
    assert p._settle_check_seconds(game, bd.BLACK, 30.0) == pytest.approx(expected)
    assert p._settle_check_seconds(game, bd.BLACK, 0.003) == pytest.approx(0.001)  # a third
    p._last_winrate[bd.BLACK] = 0.2         # losing: the check after a search is unlikely
    assert p._settle_check_seconds(game, bd.BLACK, 30.0) == 0.0
    p.ownership(game)                       # cached: the check costs nothing
    assert p._settle_check_seconds(game, bd.WHITE, 30.0) == 0.0


def test_a_timed_check_runs_the_ownership_playouts_that_fit_in_its_time():
    p = Player(PlayerConfig(rollouts=300, ownership_runs=1000, search=SearchConfig(seed=1)), 9)
    game = game_from_diagram(WALLS, komi=0.5)
    run = OWNERSHIP_SECONDS_PER_RUN_POINT * 81          # one playout's seconds on 9x9
    assert p.ownership_runs_within(game, None) == 1000
    assert p.ownership_runs_within(game, 3600.0) == 1000
    assert p.ownership_runs_within(game, 500.5 * run) == 500
    assert p.ownership_runs_within(game, 0.0) == MIN_OWNERSHIP_RUNS
    p.ownership(game, 0.0)
    assert p._ownership_cache[1] == MIN_OWNERSHIP_RUNS
    p.ownership(game, 3600.0)           # a timed check takes the cached estimate as it is
    assert p._ownership_cache[1] == MIN_OWNERSHIP_RUNS
    p.ownership(game)                   # final_score, say: the fuller estimate is made
    assert p._ownership_cache[1] == 1000
    p.ownership(game, 0.0)              # and kept for a hurried check
    assert p._ownership_cache[1] == 1000


def test_a_move_without_time_for_the_settledness_check_plays_the_search_move():
    game = game_from_diagram(WALLS, komi=0.5)
    game.to_play = bd.WHITE             # white wins by 9.5 with every point settled
    p = player(lag_buffer=0.0)
    checked = []
    p._settled = lambda game, color, seconds=None: checked.append(seconds) or True
    assert p.genmove(game, bd.WHITE) == bd.PASS and checked == [None]     # no clock
    p.time = TimeControl(0, 30, 1, 0, False)             # 30 s a move
    checked.clear()
    assert p.genmove(game, bd.WHITE) == bd.PASS and len(checked) == 1 and checked[0] > 0
    p._ownership_rate = 1.0             # so slow that no check fits: play on, unchecked
    checked.clear()
    assert p.genmove(game, bd.WHITE) != bd.PASS and checked == []


def test_passes_after_opponent_pass_when_passing_wins():
    game = game_from_diagram(WALLS, komi=0.5)
    game.to_play = bd.WHITE
    game.play(bd.WHITE, bd.PASS)
    # Black has 36 points, white 45: black passing would lose, white's would win.
    p = player()
    assert p.final_score(game) == pytest.approx(-9.5)
    assert p.genmove(game, bd.BLACK) != bd.PASS
    game.play(bd.BLACK, bd.PASS)
    assert p.genmove(game, bd.WHITE) == bd.PASS


def test_passes_after_opponent_pass_at_a_jigo():
    game = game_from_diagram("""
        . . . . X O . . .
        . . . . X O . . .
        . . . . X O . . .
        . . . . X O . . .
        . . . . X O . . .
        . . . . X O . . .
        . . . . X O . . .
        . . . . X O . . .
        . . . . X O . . .
        """, komi=9)
    game.to_play = bd.WHITE
    game.play(bd.WHITE, bd.PASS)
    p = player()
    assert p.final_score(game) == 0
    assert p.genmove(game, bd.BLACK) == bd.PASS


def test_playouts_see_the_square_four_that_decides_a_semeai():
    # From a match game: white's lower-left chain (3 liberties) and black's B1-B2 (3
    # liberties) share C1 and C2. Black A5 forces White A3, and all three liberties are
    # shared; then Black C1 and the throw-in C2 leave White capturing a square four, dead.
    # GNU Go's referee scored white's chain dead, B+22; playouts that never threw in split
    # on it and counted it alive two times in three.
    game = game_from_diagram("""
        . . . . . X X O .
        . . . . X X O . .
        . X X X . X O O .
        X . . . X X X O .
        . X . X X X O X .
        O X X O X O O O .
        . O O O X X O . .
        O X . O O X O . .
        . X . O X X O . .
        """, komi=7)
    game.play(bd.BLACK, bd.PASS)
    p = player()
    dead = {game.vertex(q) for q in p.final_status(game)["dead"]}
    assert {"A4", "B3", "D4", "D1", "A2"} <= dead and not dead & {"B1", "B2"}
    assert p.final_score(game) == pytest.approx(22)


def test_does_not_pass_while_a_group_has_its_life_to_make():
    # White's corner A2-D2, D1 has the straight three A1 B1 C1: White B1 makes two eyes,
    # Black B1 kills. Every other point is settled, so the playouts split on the corner
    # alone, and with this komi the corner decides the game.
    game = game_from_diagram("""
        . O . O . X . X .
        O O O O O X X X X
        O O O O O X X X X
        O O O O O X X X X
        O O O O O X X X X
        X X X X X X X X X
        X X X X X X X X X
        O O O O X X . X .
        . . . O X X X X X
        """, komi=20)
    game.to_play = bd.WHITE
    p = player()
    assert p._fight_open(game, bd.WHITE) and not p._settled(game, bd.WHITE)
    assert p.genmove(game, bd.WHITE) == game.parse_vertex("B1")
    # An opponent that passes again and again sees no fight: then the estimate decides.
    for _ in range(3):
        game.play(bd.WHITE, bd.PASS)
        game.play(bd.BLACK, bd.PASS)
    assert not p._fight_open(game, bd.WHITE)


def test_dead_stone_inside_territory_is_removed_for_the_score():
    game = game_from_diagram("""
        . . . X . O . . .
        . . . X . O . . .
        . . . X . O . . .
        . . . X . O . . .
        . O . X . O . X .
        . . . X . O . . .
        . . . X . O . . .
        . . . X . O . . .
        . . . X . O . . .
        """, komi=7)
    p = player()
    status = p.final_status(game)
    assert [game.vertex(q) for q in status["dead"]] == ["B5", "H5"]
    assert status["seki"] == []
    assert p.final_score(game) == pytest.approx(-7)


def test_seki_stones_share_liberties_neither_side_can_fill():
    # Filling A1 or F1 puts the filler in atari, and Black capturing White's five stones
    # would make two eyes.
    game = game_from_diagram("""
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        O O O O O O O
        X X X X X X X
        . O O O O . X
        """)
    seki = {game.vertex(q) for q in seki_points(game, [])}
    assert seki == {"A2", "B2", "C2", "D2", "E2", "F2", "G2", "G1", "B1", "C1", "D1", "E1"}


def test_shared_liberties_around_a_dead_shape_are_no_seki():
    # White A1 throws in: Black must take two stones at C1 and keeps the two-point eye A1 B1,
    # one eye. White B1 holds the vital point of Black's straight three, so Black is dead.
    game = game_from_diagram("""
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        O O O O O . .
        X X X X O . .
        . O . X O . .
        """)
    assert seki_points(game, []) == []


def test_resigns_a_hopeless_game_but_not_in_the_opening():
    # White owns seven rows with eyes on the top edge; black has two empty rows.
    rows = ["O.O.O.O.O"] + ["OOOOOOOOO"] * 6 + ["........."] * 2
    game = game_from_diagram("\n".join(rows))
    p = player(rollouts=300)
    assert p.genmove(game, bd.BLACK) != -2          # move 0: too early to resign
    for _ in range(30):
        game.play(game.to_play, bd.PASS)
    fresh = player(rollouts=300)
    answers = [fresh.genmove(game, bd.BLACK) for _ in range(3)]
    assert -2 not in answers[:2] and answers[2] == -2    # only once it stays hopeless


def test_does_not_resign_while_the_move_the_final_choice_passed_over_still_has_chances():
    game = Game(9)
    for _ in range(30):
        game.play(game.to_play, bd.PASS)
    passed_over = root((1, 600, 0.15, 0.01), (2, 400, 0.05, 0.3), playouts=1000)
    hopeless = root((1, 600, 0.08, 0.01), (2, 400, 0.05, 0.3), playouts=1000)
    # A negative margin lets the network's favourite win with a lower win rate.
    p = player(rollouts=1000, favourite_margin=-0.2)
    chosen = robust_choice(passed_over, p.config.favourite_margin)
    assert chosen.point == 2
    assert not any(p._should_resign(game, passed_over, chosen) for _ in range(5))
    chosen = robust_choice(hopeless, p.config.favourite_margin)
    assert [p._should_resign(game, hopeless, chosen) for _ in range(3)][-1]


def test_pondering_engine_answers_every_command():
    args = gtp_main.build_parser().parse_args(["--ponder", "--rollouts", "200", "--boardsize",
                                               "9"])
    engine = gtp_main.build_engine(args)
    out = io.StringIO()
    engine.serve(io.StringIO("genmove b\nplay w E5\ngenmove b\nname\n"), out)
    answers = out.getvalue().split("\n\n")[:-1]
    assert len(answers) == 4
    assert answers[0].startswith("= ") and answers[2].startswith("= ")
    assert answers[3] == "= darkgo"


def test_pondering_stops_while_the_next_move_can_still_reuse_the_tree():
    # A 9x9 playout adds about 27 edges of the 400,000 here: 50 x 400 of them would fill the
    # edge pool, and the search looks at it every 5 ms (about 0.5% of it).
    args = gtp_main.build_parser().parse_args(["--ponder", "--net", "none", "--rollouts", "400",
                                               "--boardsize", "9", "--threads", "1",
                                               "--set", "max_nodes=20000"])
    engine = gtp_main.build_engine(args)
    engine.handle_line("genmove b\n", io.StringIO())
    _, thread = engine._start_pondering()
    thread.join(timeout=300)
    assert not thread.is_alive()
    assert 0.4 < engine.player.search.pools_used() < 0.5


def test_cleanup_captures_dead_stones_before_passing():
    game = game_from_diagram("""
        . . . X . O . . .
        . . . X . O . . .
        . . . X . O . . .
        . . . X . O . . .
        . O . X . O . . .
        . . . X . O . . .
        . . . X . O . . .
        . . . X . O . . .
        . . . X . O . . .
        """, komi=0.5)
    p = player()
    game.play(bd.BLACK, bd.PASS)
    game.play(bd.WHITE, bd.PASS)
    for _ in range(6):
        move = p.genmove(game, bd.BLACK, cleanup=True)
        if move == bd.PASS:
            break
        game.play(bd.BLACK, move)
        game.play(bd.WHITE, bd.PASS)
    assert game.color_at(game.parse_vertex("B5")) != bd.WHITE
    assert p.genmove(game, bd.BLACK, cleanup=True) == bd.PASS


def test_policy_only_without_the_network_is_refused(capsys):
    assert gtp_main.main(["--net", "none", "--policy-only"]) == 2
    assert "--policy-only needs the network" in capsys.readouterr().err


@pytest.mark.parametrize("margin", ["-1.5", "nan"])
def test_a_favourite_margin_out_of_range_is_refused(margin, capsys):
    with pytest.raises(SystemExit) as exit_info:
        gtp_main.build_parser().parse_args(["--set", f"favourite_margin={margin}"])
    assert exit_info.value.code == 2
    assert "favourite_margin: must be >= -1 and <= 1" in capsys.readouterr().err


def test_the_favourite_margin_reaches_the_player():
    parse = gtp_main.build_parser().parse_args
    assert gtp_main.player_config(parse([])).favourite_margin == 0.05
    assert gtp_main.player_config(parse(["--set", "favourite_margin=-0.03"])).favourite_margin \
        == -0.03


def test_policy_only_defaults_to_the_deeper_net_and_the_search_to_the_fast_one(tmp_path):
    from nets import model as nm
    parser = gtp_main.build_parser()
    searching = gtp_main.load_evaluator(parser.parse_args(["--device", "cpu"]))
    pure = gtp_main.load_evaluator(parser.parse_args(["--device", "cpu", "--policy-only"]))
    assert searching.model.config == nm.read_weights(DEFAULT_WEIGHTS)["config"]
    assert pure.model.config == nm.read_weights(POLICY_ONLY_WEIGHTS)["config"]
    assert pure.model.config["depth"] > searching.model.config["depth"]
    chosen = gtp_main.load_evaluator(parser.parse_args(
        ["--device", "cpu", "--policy-only", "--weights", DEFAULT_WEIGHTS]))
    assert chosen.model.config == searching.model.config


def test_further_gpus_get_a_replica_each_and_the_cpu_none(monkeypatch):
    import torch
    parse = gtp_main.build_parser().parse_args
    evaluator = gtp_main.load_evaluator(parse(["--device", "cpu"]))
    assert gtp_main.device_replicas(parse([]), evaluator) == []
    assert gtp_main.device_replicas(parse([]), None) == []

    class OnGpu:        # a stand-in for a Policy on CUDA: replica records the devices asked
        device = torch.device("cuda")
        asked = []

        def replica(self, device):
            self.asked.append(device)
            return device
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 3)
    assert gtp_main.device_replicas(parse(["--threads", "8"]), OnGpu()) == ["cuda:1", "cuda:2"]
    # No more devices than search threads to feed them.
    assert gtp_main.device_replicas(parse(["--threads", "2"]), OnGpu()) == ["cuda:1"]
    assert gtp_main.device_replicas(parse(["--threads", "1"]), OnGpu()) == []
    assert gtp_main.device_replicas(parse(["--threads", "8", "--policy-only"]), OnGpu()) == []
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert gtp_main.device_replicas(parse(["--threads", "8"]), OnGpu()) == []


def test_a_player_keeps_a_server_a_device_across_board_sizes():
    args = gtp_main.build_parser().parse_args(["--device", "cpu", "--threads", "2"])
    evaluator = gtp_main.load_evaluator(args)
    engine = gtp_main.build_engine(args, evaluator, replicas=[evaluator.replica("cpu")])
    try:
        assert len(engine.player.search.servers) == 2
        engine.player.new_game(9)
        assert engine.player.search.size == 9 and len(engine.player.search.servers) == 2
        result = engine.player.search.run(Game(9), 300)
        assert result.evaluations == engine.player.search.evaluations() > 0
    finally:
        engine.close()


# The shipped weights file without a value head (the search's before cpu_value.pt).
WITHOUT_VALUE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                             "weights", "cpu.pt")


def test_the_value_weight_needs_weights_with_a_value_head():
    flag = ["--set", "value_weight=0.3"]
    parse = gtp_main.build_parser().parse_args
    with pytest.raises(ValueError, match="needs weights with a value head"):
        gtp_main.load_evaluator(parse(["--device", "cpu", "--weights", WITHOUT_VALUE, *flag]))
    assert gtp_main.load_evaluator(parse(["--device", "cpu", *flag])).has_value


def search_of(flags):
    """Return the SearchConfig main would search with under these flags, network loaded."""
    args = gtp_main.build_parser().parse_args(["--device", "cpu", *flags])
    return gtp_main.player_config(args, gtp_main.load_evaluator(args)).search


def test_the_default_search_mixes_the_value_in_before_move_200():
    default = search_of([])
    assert (default.value_weight, default.value_until) == (config.NET_VALUE_WEIGHT, 200)
    assert default.value_weight > 0
    assert search_of(["--set", "value_weight=0"]).value_weight == 0
    assert search_of(["--set", "value_weight=0.5", "--set", "value_until=0"]).value_until == 0


def test_weights_without_a_value_head_search_on_playouts_alone():
    assert search_of(["--weights", WITHOUT_VALUE]).value_weight == 0
    assert search_of(["--net", "none"]).value_weight == 0
    assert gtp_main.player_config(gtp_main.build_parser().parse_args([])).search.value_weight == 0


def root(*children, playouts=0):
    """Return a SearchResult whose root children are (point, visits, win rate, prior)."""
    return SearchResult([MoveStats(*c) for c in children], playouts, 0.5, 0.0)


def test_robust_choice_plays_the_most_visited_unless_the_favourite_is_clearly_better():
    assert robust_choice(root((1, 100, 0.50, 0.2), (2, 60, 0.53, 0.6)), 0.05).point == 1
    assert robust_choice(root((1, 100, 0.50, 0.2), (2, 60, 0.60, 0.6)), 0.05).point == 2
    assert robust_choice(root((1, 100, 0.50, 0.2), (2, 10, 0.90, 0.6)), 0.05).point == 1
    assert robust_choice(root((1, 100, 0.50, 0.6), (2, 90, 0.90, 0.3)), 0.05).point == 1
    # The favourite is the most probable of the moves searched enough, not a barely searched one.
    assert robust_choice(root((1, 100, 0.50, 0.1), (2, 60, 0.56, 0.2), (3, 10, 0.90, 0.6)),
                         0.05).point == 2
    assert robust_choice(root(), 0.05) is None


def test_a_negative_favourite_margin_gives_the_favourite_near_ties_only():
    near_tie = root((1, 100, 0.50, 0.2), (2, 60, 0.48, 0.6))
    assert robust_choice(near_tie, 0.05).point == 1
    assert robust_choice(near_tie, -0.03).point == 2
    assert robust_choice(root((1, 100, 0.50, 0.2), (2, 60, 0.46, 0.6)), -0.03).point == 1
    assert robust_choice(root((1, 100, 0.50, 0.2), (2, 20, 0.50, 0.6)), -0.03).point == 1


def test_answers_an_approach_instead_of_passing_first():
    game = game_from_diagram(WALLS, komi=0.5)
    p = player()
    game.to_play = bd.BLACK
    game.play(bd.BLACK, game.parse_vertex("A5"))        # far from white: a quiet move
    assert not p._last_move_near(game, bd.WHITE)
    game.play(bd.WHITE, game.parse_vertex("J9"))
    game.play(bd.BLACK, game.parse_vertex("G5"))        # into white's area, 2 from its wall
    assert p._last_move_near(game, bd.WHITE)
    assert p.genmove(game, bd.WHITE) != bd.PASS
