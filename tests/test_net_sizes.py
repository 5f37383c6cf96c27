"""benchmarks.speed.net_sizes without timing: its arguments, names, rows, choice and table."""
import pytest

from benchmarks.speed import net_sizes
from nets import DEFAULT_WEIGHTS
from nets import model as nm


def _grown_file(tmp_path, name, depth, width):
    """Return the path of an untrained tiny-config weights file of this depth and width."""
    path = str(tmp_path / name)
    config = nm.make_config("tiny", depth=depth, width=width, first_width=width)
    nm.save_model(nm.PolicyNet(config), path)
    return path


def test_sizes_are_named_by_convolutions_through_the_move_head():
    assert net_sizes.size_name(nm.make_config("darkforest")) == "12x384"
    assert net_sizes.size_name(nm.make_config("cpu")) == "8x64"
    assert net_sizes.parameters(nm.make_config("tiny")) == \
        sum(p.numel() for p in nm.PolicyNet(nm.make_config("tiny")).parameters())


def test_engine_commands_run_every_playout_and_cap_the_clocked_moves():
    command = net_sizes.engine_command("darkgo", "runs/sizes/a b.pt", 5000)
    assert command == ("darkgo --weights 'runs/sizes/a b.pt' --rollouts 5000 --seed 1 "
                       "--resign-threshold 0 --set early_stop=false")
    assert f"--rollouts {net_sizes.CLOCK_ROLLOUTS} " in \
        net_sizes.engine_command("darkgo", "w.pt", 5000, clock=True)


def test_bad_arguments_are_refused(tmp_path, capsys):
    for argv, message in [
            (["--weights", str(tmp_path / "missing.pt")], "no such weights file"),
            (["--weights", DEFAULT_WEIGHTS, DEFAULT_WEIGHTS], "named twice"),
            (["--weights", DEFAULT_WEIGHTS, "--rounds", "0"], "at least 1"),
            (["--weights", DEFAULT_WEIGHTS, "--eval-threads", "2", "0"], "at least 1"),
            (["--weights", DEFAULT_WEIGHTS, "--move-seconds", "0"], "positive"),
            (["--weights", DEFAULT_WEIGHTS, "--positions", "corner"], "invalid choice")]:
        with pytest.raises(SystemExit) as stop:
            net_sizes.parse_args(argv)
        assert stop.value.code == 2 and message in capsys.readouterr().err
    args = net_sizes.parse_args(["--weights", DEFAULT_WEIGHTS])
    assert args.configs[0]["width"] == 64 and args.rounds == 2 and args.rollouts == 5000
    assert args.positions == ["empty", "middle"] and args.eval_threads == [2]


def _move(playouts, wall, cpu, evaluations):
    """Return genmove_speed's record of one timed move."""
    return {"playouts": playouts, "wall": wall, "cpu": cpu, "evaluations": evaluations}


def test_rows_sum_the_rounds_and_give_ratios_to_the_first_file(tmp_path):
    small = _grown_file(tmp_path, "small.pt", 1, 8)
    large = _grown_file(tmp_path, "large.pt", 3, 16)
    args = net_sizes.parse_args(["--weights", small, large, "--eval-threads", "1", "2"])
    evaluations = {(small, 1): [(10, 1.0, 1.0), (30, 1.0, 1.0)], (small, 2): [(8, 1.0, 2.0)],
                   (large, 1): [(5, 1.0, 1.0)], (large, 2): [(4, 2.0, 4.0)]}
    searches = {small: {"empty": [_move(5000, 2.0, 1.5, 400)],
                        "middle": [_move(5000, 4.0, 2.5, 600)]},
                large: {"empty": [_move(5000, 4.0, 2.0, 200)],
                        "middle": [_move(5000, 5.0, 4.0, 300)]}}
    clocked = {small: {"empty": [_move(9000, 9.0, 12.0, 900)],
                       "middle": [_move(7000, 9.0, 12.0, 700)]},
               large: {"empty": [_move(8000, 9.0, 12.0, 500)],
                       "middle": [_move(net_sizes.CLOCK_ROLLOUTS, 9.0, 12.0, 400)]}}
    table = net_sizes.rows(args, evaluations, searches, clocked)
    first, second = table
    assert first["size"] == "3x8" and second["size"] == "5x16"
    assert first["evaluations"]["1"] == {"positions_per_s": 320.0, "cpu_ms_per_position": 3.125}
    assert second["evaluations"]["2"]["positions_per_s"] == 32.0
    assert first["rollouts"]["wall_seconds_per_move"] == 3.0
    assert first["rollouts"]["network_evaluations_per_move"] == 500
    assert first["rollouts_by_position"]["middle"]["wall_seconds_per_move"] == 4.0
    assert (first["wall_ratio"], first["cpu_ratio"]) == (1.0, 1.0)
    assert (second["wall_ratio"], second["cpu_ratio"]) == (1.5, 1.5)
    assert second["evaluations_ratio"] == 0.5
    assert first["clock"]["playouts_per_move"] == 8000 and not first["clock_capped"]
    assert second["clock_capped"]
    assert net_sizes.chosen(table, 1.5) == large
    assert net_sizes.chosen(table, 1.4) == small
    text = net_sizes.markdown(table, [1, 2], 5000, 10.0)
    lines = text.splitlines()
    assert len(lines) == 4 and lines[0].count("|") == lines[2].count("|") == 10
    assert "evaluations/s, 1 thread |" in lines[0] and "2 threads" in lines[0]
    assert lines[3].startswith("| 5x16 (`large.pt`) |") and "4.50 (1.50x)" in lines[3] and "250 (0.50x)" in lines[3]


def test_the_baseline_is_chosen_when_every_other_file_is_too_slow():
    table = [{"weights": "a", "parameters": 10, "wall_ratio": 1.0},
             {"weights": "b", "parameters": 20, "wall_ratio": 2.0}]
    assert net_sizes.chosen(table, 1.5) == "a"
