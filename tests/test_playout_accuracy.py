"""Tests for the playout-accuracy benchmark: the policy overrides, the verdicts' signs and
counts, and short runs of main on a tiny archive, with a scripted engine as Pachi."""
import json
import zipfile

import pytest

from benchmarks.knowledge import playout_accuracy as pa
from benchmarks.knowledge import value_accuracy as va
from engine import board as bd
from engine import playout as po
from nets import data as nd
from sgf_moves import game_sgf, non_touching_moves


@pytest.fixture
def archive(tmp_path):
    path = tmp_path / "games.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("g0.sgf", game_sgf(non_touching_moves(30, 0), "B+R"))
        z.writestr("g1.sgf", game_sgf(non_touching_moves(30, 7), "W+2.5"))
        z.writestr("h2.sgf", game_sgf(non_touching_moves(20, 14), "B+R", setup="AB[dd][pp]"))
        z.writestr("g3.sgf", game_sgf(non_touching_moves(24, 21), "W+T"))
    return path


def test_rate_overrides_name_policy_settings():
    config = pa.parse_rates(["atari2=1", "selfatari_max=3"])
    assert config.atari2 == 1.0 and config.selfatari_max == 3
    assert config.capture == po.PolicyConfig().capture
    for bad in ("atari2", "bogus=1", "atari2=x"):
        with pytest.raises(ValueError):
            pa.parse_rates([bad])


def test_a_verdict_is_right_when_its_sign_names_the_winner():
    assert pa.right(3.5, black_won=True) == 1.0
    assert pa.right(-0.5, black_won=True) == 0.0
    assert pa.right(-2.0, black_won=False) == 1.0
    assert pa.right(0.0, black_won=False) == 0.5
    rows = [{"mean_score": 1.0, "pachi": 1.0}, {"mean_score": 1.0, "pachi": 0.0},
            {"mean_score": 0.0, "pachi": 1.0}, {"mean_score": 0.5, "pachi": 0.0}]
    assert pa.paired(rows, "mean_score", "pachi") == {"both": 1, "only_ours": 1,
                                                      "only_pachi": 1, "neither": 1}


def test_playout_verdicts_are_for_black(archive):
    policy = po.PolicyConfig().build()
    position = next(va.select_positions(nd.read_games([str(archive)]), 1, 1, 0, nd.Stats()))
    # Beyond the board's 361 points, a komi decides every playout.
    for komi, sign in ((400.0, -1.0), (-400.0, 1.0)):
        for color in (bd.BLACK, bd.WHITE):
            moved = position._replace(komi=komi, color=color)
            win_rate, mean_score = pa.playout_verdicts(moved, 20, policy, 0)
            assert win_rate == sign
            assert mean_score * sign > 39


def test_main_scores_our_playouts_and_the_engine_on_the_same_positions(archive, tmp_path,
                                                                       fake, capsys):
    rows_path = tmp_path / "rows.jsonl"
    status = pa.main(["--data", str(archive), "--games", "5", "--positions-per-game", "2",
                      "--playouts", "16", "--pachi", fake("--score", "B+2.5"),
                      "--rows", str(rows_path)])
    out, err = capsys.readouterr()
    assert status == 0
    summary = json.loads(out.strip().splitlines()[-1])
    # h2.sgf has setup stones and g3.sgf no result on the board: two games of four are used.
    assert summary["games"] == 2 and summary["positions"] == 4
    assert summary["skipped"] == {"no_winner": 1, "setup": 1}
    rows = [json.loads(line) for line in rows_path.read_text().splitlines()]
    assert {r["game"] for r in rows} == {"g0.sgf", "g1.sgf"}
    # The scripted engine always says black is 2.5 ahead: right exactly where black won.
    for r in rows:
        assert r["pachi_black_mean_score"] == 2.5
        assert r["pachi"] == (1.0 if r["black_won"] else 0.0)
    assert summary["overall"]["pachi"]["accuracy"] == 0.5
    pairs = summary["paired_mean_scores"]
    assert sum(pairs.values()) == 4
    header = next(line for line in err.splitlines() if line.split()[:1] == ["moves"])
    assert header.split()[2:] == ["win_rate", "mean_score", "pachi"]


def test_main_reports_an_engine_without_a_score_estimate(archive, fake, capsys):
    status = pa.main(["--data", str(archive), "--games", "1", "--playouts", "4",
                      "--pachi", fake("--score", "nonsense")])
    assert status == 1
    assert "gogui-score_est gave no playout score" in capsys.readouterr().err
