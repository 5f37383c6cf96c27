"""Tests for benchmarks.choice_changes on a match folder written by hand."""

import json

import pytest
from sgfmill import sgf

from benchmarks import choice_changes as cc

LINE = "4000 playouts in 2.00s (2000/s, stopped by decided); win rate {root}; top: {top}; pv -"


def _game_sgf(black_lines):
    """Return an SGF whose black moves carry darkgo's search lines: (vertex or None for a
    pass, root, top); White answers on the K file."""
    game = sgf.Sgf_game(size=19)
    for k, (played, root, top) in enumerate(black_lines):
        for colour, vertex, comment in (("b", played, LINE.format(root=root, top=top)),
                                        ("w", f"K{k + 1}", None)):
            node = game.extend_main_sequence()
            node.set_move(colour, None if vertex is None else
                          (int(vertex[1:]) - 1, cc.COLUMNS.index(vertex[0])))
            if comment:
                node.set("C", comment)
    return game.serialise()


def _record(index, black_engine, winner_engine):
    return {"index": index, "black_engine": black_engine, "winner_engine": winner_engine,
            "result": "W+R", "scored": True, "sgf": f"game-{index:03d}.sgf"}


def _records(tmp_path, black_lines, winner_engine="B", black_engine="A"):
    (tmp_path / "game-000.sgf").write_bytes(_game_sgf(black_lines))
    record = _record(0, black_engine, winner_engine)
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


def test_repeats_look_two_searched_moves_back_and_passes_are_apart(tmp_path, capsys):
    records = _records(tmp_path, [
        ("Q16", 0.5, "C3 200 0.600, Q16 80 0.560"),
        ("D4", 0.5, "D4 200 0.500"),
        ("Q4", 0.5, "C3 200 0.600, Q4 80 0.560"),       # C3 two moves back: a repeat
        ("D16", 0.5, "D16 200 0.500"),
        ("O3", 0.5, "D16 100 0.500, O3 50 0.400"),
        ("R10", 0.5, "R10 300 0.500"),
        ("C10", 0.5, "C3 200 0.600, C10 80 0.560"),     # C3 last passed four moves back
        (None, 0.9, "T19 300 0.950"),                    # a settled pass, not a change
    ], winner_engine="A")
    status, out, err = _run(capsys, ["--records", records, "--engine", "A"])
    assert status == 0 and "changes: 1:C3>Q16 5:C3>Q4* 9:D16>O3 13:C3>C10\n" in err
    won = json.loads(out.splitlines()[-1])["won"]
    assert (won["games"], won["changes"], won["repeats"], won["settled_passes"]) == (1, 4, 1, 1)
    assert won["mean_gap"] == pytest.approx((0.04 * 3 + 0.1) / 4)


def test_draws_count_in_all_only_and_the_last_record_of_a_game_wins(tmp_path, capsys):
    (tmp_path / "game-000.sgf").write_bytes(_game_sgf([("D4", 0.5, "C3 9 0.6, D4 5 0.5")]))
    (tmp_path / "game-001.sgf").write_bytes(_game_sgf([("D4", 0.5, "D4 9 0.5")]))
    lines = [json.dumps(_record(0, "A", "A")), json.dumps(_record(0, "A", None)),
             json.dumps(_record(1, "A", "B")), '{"index": 2, "black_en']
    (tmp_path / "results.jsonl").write_text("\n".join(lines) + "\n")
    status, out, err = _run(capsys, ["--records", tmp_path, "--engine", "A"])
    summary = json.loads(out.splitlines()[-1])
    assert status == 0 and "draw" in err
    assert (summary["all"]["games"], summary["won"]["games"], summary["lost"]["games"]) == (2, 0, 1)
    assert (summary["all"]["changes"], summary["lost"]["changes"]) == (1, 0)
