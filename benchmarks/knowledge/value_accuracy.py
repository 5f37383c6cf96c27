"""How well the value head predicts who won held-out games, beside a playout estimate of the
same positions; a table on stderr and one JSON line last on stdout.

    python -m benchmarks.knowledge.value_accuracy --data ../shared/data/tygem9d/tygem9d-2011.zip \
        --weights runs/value/cpu_value.pt --games 500 --positions-per-game 4 --playouts 64

Games are read in file order; games without a result won on the board (time or forfeit wins,
draws, no RE; see nets.data.winner_of) are skipped. From each of the first --games games with a
winner, --positions-per-game positions are taken at distinct move indices i drawn by a generator
seeded with --seed and the game's name (a game's picks do not depend on the games before it):
the position before move i, with the record's colour of move i to move (every position of a
game shorter than that). tygem9d-2011 is held out of all our training, so --split all (the
default) uses every game; --split val keeps only the crc32 validation games of another year.

The net's value v in [-1, 1] is for the side to move under the record's komi (--komi replaces
it); the baseline runs --playouts default-policy playouts from the position (engine.playout, the
policy the search uses) and takes v = 2p - 1 from black's win rate p, turned to the side to
move. For each estimate and each stage (moves played before the position: 0-49, 50-99,
100-149, 150-199, 200+) and overall: the accuracy of the predicted winner (the side to move
when v > 0, the other side when v < 0; v == 0 counts as half right) with its Wilson 95%
interval, and the mean squared error of v against the result (+1 when the side to move won,
-1 when it lost), between 0 and 4. A third estimate mixes the two as the search's
value_weight does: --mix x the net's value + (1 - --mix) x the playouts'.
"""
import argparse
import json
import random
import sys
import time
import zlib
from collections import namedtuple

import numpy as np
import torch

from benchmarks.knowledge.agreement import STAGES, stage_of
from benchmarks.strength.stats import wilson_interval
from engine import board as bd
from engine import playout as po
from nets import DEFAULT_WEIGHTS, NET_BACKENDS
from nets import data as nd
from nets import model as nm

SIZE = 19

# One position to judge: the game's name, the index of the move about to be played (the number
# of moves before the position), a board of its own with `color` to move, the komi, and the
# result for the side to move (+1 won, -1 lost).
Position = namedtuple("Position", ["game", "index", "board", "color", "komi", "outcome"])


def pick_indices(record, per_game, seed):
    """Return the sorted move indices of the positions to take from record: per_game distinct
    indices (all of them for a shorter game), depending only on seed and the game's name."""
    n = len(record.points)
    rng = random.Random(f"{seed}:{record.name}")
    return sorted(rng.sample(range(n), min(per_game, n)))


def select_positions(records, games, per_game, seed, counts, komi=None):
    """Yield the Positions of the first `games` records that have a winner; counts (a Counter)
    gets 'games' (games used) and 'no_winner' (games skipped). komi: overrides the records'."""
    for record in records:
        if counts["games"] >= games:
            return
        if record.winner == 0:
            counts["no_winner"] += 1
            continue
        counts["games"] += 1
        board = nd.new_game_board(record)
        cursor = 0
        for i in pick_indices(record, per_game, seed):
            illegal = nd._advance(board, record.points, record.colors, cursor, i)
            if illegal >= 0:
                raise ValueError(f"{record.name}: illegal move {illegal}")  # read_games checked
            cursor = i
            color = int(record.colors[i])
            b = bd.copy_board(board)
            b.info[bd.TO_PLAY] = color
            yield Position(record.name, i, b, color,
                           record.komi if komi is None else komi,
                           1.0 if record.winner == color else -1.0)


def batches(positions, size):
    """Yield lists of up to size positions."""
    batch = []
    for position in positions:
        batch.append(position)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def net_values(policy, batch):
    """Return float64 [B]: the net's value for the side to move of each position."""
    komi = np.array([p.komi for p in batch], np.float32)
    _, values = policy.evaluate([p.board for p in batch], [p.color for p in batch], komi=komi,
                                value=True)
    return values.astype(np.float64)


def playout_value(position, runs, policy, seed):
    """Return the playout estimate 2p - 1 for the side to move, p being black's win rate over
    runs default-policy playouts from the position (the generator seeded by seed, the game's
    name and the move index)."""
    b = position.board
    rng = po.new_rng(zlib.crc32(f"{seed}:{position.game}:{position.index}".encode()))
    owner = np.zeros(b.stones.shape[0], np.float64)
    black = po.playout_ownership(b, float(position.komi), runs, policy, rng, bd.copy_board(b),
                                 owner)
    value = 2.0 * black - 1.0
    return value if position.color == bd.BLACK else -value


def score(values, outcomes):
    """Return the metrics of values against outcomes (+1/-1 for the side to move): positions,
    accuracy (v == 0 counts half) with its Wilson 95% interval, and mean squared error; the
    accuracy and error are None without positions."""
    values = np.asarray(values, np.float64)
    outcomes = np.asarray(outcomes, np.float64)
    n = len(values)
    right = float(np.sum(values * outcomes > 0) + 0.5 * np.sum(values == 0))
    low, high = wilson_interval(right, n)
    return {"positions": n,
            "accuracy": round(right / n, 4) if n else None,
            "interval": [round(low, 4), round(high, 4)],
            "mse": round(float(np.mean((values - outcomes) ** 2)), 4) if n else None}


def summarize(rows, with_playouts, mix=0.5):
    """Return (overall, by_stage) for rows of (stage, outcome, net value, playout value or None):
    each a dict with positions and the metrics of 'net', 'playouts' and 'mix' (mix x the net's
    value + (1 - mix) x the playouts', as the search's value_weight mixes them; both None
    without playouts)."""
    def part(selected):
        outcomes = [r[1] for r in selected]
        return {"positions": len(selected),
                "net": score([r[2] for r in selected], outcomes),
                "playouts": score([r[3] for r in selected], outcomes) if with_playouts
                else None,
                "mix": score([mix * r[2] + (1.0 - mix) * r[3] for r in selected], outcomes)
                if with_playouts else None}

    by_stage = {label: part([r for r in rows if r[0] == label]) for label, _, _ in STAGES}
    return part(rows), by_stage


def format_table(summary):
    """Return a human-readable table of the net's, the playouts' and the mix's metrics by
    stage."""
    def cells(metrics):
        if metrics is None:
            return f"{'-':>7}  {'':14}  {'-':>7}"
        if metrics["accuracy"] is None:
            return f"{'n/a':>7}  {'':14}  {'n/a':>7}"
        low, high = metrics["interval"]
        return f"{metrics['accuracy']:7.3f}  [{low:.3f}, {high:.3f}]  {metrics['mse']:7.3f}"

    lines = [f"weights: {summary['weights']}; {summary['games']} games, "
             f"{summary['positions']} positions, {summary['playouts']} playouts (po) each",
             f"{'moves':>8}  {'positions':>9}  {'net acc':>7}  {'95% interval':14}  "
             f"{'net mse':>7}  {'po acc':>7}  {'95% interval':14}  {'po mse':>7}  "
             f"{'mix acc':>7}  {'95% interval':14}  {'mix mse':>7}"]
    for label, row in list(summary["by_stage"].items()) + [("all", summary["overall"])]:
        lines.append(f"{label:>8}  {row['positions']:>9}  {cells(row['net'])}  "
                     f"{cells(row['playouts'])}  {cells(row['mix'])}")
    return "\n".join(lines)


def add_position_arguments(p, games, per_game):
    """Add the arguments that pick the positions (select_positions) to parser p: --data,
    --games, --positions-per-game and --seed, with the given defaults."""
    p.add_argument("--data", nargs="+", required=True, help="SGF files, directories, archives")
    p.add_argument("--games", type=int, default=games,
                   help=f"games with a winner to use, in file order; default {games}")
    p.add_argument("--positions-per-game", type=int, default=per_game,
                   help=f"positions drawn from each game; default {per_game}")
    p.add_argument("--seed", type=int, default=0, help="seed of the picks and playouts")


def add_judge_arguments(p, playouts):
    """Add the arguments of the judges of a position to parser p: the value head's weights
    file, the playouts (default playouts), the mix of the two, komi, bf16 and torch threads."""
    p.add_argument("--weights", default=DEFAULT_WEIGHTS,
                   help="a net with a value head (default: the shipped search net)")
    p.add_argument("--playouts", type=int, default=playouts,
                   help=f"playouts per position judged, 0 for none; default {playouts}")
    p.add_argument("--mix", type=float, default=0.5,
                   help="the net's share in the mixed estimate, as value_weight; default 0.5")
    p.add_argument("--komi", type=float,
                   help="komi for the net and the playouts (default: each record's KM)")
    p.add_argument("--bf16", choices=["auto", "on", "off"], default="auto",
                   help="bf16 autocast for the net (auto: where the CPU has fast bf16)")
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    p.add_argument("--backend", choices=NET_BACKENDS, default="torch",
                   help="what runs the net (nets.model.resolve_backend); default torch")


def check_judge_arguments(p, args):
    """Refuse, through parser p, the judges' arguments (add_judge_arguments) out of range."""
    if args.playouts < 0:
        p.error("--playouts must not be negative")
    if not 0.0 <= args.mix <= 1.0:
        p.error("--mix must be between 0 and 1")


def load_value_policy(args):
    """Return the nets.model.Policy of args.weights on the CPU (add_judge_arguments' bf16,
    threads and backend); raise nets.model.WeightsError when it does not load or has no value
    head."""
    policy = nm.Policy(args.weights, device="cpu", threads=args.threads or None,
                       bf16=args.bf16, backend=args.backend)
    if not policy.has_value:
        raise nm.WeightsError(f"{args.weights} has no value head; train one with nets.train "
                              "--value (it can add one to an --init net) and pass it with "
                              "--weights")
    return policy


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m benchmarks.knowledge.value_accuracy",
                                description=__doc__.split("\n")[0])
    add_position_arguments(p, games=500, per_game=4)
    add_judge_arguments(p, playouts=64)
    p.add_argument("--split", choices=["all", "train", "val"], default="all",
                   help="only games of this hash split (default: every game)")
    p.add_argument("--batch", type=int, default=64, help="positions per net evaluation")
    args = p.parse_args(argv)
    for name in ("games", "positions_per_game", "batch"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    check_judge_arguments(p, args)
    return args


def main(argv=None):
    """Return the exit status after measuring and printing the table and the JSON line."""
    args = parse_args(argv)
    try:
        policy = load_value_policy(args)
    except nm.WeightsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    playout_policy = po.PolicyConfig().build()
    stats = nd.Stats()
    counts = nd.Stats()
    records = nd.read_games(args.data, split=args.split, size=SIZE, stats=stats)
    positions = select_positions(records, args.games, args.positions_per_game, args.seed,
                                 counts, args.komi)
    rows = []
    net_seconds = playout_seconds = 0.0
    start = time.time()
    with torch.inference_mode():
        for batch in batches(positions, args.batch):
            started = time.time()
            values = net_values(policy, batch)
            net_seconds += time.time() - started
            started = time.time()
            for position, value in zip(batch, values):
                baseline = playout_value(position, args.playouts, playout_policy, args.seed) \
                    if args.playouts else None
                rows.append((stage_of(position.index), position.outcome, float(value),
                             baseline))
            playout_seconds += time.time() - started
            net_right = np.mean([r[2] * r[1] > 0 for r in rows])
            print(f"\r{counts['games']} games {len(rows)} positions net accuracy "
                  f"{net_right:.3f}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    if not rows:
        print(f"error: no games with a winner in {args.data}", file=sys.stderr)
        return 1
    if counts["games"] < args.games:
        print(f"warning: only {counts['games']} games with a winner in the data",
              file=sys.stderr)
    overall, by_stage = summarize(rows, args.playouts > 0, args.mix)
    summary = {
        "weights": args.weights,
        "data": args.data,
        "split": args.split,
        "games": counts["games"],
        "positions": len(rows),
        "positions_per_game": args.positions_per_game,
        "seed": args.seed,
        "playouts": args.playouts,
        "mix": args.mix,
        "komi": args.komi,
        "bf16": policy.bf16,
        "overall": overall,
        "by_stage": by_stage,
        "skipped": {"no_winner": counts["no_winner"],
                    **{k: v for k, v in stats.items() if k != "games"}},
        "net_seconds": round(net_seconds, 2),
        "playout_seconds": round(playout_seconds, 2),
        "seconds": round(time.time() - start, 2),
    }
    print(format_table(summary), file=sys.stderr)
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
