"""What a network's size costs the engine on this machine, for several weights files:

    python -m benchmarks.speed.net_sizes --weights weights/cpu_value.pt runs/sizes/10x96.pt \\
        runs/sizes/12x128.pt runs/sizes/12x192.pt --rounds 2

For each file: (a) CPU evaluations per second as the search asks for them
(nets.model.Policy with bf16 'auto', --batch 16, the value head read, --eval-threads torch
threads: benchmarks.speed.nn_speed's timing); (b) the engine's wall and CPU seconds a move at
--rollouts (5000, the default --threads, every playout run: early_stop=false), on
benchmarks.speed.genmove_speed's positions; (c) the playouts it reaches in a move at
--move-seconds (10) a move: GTP `time_settings 0 10 1`, a canadian period of one stone, the
matches' "10 s a move" (less --lag-buffer's 1 s and 0.1 s of overhead: 8.9 s of search),
--rollouts 100000 as the cap. The engines are genmove_speed's (`python gtp_main.py --weights W
--seed 1 --resign-threshold 0 --set early_stop=false ...`), and report the network
evaluations of each move: a network too slow for the search leaves more leaves unevaluated
rather than slowing the move.

Every round measures each file in turn, all three ways, so that a change in the machine's
load spreads over all of them. The first file is the baseline: each row gets its times' and
network evaluations' ratios to it, and `chosen` names the largest network (by parameters)
whose wall seconds a move at --rollouts stay within --limit (1.5) times the baseline's. A
network's name NxW counts its convolutions as darkforest's "12x384" does: the first 5x5,
the config's depth 3x3 ones, the 3x3 move head (depth + 2), W filters each.

The table goes to stderr as Markdown; the last stdout line is one JSON object.
"""
import argparse
import json
import os
import shlex
import sys
import time

import torch

from benchmarks.gtp_client import darkgo_command
from benchmarks.speed import genmove_speed, nn_speed
from nets import model as nm

CLOCK_ROLLOUTS = 100_000


def size_name(config):
    """Return a network's NxW name: its convolutions through the move head, by width."""
    return f"{config['depth'] + 2}x{config['width']}"


def parameters(config):
    """Return the number of parameters of a network of this config."""
    return sum(p.numel() for p in nm.PolicyNet(config).parameters())


def engine_command(program, weights, rollouts, clock=False):
    """Return the engine's command line for a weights file: at --rollouts, or with clock=True
    at the CLOCK_ROLLOUTS cap for moves the clock ends."""
    cap = CLOCK_ROLLOUTS if clock else rollouts
    return (f"{program} --weights {shlex.quote(weights)} --rollouts {cap} --seed 1 "
            "--resign-threshold 0 --set early_stop=false")


def parse_args(argv=None):
    """Return the parsed command line, each --weights file's config read into
    args.configs; exit 2 on a bad one."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.speed.net_sizes",
                                description=__doc__.splitlines()[0])
    p.add_argument("--weights", nargs="+", required=True,
                   help="weights files to compare; the first is the baseline")
    p.add_argument("--rounds", type=int, default=2, help="times every file is measured, in turn")
    p.add_argument("--rollouts", type=int, default=5000)
    p.add_argument("--move-seconds", type=float, default=10.0,
                   help="seconds a move under the clock (time_settings 0 S 1)")
    p.add_argument("--positions", nargs="+", choices=genmove_speed.POSITIONS,
                   default=list(genmove_speed.POSITIONS))
    p.add_argument("--moves", type=int, default=2,
                   help="timed genmoves at --rollouts per file, position and round")
    p.add_argument("--clock-moves", type=int, default=1,
                   help="timed genmoves under the clock per file, position and round")
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--eval-threads", nargs="+", type=int, default=[2],
                   help="torch threads for the evaluations per second; one figure each")
    p.add_argument("--eval-seconds", type=float, default=10.0)
    p.add_argument("--limit", type=float, default=1.5,
                   help="the largest move time, as a multiple of the baseline's, to choose by")
    p.add_argument("--engine", default=None,
                   help="engine program; default: this repo's gtp_main.py under this Python")
    args = p.parse_args(argv)
    if min(args.rounds, args.rollouts, args.moves, args.clock_moves, args.batch,
           *args.eval_threads) < 1:
        p.error("--rounds, --rollouts, --moves, --clock-moves, --batch and --eval-threads must "
                "be at least 1")
    if args.move_seconds <= 0 or args.eval_seconds <= 0 or args.limit <= 0:
        p.error("--move-seconds, --eval-seconds and --limit must be positive")
    if len(set(args.weights)) < len(args.weights):
        p.error("--weights: a file is named twice")
    args.configs = []
    for path in args.weights:
        try:
            args.configs.append(nm.read_weights(path)["config"])
        except nm.WeightsError as e:
            p.error(f"--weights: {e}")
    return args


def _merged(records):
    """Return one summary over every position's records, and the per-position summaries."""
    every = [r for moves in records.values() for r in moves]
    return genmove_speed.summary(every), {p: genmove_speed.summary(m) for p, m in records.items()}


def rows(args, evaluations, searches, clocked):
    """Return one row per weights file from the rounds' records: evaluations {(path,
    threads): [(batches, wall, cpu)]}, searches and clocked {path: {position: [move
    records]}} (genmove_speed's records at --rollouts and under the clock). The first file is
    the baseline of the ratios."""
    out = []
    for path, config in zip(args.weights, args.configs):
        row = {"weights": path, "size": size_name(config), "depth": config["depth"],
               "width": config["width"], "parameters": parameters(config), "evaluations": {}}
        for threads in args.eval_threads:
            runs = evaluations[path, threads]
            batches, wall = sum(r[0] for r in runs), sum(r[1] for r in runs)
            row["evaluations"][str(threads)] = {
                "positions_per_s": round(batches * args.batch / wall, 1),
                "cpu_ms_per_position": round(1000 * sum(r[2] for r in runs)
                                             / (batches * args.batch), 3)}
        row["rollouts"], row["rollouts_by_position"] = _merged(searches[path])
        row["clock"], row["clock_by_position"] = _merged(clocked[path])
        # Moves that ran into the cap rather than the clock understate the playouts.
        row["clock_capped"] = any(r["playouts"] >= CLOCK_ROLLOUTS
                                  for moves in clocked[path].values() for r in moves)
        out.append(row)
    base = out[0]["rollouts"]
    for row in out:
        row["wall_ratio"] = round(row["rollouts"]["wall_seconds_per_move"]
                                  / base["wall_seconds_per_move"], 3)
        row["cpu_ratio"] = round(row["rollouts"]["cpu_seconds_per_move"]
                                 / base["cpu_seconds_per_move"], 3)
        # The search does not wait for the network: a slower one evaluates fewer leaves.
        row["evaluations_ratio"] = round(row["rollouts"]["network_evaluations_per_move"]
                                         / base["network_evaluations_per_move"], 3)
    return out


def chosen(table, limit):
    """Return the weights of the row with the most parameters whose wall time a move at
    --rollouts is within limit times the baseline's (the baseline's own when none is)."""
    within = [row for row in table if row["wall_ratio"] <= limit] or table[:1]
    return max(within, key=lambda row: row["parameters"])["weights"]


def markdown(table, eval_threads, rollouts, move_seconds):
    """Return the rows as a Markdown table."""
    head = (["network", "parameters"]
            + [f"evaluations/s, {t} thread{'s' * (t > 1)}" for t in eval_threads]
            + [f"s/move at {rollouts}: wall (x baseline)", "CPU s/move (x baseline)",
               "network evaluations/move (x baseline)", f"playouts in {move_seconds:g} s a move",
               "network evaluations/move there"])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in table:
        search, clock = row["rollouts"], row["clock"]
        cells = ([f"{row['size']} (`{os.path.basename(row['weights'])}`)",
                  f"{row['parameters']:,}"]
                 + [f"{row['evaluations'][str(t)]['positions_per_s']:,.0f}"
                    for t in eval_threads]
                 + [f"{search['wall_seconds_per_move']:.2f} ({row['wall_ratio']:.2f}x)",
                    f"{search['cpu_seconds_per_move']:.2f} ({row['cpu_ratio']:.2f}x)",
                    f"{search['network_evaluations_per_move']:,} ({row['evaluations_ratio']:.2f}x)",
                    f"{clock['playouts_per_move']:,}",
                    f"{clock['network_evaluations_per_move']:,}"])
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None):
    """Run the benchmark, print the table to stderr and the JSON line to stdout."""
    args = parse_args(argv)
    program = darkgo_command(args.engine)
    batches = nn_speed.board_batches(args.batch)
    clock = [f"time_settings 0 {args.move_seconds:g} 1"]
    evaluations = {(path, t): [] for path in args.weights for t in args.eval_threads}
    searches = {path: {p: [] for p in args.positions} for path in args.weights}
    clocked = {path: {p: [] for p in args.positions} for path in args.weights}
    threads_logged = {}
    load_before, started = os.getloadavg(), time.perf_counter()
    for round_ in range(args.rounds):
        for path in args.weights:
            for threads in args.eval_threads:
                policy = nm.Policy(path, device="cpu", bf16="auto", threads=threads)
                evaluations[path, threads].append(
                    nn_speed.timed_batches(policy, batches, args.eval_seconds, value=True))
            threads_logged[path], found, _ = genmove_speed.measure(
                engine_command(program, path, args.rollouts), 19, args.positions, args.moves)
            for position, moves in found.items():
                searches[path][position] += moves
            _, found, _ = genmove_speed.measure(
                engine_command(program, path, args.rollouts, clock=True), 19, args.positions,
                args.clock_moves, settings=clock)
            for position, moves in found.items():
                clocked[path][position] += moves
            print(f"round {round_ + 1}: {path} done", file=sys.stderr, flush=True)
    table = rows(args, evaluations, searches, clocked)
    for row in table:
        row["engine_threads"] = threads_logged[row["weights"]]
    print(markdown(table, args.eval_threads, args.rollouts, args.move_seconds), file=sys.stderr)
    result = {"benchmark": "net_sizes", "rollouts": args.rollouts,
              "move_seconds": args.move_seconds, "positions": args.positions,
              "moves": args.moves, "clock_moves": args.clock_moves, "rounds": args.rounds,
              "batch": args.batch, "bf16": nm.bf16_supported(torch.device("cpu")),
              "limit": args.limit, "chosen": chosen(table, args.limit),
              "cpu_count": os.cpu_count(),
              "load_average_before": [round(x, 2) for x in load_before],
              "load_average_after": [round(x, 2) for x in os.getloadavg()],
              "seconds": round(time.perf_counter() - started, 1), "runs": table}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
