"""Whole-search speed through GTP, as a user sees it:

    python -m benchmarks.genmove_speed --size 19 --rollouts 10000 --threads 1 [--moves 3]

Starts `python gtp_main.py --net none` (or --engine CMD), asks `genmove` on the empty board
(after one warm-up move that pays numba's cache load), reads the engine's `cputime` around each
move and reports playouts per CPU second and per wall second, plus the engine's resident
memory after the search. The last stdout line is one JSON object.
"""
import argparse
import json
import os
import tempfile
import time

from benchmarks.gtp_client import GtpEngine


def resident_mib(pid):
    """Return the resident memory of a process in MiB (Linux /proc), or None."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def main(argv=None):
    """Run the benchmark and print its JSON line."""
    parser = argparse.ArgumentParser(description="genmove speed through GTP")
    parser.add_argument("--size", type=int, default=19)
    parser.add_argument("--rollouts", type=int, default=10000)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--moves", type=int, default=3, help="timed genmoves (fresh boards)")
    parser.add_argument("--engine", default=None,
                        help="engine command; default: this repo's gtp_main.py --net none")
    args = parser.parse_args(argv)
    command = args.engine or (f"python gtp_main.py --net none --rollouts {args.rollouts} "
                              f"--threads {args.threads}")
    log = os.path.join(tempfile.mkdtemp(), "engine.log")
    engine = GtpEngine(command, log)
    try:
        engine.send(f"boardsize {args.size}", 60)
        engine.send("genmove b", 600)                       # warm-up: numba cache, allocations
        cpu_rates, wall_rates = [], []
        for _ in range(args.moves):
            engine.send("clear_board", 60)
            cpu0 = float(engine.send("cputime", 60).text.split()[-1])
            wall0 = time.perf_counter()
            engine.send("genmove b", 600)
            wall = time.perf_counter() - wall0
            cpu = float(engine.send("cputime", 60).text.split()[-1]) - cpu0
            cpu_rates.append(args.rollouts / cpu)
            wall_rates.append(args.rollouts / wall)
        rss = resident_mib(engine._proc.pid)
    finally:
        engine.close()
    result = {"benchmark": "genmove_speed", "size": args.size, "rollouts": args.rollouts,
              "threads": args.threads, "moves": args.moves,
              "playouts_per_cpu_second": round(sum(cpu_rates) / len(cpu_rates), 1),
              "playouts_per_wall_second": round(sum(wall_rates) / len(wall_rates), 1),
              "cpu_seconds_per_move": round(args.rollouts / (sum(cpu_rates) / len(cpu_rates)), 3),
              "resident_mib": None if rss is None else round(rss, 1)}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
