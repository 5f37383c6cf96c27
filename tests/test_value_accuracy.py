"""Tests for the value-accuracy benchmark: position picks, the playout baseline's sign, the
metrics, and short runs of main on a tiny archive with a tiny net."""

import json
import zipfile

import numpy as np
import pytest

from benchmarks.knowledge import value_accuracy as va
from engine import board as bd
from engine import playout as po
from nets import data as nd
from nets import model as nm
from sgf_moves import game_sgf, non_touching_moves


# (file name, result, moves); g2 was won on time, which says nothing of the board; v60.sgf is
# the only one in the crc32 validation split.
GAMES = [("g0.sgf", "B+R", 40), ("v60.sgf", "W+3.5", 30), ("g2.sgf", "B+T", 36),
         ("g3.sgf", "W+R", 24)]


@pytest.fixture
def archive(tmp_path):
    path = tmp_path / "games.zip"
    with zipfile.ZipFile(path, "w") as z:
        for k, (name, result, count) in enumerate(GAMES):
            z.writestr(name, game_sgf(non_touching_moves(count, 7 * k), result))
    return path


@pytest.fixture
def value_net(tmp_path):
    config = nm.make_config("tiny")
    assert config["value"]
    return nm.save_model(nm.PolicyNet(config), str(tmp_path / "tiny.pt"))


def _run(capsys, argv):
    status = va.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_positions_are_the_boards_before_the_picked_moves(archive):
    counts = nd.Stats()
    positions = list(va.select_positions(nd.read_games([str(archive)]), games=10, per_game=5,
                                         seed=3, counts=counts))
    assert counts["games"] == 3 and counts["no_winner"] == 1
    assert {p.game for p in positions} == {"g0.sgf", "v60.sgf", "g3.sgf"}
    assert len(positions) == 15
    records = {r.name: r for r in nd.read_games([str(archive)])}
    for p in positions:
        record = records[p.game]
        # Nothing is ever captured in these games: the board holds exactly the moves before i.
        assert np.sum(p.board.stones == bd.BLACK) + np.sum(p.board.stones == bd.WHITE) == p.index
        assert p.board.stones[record.points[p.index]] == bd.EMPTY
        for j in range(p.index):
            assert p.board.stones[record.points[j]] == record.colors[j]
        assert p.color == record.colors[p.index] == p.board.info[bd.TO_PLAY]
        assert p.komi == 6.5
        winner = bd.BLACK if p.game == "g0.sgf" else bd.WHITE
        assert p.outcome == (1.0 if p.color == winner else -1.0)
    # The picks depend only on the seed and the game, not on the games read before it.
    alone = va.pick_indices(records["g3.sgf"], 5, 3)
    assert [p.index for p in positions if p.game == "g3.sgf"] == alone
    assert len(set(alone)) == 5
    assert va.pick_indices(records["g3.sgf"], 5, 4) != alone  # another seed, other picks


def test_playout_value_is_for_the_side_to_move():
    policy = po.PolicyConfig().build()
    for komi, black_value in ((100.0, -1.0), (-100.0, 1.0)):
        for color in (bd.BLACK, bd.WHITE):
            b = bd.new_board(9)
            b.info[bd.TO_PLAY] = color
            position = va.Position("empty", 0, b, color, komi, 1.0)
            expected = black_value if color == bd.BLACK else -black_value
            assert va.playout_value(position, 4, policy, 0) == expected


def test_score_counts_ties_as_half():
    metrics = va.score([0.5, -0.2, 0.0, -0.9], [1, 1, -1, -1])
    assert metrics["positions"] == 4
    assert metrics["accuracy"] == pytest.approx(2.5 / 4)
    assert metrics["mse"] == pytest.approx((0.25 + 1.44 + 1.0 + 0.01) / 4, abs=1e-4)
    low, high = metrics["interval"]
    assert low < 2.5 / 4 < high
    assert va.score([], [])["accuracy"] is None


def test_main_reports_net_and_playouts_by_stage(archive, value_net, capsys):
    status, out, err = _run(capsys, ["--data", archive, "--weights", value_net, "--games", 10,
                                     "--positions-per-game", 4, "--playouts", 4, "--seed", 1])
    assert status == 0
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["games"] == 3                      # the B+T game is skipped
    assert summary["skipped"]["no_winner"] == 1
    assert summary["positions"] == 3 * 4
    assert summary["playouts"] == 4 and summary["seed"] == 1
    assert set(summary["by_stage"]) == {"0-49", "50-99", "100-149", "150-199", "200+"}
    # Every game is shorter than 50 moves.
    assert summary["by_stage"]["0-49"]["positions"] == 12
    assert summary["by_stage"]["50-99"]["net"]["accuracy"] is None
    overall = summary["overall"]
    assert overall["positions"] == 12
    for who in ("net", "playouts"):
        metrics = overall[who]
        assert metrics["positions"] == 12
        assert 0.0 <= metrics["accuracy"] <= 1.0
        assert 0.0 <= metrics["mse"] <= 4.0
        low, high = metrics["interval"]
        assert 0.0 <= low <= metrics["accuracy"] <= high <= 1.0
        assert summary["by_stage"]["0-49"][who] == metrics
    assert "net acc" in err and "all" in err
    # The net's metrics are those of its own values on the same positions.
    policy = nm.Policy(value_net, device="cpu", bf16="auto")
    counts = nd.Stats()
    positions = list(va.select_positions(nd.read_games([str(archive)]), 10, 4, 1, counts))
    values = va.net_values(policy, positions)
    assert np.all(np.abs(values) <= 1.0)
    assert overall["net"] == va.score(values, [p.outcome for p in positions])


def test_the_mix_runs_from_the_playouts_to_the_net(archive, value_net, capsys):
    summaries = []
    for mix in (0.0, 1.0, 0.5):
        status, out, err = _run(capsys, ["--data", archive, "--weights", value_net, "--games", 3,
                                         "--positions-per-game", 3, "--playouts", 4,
                                         "--mix", mix])
        assert status == 0
        summaries.append(json.loads(out.strip().splitlines()[-1]))
        assert "mix acc" in err
    playouts_only, net_only, half = summaries
    assert playouts_only["overall"]["mix"] == playouts_only["overall"]["playouts"]
    assert net_only["overall"]["mix"] == net_only["overall"]["net"]
    assert half["mix"] == 0.5 and 0.0 <= half["overall"]["mix"]["mse"] <= 4.0
    with pytest.raises(SystemExit):
        va.main(["--data", str(archive), "--weights", value_net, "--mix", "2"])
    assert "--mix must be between 0 and 1" in capsys.readouterr().err


def test_main_games_limit_split_and_no_playouts(archive, value_net, capsys):
    status, out, _ = _run(capsys, ["--data", archive, "--weights", value_net, "--games", 1,
                                   "--positions-per-game", 3, "--playouts", 0])
    assert status == 0
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["games"] == 1 and summary["positions"] == 3
    assert summary["overall"]["playouts"] is None and summary["overall"]["mix"] is None
    assert [nd.split_of(name) for name, _, _ in GAMES] == ["train", "val", "train", "train"]
    status, out, _ = _run(capsys, ["--data", archive, "--weights", value_net, "--split", "val",
                                   "--positions-per-game", 5, "--playouts", 0])
    assert status == 0
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["split"] == "val" and summary["games"] == 1 and summary["positions"] == 5


def test_main_refuses_a_net_without_a_value_head(archive, tmp_path, capsys):
    weights = nm.save_model(nm.PolicyNet(nm.make_config("tiny", value=False)),
                            str(tmp_path / "novalue.pt"))
    status, out, err = _run(capsys, ["--data", archive, "--weights", weights, "--playouts", 0])
    assert status == 2
    assert "no value head" in err
    assert out == ""
    status, _, err = _run(capsys, ["--data", archive, "--weights", tmp_path / "missing.pt"])
    assert status == 2 and "no such weights file" in err
