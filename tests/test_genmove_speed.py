"""benchmarks.genmove_speed's peer timing: another engine's CPU time read from /proc."""
import os
import shlex
import sys

from benchmarks import genmove_speed

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
    assert genmove_speed.summary(records["empty"])["playouts_per_move"] == 777
