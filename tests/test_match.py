"""Tests for the match runner: statistics, resuming, and games against scripted fake GTP engines."""

import json
import os
import shutil
import sys
import time

import pytest
from sgfmill import sgf

from benchmarks.strength import match, report, stats
from benchmarks.strength import records as match_records

# GNU Go where Debian puts it, unless another is on the PATH.
GNUGO = shutil.which("gnugo") or "/usr/games/gnugo"


def run_match(capsys, tmp_path, black: str, white: str, *extra: str) -> tuple[dict, list[dict]]:
    """Return (JSON summary on the last stdout line, results-file records) of a 5x5 match."""
    sgf_dir = tmp_path / "games"
    argv = ["--black", black, "--white", white, "--games", "2", "--size", "5", "--komi", "0.5",
            "--sgf-dir", str(sgf_dir), *extra]
    assert match.main(argv) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    with open(sgf_dir / "results.jsonl") as handle:
        # Only whole lines: a line cut short by a killed run stays in the file.
        lines = [line for line in handle if line.endswith("}\n")]
    records = sorted((json.loads(line) for line in lines), key=lambda r: r["index"])
    return summary, records


def read_sgf(path) -> sgf.Sgf_game:
    """Return the parsed SGF game at path."""
    with open(path, "rb") as handle:
        return sgf.Sgf_game.from_bytes(handle.read())


def test_wilson_interval_matches_published_values():
    assert stats.wilson_interval(0, 0) == (0.0, 1.0)
    assert stats.wilson_interval(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    assert stats.wilson_interval(10, 10) == pytest.approx((0.7225, 1.0), abs=1e-4)
    assert stats.wilson_interval(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)


def test_parse_score_reads_wins_and_draws():
    assert match_records.parse_score("B+3.5") == ("B", "B+3.5")
    assert match_records.parse_score("w+7.0") == ("W", "W+7")
    assert match_records.parse_score("0") == (None, "0")
    assert match_records.parse_score("black wins") is None


def test_a_results_file_in_a_missing_folder_is_written_with_its_folder(tmp_path):
    # The agreement and clock benchmarks append to --results runs/...: a fresh checkout has
    # no runs/.
    path = tmp_path / "runs" / "agree" / "positions.jsonl"
    match_records.append_result(str(path), {"index": 0})
    match_records.append_result(str(path), {"index": 1})
    assert [json.loads(line) for line in path.read_text().splitlines()] == [
        {"index": 0}, {"index": 1}]


def test_two_game_match_alternates_colours_and_writes_sgf(capsys, tmp_path, fake):
    engine_a = fake("--name", "Fixed", "--moves", "C3,B2")
    engine_b = fake("--name", "Passer")
    summary, records = run_match(capsys, tmp_path, engine_a, engine_b)

    assert [r["black_engine"] for r in records] == ["A", "B"]
    # Both fakes score B+10, so black wins each game: one win per engine.
    assert [r["result"] for r in records] == ["B+10", "B+10"]
    assert summary["wins_a"] == summary["wins_b"] == 1
    assert summary["by_colour"] == {"black": 2, "white": 0}
    assert summary["win_rate_a"] == 0.5
    assert summary["ci95"] == pytest.approx(list(stats.wilson_interval(1, 2)), abs=1e-4)
    assert summary["illegal_moves"] == summary["protocol_errors"] == {"A": 0, "B": 0}
    assert [row["moves"] for row in summary["table"]] == [5, 6]

    game = read_sgf(tmp_path / "games" / "game-000.sgf")
    root = game.get_root()
    assert game.get_size() == 5
    assert root.get("KM") == 0.5
    assert (root.get("PB"), root.get("PW"), root.get("RE")) == ("Fixed 1.0", "Passer 1.0", "B+10")
    assert "two passes" in root.get("GC")
    assert [node.get_move() for node in game.get_main_sequence()[1:]] == [
        ("b", (2, 2)), ("w", None), ("b", (1, 1)), ("w", None), ("b", None)]
    assert read_sgf(tmp_path / "games" / "game-001.sgf").get_root().get("PB") == "Passer 1.0"


def test_players_disagreeing_on_the_winner_leave_the_game_unscored(capsys, tmp_path, fake):
    summary, records = run_match(capsys, tmp_path, fake("--score", "B+1"), fake("--score", "W+1"))
    assert summary["unscored"] == 2 and summary["win_rate_a"] is None
    assert records[0]["disagree"] and records[0]["scores"] == {"B": "B+1", "W": "W+1"}


def test_under_a_referee_the_players_counts_are_kept_and_a_dispute_is_marked(capsys, tmp_path,
                                                                               fake):
    summary, records = run_match(capsys, tmp_path, fake("--score", "B+1"), fake("--score", "W+2"),
                                 "--referee", fake("--score", "W+3"))
    assert [r["result"] for r in records] == ["W+3", "W+3"]
    assert records[0]["scores"] == {"B": "B+1", "W": "W+2", "referee": "W+3"}
    assert records[1]["scores"] == {"B": "W+2", "W": "B+1", "referee": "W+3"}
    assert [r["disagree"] for r in records] == [True, True]
    assert summary["disagreements"] == 2 and summary["unscored"] == 0
    assert "game 0: the counts differ (B B+1, W W+2, referee W+3)" in report.format_table(
        summary, records)


def test_players_naming_the_referees_winner_leave_the_game_undisputed(capsys, tmp_path, fake):
    summary, records = run_match(capsys, tmp_path, fake("--score", "W+1"), fake("--score", "W+2"),
                                 "--referee", fake("--score", "W+3"))
    assert [r["result"] for r in records] == ["W+3", "W+3"]
    assert summary["disagreements"] == 0
    assert "counts differ" not in report.format_table(summary, records)


def test_players_that_cannot_count_leave_the_referees_result_undisputed(capsys, tmp_path, fake):
    summary, records = run_match(capsys, tmp_path, fake("--score", "not a score"), fake(),
                                 "--referee", fake("--score", "B+10"))
    assert [r["result"] for r in records] == ["B+10", "B+10"]
    assert not any(r["disagree"] for r in records)


def test_resume_skips_games_already_in_the_results_file(capsys, tmp_path, fake):
    engine_a, engine_b = fake("--moves", "C3"), fake()
    sgf_dir = tmp_path / "games"
    sgf_dir.mkdir()
    done = {"index": 0, "black": engine_a, "white": engine_b, "black_engine": "A", "winner": "W",
            "winner_engine": "B", "result": "W+R", "reason": "black resigned", "scored": True,
            "scores": {}, "disagree": False, "moves": 40, "illegal_moves": {"B": 0, "W": 0},
            "protocol_errors": {"B": 0, "W": 0}}
    # The cut-off second line is what a run killed mid-write leaves behind.
    (sgf_dir / "results.jsonl").write_text(json.dumps(done) + '\n{"index": 1, "bla')

    summary, records = run_match(capsys, tmp_path, engine_a, engine_b)

    assert not (sgf_dir / "game-000.sgf").exists()
    assert (sgf_dir / "game-001.sgf").exists()
    assert [r["index"] for r in records] == [0, 1]
    # Engine B plays black in game 1 and both fakes score it B+10.
    assert summary["games"] == 2 and summary["wins_b"] == 2


def test_resume_refuses_a_results_file_from_other_engines(capsys, tmp_path, fake):
    sgf_dir = tmp_path / "games"
    sgf_dir.mkdir()
    other = {"index": 0, "black": "x", "white": "y"}
    (sgf_dir / "results.jsonl").write_text(json.dumps(other) + "\n")
    argv = ["--black", fake(), "--white", fake(), "--games", "1", "--size", "5", "--komi", "0.5",
            "--sgf-dir", str(sgf_dir)]
    assert match.main(argv) == 2
    assert "other engines" in capsys.readouterr().err


def test_a_second_runner_on_the_same_results_file_is_refused(capsys, tmp_path, fake):
    sgf_dir = tmp_path / "games"
    argv = ["--black", fake(), "--white", fake(), "--games", "1", "--size", "5", "--komi", "0.5",
            "--sgf-dir", str(sgf_dir)]
    sgf_dir.mkdir()
    with match_records.sole_runner(str(sgf_dir / "results.jsonl")):
        assert match.main(argv) == 2
        assert "another match runner" in capsys.readouterr().err
    assert not (sgf_dir / "results.jsonl").exists()
    assert match.main(argv) == 0      # once the first has finished


@pytest.mark.parametrize("options, reason", [
    (["--moves", "C3,C3"], "occupied point: c3"),
    (["--moves", "F6"], "off the board: f6"),
    (["--moves", "D4"], "illegal d4: opponent answered 'illegal move'"),
])
def test_illegal_move_loses_the_game_for_the_mover(capsys, tmp_path, fake, options, reason):
    summary, records = run_match(capsys, tmp_path, fake(*options), fake("--reject", "D4"),
                                 "--games", "1")
    assert records[0]["result"] == "W+F"
    assert reason in records[0]["reason"]
    assert summary["illegal_moves"] == {"A": 1, "B": 0}
    assert read_sgf(tmp_path / "games" / "game-000.sgf").get_root().get("RE") == "W+F"


@pytest.mark.parametrize("raw, result", [
    pytest.param("hello\n\n", "W+F", id="no-status"),
    pytest.param("?ID cannot\n\n", "W+F", id="genmove-refused"),
    pytest.param("= C3\n\n", "B+10", id="missing-id"),
    pytest.param("=ID C3\n", "B+10", id="no-terminating-empty-line"),
])
def test_protocol_errors_are_counted_and_unusable_answers_forfeit(capsys, tmp_path, fake, raw,
                                                                  result):
    summary, records = run_match(capsys, tmp_path, fake("--genmove-raw", raw), fake(),
                                 "--games", "1", "--max-moves", "1")
    assert records[0]["result"] == result
    assert summary["protocol_errors"] == {"A": 1, "B": 0}


@pytest.mark.parametrize("option, result", [("--hang-genmove", "W+T"), ("--die-genmove", "W+F")])
def test_engine_that_hangs_or_dies_loses_and_is_cleaned_up(capsys, tmp_path, fake, option, result):
    started = time.monotonic()
    _, records = run_match(capsys, tmp_path, fake(option), fake(), "--games", "1",
                           "--timeout-per-move", "0.5")
    assert records[0]["result"] == result
    assert time.monotonic() - started < 10


@pytest.mark.skipif(not os.access(GNUGO, os.X_OK), reason="GNU Go is not installed")
def test_gnugo_plays_itself_and_referees_the_score(capsys, tmp_path):
    gnugo = f"{GNUGO} --mode gtp --level 1"
    summary, records = run_match(capsys, tmp_path, gnugo, gnugo, "--games", "1",
                                 "--referee", f"{GNUGO} --mode gtp")
    assert summary["games"] == 1 and summary["unscored"] == 0
    assert summary["illegal_moves"] == summary["protocol_errors"] == {"A": 0, "B": 0}
    assert records[0]["black_name"].startswith("GNU Go")
    root = read_sgf(tmp_path / "games" / "game-000.sgf").get_root()
    assert root.get("RE") == records[0]["result"]


def test_game_placeholder_gives_each_game_its_own_command():
    from benchmarks.strength.records import MatchConfig, engines_for_game
    config = MatchConfig(engine_a="eng --seed {game}", engine_b="other", games=4, size=9,
                         komi=7.0, sgf_dir="x", results="x/r.jsonl", referee=None,
                         parallel=1, max_moves=243, alternate=True, timeout=10.0)
    assert engines_for_game(config, 0) == ("eng --seed 0", "other", "A")
    assert engines_for_game(config, 3) == ("other", "eng --seed 3", "B")


def test_elo_from_score_and_its_interval():
    assert stats.elo_from_score(0.5) == 0
    assert stats.elo_from_score(0.75) == pytest.approx(190.85, abs=0.01)
    assert stats.elo_from_score(0.25) == pytest.approx(-190.85, abs=0.01)
    assert stats.elo_estimate(0, 0) is None
    # 5 of 10: Wilson (0.2366, 0.7634) mapped to Elo.
    assert stats.elo_estimate(5, 10) == {"elo": 0.0, "ci95": [-203.5, 203.5], "clamped": False}
    estimate = stats.elo_estimate(7.5, 10)
    assert estimate["elo"] == pytest.approx(190.8, abs=0.1) and not estimate["clamped"]
    # All wins: clamped to 10.5/11, a finite figure flagged as clamped.
    estimate = stats.elo_estimate(10, 10)
    assert estimate["clamped"]
    assert estimate["elo"] == pytest.approx(stats.elo_from_score(10.5 / 11), abs=0.1)
    assert estimate["ci95"][1] == estimate["elo"] and estimate["ci95"][0] < estimate["elo"]


def test_sprt_bounds_llr_and_decisions():
    lower, upper = stats.sprt_bounds(0.05, 0.05)
    assert (lower, upper) == pytest.approx((-2.9444, 2.9444), abs=1e-4)
    assert stats.sprt_bounds(0.05, 0.1) == pytest.approx((-2.2513, 2.8904), abs=1e-4)
    # H0 elo 0, H1 elo 100: p1 = 0.6401; a win adds log(p1/0.5), a loss log((1-p1)/0.5).
    assert stats.sprt_llr([1.0], 0, 100) == pytest.approx(0.24703, abs=1e-4)
    assert stats.sprt_llr([0.0], 0, 100) == pytest.approx(-0.32870, abs=1e-4)
    assert stats.sprt_llr([0.5], 0, 100) == pytest.approx((0.24703 - 0.32870) / 2, abs=1e-4)
    # 11 wins stay below the upper bound, the 12th crosses it.
    assert stats.sprt_decide([1.0] * 11, 0, 100)["decision"] == "undecided"
    state = stats.sprt_decide([1.0] * 12 + [0.0] * 3, 0, 100)
    assert (state["decision"], state["decided_after"], state["games"]) == ("H1", 12, 15)
    assert state["llr"] == pytest.approx(12 * 0.24703 - 3 * 0.32870, abs=1e-3)
    assert stats.sprt_decide([0.0] * 9, 0, 100)["decision"] == "H0"
    assert stats.sprt_decide([0.0] * 8, 0, 100)["decision"] == "undecided"
    # Even results drift towards H0 (elo 0) only slowly.
    assert stats.sprt_decide([1.0, 0.0] * 20, 0, 100)["decision"] == "undecided"
    assert stats.sprt_decide([1.0, 0.0] * 40, 0, 100)["decision"] == "H0"


def test_sprt_stops_the_match_early_and_resume_keeps_the_decision(capsys, tmp_path, fake):
    # Without alternation A is always black, and both fakes score B+10: A wins every game.
    # H1 elo 400: each win adds log(0.909/0.5) = 0.598, so the 5th crosses 2.944.
    options = ["--games", "20", "--no-alternate", "--sprt", "0,400"]
    summary, records = run_match(capsys, tmp_path, fake(), fake(), *options)
    assert len(records) == 5 and summary["games"] == 5
    assert summary["sprt"]["decision"] == "H1" and summary["sprt"]["decided_after"] == 5
    assert summary["sprt"]["llr"] > summary["sprt"]["bounds"][1]
    assert summary["elo_a"]["clamped"] and summary["elo_a"]["elo"] > 0
    summary_again, records_again = run_match(capsys, tmp_path, fake(), fake(), *options)
    assert records_again == records and summary_again["sprt"] == summary["sprt"]


def test_sprt_with_parallel_games_lets_running_games_finish(capsys, tmp_path, fake):
    summary, records = run_match(capsys, tmp_path, fake(), fake(), "--games", "20",
                                 "--no-alternate", "--sprt", "0,400", "--parallel", "2")
    assert summary["sprt"]["decision"] == "H1" and summary["sprt"]["decided_after"] == 5
    assert 5 <= len(records) <= 6


def test_sgf_moves_carry_the_search_line_of_the_engine_that_logs_one(capsys, tmp_path, fake):
    run_match(capsys, tmp_path, fake("--name", "Logger", "--moves", "C3,B2", "--log-search"),
              fake(), "--games", "1")
    game = read_sgf(tmp_path / "games" / "game-000.sgf")
    nodes = game.get_main_sequence()[1:]
    comments = [node.get("C") if node.has_property("C") else None for node in nodes]
    assert comments == [
        "1 playouts in 0.10s (10/s); win rate 0.600; top: C3 9 0.610, B2 1 0.5; pv C3 D4", None,
        "0 playouts in 0.10s (10/s); win rate 0.600; top: B2 9 0.610, B2 1 0.5; pv B2 D4", None,
        "0 playouts in 0.10s (10/s); win rate 0.600; top: PASS 9 0.610, B2 1 0.5; pv PASS D4"]
    assert game.get_root().get("PB") == "Logger 1.0"


def test_score_margin_from_engine_a():
    record = {"result": "W+3.5", "winner_engine": "A"}
    assert report.score_margin(record) == 3.5
    assert report.score_margin({"result": "B+10", "winner_engine": "B"}) == -10
    assert report.score_margin({"result": "0", "winner_engine": None}) == 0
    assert report.score_margin({"result": "B+R", "winner_engine": "A"}) is None


def test_margin_marks_keep_resignations_apart_from_jigos():
    records = [{"result": "B+3.5", "winner_engine": "A"},
               {"result": "W+R", "winner_engine": "B"},
               {"result": "0", "winner_engine": None},
               {"result": "B+R", "winner_engine": "A"},
               {"result": "W+Time", "winner_engine": "B"},
               {"result": "?", "winner_engine": None}]
    margins, won, lost = report.margin_marks(records)
    assert margins == [(1, 3.5), (3, 0.0)]
    assert won == [4]
    assert lost == [2, 5]


class FakeAxes:
    """Stands for a matplotlib Axes: records the calls of the methods write_plot uses (any
    other is an AttributeError, so a new call shows up here)."""
    transAxes = "axes"

    def __init__(self):
        self.calls = {}


for _method in ("fill_between", "plot", "axhline", "set_ylim", "set_ylabel", "set_title",
                "legend", "bar", "scatter", "text", "set_xlabel"):
    setattr(FakeAxes, _method, lambda self, *args, _name=_method, **kwargs:
            self.calls.setdefault(_name, []).append((args, kwargs)))


class FakeFigure:
    def tight_layout(self):
        pass

    def savefig(self, path, dpi):
        with open(path, "wb") as handle:
            handle.write(b"\x89PNG\r\n\x1a\n")


def fake_matplotlib(monkeypatch):
    """Install a stand-in for matplotlib (not a test dependency); return the two Axes that
    write_plot will draw on."""
    import types
    axes = (FakeAxes(), FakeAxes())
    pyplot = types.ModuleType("matplotlib.pyplot")
    pyplot.subplots = lambda rows, columns, figsize, sharex: (FakeFigure(), axes)
    pyplot.close = lambda figure: None
    module = types.ModuleType("matplotlib")
    module.use = lambda backend: None
    module.pyplot = pyplot
    monkeypatch.setitem(sys.modules, "matplotlib", module)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", pyplot)
    return axes


def test_the_plot_draws_the_running_win_rate_and_each_counted_margin(tmp_path, monkeypatch):
    top, bottom = fake_matplotlib(monkeypatch)
    records = [{"result": "B+3.5", "winner_engine": "A", "winner": "B", "scored": True},
               {"result": "W+R", "winner_engine": "B", "winner": "W", "scored": True},
               {"result": "0", "winner_engine": None, "winner": None, "scored": True}]
    summary = {"engine_a": "a", "engine_b": "b",
               "sprt": {"elo0": 0, "elo1": 100, "decision": "continue", "llr": 0.1}}
    plot = tmp_path / "match.png"
    assert report.write_plot(str(plot), summary, records)
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    (games, rates), _ = top.calls["plot"][0]
    assert games == [1, 2, 3] and rates == pytest.approx([1.0, 0.5, 0.5])
    (_, lows, highs), _ = top.calls["fill_between"][0]
    expected = [stats.wilson_interval(points, n) for points, n in ((1, 1), (1, 2), (1.5, 3))]
    assert list(lows) == pytest.approx([low for low, _ in expected])
    assert list(highs) == pytest.approx([high for _, high in expected])
    assert "SPRT [0, 100]: continue" in top.calls["set_title"][0][0][0]
    assert bottom.calls["bar"][0][0] == ([1, 3], [3.5, 0.0])


def test_plot_through_the_match_runner_is_written(capsys, tmp_path, fake, monkeypatch):
    fake_matplotlib(monkeypatch)
    plot = tmp_path / "match.png"
    run_match(capsys, tmp_path, fake(), fake(), "--plot", str(plot), "--sprt", "0,100")
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib_is_skipped_with_a_message(capsys, tmp_path, fake, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    plot = tmp_path / "match.png"
    sgf_dir = tmp_path / "games"
    argv = ["--black", fake(), "--white", fake(), "--games", "1", "--size", "5", "--komi", "0.5",
            "--sgf-dir", str(sgf_dir), "--plot", str(plot)]
    assert match.main(argv) == 0
    assert "matplotlib is not installed" in capsys.readouterr().err
    assert not plot.exists()


def test_engines_started_by_the_match_runner_get_no_cache_folder_of_ours(monkeypatch):
    """Another checkout's engine must choose its own numba cache folder (its sources' hash):
    handed ours, it compiles its code cold into the folder of other sources."""
    import engine
    monkeypatch.setenv("NUMBA_CACHE_DIR", "/ours")
    monkeypatch.setattr(engine, "_USER_CACHE_DIR", None)
    assert "NUMBA_CACHE_DIR" not in engine.foreign_environment()
    monkeypatch.setattr(engine, "_USER_CACHE_DIR", "/ours")
    assert engine.foreign_environment()["NUMBA_CACHE_DIR"] == "/ours"


def test_under_a_clock_engines_are_told_their_time_and_charged_for_each_answer(capsys, tmp_path,
                                                                               fake):
    log_a, log_b = tmp_path / "a.log", tmp_path / "b.log"
    # Each answer takes at least 10 ms, so that the charge cannot round to nothing.
    engine_a = fake("--moves", "C3,B2", "--log", str(log_a), "--genmove-seconds", "0.01")
    # An engine without kgs-time_settings is given the plain command's canadian form.
    engine_b = fake("--log", str(log_b), "--refuse", "kgs-time_settings")
    summary, records = run_match(capsys, tmp_path, engine_a, engine_b, "--games", "1",
                                 "--clock", "byoyomi", "--main", "30", "--period", "5",
                                 "--periods", "3")

    assert records[0]["result"] == "B+10" and records[0]["clock"] == \
        "kgs-time_settings byoyomi 30 5 3"
    sent_a, sent_b = log_a.read_text().splitlines(), log_b.read_text().splitlines()
    assert "kgs-time_settings byoyomi 30 5 3" in sent_a
    assert sent_b[sent_b.index("kgs-time_settings byoyomi 30 5 3") + 1] == "time_settings 30 5 1"
    # time_left comes right before each genmove: whole seconds left, 0 stones in main time.
    genmoves = [i for i, line in enumerate(sent_a) if line.startswith("genmove")]
    assert len(genmoves) == 3
    assert all(sent_a[i - 1].startswith("time_left b ") and sent_a[i - 1].endswith(" 0")
               for i in genmoves)
    assert sent_a[genmoves[0] - 1] == "time_left b 30 0"
    black = records[0]["time"]["B"]
    assert 0.03 <= black["used_s"] < 30 and not black["lost"] and black["periods"] == 3
    assert summary["time"]["A"]["lost_on_time"] == summary["time"]["B"]["lost_on_time"] == 0
    assert summary["time"]["A"]["per_move_s"] == pytest.approx(black["used_s"] / 3, abs=1e-3)


def test_an_engine_whose_clock_runs_out_loses_on_time(capsys, tmp_path, fake):
    summary, records = run_match(capsys, tmp_path, fake("--genmove-seconds", "0.4", "--moves", "C3,B2,D4"),
                                 fake(),
                                 "--games", "2", "--clock", "absolute", "--main", "1")
    # The slow engine is Black in game 0 and White in game 1; its third answer runs out.
    assert [r["result"] for r in records] == ["W+Time", "B+Time"]
    assert "lost on time" in records[0]["reason"]
    assert records[0]["time"]["B"]["lost"] and not records[0]["time"]["W"]["lost"]
    assert summary["wins_b"] == 2 and summary["time"]["A"]["lost_on_time"] == 2
    assert summary["time"]["A"]["slowest_s"] >= 0.4


def test_resume_refuses_a_results_file_from_another_clock(capsys, tmp_path, fake):
    engine = fake()
    sgf_dir = tmp_path / "games"
    argv = ["--black", engine, "--white", engine, "--games", "1", "--size", "5", "--komi", "0.5",
            "--sgf-dir", str(sgf_dir)]
    assert match.main(argv) == 0
    assert match.main([*argv, "--games", "2", "--clock", "absolute", "--main", "60"]) == 2
    assert "another clock" in capsys.readouterr().err


def test_clock_values_without_a_clock_or_leaving_no_time_are_refused(capsys, tmp_path, fake):
    argv = ["--black", fake(), "--white", fake(), "--games", "1", "--size", "5", "--komi", "0.5",
            "--sgf-dir", str(tmp_path)]
    for extra in (["--main", "60"], ["--clock", "canadian", "--main", "0", "--period", "0"]):
        with pytest.raises(SystemExit):
            match.main([*argv, *extra])


def handicap_match(capsys, tmp_path, black, white, *extra):
    """Return (summary, records) of a one-game 9x9 match with a two-stone handicap."""
    return run_match(capsys, tmp_path, black, white, "--games", "1", "--size", "9",
                     "--handicap", "2", *extra)


def test_a_handicap_game_starts_from_the_fixed_stones_with_white_to_move(capsys, tmp_path,
                                                                         fake):
    logs = {colour: tmp_path / f"{colour}.log" for colour in ("black", "white", "referee")}
    # Answers of at least 50 ms, so that each side's time per move tells 2 moves from 3.
    black = fake("--handicap", "C3,G7", "--moves", "E5", "--log", str(logs["black"]),
                 "--genmove-seconds", "0.05")
    white = fake("--handicap", "G7,C3", "--moves", "D4,F6", "--log", str(logs["white"]),
                 "--genmove-seconds", "0.05")
    referee = fake("--handicap", "C3,G7", "--log", str(logs["referee"]), "--score", "W+3")
    summary, records = handicap_match(capsys, tmp_path, black, white, "--referee", referee,
                                      "--komi", "0.5", "--clock", "absolute", "--main", "60")

    assert records[0]["handicap"] == 2 and records[0]["result"] == "W+3"
    # Five moves: white (engine B) made three of them (D4, F6, pass), black two (E5, pass).
    assert records[0]["moves"] == 5
    for letter, colour, made in (("A", "B", 2), ("B", "W", 3)):
        assert summary["time"][letter]["per_move_s"] == pytest.approx(
            records[0]["time"][colour]["used_s"] / made, abs=1e-3)
    assert summary["illegal_moves"] == summary["protocol_errors"] == {"A": 0, "B": 0}
    for log in logs.values():
        sent = log.read_text().splitlines()
        assert sent[sent.index("komi 0.5") + 1] == "fixed_handicap 2"
    # White moves first: its two moves and black's one, then two passes.
    sent_white = logs["white"].read_text().splitlines()
    assert sent_white.index("genmove w") < sent_white.index("play b e5")
    assert [line for line in logs["referee"].read_text().splitlines()
            if line.startswith("play")] == ["play w D4", "play b E5", "play w F6", "play b pass",
                                            "play w pass"]
    game = read_sgf(tmp_path / "games" / "game-000.sgf")
    root = game.get_root()
    assert root.get("HA") == 2
    assert root.get_setup_stones() == ({(2, 2), (6, 6)}, set(), set())
    assert [node.get_move() for node in game.get_main_sequence()[1:4]] == \
        [("w", (3, 3)), ("b", (4, 4)), ("w", (5, 5))]


def test_an_engine_that_places_other_handicap_stones_forfeits(capsys, tmp_path, fake):
    black = fake("--handicap", "C3,G7")
    white = fake("--handicap", "C3,G3")
    summary, records = handicap_match(capsys, tmp_path, black, white)
    assert records[0]["result"] == "B+F"
    assert "placed the handicap at 'C3 G3', not GTP's" in records[0]["reason"]
    assert summary["protocol_errors"] == {"A": 0, "B": 1}
    # A pass among the stones is no handicap either.
    summary, records = handicap_match(capsys, tmp_path / "pass", black,
                                      fake("--handicap", "pass,C3"))
    assert records[0]["result"] == "B+F"
    assert "placed the handicap at 'pass C3'" in records[0]["reason"]
    # An engine without fixed_handicap forfeits as one that rejects any set-up command.
    summary, records = handicap_match(capsys, tmp_path / "second", fake(), black)
    assert records[0]["result"] == "W+F"
    assert "rejected 'fixed_handicap 2'" in records[0]["reason"]


def test_a_handicap_the_board_cannot_take_is_refused(capsys, tmp_path, fake):
    engine = fake()
    for size, stones in (("5", "2"), ("9", "10"), ("9", "1"), ("8", "5")):
        with pytest.raises(SystemExit) as refused:
            match.main(["--black", engine, "--white", engine, "--games", "1", "--size", size,
                        "--komi", "0.5", "--sgf-dir", str(tmp_path), "--handicap", stones])
        assert refused.value.code == 2
        assert f"--handicap {stones}: a {size}x{size} board" in capsys.readouterr().err


def test_resume_refuses_a_results_file_from_another_handicap(capsys, tmp_path, fake):
    engine = fake("--handicap", "C3,G7")
    argv = ["--black", engine, "--white", engine, "--games", "1", "--size", "9", "--komi",
            "0.5", "--sgf-dir", str(tmp_path / "games")]
    assert match.main(argv) == 0
    assert match.main([*argv, "--games", "2", "--handicap", "2"]) == 2
    assert "another handicap" in capsys.readouterr().err


@pytest.mark.skipif(not os.access(GNUGO, os.X_OK), reason="GNU Go is not installed")
def test_gnugo_plays_a_handicap_game_that_its_referee_counts(capsys, tmp_path):
    gnugo = f"{GNUGO} --mode gtp --level 1"
    summary, records = handicap_match(capsys, tmp_path, gnugo, gnugo, "--referee",
                                      f"{GNUGO} --mode gtp --chinese-rules")
    assert summary["unscored"] == 0 and records[0]["handicap"] == 2
    assert summary["illegal_moves"] == summary["protocol_errors"] == {"A": 0, "B": 0}
    game = read_sgf(tmp_path / "games" / "game-000.sgf")
    assert game.get_main_sequence()[1].get_move()[0] == "w"


def test_kept_engines_play_every_game_in_one_process(capsys, tmp_path, fake):
    # As gogui-twogtp runs engines: each fake gets both games' set-up in one process, which
    # quits once, at the end; the records count the games each process had played.
    logs = {letter: tmp_path / f"{letter}.log" for letter in "AB"}
    _, records = run_match(capsys, tmp_path, fake("--moves", "C3,B2", "--log", str(logs["A"])),
                           fake("--log", str(logs["B"])), "--keep-engines")
    assert [r["process_games"] for r in records] == [{"A": 0, "B": 0}, {"A": 1, "B": 1}]
    assert [r["result"] for r in records] == ["B+10", "B+10"]
    for log in logs.values():
        sent = log.read_text().splitlines()
        assert sent.count("clear_board") == 2 and sent.count("quit") == 1
    assert (tmp_path / "games" / "engine-A-0.log").exists()


def test_a_kept_engine_that_dies_is_started_afresh_for_the_next_game(capsys, tmp_path, fake):
    _, records = run_match(capsys, tmp_path, fake("--die-genmove"), fake(), "--keep-engines")
    assert [r["result"] for r in records] == ["W+F", "B+F"]
    assert [r["process_games"] for r in records] == [{"A": 0, "B": 0}, {"A": 0, "B": 1}]


def test_kept_engines_refuse_a_command_that_changes_with_the_game(capsys, tmp_path, fake):
    with pytest.raises(SystemExit):
        match.main(["--black", fake("--seed", "{game}"), "--white", fake(), "--games", "2",
                    "--size", "5", "--komi", "0.5", "--sgf-dir", str(tmp_path), "--keep-engines"])
    assert "{game}" in capsys.readouterr().err
