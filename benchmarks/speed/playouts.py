"""Playout speed: `python -m benchmarks.speed.playouts --size 19 --threads 1 --seconds 10`.

Runs full playouts from the empty board (copy, play out, score) on T threads for S seconds and
prints playouts per second in all and per thread; with T > 1 it first measures one thread for
the same time and reports the speed-up. The last stdout line is one JSON object.
"""
import argparse
import json
import threading
import time

import numpy as np
from numba import njit

from engine import board as bd
from engine import playout as po
from engine.ladder import new_ladder_scratch
from engine.tree import playout_winner


@njit(cache=True, nogil=True)
def _playouts_until(root, scratch, policy, rng, komi, deadline_flag, counter, slot):
    """Run playouts from root until deadline_flag[0] is set; count them in counter[slot]."""
    record = np.empty(3 * root.info[bd.SIZE] ** 2, np.int32)
    ladder = new_ladder_scratch(root.stones.shape[0])
    while deadline_flag[0] == 0:
        bd.copy_into(scratch, root)
        playout_winner(scratch, policy, rng, komi, record, ladder)
        counter[slot] += 1


def measure(size, threads, seconds, policy, komi=7.5, seed=1):
    """Return the number of playouts `threads` threads finish in `seconds` and the process
    CPU seconds spent meanwhile."""
    root = bd.new_board(size)
    flag = np.zeros(1, np.int64)
    counter = np.zeros(threads, np.int64)
    _playouts_until(root, bd.copy_board(root), policy, po.new_rng(0), komi, np.ones(1, np.int64),
                    counter, 0)
    workers = [threading.Thread(target=_playouts_until,
                                args=(root, bd.copy_board(root), policy, po.new_rng(seed + i),
                                      komi,
                                      flag, counter, i))
               for i in range(threads)]
    cpu_start = time.process_time()
    for w in workers:
        w.start()
    time.sleep(seconds)
    flag[0] = 1
    for w in workers:
        w.join()
    return int(counter.sum()), time.process_time() - cpu_start


def main(argv=None):
    """Run the benchmark and print its JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=19, help="board size; default 19")
    parser.add_argument("--threads", type=int, default=1, help="threads; default 1")
    parser.add_argument("--seconds", type=float, default=10.0, help="seconds per measurement")
    parser.add_argument("--policy", choices=("moggy", "uniform"), default="moggy",
                        help="default policy (moggy rules) or uniform random; default moggy")
    parser.add_argument("--off", action="append", default=[],
                        choices=("capture", "ko", "atari2", "nakade", "pattern"),
                        help="switch one moggy rule off (repeatable), to see what it costs")
    args = parser.parse_args(argv)
    if args.threads < 1 or args.seconds <= 0 or not bd.MIN_SIZE <= args.size <= bd.MAX_SIZE:
        parser.error("need threads >= 1, seconds > 0 and a size in 2..25")
    if args.off and args.policy != "moggy":
        parser.error("--off switches moggy rules off; it needs --policy moggy")
    policy = (po.PolicyConfig(**{rule: 0.0 for rule in args.off}).build()
              if args.policy == "moggy" else po.uniform_policy())
    total, cpu = measure(args.size, args.threads, args.seconds, policy)
    result = {"benchmark": "playouts", "policy": args.policy, "off": args.off, "size": args.size,
              "threads": args.threads, "seconds": args.seconds, "playouts": total,
              "playouts_per_second": round(total / args.seconds, 1),
              "per_thread": round(total / args.seconds / args.threads, 1),
              "playouts_per_cpu_second": round(total / max(cpu, 1e-9), 1)}
    if args.threads > 1:
        single, _ = measure(args.size, 1, args.seconds, policy)
        result["single_thread_per_second"] = round(single / args.seconds, 1)
        result["speedup"] = round(total / max(single, 1), 2)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
