"""Dynamic komi in handicap games (SearchConfig.search_komi): the search counts under a komi
that gives White the handicap's worth, falling to the game's komi as the game goes on, while
what the user sees (win rates, scores, the log, resignation) stays under the game's komi."""
import io
from types import SimpleNamespace

import numpy as np

import gtp_main
from engine import board as bd
from engine.game import Game, Rules, handicap_points
from engine.player import RESIGN_AFTER, Player, PlayerConfig
from engine.search import MoveStats, Search, SearchResult
from engine.search_config import SearchConfig, dynamic_komi_moves
from engine.tree import P_KOMI, P_REAL_KOMI, backup, new_tree, reset_tree
from test_analysis import run_analysis


def handicap_game(size, stones, komi=0.5):
    """Return a game of size with GTP's fixed handicap of stones placed, White to move."""
    game = Game(size, Rules(komi=komi))
    game.set_handicap([game.point(x, y) for x, y in handicap_points(size, stones)])
    return game


def test_even_games_and_the_off_switch_search_under_the_games_komi():
    config = SearchConfig()
    for color in (bd.BLACK, bd.WHITE):
        assert config.search_komi(7.5, 7.5, 0, 0, color, 19) == 7.5
        assert config.search_komi(0.5, 0.5, 0, 10, color, 9) == 0.5
    assert SearchConfig(dynamic_komi="off").search_komi(9.5, 0.5, 9, 0, bd.WHITE, 19) == 9.5


def test_white_giving_nine_stones_searches_under_a_komi_that_falls_to_the_games():
    config = SearchConfig()
    komis = [config.search_komi(9.5, 0.5, 9, moves, bd.WHITE, 19) for moves in range(0, 160)]
    # 9 stones of 8 points, less the game's komi, on 141 of the 150 moves the handicap
    # stones leave: 72 * 141 / 150 at the start.
    assert komis[0] == 9.5 + 68
    assert all(a >= b for a, b in zip(komis, komis[1:]))
    assert komis[150 - 9 - 2] > 9.5
    assert komis[150 - 9:] == [9.5] * (160 - 141)


def test_black_taking_stones_counts_twelve_points_a_stone_until_move_200():
    config = SearchConfig()
    assert dynamic_komi_moves(19, bd.BLACK) == 200
    assert config.search_komi(0.5, 0.5, 4, 0, bd.BLACK, 19) == 0.5 + round(48 * 196 / 200)
    assert config.search_komi(0.5, 0.5, 4, 196, bd.BLACK, 19) == 0.5
    assert SearchConfig(stone_value_black=0).search_komi(0.5, 0.5, 4, 0, bd.BLACK, 19) == 0.5


def test_a_komi_that_already_pays_for_the_handicap_leaves_nothing_to_add():
    assert SearchConfig().search_komi(80.0, 80.0, 9, 0, bd.WHITE, 19) == 80.0


def test_backup_counts_the_win_and_the_score_under_the_games_komi_too():
    tree = new_tree(10, 10)
    reset_tree(tree)
    params = SearchConfig().as_array(20.5, real_komi=0.5)
    assert (params[P_KOMI], params[P_REAL_KOMI]) == (20.5, 0.5)
    path_nodes = np.array([0, -1, -1], np.int32)
    path_edges = np.array([0, 1], np.int32)
    # Black's area less 20.5 is -3.5: White wins under the search's komi, Black by 16.5
    # under the game's.
    backup(tree, path_nodes, path_edges, 2, bd.BLACK, bd.WHITE, -3.5, params)
    assert tree.edge_wins[:2].tolist() == [0, 2]
    assert tree.edge_real_wins[:2].tolist() == [2, 0]
    assert tree.edge_score_sum[:2].tolist() == [33, -33]


def test_a_handicap_search_reports_win_rates_under_the_games_komi():
    game = handicap_game(9, 5)
    search = Search(SearchConfig(seed=5), 9)
    result = search.run(game, 600)
    assert result.dynamic_komi and result.search_komi > result.komi == game.scoring_komi
    searched = sum(m.search_winrate * m.visits for m in result.children) / result.playouts
    # Five stones on 9x9 lose White nearly every playout under the game's komi, and far
    # fewer under the search's.
    assert result.root_winrate < 0.15 and searched > 2 * result.root_winrate + 0.05
    assert all(m.winrate <= m.search_winrate for m in result.children if m.visits >= 20)
    assert result.root_score < 0


def test_an_even_search_reports_the_win_rates_it_chose_by():
    game = Game(9, Rules(komi=7.5))
    result = Search(SearchConfig(seed=5), 9).run(game, 300)
    assert not result.dynamic_komi and result.search_komi == result.komi == 7.5
    assert all(m.winrate == m.search_winrate for m in result.children)


def hopeless(dynamic):
    """Return a SearchResult whose only move wins 2% under the game's komi, searched under a
    komi 40 points higher when dynamic."""
    move = MoveStats(20, 1000, 0.02, 1.0, -50.0, search_winrate=0.45 if dynamic else 0.02)
    return SearchResult([move], 1000, 0.02, 1.0, search_komi=40.5 if dynamic else 0.5,
                        komi=0.5)


def test_white_does_not_resign_while_the_dynamic_komi_lasts():
    p = Player(PlayerConfig(rollouts=1000), 9)
    game = SimpleNamespace(moves=[None] * 150, handicap=9, size=19)
    for _ in range(2 * RESIGN_AFTER):
        result = hopeless(dynamic=True)
        assert not p._should_resign(game, result, result.best)
    for _ in range(RESIGN_AFTER - 1):
        result = hopeless(dynamic=False)
        assert not p._should_resign(game, result, result.best)
    result = hopeless(dynamic=False)
    assert p._should_resign(game, result, result.best)


def test_the_log_names_the_komi_searched_and_analysis_shows_the_games(caplog):
    args = ["--rollouts", "300", "--seed", "3", "--boardsize", "9", "--komi", "0.5",
            "--net", "none"]
    engine = gtp_main.build_engine(gtp_main.build_parser().parse_args(args))
    engine.handle_line("fixed_handicap 5\n", io.StringIO())
    with caplog.at_level("INFO", logger="gtp"):
        engine.handle_line("genmove w\n", io.StringIO())
    line = [r.getMessage() for r in caplog.records if "playouts in" in r.getMessage()][-1]
    result = engine.player.last_result
    assert f"searched at komi {result.search_komi:g} (dynamic; the game's 5.5)" in line
    assert f"win rate {result.root_winrate:.3f};" in line
    info = run_analysis(engine, "kata-analyze w 100")[-1]
    winrates = [float(chunk.split(" winrate ")[1].split()[0])
                for chunk in info.split("info move ")[1:]]
    assert winrates and max(winrates) < 0.5


def test_pondering_on_the_opponents_move_counts_under_the_engines_komi():
    game = handicap_game(9, 5)
    game.play(bd.WHITE, game.point(4, 2))
    config = SearchConfig(seed=5)
    search = Search(config, 9)
    moves = int(game.board.info[bd.MOVE_NUMBER])
    own = config.search_komi(game.scoring_komi, 0.5, 5, moves, bd.WHITE, 9)
    assert own != config.search_komi(game.scoring_komi, 0.5, 5, moves, bd.BLACK, 9)
    assert search.run(game, 50, engine_color=bd.WHITE).search_komi == own
