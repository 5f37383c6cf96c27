"""Move-prediction accuracy of a policy net: top-1, top-5 and mean NLL of head 1 on every
non-pass position of the given games, and how it treats ladders; one JSON line last.

    python -m benchmarks.knowledge.accuracy --data /work/shared/data/tygem9d/tygem9d-2011.zip \
        --max-games 500

The shipped weights never trained on tygem9d-2011 (see weights/README.md); a warning is printed
when --data names an archive the weights were trained on.

The ladder figures use nets.features' ladder planes, whether or not the net reads them: for
the positions where the side to move has a futile escape (the liberty of its chain in atari
whose extension runs into a working ladder), the share where the net's first choice is one
(escape_top1), the net's mean probability on them (escape_prior) and the share where the
player chose one (escape_played); the same for the ataris that start a working ladder
(capture_*), and for the futile escapes of chains that the last move put in atari (chased_*,
engine.ladder.futile_escapes: the steps of a ladder being chased, where a net that cannot
read ladders extends).
"""
import argparse
import itertools
import json
import os
import sys
import time

import numpy as np
import torch

from engine import board as bd
from engine import ladder as ld
from nets import DEFAULT_WEIGHTS, NET_BACKENDS
from nets import data as nd
from nets import features as feat
from nets import model as nm
from nets.onnx_net import OnnxNet
from nets.train import accuracy_counts

LADDER_KINDS = ("capture", "escape", "chased")


def chased_planes(records, batch):
    """Yield, batch by batch in nets.data.all_positions' order, bool [B, N*N]: the futile
    escapes (engine.ladder.futile_escapes) of the side to move in each non-pass position."""
    rows = []
    points = np.zeros(4, np.int32)
    for record in records:
        b = nd.new_game_board(record)
        n = record.size
        sc = ld.new_ladder_scratch(b.stones.shape[0])
        for i in range(len(record.points)):
            if record.points[i] != bd.PASS:
                row = np.zeros(n * n, np.bool_)
                found = ld.futile_escapes(b, int(record.colors[i]), sc, points)
                row[feat.point_to_index(points[:found], n)] = True
                rows.append(row)
                if len(rows) == batch:
                    yield np.stack(rows)
                    rows = []
            bd.play(b, record.points[i], record.colors[i])
    if rows:
        yield np.stack(rows)


def ladder_counts(logp1, targets1, planes):
    """Return {kind: [positions with such points, net's first choice on one, summed
    probability on them, player's move on one]} for the ladder planes [B, 3, N*N] (capture,
    escape, chased) of a batch, head-1 log-probabilities and targets."""
    top = logp1.argmax(1)
    probs = logp1.exp()
    counts = {}
    for k, kind in enumerate(LADDER_KINDS):
        marked = planes[:, k] > 0
        has = marked.any(1)
        rows = torch.arange(len(top))
        played = marked[rows, targets1.clamp(min=0)] & (targets1 >= 0)
        counts[kind] = [int(has.sum()), int((marked[rows, top] & has).sum()),
                        float((probs * marked).sum(1)[has].sum()), int((played & has).sum())]
    return counts


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", nargs="+", required=True, help="SGF files, directories, archives")
    p.add_argument("--weights", default=DEFAULT_WEIGHTS)
    p.add_argument("--max-games", type=int, help="stop after this many games (file order)")
    p.add_argument("--split", choices=["all", "train", "val"], default="all",
                   help="only games of this hash split (default: every game)")
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--device", default="auto")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--backend", choices=NET_BACKENDS, default="torch",
                   help="what runs the net (nets.model.resolve_backend); default torch")
    p.add_argument("--symmetries", type=int, choices=(1, 8), default=1,
                   help="average the net over 1 or all 8 board symmetries (as --policy-only)")
    args = p.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    model, meta = nm.load_model(args.weights, args.device)
    device = next(model.parameters()).device
    if nm.resolve_backend(args.backend, device, bf16=False) == "onnx":
        model = OnnxNet(model, args.threads or None)
    trained = set(meta.get("train_data", []))
    overlap = trained & {os.path.basename(d.rstrip("/")) for d in args.data}
    if overlap and args.split != "val":
        print(f"warning: {args.weights} was trained on {sorted(overlap)}; only its val split "
              "is held out (use --split val)", file=sys.stderr)
    stats = nd.Stats()
    games = 0

    def records():
        nonlocal games
        for record in nd.read_games(args.data, split=args.split, stats=stats):
            if args.max_games is not None and games >= args.max_games:
                return
            games += 1
            yield record

    cfg = model.config
    inputs = feat.num_planes(cfg["edge"], cfg.get("ladder", False))
    ladder_first = feat.num_planes(cfg["edge"])
    h1 = h5 = n = 0
    nll = 0.0
    ladder = {kind: [0, 0, 0.0, 0] for kind in LADDER_KINDS}
    start = time.time()
    with torch.inference_mode():
        games_for_planes, games_for_chases = itertools.tee(records())
        for batch, chased in zip(
                nd.all_positions(games_for_planes, args.batch, cfg["heads"], cfg["rank"],
                                 cfg["edge"], ladder=True),
                chased_planes(games_for_chases, args.batch)):
            x = torch.from_numpy(batch["x"])
            logp, _, _ = nm.symmetric_forward(model, x[:, :inputs].contiguous().to(device),
                                              torch.from_numpy(batch["mask"]).to(device),
                                              args.symmetries)
            targets = torch.from_numpy(batch["targets"][:, 0]).to(device)
            c = accuracy_counts(logp.float(), targets)
            h1, h5, nll, n = h1 + c[0], h5 + c[1], nll + c[2], n + c[3]
            planes = torch.cat([x[:, ladder_first:ladder_first + 2].flatten(2),
                                torch.from_numpy(chased)[:, None].float()], 1).to(device)
            for kind, counts in ladder_counts(logp.float(), targets, planes).items():
                ladder[kind] = [a + b for a, b in zip(ladder[kind], counts)]
            print(f"\r{games} games {n} positions top1 {h1 / n:.4f} top5 {h5 / n:.4f} "
                  f"nll {nll / n:.4f} {n / (time.time() - start):.0f} pos/s", end="",
                  file=sys.stderr, flush=True)
    print(file=sys.stderr)
    if n == 0:
        sys.exit("no positions in the given games")
    ladder_figures = {}
    for kind, (positions, top1, prior, played) in ladder.items():
        ladder_figures[f"{kind}_positions"] = positions
        for name, total in (("top1", top1), ("prior", prior), ("played", played)):
            ladder_figures[f"{kind}_{name}"] = round(total / positions, 4) if positions else None
    print(json.dumps({"top1": h1 / n, "top5": h5 / n, "nll": nll / n, "positions": n,
                      **ladder_figures,
                      "games": games, "skipped": {k: v for k, v in stats.items() if k != "games"},
                      "weights": args.weights, "split": args.split,
                      "symmetries": args.symmetries}))


if __name__ == "__main__":
    main()
