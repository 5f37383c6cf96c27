"""--threads 1 --seed N: the same flags and commands give the same moves, for a whole game that
the engine plays against itself on 9x9 (a small budget), without and with the network."""
import io
import os

import pytest

import gtp_main
from nets import DEFAULT_WEIGHTS

MAX_MOVES = 200


def self_play(*flags):
    """Return the moves of a game the engine plays with both colours until two passes in a
    row, a resignation or MAX_MOVES."""
    args = gtp_main.build_parser().parse_args(
        ["--threads", "1", "--seed", "7", "--boardsize", "9", "--komi", "7", "--rollouts", "300",
         "--set", "ownership_runs=100", "--log-level", "error", *flags])
    engine = gtp_main.build_engine(args, gtp_main.load_evaluator(args))
    moves, color = [], "b"
    try:
        while len(moves) < MAX_MOVES:
            out = io.StringIO()
            engine.handle_line(f"genmove {color}\n", out)
            assert out.getvalue().startswith("= "), out.getvalue()
            moves.append(out.getvalue()[2:].strip())
            if moves[-1] == "resign" or moves[-2:] == ["pass", "pass"]:
                break
            color = "w" if color == "b" else "b"
    finally:
        engine.close()
    return moves


def test_one_thread_and_a_seed_replay_a_whole_game_without_the_network():
    first = self_play("--net", "none")
    assert len(first) >= 20 and first[-1] in ("pass", "resign")
    assert self_play("--net", "none") == first


@pytest.mark.skipif(not os.path.exists(DEFAULT_WEIGHTS), reason="no default weights")
def test_one_thread_and_a_seed_replay_a_whole_game_with_the_network_when_deterministic():
    # Without --deterministic, leaves are expanded when the evaluation server thread answers
    # while the one search thread plays on, so the tree depends on thread timing (the net's
    # numbers do not: a batch of 1 and of 16 give identical priors).
    # 100 playouts a move (a later flag wins): each waits for its network evaluation.
    first = self_play("--deterministic", "--rollouts", "100")
    assert len(first) >= 20 and first[-1] in ("pass", "resign")
    assert self_play("--deterministic", "--rollouts", "100") == first
