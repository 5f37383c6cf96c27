"""Tests for benchmarks.knowledge.reading: GNU Go's reading tests turned into move problems,
and a run against the scripted engine."""
import json
import os
import sys

import pytest

from benchmarks.knowledge import reading as rd

FAKE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_gtp.py")


@pytest.mark.parametrize("command,expected,problems", [
    ("owl_attack C3", "1 B2", [("C3", False, "B2")]),
    ("owl_defend C3", "1 (B2|b1)", [("C3", True, "B2|b1")]),
    ("owl_attack C3", "0", []),
    ("owl_attack C3", "2 B2", []),                  # only a ko
    ("dragon_status B18", "critical (A15|A18) A17",
     [("B18", False, "A15|A18"), ("B18", True, "A17")]),
    ("dragon_status S18", "dead", []),
    ("connect D4 G5", "1 (E5|D5)", [("D4", True, "E5|D5")]),
    ("disconnect D4 G5", "1 E6", [("D4", False, "E6")]),
    ("analyze_semeai C1 E1", "1 0 (F1|F2)", [("C1", True, "F1|F2")]),
    ("analyze_semeai C1 E1", "1 0 (F1|F2|PASS)", []),   # any move does
    ("same_dragon G17 K17", "0", []),
])
def test_reading_tests_become_move_problems(command, expected, problems):
    assert rd.problems_of(command, expected) == problems


SUITE = """\
# C7 is Black's, D6 White's after two moves.
loadsgf game.sgf 3
1 owl_attack C7
#? [1 B7]
2 dragon_status D6
#? [critical E6 C6]*
3 owl_attack C7
#? [0]
4 owl_attack E5
#? [1 E4]
"""


@pytest.fixture
def suite_folder(tmp_path):
    (tmp_path / "game.sgf").write_text("(;GM[1]FF[4]SZ[9]KM[7];B[cc];W[dd];B[ee])")
    (tmp_path / "owl.tst").write_text(SUITE)
    return tmp_path


def test_a_reading_suite_is_written_as_move_problems_for_the_right_side(suite_folder):
    text, skipped = rd.reading_suite(str(suite_folder / "owl.tst"))
    lines = [line for line in text.splitlines() if not line.startswith("# ")]
    # White attacks Black's C7; Black attacks White's D6 at E6 and White defends at C6. Test
    # 3 fails outright and test 4 names an empty point (E5 is played only at move 3).
    loaded = f"loadsgf {suite_folder / 'game.sgf'} 3"
    assert lines == [loaded, "1 reg_genmove white", "#? [B7]",
                     loaded, "2 reg_genmove black", "#? [E6]",
                     loaded, "3 reg_genmove white", "#? [C6]"]
    assert skipped == 2


def test_the_suites_own_moves_come_with_each_problem(suite_folder):
    # A play after loadsgf is part of the position (its stone's colour too) until undone.
    (suite_folder / "owl.tst").write_text("loadsgf game.sgf 3\nplay b E5\n1 owl_attack E5\n"
                                          "#? [1 E4]\nundo\n2 owl_attack E5\n#? [1 E4]\n")
    text, skipped = rd.reading_suite(str(suite_folder / "owl.tst"))
    lines = [line for line in text.splitlines() if not line.startswith("# ")]
    assert lines == [f"loadsgf {suite_folder / 'game.sgf'} 3", "play b E5",
                     "1 reg_genmove white", "#? [E4]"]
    assert skipped == 1


def test_a_run_scores_each_part(suite_folder, capsys):
    for name in ("owl", "ld_owl", "semeai", "connection"):
        (suite_folder / f"{name}.tst").write_text(SUITE if name == "owl" else "")
    status = rd.main([str(suite_folder), "--part", "reading", "--engine",
                      f"{sys.executable} {FAKE} --moves b7,D5,C6 --accept loadsgf"])
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert status == 0
    assert result["totals"]["reading"] == {"problems": 3, "solved": 2}
    assert result["suites"][0] == {"part": "reading", "suite": "owl", "problems": 3,
                                   "solved": 2, "without_a_problem": 2}


def test_replay_sets_each_position_up_with_play_commands(suite_folder, tmp_path):
    # An engine without loadsgf (the scripted one logs what it is sent): each problem's
    # position comes as boardsize, clear_board, komi and plays, the move asked with genmove.
    log = tmp_path / "sent.log"
    for name in ("owl", "ld_owl", "semeai", "connection"):
        (suite_folder / f"{name}.tst").write_text(SUITE if name == "owl" else "")
    status = rd.main([str(suite_folder), "--part", "reading", "--replay", "--engine",
                      f"{sys.executable} {FAKE} --moves b7,D5,C6 --log {log}"])
    assert status == 0
    sent = [line for line in log.read_text().splitlines() if line != "quit"]
    position = ["boardsize 9", "clear_board", "komi 7.0", "play b C7", "play w D6"]
    # The scripted engine accepts no loadsgf: every set-up comes as plays.
    assert sent == (position + ["genmove white"] + position + ["genmove black"] + position
                    + ["genmove white"])


def test_replay_keeps_the_suites_own_moves_until_undone(suite_folder):
    steps = rd.parse_suite(f"loadsgf {suite_folder / 'game.sgf'} 3\nplay b E5\n"
                           "1 reg_genmove w\n#? [A1]\nundo\n2 reg_genmove w\n#? [A1]\n")
    sent = [(s.number, s.command) for s in rd.replayed(steps)]
    position = [(None, c) for c in ("boardsize 9", "clear_board", "komi 7.0", "play b C7",
                                    "play w D6")]
    assert sent == (position + [(None, "play b E5"), (1, "genmove w")]
                    + position + [(2, "genmove w")])


@pytest.mark.parametrize("command,standard", [
    ("black G3", "play black G3"), ("white a1", "play white a1"),
    ("trymove black C1", "play black C1"), ("popgo", "undo"), ("play b C3", "play b C3"),
    ("loadsgf x.sgf 3", "loadsgf x.sgf 3")])
def test_gnugo_set_up_shorthands_become_standard_gtp(command, standard):
    assert rd.standard_setup(command) == standard
