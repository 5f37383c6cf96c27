"""Tests for the value-choice benchmark: ranks, each judge's point of view, and short runs of
main on a tiny archive with a tiny net."""

import json
import zipfile

import numpy as np
import pytest

from benchmarks import value_choice as vc
from engine import board as bd
from engine import playout as po
from engine.game import Game
from nets import model as nm
from sgf_moves import game_sgf, non_touching_moves


@pytest.fixture
def archive(tmp_path):
    path = tmp_path / "games.zip"
    with zipfile.ZipFile(path, "w") as z:
        for k, (result, count) in enumerate([("B+R", 40), ("W+3.5", 30), ("W+R", 24)]):
            z.writestr(f"g{k}.sgf", game_sgf(non_touching_moves(count, 7 * k), result))
    return path


def _net(tmp_path, **overrides):
    return nm.save_model(nm.PolicyNet(nm.make_config("tiny", **overrides)),
                         str(tmp_path / "tiny.pt"))


def _run(capsys, argv):
    status = vc.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_rank_counts_the_better_candidates_and_ties_as_half():
    assert vc.rank_of([0.2, 0.9, 0.5], 1) == 0.0
    assert vc.rank_of([0.2, 0.9, 0.5], 0) == 2.0
    assert vc.rank_of([0.5, 0.9, 0.5], 0) == 1.5


def test_a_judge_with_the_prior_weighs_its_rates_against_the_prior():
    priors, rates = [0.6, 0.3, 0.1], [0.40, 0.50, 0.45]
    # ln 0.6 - ln 0.3 = 0.69: a weight of 1 leaves the prior's order, 10 takes the rates'.
    assert np.argmax(vc.with_prior_scores(priors, rates, 1.0)) == 0
    assert np.argmax(vc.with_prior_scores(priors, rates, 10.0)) == 1
    assert vc.with_prior_judge("value", 2.0) == "prior+value 2"


class MarkedPointNet:
    """A stand-in for nets.model.Policy whose value says the side to move has lost wherever
    the other side holds `point`, and has won everywhere else."""

    def __init__(self, point):
        self.point = point

    def point_evaluate(self, boards, colors, komi):
        values = [-1.0 if b.stones[self.point] == 3 - c else 1.0 for b, c in zip(boards, colors)]
        return None, np.array(values, np.float32)


@pytest.mark.parametrize("color", [bd.BLACK, bd.WHITE])
def test_each_judge_rates_a_candidate_for_the_player_who_made_it(color):
    board = bd.new_board(9)
    board.info[bd.TO_PLAY] = color
    candidates = [Game(9).parse_vertex(v) for v in ("C3", "E5", "G7")]
    # The value: the move onto the marked point wins for its mover, the others lose.
    values, rates = vc.judge_candidates(MarkedPointNet(candidates[1]), po.PolicyConfig().build(),
                                        board, color, 100.0, candidates, 4, 0, "t")
    assert values.tolist() == [0.0, 1.0, 0.0]
    # The playouts: komi 100 loses every game for Black and wins every one for White.
    assert rates.tolist() == [0.0 if color == bd.BLACK else 1.0] * 3
    values, rates = vc.judge_candidates(MarkedPointNet(candidates[1]), None, board, color,
                                        100.0, candidates, 0, 0, "t")
    assert rates is None


def test_main_ranks_the_games_move_by_each_judge(archive, tmp_path, capsys):
    net = _net(tmp_path)
    # --top 400 takes every legal move, so the game's move is always a candidate.
    status, out, err = _run(capsys, ["--data", archive, "--weights", net, "--positions", 3,
                                     "--top", 400, "--playouts", 2, "--seed", 1])
    assert status == 0
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["positions"] == summary["judged"] == 3
    assert summary["top"] == 400 and summary["playouts"] == 2
    for judge in vc.JUDGES:
        metrics = summary["judges"][judge]
        assert 0 <= metrics["picks"] <= 3
        assert metrics["share"] == pytest.approx(metrics["picks"] / 3, abs=1e-4)
        assert 0.0 <= metrics["mean_rank"] <= 360
        low, high = metrics["interval"]
        assert 0.0 <= low <= metrics["share"] <= high <= 1.0
    assert summary["judges"]["chance"]["mean_rank"] == pytest.approx(399 / 2)
    assert summary["with_prior"] == [1.0, 2.0, 4.0]
    for judge in vc.WITH_PRIOR:
        for weight in summary["with_prior"]:
            assert 0 <= summary["judges"][vc.with_prior_judge(judge, weight)]["picks"] <= 3
    assert "value" in err and "chance" in err and "prior+playouts 4" in err
    # Without playouts only the prior and the value judge.
    status, out, _ = _run(capsys, ["--data", archive, "--weights", net, "--positions", 2,
                                   "--top", 400, "--playouts", 0, "--with-prior", 0.5])
    summary = json.loads(out.strip().splitlines()[-1])
    assert status == 0 and summary["judged"] == 2
    assert summary["judges"]["prior+value 0.5"]["picks"] <= 2
    assert summary["judges"]["prior+playouts 0.5"] is None
    assert summary["judges"]["playouts"] is None and summary["judges"]["mix"] is None
    assert summary["judges"]["value"]["picks"] <= 2


def test_main_refuses_a_net_without_a_value_head(archive, tmp_path, capsys):
    status, out, err = _run(capsys, ["--data", archive, "--weights", _net(tmp_path, value=False)])
    assert status == 2 and "no value head" in err and out == ""


def test_bad_flags_are_refused(archive):
    for flags in (["--top", "1"], ["--positions", "0"], ["--playouts", "-1"], ["--mix", "2"],
                  ["--with-prior", "0"], ["--with-prior", "1", "nan"]):
        with pytest.raises(SystemExit):
            vc.parse_args(["--data", str(archive)] + flags)
