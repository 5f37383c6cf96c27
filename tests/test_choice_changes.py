"""Tests for benchmarks.choice_changes on a match folder written by hand."""

import json

import pytest
from sgfmill import sgf

from benchmarks import choice_changes as cc

LINE = "4000 playouts in 2.00s (2000/s, stopped by decided); win rate {root}; top: {top}; pv -"


def _game_sgf(black_lines):
    """Return an SGF whose black moves carry darkgo's search lines: (vertex, root, top)."""
    game = sgf.Sgf_game(size=19)
    white = iter(["K10", "K12", "K14", "K16"])
    for played, root, top in black_lines:
        for colour, vertex, comment in (("b", played, LINE.format(root=root, top=top)),
                                        ("w", next(white), None)):
            node = game.extend_main_sequence()
            col = cc.COLUMNS.index(vertex[0])
            node.set_move(colour, (int(vertex[1:]) - 1, col))
            if comment:
                node.set("C", comment)
    return game.serialise()


def _records(tmp_path, black_lines, winner_engine="B", black_engine="A"):
    (tmp_path / "game-000.sgf").write_bytes(_game_sgf(black_lines))
    record = {"index": 0, "black_engine": black_engine, "winner_engine": winner_engine,
              "result": "W+R", "scored": True, "sgf": "game-000.sgf"}
    (tmp_path / "results.jsonl").write_text(json.dumps(record) + "\n")
    return tmp_path


def _run(capsys, argv):
    status = cc.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_changes_gaps_repeats_and_drifts(tmp_path, capsys):
    records = _records(tmp_path, [
        ("D4", 0.50, "D4 100 0.500 p0.300"),
        ("Q16", 0.55, "C3 200 0.600 p0.005, Q16 80 0.560 p0.400"),
        ("Q4", 0.52, "C3 150 0.580 p0.004, Q4 60 0.540 p0.300"),
        ("C3", 0.45, "C3 300 0.450 p0.004"),
    ])
    status, out, err = _run(capsys, ["--records", records, "--engine", "A",
                                     "--horizon", "1"])
    assert status == 0
    assert "3:C3>Q16 5:C3>Q4*" in err
    summary = json.loads(out.splitlines()[-1])
    lost = summary["lost"]
    assert summary["won"]["games"] == 0 and lost["games"] == 1
    assert lost["changes"] == 2 and lost["repeats"] == 1
    assert lost["mean_gap"] == pytest.approx(0.04)
    assert lost["median_passed_prior"] == pytest.approx(0.0045)
    # Drifts one own move on: +0.05 after D4, -0.03 and -0.07 after the two changes.
    assert lost["drift_after_changes"] == pytest.approx(-0.05)
    assert lost["drift_after_others"] == pytest.approx(0.05)


def test_the_other_engine_and_lines_without_priors(tmp_path, capsys):
    records = _records(tmp_path, [
        ("D4", 0.50, "C3 100 0.520, D4 90 0.500"),
        ("Q16", 0.55, "Q16 200 0.560"),
    ], winner_engine="A", black_engine="B")
    status, out, _ = _run(capsys, ["--records", records, "--engine", "B"])
    summary = json.loads(out.splitlines()[-1])
    assert status == 0
    assert summary["lost"]["changes"] == 1
    assert summary["lost"]["median_passed_prior"] is None
    # Engine A played white, whose moves carry no search line.
    status, out, _ = _run(capsys, ["--records", records, "--engine", "A"])
    assert json.loads(out.splitlines()[-1])["won"]["changes"] == 0


def test_an_unreadable_folder_is_an_error(tmp_path, capsys):
    status, out, err = _run(capsys, ["--records", tmp_path / "none", "--engine", "A"])
    assert status == 2 and out == "" and "cannot read" in err
    (tmp_path / "results.jsonl").write_text('{"index": 0, "scored": true, "sgf": "x.sgf"}\n')
    status, out, err = _run(capsys, ["--records", tmp_path, "--engine", "A"])
    assert status == 2 and out == "" and "cannot be read" in err
