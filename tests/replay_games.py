"""Fixed-seed games whose moves are pinned in tests/data/replay_c051a8c.json: the games, the
engine flags that play them today, and the recorder that wrote the file.

Each game is played by one engine with both colours, built through gtp_main's parser (so the
flags -> config path is exercised), with --threads 1 and a seed; with the network, under
--deterministic: without it leaves are expanded when the evaluation server's thread answers
while the search thread plays on, so the tree depends on thread timing (the network's numbers
do not: a batch of 1 and of 16 give identical priors), and with the network in float64. The
file was recorded at commit c051a8c, before issues 77 and 78 split the search and pruned its
flags; the games with the network were recorded again at 9e82cc3, whose search plays as
c051a8c's, in fp32. They replay in float64 (Policy.use_float64), move for move, on an AMD
EPYC too, where fp32 played 9x9_net differently from move 62: the network's rounding differs
between CPUs (bf16 with AMX or AVX512-BF16 or without it, fp32 with AVX-512 or AVX2), and
the differences flip near-ties; in float64 they stay below the outputs' float32 rounding.
test_replay.py replays every game and asserts the same moves, so a refactor that changes what
the defaults play shows up as a changed move (and a search that stops repeating itself, too).

    python tests/replay_games.py tests/data/replay_c051a8c.json    (record every game)
"""
import io
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import gtp_main  # noqa: E402

FIXTURE = os.path.join(ROOT, "tests", "data", "replay_c051a8c.json")

# Flags every game shares; the game's own follow them.
COMMON = ["--threads", "1", "--seed", "7", "--log-level", "error", "--set", "ownership_runs=100"]
# name -> (engine flags, at most this many moves). The 9x9 games run to two passes or a
# resignation; the 19x19 ones are openings. The games with the network keep
# prune_futile_escapes off, as it was at c051a8c: pruning below the root changes the tree.
GAMES = {
    "9x9_no_net": (["--boardsize", "9", "--komi", "7", "--rollouts", "300", "--net", "none"],
                   200),
    "9x9_net": (["--boardsize", "9", "--komi", "7", "--rollouts", "300", "--deterministic",
                 "--set", "prune_futile_escapes=false"], 200),
    "19x19_no_net_opening": (["--boardsize", "19", "--komi", "7.5", "--rollouts", "300",
                              "--net", "none"], 20),
    "19x19_net_opening": (["--boardsize", "19", "--komi", "7.5", "--rollouts", "200",
                           "--deterministic", "--set", "prune_futile_escapes=false"], 20),
}


def play(flags, max_moves):
    """Return the moves of a game the engine built from flags plays with both colours, Black
    first, until two passes in a row, a resignation or max_moves."""
    args = gtp_main.build_parser().parse_args(flags)
    # torch in float64: the module docstring says why.
    args.net_backend = "torch"
    evaluator = gtp_main.load_evaluator(args)
    if evaluator is not None:
        evaluator.use_float64()
    engine = gtp_main.build_engine(args, evaluator)
    moves, color = [], "b"
    try:
        while len(moves) < max_moves:
            out = io.StringIO()
            engine.handle_line(f"genmove {color}\n", out)
            answer = out.getvalue()
            if not answer.startswith("= "):
                raise RuntimeError(f"genmove {color} answered {answer!r}")
            moves.append(answer[2:].strip())
            if moves[-1] == "resign" or moves[-2:] == ["pass", "pass"]:
                break
            color = "w" if color == "b" else "b"
    finally:
        engine.close()
    return moves


def record(path):
    """Play every game and write its flags and moves (each space-separated), with the commit,
    to path as JSON."""
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True, check=True).stdout.strip()
    games = {}
    for name, (flags, max_moves) in GAMES.items():
        moves = play(COMMON + flags, max_moves)
        games[name] = {"flags": " ".join(COMMON + flags), "max_moves": max_moves,
                       "moves": " ".join(moves)}
        print(name, len(moves), "moves", file=sys.stderr)
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"commit": commit,
                   "command": f"python tests/replay_games.py {os.path.relpath(path, ROOT)}",
                   "games": games}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    record(sys.argv[1] if len(sys.argv) > 1 else FIXTURE)
