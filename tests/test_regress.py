"""Tests for the regression-suite runner: the suite format, each outcome, loadsgf paths, a run
against the scripted engine, and darkgo's own suite (tests/regress/darkgo.tst) passing."""

import json
import os
import subprocess
import sys

import pytest

from benchmarks.strength import regress as rg
from benchmarks.gtp_client import GTP_MAIN

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(capsys, argv):
    status = rg.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    lines = out.strip().splitlines()
    return status, (json.loads(lines[-1]) if lines else None), err


def test_a_suite_has_set_up_commands_tests_and_their_expectations():
    steps = rg.parse_suite("boardsize 9\n# a comment\n\n1 genmove b\n#? [!C3|D4]*\n"
                           "2 name\n#? [darkgo]&\n3 komi 5\n")
    assert [(s.number, s.command) for s in steps] == [(None, "boardsize 9"), (1, "genmove b"),
                                                      (2, "name"), (3, "komi 5")]
    first, second = steps[1].expectation, steps[2].expectation
    assert (first.pattern, first.negate, first.expected_fail, first.ignore) == (
        "C3|D4", True, True, False)
    assert (second.pattern, second.negate, second.expected_fail, second.ignore) == (
        "darkgo", False, False, True)
    assert steps[3].expectation is None


@pytest.mark.parametrize("text, message", [
    ("#? [A1]\n", "without a numbered command"),
    ("boardsize 9\n#? [A1]\n", "without a numbered command"),
    ("1 name\n#? [A1]\n#? [B2]\n", "without a numbered command"),
    ("1 name\n#? A1\n", "line 2: expected"),
    ("1 name\n#? [undecided\n", "line 2: expected"),
    ("1 name\n#? [(]\n", "bad pattern"),
    ("1 name\n1 version\n", "used twice"),
])
def test_a_malformed_suite_is_refused_with_its_line(text, message):
    with pytest.raises(rg.SuiteError, match=message):
        rg.parse_suite(text)


def test_each_outcome():
    expect = rg.Expectation
    assert rg.outcome_of(expect("C3|D4"), True, "D4") == "pass"
    assert rg.outcome_of(expect("C3|D4"), True, "D45") == "fail"      # the whole answer
    assert rg.outcome_of(expect("C3", negate=True), True, "D4") == "pass"
    assert rg.outcome_of(expect("C3", negate=True), True, "C3") == "fail"
    assert rg.outcome_of(expect("C3", expected_fail=True), True, "D4") == "expected fail"
    assert rg.outcome_of(expect("C3", expected_fail=True), True, "C3") == "unexpected pass"
    assert rg.outcome_of(expect("C3", ignore=True), True, "D4") == "ignored"
    # A refused command fails, even against a pattern that matches anything, or negated.
    assert rg.outcome_of(expect(".*"), False, "illegal move") == "fail"
    assert rg.outcome_of(expect("C3", negate=True), False, "illegal move") == "fail"
    assert rg.outcome_of(expect(".*", expected_fail=True), False, "illegal move") == \
        "expected fail"
    # `.` matches the newlines of a many-line answer.
    assert rg.outcome_of(expect(".*gogui-ownership.*"), True, "a\ndboard/gogui-ownership\nb") \
        == "pass"
    # Without an expectation a command only has to succeed; one the engine lacks counts apart.
    assert rg.outcome_of(None, True, "") == "pass"
    assert rg.outcome_of(None, False, "illegal move") == "fail"
    assert rg.outcome_of(expect("C3"), False, "unknown command") == "unsupported"
    # Moves regardless of case (GTP's vertices and pass are), other answers as they are.
    assert rg.outcome_of(expect("PASS"), True, "pass", ignore_case=True) == "pass"
    assert rg.outcome_of(expect("PASS", negate=True), True, "pass", ignore_case=True) == "fail"
    assert rg.outcome_of(expect("PASS"), True, "pass") == "fail"


def test_loadsgf_paths_are_resolved_against_the_suites_folder(tmp_path):
    assert rg.resolve_loadsgf("loadsgf games/a.sgf 20", str(tmp_path)) == \
        f"loadsgf {tmp_path / 'games' / 'a.sgf'} 20"
    assert rg.resolve_loadsgf("loadsgf /abs/a.sgf", str(tmp_path)) == "loadsgf /abs/a.sgf"
    assert rg.resolve_loadsgf("genmove b", str(tmp_path)) == "genmove b"
    with pytest.raises(rg.SuiteError, match="whitespace"):
        rg.resolve_loadsgf("loadsgf games/a.sgf", str(tmp_path / "my suites"))


def test_only_genmove_keeps_the_set_up_and_the_move_tests():
    steps = rg.parse_suite("loadsgf g.sgf 5\n1 reg_genmove b\n#? [A1]\n2 owl_attack A1\n"
                           "#? [1 B2]\n3 restricted_genmove w A1 B1\n#? [B1]\n")
    kept = rg.select_steps(steps, only_genmove=True)
    assert [s.number for s in kept] == [None, 1, 3]
    assert len(rg.select_steps(steps, only_genmove=False)) == 4


def test_a_suite_run_counts_every_outcome(tmp_path, capsys, fake):
    suite = tmp_path / "s.tst"
    suite.write_text("\ufeffloadsgf games/x.sgf 3\n1 name\n#? [Fake]\n2 play b A1\n#? [.*]*\n"
                     "3 genmove b\n#? [!c3]\n4 name\n#? [Fake]*\n5 version\n#? [.*]&\n"
                     "6 genmove b\n#? [D4]\n7 owl_attack A1\n#? [1 B2]\n8 play w A1\n"
                     "9 play w B1\n", encoding="utf-8")
    log = tmp_path / "sent.log"
    results = tmp_path / "results.jsonl"
    engine = fake("--reject", "A1", "--moves", "C3,D4", "--log", str(log))
    status, summary, err = _run(capsys, [suite, "--engine", engine, "--results", results])
    assert status == 0
    # 8 and 9 have no expectation: the refused play fails, the other passes. The fake
    # lacks owl_attack (7) and loadsgf, a refused set-up command.
    assert summary["totals"] == {"pass": 3, "fail": 2, "expected fail": 1,
                                 "unexpected pass": 1, "ignored": 1, "unsupported": 1}
    suite_summary = summary["suites"][0]
    assert [(r["number"], r["outcome"]) for r in suite_summary["unexpected"]] == [
        (3, "fail"), (4, "unexpected pass"), (8, "fail")]
    assert [r["line"] for r in suite_summary["refused_setup"]] == [1]
    lines = [json.loads(line) for line in results.read_text().splitlines()]
    assert [r["number"] for r in lines] == [1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert lines[1]["answer"] == "? illegal move"
    assert f"loadsgf {tmp_path / 'games' / 'x.sgf'} 3" in log.read_text().splitlines()
    assert "FAIL s.tst 3" in err and "UNEXPECTED PASS s.tst 4" in err
    assert "set-up refused at line 1" in err
    # With --only-genmove the name, play and version tests are left out.
    status, summary, _ = _run(capsys, [suite, "--engine", fake("--moves", "D4,D4"),
                                       "--only-genmove"])
    assert status == 0 and summary["tests"] == 2
    assert summary["totals"]["pass"] == 2


def test_an_engine_that_dies_stops_its_suite_with_status_1(tmp_path, capsys, fake):
    suite = tmp_path / "s.tst"
    suite.write_text("1 name\n#? [Fake]\n2 genmove b\n#? [D4]\n3 name\n#? [Fake]\n")
    status, summary, err = _run(capsys, [suite, "--engine", fake("--die-genmove")])
    assert status == 1
    assert summary["tests"] == 1 and summary["totals"]["pass"] == 1
    assert "line 3 (genmove b)" in summary["suites"][0]["error"] and "stopped" in err


def test_an_answer_that_breaks_the_protocol_stops_its_suite(tmp_path, capsys, fake):
    suite = tmp_path / "s.tst"
    suite.write_text("1 genmove b\n#? [D4]\n2 name\n#? [Fake]\n")
    # Two answers to one genmove: the second comes as the next command's, with the wrong id.
    status, summary, _ = _run(capsys, [suite, "--engine",
                                       fake("--genmove-raw", "=ID D4\n\n=ID D5\n\n")])
    assert status == 1 and summary["tests"] == 1 and summary["totals"]["pass"] == 1
    assert "line 3 (name)" in summary["suites"][0]["error"]


def test_a_missing_or_malformed_suite_is_refused_before_any_runs(tmp_path, capsys, fake):
    status, summary, err = _run(capsys, [tmp_path / "none.tst", "--engine", fake()])
    assert status == 2 and summary is None and "none.tst" in err
    good, bad = tmp_path / "good.tst", tmp_path / "bad.tst"
    good.write_text("1 name\n#? [Fake]\n")
    bad.write_text("1 name\n#? Fake\n")
    log = tmp_path / "sent.log"
    status, summary, err = _run(capsys, [good, bad, "--engine", fake("--log", str(log))])
    assert status == 2 and "bad.tst: line 2" in err
    assert not log.exists()                   # the good suite before it did not run either
    with pytest.raises(SystemExit):
        rg.parse_args([str(bad), "--timeout", "0"])


def test_darkgos_own_suite_passes(capsys):
    # On a cold compile cache a first genmove gets a move without search: fill it first.
    subprocess.run([sys.executable, GTP_MAIN, "--warm-up"], check=True,
                   capture_output=True, timeout=1200)
    status, summary, _ = _run(capsys, [os.path.join(ROOT, "tests", "regress", "darkgo.tst"),
                                       "--", "--rollouts", "300", "--threads", "1"])
    assert status == 0
    assert summary["totals"] == {"pass": 20, "fail": 0, "expected fail": 3,
                                 "unexpected pass": 0, "ignored": 0, "unsupported": 0}
    assert summary["suites"][0]["refused_setup"] == []
