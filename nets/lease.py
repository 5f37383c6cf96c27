"""A GPU lease's training run in one call: from a carried pack and the committed network to
trained weights, a log and a summary in $OUT, within a wall-time budget.

    python -m nets.lease --pack packs/tygem9d.pack [--seconds 540] [--out $OUT]

A lease carries the working tree and a few ignored paths, 64 MiB in all, and gives one
command at most 600 s. This script loads the pack (nets.pack); when the pack has no owner
targets (a pack built with --no-ownership, small enough to carry), computes them here with
every core into a raw pack in --scratch; then runs nets.train from the committed network
(--init, by default nets.LADDER_WEIGHTS) on the training split of the pack's sources
but the held-out one (the engine's match records among them teaching the value and ownership
heads alone: nets.train --value-only), validating on their validation split (as stages 7 and
8 of weights/README.md did), policy + value + ownership in bf16, for what is left of --seconds
after that set-up, the replay code's compilation (here, before nets.train's data-loader
workers fork) and a reserve for the last validation and save. $OUT receives the weights
(best validation loss), run/log.jsonl and run/ckpt.pt (for nets.train --resume), and
lease.json: the phases' seconds, the command given to nets.train and the validations.
"""
import argparse
import json
import os
import sys
import time

from nets import LADDER_WEIGHTS
from nets import data as nd
from nets import pack as npk
from nets import pack_data as pdata
from nets import train as nt

RESERVE_SECONDS = 30      # the last validation, checkpoint and weights after training
# The engine's match records (SGF archives): packed beside the 9-dan games, they teach the
# value and ownership heads positions like those the search meets, and not the moves.
MATCH_RECORDS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                             "benchmarks", "records")
# Sources never trained on: the archive that weights/README.md's figures hold out, and the
# match record on which the value head is judged against the playouts in our games
# (benchmarks/RESULTS.md K13).
HOLDOUT = ["tygem9d-2011.zip", "m_pachi10k_31.tar.xz"]


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--pack", default="packs/tygem9d.pack", help="the carried pack")
    p.add_argument("--sources", nargs="+", help="the pack's sources to train and validate on "
                   "(default: all but --holdout)")
    p.add_argument("--holdout", nargs="*", default=HOLDOUT, help="sources never trained on "
                   f"(default: {' '.join(HOLDOUT)}: the archive that weights/README.md's "
                   "figures hold out, and the match record that judges the value head in our "
                   "games)")
    p.add_argument("--init", default=LADDER_WEIGHTS, help="network to start from (default: "
                   "the search's network with the ladder planes, weights/cpu_value_ladder.pt)")
    p.add_argument("--out", default=os.environ.get("OUT"), help="folder for the results "
                   "(default $OUT)")
    p.add_argument("--seconds", type=float, default=540.0, help="wall-time budget of the "
                   "whole call, set-up included")
    p.add_argument("--steps", type=int, default=1000000, help="stop after this many steps")
    p.add_argument("--ownership-runs", type=int, default=32, help="owner-target playouts a "
                   "game: the pack's, or computed here when it has none")
    p.add_argument("--scratch", default="/tmp/lease", help="folder for a pack made here")
    p.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 2) - 2),
                   help="data-loader workers (and processes for owner targets)")
    p.add_argument("--device", default="auto")
    p.add_argument("--bf16", choices=["auto", "on", "off"], default="on")
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--lr", type=float, default=0.005)
    p.add_argument("--warmup", type=int, default=200)
    p.add_argument("--sample-rate", type=float, default=0.08)
    p.add_argument("--val-positions", type=int, default=4096)
    p.add_argument("--val-mod", type=int, default=nd.VAL_MOD)
    p.add_argument("--val-minutes", type=float, default=1.0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=81)
    p.add_argument("--value-only", nargs="*", metavar="SOURCE", help="sources that teach the "
                   "value and ownership heads only (nets.train --value-only; default: the "
                   "pack's sources named as files in benchmarks/records, the engine's games)")
    p.add_argument("--value-only-repeat", type=int, default=10, help="how often each of "
                   "their games comes in a pass over the games (default 10: about 2%% of the "
                   "samples for the 241 games of the records beside 150,000 9-dan games; not "
                   "yet judged by a trained net)")
    p.add_argument("--ladder", action=argparse.BooleanOptionalAction, default=True,
                   help="train with the ladder input planes (a net without them gains them, "
                   "nets.train --ladder); default on")
    return p.parse_args(argv)


def training_pack(args, log=sys.stderr):
    """Return the path of a pack with the owner targets asked for: --pack itself, or a raw
    pack in --scratch whose targets are computed here from --pack's games."""
    pack = npk.load(args.pack)
    if pack.ownership_runs == args.ownership_runs:
        return args.pack
    os.makedirs(args.scratch, exist_ok=True)
    out = os.path.join(args.scratch, "owners.pack")
    npk.build([args.pack], out, runs=args.ownership_runs, seed=0,
              workers=max(1, args.workers), log=log, compress=False)
    return out


def chosen_sources(args, pack):
    """Return the sources to train on: --sources, else the pack's but --holdout's; raises
    PackError for a source the pack lacks or one held out."""
    sources = args.sources or [s for s in pack.sources if s not in args.holdout]
    for s in sources:
        if s not in pack.sources:
            raise npk.PackError(f"the pack has no source {s}")
        if s in args.holdout:
            raise npk.PackError(f"{s} is held out (--holdout)")
    if not sources:
        raise npk.PackError("no source left to train on")
    return sources


def value_only_sources(args, sources):
    """Return the sources among those trained on that teach values only: --value-only's, else
    those named as files in MATCH_RECORDS."""
    if args.value_only is not None:
        missing = [s for s in args.value_only if s not in sources]
        if missing:
            raise npk.PackError(f"--value-only: {', '.join(missing)} not among the sources "
                                "trained on")
        return list(args.value_only)
    records = set(os.listdir(MATCH_RECORDS)) if os.path.isdir(MATCH_RECORDS) else set()
    return [s for s in sources if s in records]


def warm(paths, val_mod):
    """Compile the replay code in this process (nets.train's own warm-up and its workers then
    find it compiled)."""
    pdata.pack_validation_set(paths, positions=2, val_mod=val_mod)
    next(pdata.pack_batches(paths, batch=2, pool=2, split="all"))


def train_argv(args, paths, weights, run_dir, minutes, value_only=()):
    """Return nets.train's command line for the lease."""
    return ["--data", *paths, "--init", args.init, "--value", "--value-ownership",
            "--ownership-runs", str(args.ownership_runs), "--out", weights, "--run-dir",
            run_dir, "--steps", str(args.steps), "--minutes", f"{minutes:.3f}", "--batch",
            str(args.batch), "--lr", str(args.lr), "--warmup", str(args.warmup), "--workers",
            str(args.workers), "--threads", str(args.threads), "--sample-rate",
            str(args.sample_rate), "--val-positions", str(args.val_positions), "--val-mod",
            str(args.val_mod),
            "--val-minutes", str(args.val_minutes), "--ckpt-minutes", "2", "--device",
            args.device, "--bf16", args.bf16, "--seed", str(args.seed)] \
        + (["--ladder"] if args.ladder else []) \
        + (["--value-only", *value_only, "--value-only-repeat", str(args.value_only_repeat)]
           if value_only else [])


def main(argv=None):
    start = time.time()
    args = parse_args(argv)
    if not args.out:
        sys.exit("--out: give a folder (or set $OUT)")
    os.makedirs(args.out, exist_ok=True)
    phases = {}
    try:
        pack_path = training_pack(args)
        sources = chosen_sources(args, npk.load(pack_path))
        paths = [f"{pack_path}/{s}" for s in sources]
        value_only = value_only_sources(args, sources)
    except (npk.PackError, OSError) as e:
        sys.exit(f"--pack: {e}")
    phases["pack_seconds"] = round(time.time() - start, 1)
    warm(paths, args.val_mod)
    phases["warm_seconds"] = round(time.time() - start - phases["pack_seconds"], 1)
    weights = os.path.join(args.out, os.path.basename(args.init))
    run_dir = os.path.join(args.out, "run")
    minutes = (args.seconds - (time.time() - start) - RESERVE_SECONDS) / 60.0
    if minutes <= 0:
        sys.exit(f"--seconds {args.seconds}: no time left to train after the pack")
    argv_train = train_argv(args, paths, weights, run_dir, minutes, value_only)
    train_start = time.time()
    nt.main(argv_train)
    phases["train_seconds"] = round(time.time() - train_start, 1)
    phases["total_seconds"] = round(time.time() - start, 1)
    lines = [json.loads(line) for line in open(os.path.join(run_dir, "log.jsonl"))]
    validations = [r for r in lines if "val_nll" in r]
    summary = {**phases, "pack": args.pack, "train_argv": argv_train,
               "last_validation": validations[-1] if validations else None,
               "best_validation": min(validations, key=lambda r: r["val_loss"])
               if validations else None}
    with open(os.path.join(args.out, "lease.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print(json.dumps({k: summary[k] for k in (*phases, "last_validation")}))


if __name__ == "__main__":
    main()
