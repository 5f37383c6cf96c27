"""How well the value head and the playouts tell the game's move from the network's other
candidates: a judge of positions can guide a search only as far as it ranks a position's
moves, which benchmarks.value_accuracy (who wins the position) does not measure. A table on
stderr and one JSON line last on stdout.

    python -m benchmarks.value_choice --data ../shared/data/tygem9d/tygem9d-2011.zip \
        --weights weights/cpu_value.pt --positions 200 --top 6 --playouts 200

The positions are benchmarks.agreement's (one per game, the same picks for the same --seed).
Where the game's move is among the network's --top moves by prior, each of those moves is
played and its position judged for the player who made it: by the value head, by --playouts
default-policy playouts (engine.playout, the search's policy; seeded by --seed, the game and
the move), and by the two mixed (--mix x the value + (1 - --mix) x the playouts', as
value_weight mixes them). Each judge picks the move it rates best. For each judge and for
the prior itself: the share of positions where it picks the game's move (Wilson 95%
interval) and the game's move's mean rank among the candidates (0 = first, ties half); a
judge that knows nothing scores 1 / --top and (--top - 1) / 2.

The search never follows a judge alone: it weighs the judge's rates against the prior. So
for each of --with-prior's weights W the judges "prior+value W" (and "prior+playouts W",
"prior+mix W" with playouts) rank the candidates by ln(prior) + W x that judge's win rate.
A judge that knows something the prior does not picks the game's move more often there than
the prior alone; one that only repeats the prior's knowledge, or adds noise, does not.
"""
import argparse
import json
import sys
import time
import zlib
from collections import Counter

import numpy as np
import torch

from benchmarks.agreement import select_positions
from benchmarks.match import wilson_interval
from benchmarks.value_accuracy import (add_judge_arguments, check_judge_arguments,
                                       load_value_policy)
from engine import board as bd
from engine import playout as po
from nets import data as nd
from nets import model as nm

SIZE = 19
JUDGES = ("prior", "value", "playouts", "mix")
WITH_PRIOR = ("value", "playouts", "mix")   # the judges also weighed against the prior


def with_prior_judge(judge, weight):
    """Return the name of the judge that ranks by ln(prior) + weight x judge's win rate."""
    return f"prior+{judge} {weight:g}"


def with_prior_scores(priors, rates, weight):
    """Return the candidates' ln(prior) + weight x rate (the rates win rates in [0, 1])."""
    return np.log(np.asarray(priors, np.float64)) + weight * np.asarray(rates, np.float64)


def position_board(record, index):
    """Return a board of the position before move index of record, its mover to play."""
    board = nd.new_game_board(record)
    illegal = nd._advance(board, record.points, record.colors, 0, index)
    if illegal >= 0:
        raise ValueError(f"{record.name}: illegal move {illegal}")   # read_games checked
    board.info[bd.TO_PLAY] = int(record.colors[index])
    return board


def rank_of(scores, k):
    """Return the rank of candidate k by scores, best first from 0, ties counted half."""
    scores = np.asarray(scores, np.float64)
    return float(np.sum(scores > scores[k]) + 0.5 * (np.sum(scores == scores[k]) - 1))


def judge_candidates(policy, playout_policy, board, color, komi, candidates, playouts, seed,
                     name):
    """Return (values, playout rates): each candidate's position after it is played, judged
    for color by the value head (a win rate in [0, 1]) and by playouts (None with 0)."""
    children = []
    for point in candidates:
        child = bd.copy_board(board)
        if bd.play(child, point, color) != bd.OK:
            raise ValueError(f"{name}: the network's candidate {point} is illegal")
        children.append(child)
    _, values = policy.point_evaluate(children, [3 - color] * len(children), komi=komi)
    values = 0.5 * (1.0 - values.astype(np.float64))   # the child's mover is the opponent
    if not playouts:
        return values, None
    rates = []
    for point, child in zip(candidates, children):
        rng = po.new_rng(zlib.crc32(f"{seed}:{name}:{point}".encode()))
        owner = np.zeros(child.stones.shape[0], np.float64)
        black = po.playout_ownership(child, float(komi), playouts, playout_policy, rng,
                                     bd.copy_board(child), owner)
        rates.append(black if color == bd.BLACK else 1.0 - black)
    return values, np.array(rates)


def summarize(rows, top, judges=JUDGES):
    """Return per-judge metrics over rows of {judge: rank of the game's move}, for each of
    judges (None for a judge no row has)."""
    out = {}
    for judge in judges:
        ranks = [r[judge] for r in rows if r.get(judge) is not None]
        if not ranks:
            out[judge] = None
            continue
        picks = sum(rank == 0 for rank in ranks)
        low, high = wilson_interval(picks, len(ranks))
        out[judge] = {"picks": picks, "share": round(picks / len(ranks), 4),
                      "interval": [round(low, 4), round(high, 4)],
                      "mean_rank": round(float(np.mean(ranks)), 3)}
    out["chance"] = {"share": round(1.0 / top, 4), "mean_rank": (top - 1) / 2}
    return out


def format_table(summary):
    """Return a human-readable table of the judges' picks and mean ranks."""
    lines = [f"weights: {summary['weights']}; {summary['judged']} of {summary['positions']} "
             f"positions have the game's move in the network's top {summary['top']}; "
             f"{summary['playouts']} playouts a move",
             f"{'judge':>18}  {'picks':>6}  {'share':>6}  {'95% interval':14}  {'mean rank':>9}"]
    for judge, m in summary["judges"].items():
        if m is None or judge == "chance":
            continue
        low, high = m["interval"]
        lines.append(f"{judge:>18}  {m['picks']:>6}  {m['share']:6.3f}  "
                     f"[{low:.3f}, {high:.3f}]  {m['mean_rank']:9.3f}")
    chance = summary["judges"]["chance"]
    lines.append(f"{'chance':>18}  {'':>6}  {chance['share']:6.3f}  {'':14}  "
                 f"{chance['mean_rank']:9.3f}")
    return "\n".join(lines)


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m benchmarks.value_choice",
                                description=__doc__.split("\n")[0])
    p.add_argument("--data", nargs="+", required=True, help="SGF files, directories, archives")
    p.add_argument("--positions", type=int, default=200,
                   help="positions to take, one per game; default 200")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the picks (benchmarks.agreement's) and playouts; default 0")
    p.add_argument("--min-moves", type=int, default=20,
                   help="skip games with fewer moves than this; default 20")
    p.add_argument("--top", type=int, default=6,
                   help="candidates: the network's best moves by prior; default 6")
    p.add_argument("--with-prior", type=float, nargs="*", default=[1.0, 2.0, 4.0],
                   metavar="W", help="weights W of the judges that rank by ln(prior) + W x "
                   "another judge's win rate; default 1 2 4 (none: no such judge)")
    add_judge_arguments(p, playouts=200)
    args = p.parse_args(argv)
    if any(not (0.0 < w < float("inf")) for w in args.with_prior):
        p.error("--with-prior weights must be positive")
    args.with_prior = list(dict.fromkeys(args.with_prior))     # one judge a weight
    if args.positions < 1:
        p.error("--positions must be at least 1")
    if args.top < 2:
        p.error("--top must be at least 2")
    check_judge_arguments(p, args)
    return args


def main(argv=None):
    """Return the exit status after judging the positions and printing the table and JSON."""
    args = parse_args(argv)
    try:
        policy = load_value_policy(args)
    except nm.WeightsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    playout_policy = po.PolicyConfig().build()
    skipped = Counter()
    records = nd.read_games(args.data, size=SIZE, stats=nd.Stats())
    rows = []
    positions = 0
    start = time.time()
    with torch.inference_mode():
        for record, index in select_positions(records, args.seed, args.min_moves, skipped):
            if positions >= args.positions:
                break
            positions += 1
            board = position_board(record, index)
            color = int(record.colors[index])
            komi = record.komi if args.komi is None else args.komi
            priors, _ = policy.point_evaluate([board], [color], komi=komi)
            order = np.argsort(-priors[0], kind="stable")[:args.top]
            candidates = [int(p) for p in order if priors[0][p] > 0]
            game_move = int(record.points[index])
            if game_move not in candidates:
                continue
            k = candidates.index(game_move)
            values, rates = judge_candidates(policy, playout_policy, board, color, komi,
                                             candidates, args.playouts, args.seed,
                                             f"{record.name}:{index}")
            judged = {"value": values}
            if rates is not None:
                judged["playouts"] = rates
                judged["mix"] = args.mix * values + (1.0 - args.mix) * rates
            row = {"prior": float(k)}
            for judge, judge_rates in judged.items():
                row[judge] = rank_of(judge_rates, k)
                for weight in args.with_prior:
                    row[with_prior_judge(judge, weight)] = rank_of(
                        with_prior_scores(priors[0][candidates], judge_rates, weight), k)
            rows.append(row)
            print(f"\r{positions} positions, {len(rows)} judged", end="", file=sys.stderr,
                  flush=True)
    print(file=sys.stderr)
    if not positions:
        print(f"error: no usable games in {args.data}", file=sys.stderr)
        return 1
    summary = {
        "weights": args.weights,
        "data": args.data,
        "positions": positions,
        "judged": len(rows),
        "top": args.top,
        "playouts": args.playouts,
        "mix": args.mix,
        "seed": args.seed,
        "komi": args.komi,
        "with_prior": args.with_prior,
        "judges": summarize(rows, args.top, JUDGES + tuple(
            with_prior_judge(j, w) for j in WITH_PRIOR for w in args.with_prior)),
        "skipped": dict(skipped),
        "seconds": round(time.time() - start, 2),
    }
    print(format_table(summary), file=sys.stderr)
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
