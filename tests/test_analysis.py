"""Analysis output for GUIs: principal variations, lz-analyze and lz-genmove_analyze (the
Leela Zero commands that Lizzie and Sabaki speak)."""
import io
import re
import threading

import gtp_main
from engine import board as bd
from engine.game import Game
from engine.gtp_analysis import ANALYSIS_MIN_VISIT_SHARE
from engine.search import PV_CHILDREN, MoveStats, Search, SearchResult
from engine.search_config import SearchConfig



def parse_info(line):
    """Return [(move, visits, winrate, pv list)] of one 'info move ...' line."""
    assert line.startswith("info move ")
    entries = []
    for chunk in line[len("info move "):].split(" info move "):
        tokens = chunk.split()
        assert tokens[1::2][:4] == ["visits", "winrate", "prior", "order"] and tokens[9] == "pv"
        entries.append((tokens[0], int(tokens[2]), int(tokens[4]), tokens[10:]))
    return entries


def engine(*flags):
    args = ["--rollouts", "400", "--seed", "3", "--boardsize", "9", "--komi", "7",
            "--net", "none", *flags]
    return gtp_main.build_engine(gtp_main.build_parser().parse_args(args))


def replays_legally(game, vertices, color):
    """Return True when the vertices can be played in turn from color on a copy of game."""
    trial = Game(game.size)
    for c, p in game.moves:
        trial.play(c, p)
    for v in vertices:
        point = trial.parse_vertex(v)
        if not trial.is_legal(point, color):
            return False
        trial.play(color, point)
        color = 3 - color
    return True


def test_principal_variation_follows_the_most_visited_replies():
    game = Game(9)
    search = Search(SearchConfig(seed=5), 9)
    result = search.run(game, 3000)
    best = result.best
    assert best.pv[0] == best.point and len(best.pv) >= 3
    board = bd.copy_board(game.board)
    color = bd.BLACK
    for p in best.pv:
        assert bd.is_legal(board, p, color)
        bd.play(board, p, color)
        color = 3 - color
    with_pv = [m for m in result.children if m.pv]
    assert 0 < len(with_pv) <= PV_CHILDREN
    assert all(m.pv[0] == m.point for m in with_pv)


def test_lz_analyze_streams_info_lines_until_the_next_command():
    e = engine()
    e.handle_line("play b E5\n", io.StringIO())
    e.player.search.run(e.game, 10)      # compiled before the clock starts
    out = io.StringIO()
    next_command = threading.Timer(1.5, e.pending.put, args=("name\n",))
    next_command.start()
    e.handle_line("7 lz-analyze w 10\n", out)
    next_command.join()
    text = out.getvalue()
    assert text.startswith("=7\n") and text.endswith("\n\n")
    lines = text[len("=7\n"):-2].split("\n")
    assert lines
    for line in lines:
        for move, visits, winrate, pv in parse_info(line):
            assert visits > 0 and 0 <= winrate <= 10000
            assert pv[0] == move
            assert replays_legally(e.game, pv, bd.WHITE)
    assert max(len(pv) for _, _, _, pv in parse_info(lines[-1])) >= 3
    for line in lines:
        visits = [v for _, v, _, _ in parse_info(line)]
        assert min(visits) >= ANALYSIS_MIN_VISIT_SHARE * visits[0]
    assert len(e.game.moves) == 1         # analysis leaves the game as it was


def test_analysis_lists_no_move_with_under_a_tenth_of_the_best_moves_visits():
    # Sabaki reads the largest win rate and score of the listed moves as the position's: a
    # move searched a few times, with its lucky 100%, must not be among them.
    e = engine()
    children = [MoveStats(e.game.parse_vertex(v), visits, winrate, 0.1, score)
                for v, visits, winrate, score in [("E5", 1000, 0.55, 2.0), ("D4", 100, 0.5, 1.0),
                                                  ("C3", 99, 1.0, 30.0), ("B2", 3, 1.0, 40.0)]]
    result = SearchResult(children, 1202, 0.55, 1.0)
    assert [move for move, _, _, _ in parse_info(e._lz_info(result))] == ["E5", "D4"]
    assert " C3 " not in e._kata_info(result) and "order 1" in e._kata_info(result)
    result.children = [MoveStats(e.game.parse_vertex("E5"), 0, 0.0, 0.5)]
    assert e._lz_info(result) == ""


def test_lz_genmove_analyze_streams_then_plays_the_move():
    e = engine("--rollouts", "4000")
    out = io.StringIO()
    e.handle_line("lz-genmove_analyze b 1\n", out)
    text = out.getvalue()
    assert text.startswith("=\n") and text.endswith("\n\n")
    lines = text[2:-2].split("\n")
    assert lines[-1].startswith("play ")
    assert any(line.startswith("info move ") for line in lines[:-1])
    assert len(e.game.moves) == 1
    color, point = e.game.moves[0]
    assert color == bd.BLACK and lines[-1] == f"play {e.game.vertex(point)}"
    # The last info line is the finished search's, whatever the interval left unreported.
    final = e.player.last_result
    assert parse_info(lines[-2])[0][:2] == (e.game.vertex(final.best.point), final.best.visits)


def test_lz_genmove_analyze_refuses_bad_arguments_and_keeps_the_game():
    e = engine()
    for command in ("lz-genmove_analyze", "lz-genmove_analyze x 10",
                    "lz-genmove_analyze b ten"):
        out = io.StringIO()
        e.handle_line(command + "\n", out)
        assert out.getvalue() == "? syntax error\n\n"
    assert not e.game.moves


def test_analysis_that_fails_midway_ends_its_response_and_stops_searching(monkeypatch):
    e = engine("--rollouts", "1000000")     # far more than the first report's 10 ms

    def broken(result):
        raise RuntimeError("broken pipe")

    monkeypatch.setattr(e, "_lz_info", broken)
    for command in ("lz-analyze b 1", "lz-genmove_analyze b 1"):
        out = io.StringIO()
        e.handle_line(command + "\n", out)
        assert out.getvalue() == "=\n\n"
    assert not e.game.moves
    out = io.StringIO()
    e.handle_line("name\n", out)
    assert out.getvalue() == "= darkgo\n\n"


def run_analysis(e, command, seconds=1.5):
    """Return the lines of one streamed analysis response, ended by a 'name' after seconds."""
    out = io.StringIO()
    next_command = threading.Timer(seconds, e.pending.put, args=("name\n",))
    next_command.start()
    e.handle_line(command + "\n", out)
    next_command.join()
    assert e.pending.get_nowait() == "name\n"     # served by the loop in a real session
    text = out.getvalue()
    assert text.startswith("=\n") and text.endswith("\n\n")
    return text[2:-2].split("\n")


def walled_engine():
    """An engine on 9x9 with a black wall on row 7 and a white wall on row 3, black to play."""
    e = engine()
    for x in "ABCDEFGHJ":
        e.handle_line(f"play b {x}7\n", io.StringIO())
        e.handle_line(f"play w {x}3\n", io.StringIO())
    e.player.search.run(e.game, 10)      # compiled before the clock starts
    e.player.ownership(e.game)
    return e


def test_kata_analyze_streams_fractions_and_ownership_from_the_top_left_for_the_mover():
    e = walled_engine()
    lines = run_analysis(e, "kata-analyze b 10 ownership true")
    assert lines[0]
    for line in lines:
        info, own = line.split(" ownership ")
        for chunk in info[len("info "):].split(" info "):
            tokens = chunk.split()
            fields = dict(zip(tokens[:14:2], tokens[1:14:2]))
            assert list(fields) == ["move", "visits", "winrate", "scoreMean", "scoreLead",
                                    "prior", "order"]
            assert tokens[14] == "pv" and tokens[15] == fields["move"]
            assert "." in fields["winrate"] and 0 <= float(fields["winrate"]) <= 1
            assert "." in fields["prior"] and 0 <= float(fields["prior"]) <= 1
            assert float(fields["scoreMean"]) == float(fields["scoreLead"])
        values = [float(v) for v in own.split()]
        assert len(values) == 81 and all(-1 <= v <= 1 for v in values)
        assert min(values[:18]) > 0.5 and max(values[-18:]) < -0.5   # rows 9-8 black's
        mean = e.player.ownership(e.game).mean
        assert values == [round(mean[e.game.point(x, y)], 4)
                          for y in range(8, -1, -1) for x in range(9)]
    # Equal walls: Black, to move, trails by the komi less the tempo; White, to move, leads
    # (the most visited move's mean score at the last report: a move tried a few times, or
    # an early report, can be anything).
    assert float(lines[-1].split(" scoreLead ")[1].split()[0]) < 0
    white = run_analysis(e, "kata-analyze w 10 ownership true")[-1]
    assert [-float(v) for v in white.split(" ownership ")[1].split()] == values
    assert float(white.split(" scoreLead ")[1].split()[0]) > 0
    plain = run_analysis(e, "kata-analyze 10")
    assert all(line.startswith("info move ") and "ownership" not in line for line in plain)
    assert len(e.game.moves) == 18


def test_analysis_arguments_take_lz_and_kata_key_value_pairs():
    e = engine()
    assert e._analyze_args(["interval", "30"]) == (bd.BLACK, 30, False)
    assert e._analyze_args(["W", "20", "ownership", "true"]) == (bd.WHITE, 20, True)
    assert e._analyze_args(["ownership", "true", "interval", "5"]) == (bd.BLACK, 5, True)
    assert e._analyze_args(["10", "avoid", "b", "D4", "1"]) == (bd.BLACK, 10, False)
    # KataGo's other keys are read past, before or after the ones we use (rootInfo once
    # refused the command; pvVisits left the ownership after it unread).
    assert e._analyze_args(["b", "rootInfo", "true"]) == (bd.BLACK, 100, False)
    assert e._analyze_args(["w", "50", "pvVisits", "true", "ownership", "true"]) == \
        (bd.WHITE, 50, True)
    assert e._analyze_args(["allow", "b", "D4,E5", "2", "interval", "7", "minmoves", "3"]) == \
        (bd.BLACK, 7, False)
    for command in ("kata-analyze b ten", "kata-analyze b 10 ownership maybe",
                    "kata-analyze 10 avoid b D4", "kata-analyze 10 interval"):
        out = io.StringIO()
        e.handle_line(command + "\n", out)
        assert out.getvalue() == "? syntax error\n\n"


def test_the_search_line_logged_after_genmove_carries_the_principal_variation(caplog):
    """The match runner copies this line into the saved game's comment on the move."""
    from benchmarks.strength.game import _SEARCH_LOG
    e = engine()
    with caplog.at_level("INFO", logger="gtp"):
        e.handle_line("genmove b\n", io.StringIO())
    move = e.game.vertex(e.game.moves[-1][1])
    lines = [f"{r.name} {r.levelname} {r.getMessage()}" for r in caplog.records
             if "playouts in" in r.getMessage()]
    comment = _SEARCH_LOG.search(lines[-1]).group(1)
    pv = comment.split("; pv ")[1].split()
    assert pv[0] == move and len(pv) >= 3
    assert replays_legally(Game(9), pv, bd.BLACK)


def test_the_search_line_gives_each_top_move_its_prior(caplog):
    """A match's SGF comments keep each top move's visits, win rate and prior, to read back."""
    from benchmarks.strength.game import _SEARCH_LOG
    e = engine()
    with caplog.at_level("INFO", logger="gtp"):
        e.handle_line("genmove b\n", io.StringIO())
    lines = [f"{r.name} {r.levelname} {r.getMessage()}" for r in caplog.records
             if "playouts in" in r.getMessage()]
    result = e.player.last_result
    comment = _SEARCH_LOG.search(lines[-1]).group(1)
    root = float(re.search(r"win rate ([\d.]+);", comment).group(1))
    listed = comment.split("top: ")[1].split(";")[0]
    top = [(vertex.upper(), int(visits), float(rate), float(prior)) for vertex, visits, rate,
           prior in re.findall(r"(\w+) (\d+) ([\d.]+) p([\d.]+)", listed)]
    assert root == float(f"{result.root_winrate:.3f}")
    assert top == [(e.game.vertex(m.point), m.visits, float(f"{m.winrate:.3f}"),
                    float(f"{m.prior:.4f}")) for m in result.children[:5]]


def test_the_search_line_gives_the_tree_at_most_its_pools(caplog):
    """Claims past a full pool still count, but the tree never holds more than its pools."""
    e = engine("--set", "max_nodes=40")
    with caplog.at_level("INFO", logger="gtp"):
        e.handle_line("genmove b\n", io.StringIO())
    line = [r.getMessage() for r in caplog.records if "playouts in" in r.getMessage()][-1]
    nodes, max_nodes = map(int, re.search(r"tree (\d+) of (\d+) nodes", line).groups())
    assert (nodes, max_nodes) == (40, 40)


def gogui_answer(text):
    """Return an answer as GoGui's GtpClient reads it: from the first space to the end, less
    the closing blank line (GtpClient.readResponse)."""
    return text[text.index(" ") + 1:-2]


def test_board_answers_parse_as_gogui_reads_them():
    # GoGui takes an answer from its first space on, then wants a full row of values per
    # board line (GtpUtil.parseStringBoard skips blank lines): '=' then a newline lost the
    # first value of the top row.
    e = engine("--net", "none", "--set", "ownership_runs=50")
    for command in ("play b E5", "play w C3"):
        e.handle_line(command + "\n", io.StringIO())
    for command in ("gogui-ownership", "gogui-visits b", "showboard"):
        out = io.StringIO()
        e.handle_line(command + "\n", out)
        assert out.getvalue().startswith("= \n"), command
    for command, parse in (("gogui-ownership", float), ("gogui-visits b", str)):
        out = io.StringIO()
        e.handle_line(command + "\n", out)
        rows = [line.split() for line in gogui_answer(out.getvalue()).splitlines() if line.strip()]
        assert len(rows) == 9 and all(len(row) == 9 for row in rows), command
        assert all(parse(value) is not None for row in rows for value in row)


def test_analysis_and_reg_genmove_for_the_other_colour_leave_the_side_to_move():
    # GTP: reg_genmove leaves the board as it was; so do the analysis commands. Each once
    # left its colour as the side to move, so that a colourless lz-analyze (Lizzie's) and
    # final_score's ownership then judged for the wrong side.
    e = walled_engine()
    commands = ["lz-analyze w 10", "kata-analyze w 10 ownership true"]
    for command in commands:
        run_analysis(e, command, seconds=0.5)
        assert e.game.to_play == bd.BLACK and e.game.board.info[bd.TO_PLAY] == bd.BLACK
    for command in ("reg_genmove w", "gogui-visits w"):
        out = io.StringIO()
        e.handle_line(command + "\n", out)
        assert out.getvalue().startswith("= ")
        assert e.game.to_play == bd.BLACK and e.game.board.info[bd.TO_PLAY] == bd.BLACK
    assert len(e.game.moves) == 18
