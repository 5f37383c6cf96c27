"""Tests for the clock benchmark: the time systems' rules, and games under the harness's clock
against scripted fake engines and, where it is installed, darkgo against GNU Go."""
import json
import os
import shutil

import pytest

from benchmarks.strength import clock

# GNU Go where Debian puts it, unless another is on the PATH.
GNUGO = shutil.which("gnugo") or "/usr/games/gnugo"


def charged(system, seconds):
    """Return the clock after charging moves of the given seconds, and whether each was in
    time."""
    game_clock = clock.GameClock(system)
    return game_clock, [game_clock.charge(s) for s in seconds]


def test_time_settings_commands_of_the_default_systems():
    assert clock.time_system("absolute").gtp() == "time_settings 60 0 0"
    assert clock.time_system("byoyomi").gtp() == "kgs-time_settings byoyomi 10 5 1"
    assert clock.time_system("canadian").gtp() == "kgs-time_settings canadian 30 10 5"
    assert clock.time_system("byoyomi", main=0, period=30, periods=5).gtp() == \
        "kgs-time_settings byoyomi 0 30 5"
    # Each system takes only its own overtime count.
    assert clock.time_system("canadian", periods=3, stones=25).gtp() == \
        "kgs-time_settings canadian 30 10 25"


@pytest.mark.parametrize("name, values", [
    ("absolute", {"main": 0}),
    ("byoyomi", {"period": 0}),
    ("byoyomi", {"periods": 0}),
    ("canadian", {"stones": 0}),
    ("canadian", {"main": -1}),
    ("fischer", {}),
])
def test_a_time_system_that_leaves_no_time_is_refused(name, values):
    with pytest.raises(ValueError):
        clock.time_system(name, **values)


# Absolute 10 s:  |--3--|--3--|--3--|-1-|   the fourth move's 1.5 s overruns by 0.5 s.
def test_absolute_time_is_lost_when_main_time_runs_out():
    game_clock, in_time = charged(clock.time_system("absolute", main=10), [3, 3, 3])
    assert in_time == [True] * 3 and game_clock.main == pytest.approx(1)
    assert game_clock.time_left_args() == (1, 0)
    assert game_clock.allowance() == game_clock.to_loss() == pytest.approx(1)
    assert game_clock.charge(1.5) is False and game_clock.lost


def test_absolute_time_used_to_the_last_hundredth_is_still_in_time():
    game_clock, in_time = charged(clock.time_system("absolute", main=10), [9.99])
    assert in_time == [True] and not game_clock.lost
    assert game_clock.time_left_args() == (0, 0)
    assert game_clock.used / game_clock.available == pytest.approx(0.999)


# Byo-yomi 10 s main, 3 periods of 5 s:
#   main |---8---|--2+3--|          the second move spills 3 s into the first period
#   byo  [-4-]                      within a period: the period starts afresh
#   byo  [--5--][-1-]               6 s: one period used up, 2 left
#   byo  [--5--][--5--][.]          11 s: two more would be needed, only 2 left: lost
def test_byoyomi_periods_start_afresh_are_used_up_and_the_last_loses():
    system = clock.time_system("byoyomi", main=10, period=5, periods=3)
    game_clock, in_time = charged(system, [8])
    assert game_clock.time_left_args() == (2, 0) and not game_clock.overtime
    # Spilling into the first period loses nothing; running past it, a period.
    assert game_clock.allowance() == pytest.approx(2 + 5)
    assert game_clock.to_loss() == pytest.approx(2 + 3 * 5)
    assert game_clock.charge(5) and game_clock.overtime and game_clock.periods == 3
    assert game_clock.time_left_args() == (5, 3)
    assert game_clock.allowance() == 5 and game_clock.to_loss() == 15
    assert game_clock.charge(4) and game_clock.periods == 3
    assert game_clock.charge(6) and game_clock.periods == 2
    assert game_clock.time_left_args() == (5, 2)
    assert game_clock.charge(11) is False and game_clock.lost and game_clock.periods == 0


def test_byoyomi_move_ending_exactly_at_its_periods_end_keeps_the_period():
    system = clock.time_system("byoyomi", main=0, period=5, periods=1)
    game_clock, in_time = charged(system, [5, 5, 5])
    assert in_time == [True] * 3 and game_clock.periods == 1
    assert game_clock.charge(5.01) is False


def test_byoyomi_without_main_time_starts_in_the_periods():
    game_clock = clock.GameClock(clock.time_system("byoyomi", main=0, period=30, periods=5))
    assert game_clock.overtime and game_clock.time_left_args() == (30, 5)


def test_byoyomi_share_used_counts_a_period_per_overtime_move_and_per_period_used_up():
    system = clock.time_system("byoyomi", main=10, period=5, periods=3)
    # 10 s main, then moves of 2 s (one period given) and 7 s (two: one used up).
    game_clock, in_time = charged(system, [10, 2, 7])
    assert all(in_time)
    assert game_clock.available == pytest.approx(10 + 5 + 10)
    assert game_clock.used == pytest.approx(19)


# Canadian 30 s main, then 3 stones in 10 s:
#   main   |--25--|--5+2--|            the crossing move is the period's first stone
#   period [2][3][4]                   9 s for 3 stones: a fresh period
#   period [6][5]                      11 s before the third stone: lost
def test_canadian_period_starts_afresh_once_its_stones_are_played_and_loses_when_it_runs_out():
    system = clock.time_system("canadian", main=30, period=10, stones=3)
    game_clock, in_time = charged(system, [25])
    assert game_clock.time_left_args() == (5, 0)
    assert game_clock.allowance() == game_clock.to_loss() == pytest.approx(5 + 10)
    assert game_clock.charge(7) and game_clock.overtime
    assert (game_clock.period_left, game_clock.stones) == (pytest.approx(8), 2)
    assert game_clock.time_left_args() == (8, 2)
    assert game_clock.allowance() == game_clock.to_loss() == pytest.approx(8)
    assert game_clock.charge(3) and game_clock.charge(4)
    assert (game_clock.period_left, game_clock.stones) == (10, 3)
    assert game_clock.charge(6) and game_clock.charge(5) is False and game_clock.lost
    # Main time and the two periods begun.
    assert game_clock.available == pytest.approx(30 + 10 + 10)


def test_the_cpu_hog_runs_in_the_block_and_is_gone_after_it():
    with clock.cpu_hog(False) as none:
        assert none is None
    with clock.cpu_hog(True) as hog:
        assert hog.poll() is None
    assert hog.poll() is not None


def run_clock(capsys, tmp_path, *argv, status=0):
    """Return (the JSON summary on the last stdout line, the results file's records), having
    checked the exit status unless it is given as None."""
    results = tmp_path / "results.jsonl"
    returned = clock.main(["--results", str(results), "--logs", str(tmp_path / "logs"), *argv])
    assert status is None or returned == status
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    with open(results) as handle:
        records = [json.loads(line) for line in handle]
    return summary, records


def test_a_quick_engine_is_told_its_time_and_keeps_it(capsys, tmp_path, fake):
    log = tmp_path / "engine.gtp"
    engine = fake("--moves", "C3,B2", "--log", str(log))
    summary, records = run_clock(
        capsys, tmp_path, "--system", "absolute", "--main", "30", "--games", "2", "--size", "5",
        "--lag", "0.05", "--engine", engine, "--opponent", fake("--moves", "D4", "--score", "W+3"))
    assert [r["colour"] for r in records] == ["b", "w"]
    assert [r["result"] for r in records] == ["W+3", "W+3"]
    assert [r["won"] for r in records] == [False, True]
    assert not any(r["loss_on_time"] for r in records)
    # Game 1: C3 D4 B2 pass pass; game 2: D4 C3 pass B2 pass pass.
    assert [r["our_moves"] for r in records] == [3, 3]
    commands = log.read_text().splitlines()
    assert "time_settings 30 0 0" in commands
    time_lefts = [c for c in commands if c.startswith("time_left")]
    genmoves = [c for c in commands if c.startswith("genmove")]
    assert len(time_lefts) == len(genmoves) == 6
    assert time_lefts[0] == "time_left b 30 0" and time_lefts[1] == "time_left b 29 0"
    assert time_lefts[3] == "time_left w 30 0"
    first = records[0]
    assert first["clock"]["main_s"] == pytest.approx(30 - first["used_s"])
    assert first["time_left_s"] == first["min_time_left_s"] == first["clock"]["main_s"]
    assert first["slowest"]["seconds"] >= 0.05 and first["slowest"]["allowance_s"] <= 30
    assert 0 < first["share_used"] < 0.5
    totals = summary["systems"]["absolute"]
    assert summary["games"] == 2 and summary["losses_on_time"] == 0
    assert totals["wins"] == 1 and totals["losses_on_time"] == 0
    assert [g["time_left_s"] for g in totals["by_game"]] == [r["time_left_s"] for r in records]


def test_a_slow_engine_uses_up_its_byoyomi_periods_and_loses_on_time(capsys, tmp_path, fake):
    log = tmp_path / "engine.gtp"
    engine = fake("--moves", "C3,B2,D2", "--genmove-seconds", "1.2", "--log", str(log))
    summary, records = run_clock(
        capsys, tmp_path, "--system", "byoyomi", "--main", "0", "--period", "1", "--periods",
        "2", "--games", "1", "--size", "5", "--lag", "0", "--engine", engine,
        "--opponent", fake("--moves", "D4"), status=1)
    (record,) = records
    assert record["loss_on_time"] and record["result"] == "W+T"
    assert record["our_moves"] == 2 and record["moves"] == 2
    assert [c for c in log.read_text().splitlines() if c.startswith("time_left")] == \
        ["time_left b 1 2", "time_left b 1 1"]
    assert record["clock"] == {"main_s": 0, "periods": 0} and record["time_left_s"] == 0
    assert record["min_time_left_s"] < 0
    assert summary["losses_on_time"] == 1


def test_a_rerun_skips_the_games_in_the_results_file(capsys, tmp_path, fake):
    argv = ["--system", "canadian", "--games", "1", "--size", "5", "--lag", "0",
            "--engine", fake("--moves", "C3"), "--opponent", fake()]
    _, first = run_clock(capsys, tmp_path, *argv)
    summary, again = run_clock(capsys, tmp_path, *argv, "--games", "2")
    assert again[0] == first[0] and len(again) == 2
    assert summary["systems"]["canadian"]["games"] == 2
    assert clock.main(["--results", str(tmp_path / "results.jsonl"), "--logs",
                       str(tmp_path / "logs"), *argv, "--lag", "1"]) == 2
    assert "other settings" in capsys.readouterr().err


def test_cold_gives_every_game_an_empty_compile_cache_of_its_own(capsys, tmp_path, fake):
    summary, records = run_clock(capsys, tmp_path, "--cold", "--system", "absolute", "--games",
                                 "2", "--size", "5", "--lag", "0", "--engine", fake(),
                                 "--opponent", fake())
    assert all(r["cold"] for r in records)
    caches = [name for name in os.listdir(summary["logs"]) if "-cache-" in name]
    assert sorted(name.split("-cache-")[0] for name in caches) == ["absolute-001",
                                                                   "absolute-002"]


@pytest.mark.skipif(not os.access(GNUGO, os.X_OK), reason="GNU Go is not installed")
def test_darkgo_plays_a_whole_game_against_gnugo_under_byoyomi(capsys, tmp_path):
    summary, records = run_clock(
        capsys, tmp_path, "--system", "byoyomi", "--main", "5", "--period", "5", "--periods",
        "3", "--games", "1", "--size", "7", "--lag", "0.1", "--opponent",
        f"{GNUGO} --mode gtp --level 1", "--", "--net", "none", "--rollouts", "50",
        status=None)
    (record,) = records
    assert record["result"][:1] in "BW" and record["our_moves"] >= 1
    for field in ("loss_on_time", "clock", "time_left_s", "share_used", "min_time_left_s",
                  "slowest", "tightest"):
        assert record[field] is not None
    totals = summary["systems"]["byoyomi"]
    assert totals["games"] == 1 and totals["time_settings"] == "kgs-time_settings byoyomi 5 5 3"
