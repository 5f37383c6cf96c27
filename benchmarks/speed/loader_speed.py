"""Training-data speed: samples a second from nets.data.sample_batches (SGF archives) and from
nets.pack_data.pack_batches (a pack), per CPU second of one process and per wall second with
data-loader workers as nets.train runs them. One JSON line last.

    python -m benchmarks.speed.loader_speed --data ARCHIVE_OR_PACK... [--workers N] [--batch 256]

SGF inputs are timed with sample_batches, pack paths with pack_batches; given SGF inputs and
no pack, a pack of those inputs is built first (its build time is reported). Both paths draw
training-split batches with the value and ownership targets on (ownership from
--ownership-runs playouts a game for sample_batches; a pack's from the runs it was built
with). CPU time is the process's own (time.process_time), each measured --repeats times
after --warmup batches: sample_batches parses a game when it enters the pool of games, which
the first batch fills and which turns over only after some 20 batches (a game gives about 21
positions at rate 0.1), so a shorter warm-up would time replay without parsing.
"""
import argparse
import json
import os
import sys
import tempfile
import time

import torch

from nets import data as nd
from nets import pack as npk
from nets import pack_data as pdata
from nets import train as nt


def cpu_rate(batches, warmup, count):
    """Return samples per CPU second of this process over count batches after warmup."""
    for _ in range(warmup):
        next(batches)
    start = time.process_time()
    samples = 0
    for _ in range(count):
        samples += len(next(batches)["x"])
    return samples / max(time.process_time() - start, 1e-9)


def wall_rate(sampler, kwargs, workers, seconds):
    """Return samples per wall second that a DataLoader with `workers` worker processes
    delivers (as nets.train reads them), after each worker's first batch."""
    dataset = nt.Batches(kwargs, 0, 1, 0, sampler)
    loader = torch.utils.data.DataLoader(dataset, batch_size=None, num_workers=workers,
                                         prefetch_factor=4 if workers else None)
    it = iter(loader)
    for _ in range(max(workers, 1)):
        next(it)
    start = time.time()
    samples = 0
    while time.time() - start < seconds:
        samples += len(next(it)["x"])
    rate = samples / (time.time() - start)
    del it
    return rate


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", nargs="+", required=True, help="SGF archives and/or pack paths")
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--workers", type=int, default=2, help="data-loader workers for the wall "
                   "rate (0: no wall-rate figure)")
    p.add_argument("--warmup", type=int, default=40, help="batches before the timing")
    p.add_argument("--batches", type=int, default=40, help="timed batches a repeat (pack: 5x)")
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--seconds", type=float, default=10.0, help="timed wall seconds with workers")
    p.add_argument("--ownership-runs", type=int, default=0,
                   help="sample_batches' ownership playouts a game, and a built pack's")
    p.add_argument("--sample-rate", type=float, default=0.1)
    p.add_argument("--pool", type=int, default=256)
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    packs = [d for d in args.data if npk.is_pack_path(d)]
    sgf = [d for d in args.data if not npk.is_pack_path(d)]
    result = {"batch": args.batch, "value": True, "ownership": True,
              "sample_rate": args.sample_rate, "pool": args.pool, "workers": args.workers,
              "samples_per_cpu_second": {}, "samples_per_wall_second": {}}
    tmp = None
    if sgf and not packs:
        tmp = tempfile.TemporaryDirectory()
        built = os.path.join(tmp.name, "bench.pack")
        meta = npk.build(sgf, built, runs=args.ownership_runs, workers=1, split="train",
                         log=sys.stderr)
        packs = [built]
        result["pack_build_seconds"] = meta["build_seconds"]
    common = dict(batch=args.batch, split="train", ownership=True, value=True, pool=args.pool,
                  sample_rate=args.sample_rate)
    runs = []
    if sgf:
        kwargs = dict(common, paths=sgf, ownership_runs=args.ownership_runs)
        runs.append(("sample_batches", nd.sample_batches, kwargs, args.batches))
        result["sgf_inputs"] = [os.path.basename(d) for d in sgf]
        result["sgf_ownership_runs"] = args.ownership_runs
    try:
        pack, _ = pdata.select_games(packs, "train")
    except npk.PackError as e:
        sys.exit(f"--data: {e}")
    kwargs = dict(common, paths=packs, ownership_runs=pack.ownership_runs)
    runs.append(("pack_batches", pdata.pack_batches, kwargs, 5 * args.batches))
    result["pack_ownership_runs"] = pack.ownership_runs
    for name, sampler, kwargs, count in runs:
        rates = [round(cpu_rate(sampler(**kwargs, seed=r), args.warmup, count))
                 for r in range(args.repeats)]
        result["samples_per_cpu_second"][name] = rates
        print(f"{name}: {rates} samples per CPU second", file=sys.stderr, flush=True)
    cpu = result["samples_per_cpu_second"]
    if "sample_batches" in cpu:
        result["speedup_cpu"] = round(min(cpu["pack_batches"]) / max(cpu["sample_batches"]), 2)
    if args.workers:
        for name, sampler, kwargs, _ in runs:
            rate = round(wall_rate(sampler, kwargs, args.workers, args.seconds))
            result["samples_per_wall_second"][name] = rate
            print(f"{name}: {rate} samples per wall second, {args.workers} workers",
                  file=sys.stderr, flush=True)
    if tmp is not None:
        tmp.cleanup()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
