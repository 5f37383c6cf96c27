"""Policy-net evaluation speed as the search sees it: engine boards -> features, legal masks,
forward pass and priors in numpy. One JSON line last.

    python -m benchmarks.speed.nn_speed --batch 16 --device cpu [--weights PATH] [--threads 2] \
        [--value] [--backend torch|onnx]

--value times the values too, as a search that reads them asks (value_weight > 0
with a weights file that has a value head); without it the value head is skipped, as the
search skips it when it reads no values. --backend picks what runs the network, as the
engine's --net-backend does (default auto: ONNX Runtime on a CPU without fast bf16).
positions_per_core_s divides by the CPU seconds this process used, so that a figure taken
beside other work, or with more threads than cores, still counts what one core does.
"""
import argparse
import json
import random
import time

import torch

from engine.game import Game
from nets import DEFAULT_WEIGHTS, NET_BACKENDS
from nets import features as feat
from nets import model as nm


def sample_boards(count, size=19, seed=0):
    """Return boards from random legal games at 20..200 moves."""
    rng = random.Random(seed)
    boards = []
    for _ in range(count):
        game = Game(size)
        for _ in range(rng.randrange(20, 200)):
            game.play(game.to_play, rng.choice(game.legal_moves(game.to_play, superko=False)),
                      superko=False)
        boards.append(game.board)
    return boards


def board_batches(batch, count=8):
    """Return count lists of batch boards, drawn in turn from 64 sample_boards."""
    boards = sample_boards(64)
    return [[boards[(i * batch + j) % len(boards)] for j in range(batch)] for i in range(count)]


def timed_batches(policy, batches, seconds, value=False):
    """Return (batches evaluated, wall seconds, this process's CPU seconds) of evaluating the
    batches in turn with policy for `seconds`, after three untimed ones; value=True reads
    the value head too."""
    def run(boards):
        policy.evaluate(boards, value=value)
        if policy.device.type == "cuda":
            torch.cuda.synchronize()

    for boards in batches[:3]:
        run(boards)
    count, start, cpu_start = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - start < seconds:
        run(batches[count % len(batches)])
        count += 1
    return count, time.perf_counter() - start, time.process_time() - cpu_start


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--weights", help=f"weights file (default {DEFAULT_WEIGHTS}; with "
                   "--config, an untrained net of that config)")
    p.add_argument("--config", choices=sorted(nm.CONFIGS), help="time an untrained config")
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--device", default="cpu")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--bf16", choices=["auto", "on", "off"], default="auto",
                   help="bf16 autocast (auto: where the hardware has fast bf16, as the engine "
                        "runs the net); default auto, 'off' times fp32")
    p.add_argument("--backend", choices=NET_BACKENDS, default="auto",
                   help="what runs the network (nets.model.resolve_backend); default auto")
    p.add_argument("--seconds", type=float, default=10.0, help="timed duration")
    p.add_argument("--value", action="store_true",
                   help="evaluate the value head too (an error without one)")
    args = p.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.config and not args.weights:
        policy = nm.Policy(model=nm.PolicyNet(nm.make_config(args.config)), device=args.device,
                           bf16=args.bf16, threads=args.threads or None, backend=args.backend)
        source = f"config {args.config} (untrained)"
    else:
        policy = nm.Policy(args.weights or DEFAULT_WEIGHTS, device=args.device, bf16=args.bf16,
                           threads=args.threads or None, backend=args.backend)
        source = args.weights or DEFAULT_WEIGHTS
    if args.value and not policy.has_value:
        p.error(f"--value: {source} has no value head")
    batches = board_batches(args.batch)
    dev = policy.device
    count, total, cpu = timed_batches(policy, batches, args.seconds, args.value)
    fstart = time.perf_counter()
    for i in range(count):
        feat.extract(batches[i % len(batches)], rank=policy.rank, edge=policy.edge,
                     ladder=policy.ladder)
        feat.legal_masks(batches[i % len(batches)])
    features_s = time.perf_counter() - fstart
    print(json.dumps({
        "positions_per_s": round(count * args.batch / total, 1),
        "positions_per_core_s": round(count * args.batch / cpu, 1),
        "ms_per_batch": round(1000 * total / count, 3),
        "features_ms_per_batch": round(1000 * features_s / count, 3),
        "batch": args.batch, "device": str(dev), "threads": torch.get_num_threads(),
        "bf16": policy.bf16, "backend": policy.backend, "weights": source, "value": args.value,
        "batches": count,
    }))


if __name__ == "__main__":
    main()
