"""benchmarks.speed.loader_speed: both data paths timed on a small archive, one JSON line."""
import json

from benchmarks.speed import loader_speed
from random_games import write_archive


def test_both_paths_are_timed_and_the_figures_come_as_one_json_line(tmp_path, capsys):
    archive = write_archive(tmp_path / "a.zip", 4)
    loader_speed.main(["--data", archive, "--batch", "8", "--pool", "2", "--warmup", "1",
                       "--batches", "2", "--repeats", "2", "--workers", "1", "--seconds",
                       "0.2", "--sample-rate", "0.5"])
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    cpu = result["samples_per_cpu_second"]
    assert set(cpu) == {"sample_batches", "pack_batches"}
    assert all(len(rates) == 2 and min(rates) > 0 for rates in cpu.values())
    assert set(result["samples_per_wall_second"]) == {"sample_batches", "pack_batches"}
    assert result["speedup_cpu"] > 0 and result["pack_ownership_runs"] == 0
    assert result["pack_build_seconds"] >= 0
