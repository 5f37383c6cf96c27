"""benchmarks.speed.genmove_speed's peer timing: another engine's CPU time read from /proc."""
import os
import shlex
import sys

from benchmarks.speed import genmove_speed

FAKE = os.path.join(os.path.dirname(__file__), "fake_gtp.py")


def test_process_cpu_seconds_counts_this_process_work():
    before = genmove_speed.process_cpu_seconds(os.getpid())
    total = 0
    while genmove_speed.process_cpu_seconds(os.getpid()) - before < 0.05:
        total += sum(range(10_000))
    assert total > 0


def test_a_peer_is_timed_on_every_position_with_its_fixed_playouts():
    command = f"{shlex.quote(sys.executable)} {shlex.quote(FAKE)} --moves D4,Q16,C3,R5"
    records = genmove_speed.measure_peer(command, 19, ["empty", "middle"], 2, 777)
    assert set(records) == {"empty", "middle"}
    for moves in records.values():
        assert len(moves) == 2
        assert all(r["playouts"] == 777 and r["cpu"] >= 0 and r["wall"] > 0 for r in moves)
    empty = genmove_speed.summary(records["empty"])
    assert empty["playouts_per_move"] == 777 and empty["network_evaluations_per_move"] is None


def test_the_search_line_gives_playouts_and_network_evaluations():
    line = ("2026-11-28 14:08:08,854 gtp INFO 4671 playouts in 6.28s (743/s, stopped by "
            "decided); win rate 0.484; top: D16 1237 0.504; pv D16 D4; tree 1773 of 400000 "
            "nodes, 19614 of 8000000 edges; {} network evaluations")
    older = "2026-11-28 14:00:00,000 gtp INFO 5000 playouts in 2.00s (2500/s); win rate 0.5"
    text = "\n".join([line.format(12), "gtp DEBUG other", line.format(544), ""])
    assert genmove_speed.last_search(text) == (4671, 544)
    assert genmove_speed.last_search(older + "\n") == (5000, None)
    assert genmove_speed.last_search("warm-up\n") is None
    records = [{"playouts": 5000, "evaluations": n, "wall": 2.0, "cpu": 2.0} for n in (500, 600)]
    assert genmove_speed.summary(records)["network_evaluations_per_move"] == 550
