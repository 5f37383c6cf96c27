"""How often the default policy's playouts name the winner of held-out games, beside Pachi's.

A table by game stage on stderr and one JSON line last on stdout:

    python -m benchmarks.knowledge.playout_accuracy \
        --data ../shared/data/tygem9d/tygem9d-2011.zip --games 250 --playouts 2000 \
        --pachi "env DATA_DIR=/path/to/pachi /path/to/pachi/pachi -r chinese --nodcnn threads=1"

The positions are those of benchmarks.knowledge.value_accuracy (same --games,
--positions-per-game and --seed give the same positions; games with setup stones are left out
here, as GTP can only give an engine a black handicap). From each position --playouts playouts
of engine.playout's default policy (the search's, or with --rate NAME=VALUE overrides of
engine.playout.PolicyConfig) give two verdicts: black's win rate p (the winner is black when
p > 0.5) and the mean final score (area, less the record's komi; black when it is positive);
either at exactly a half or zero counts as half right. With --pachi, the engine's
`gogui-score_est` (Pachi's mean score over 2,000 of its playouts, after the game's moves are
given with `play`) is a third verdict, and the JSON has the paired counts (both right, only
ours, only Pachi's) of the mean scores.
"""
import argparse
import dataclasses
import json
import os
import re
import sys
import time
import zlib

import numpy as np

from benchmarks.knowledge.agreement import STAGES, Asker, EngineFault, point_to_vertex, stage_of
from benchmarks.knowledge.value_accuracy import add_position_arguments, select_positions
from benchmarks.strength.stats import wilson_interval
from engine import board as bd
from engine import playout as po
from nets import data as nd

SIZE = 19
_PACHI_SCORE = re.compile(r"Playouts:\s*([BW])\+([0-9.]+)")
VERDICTS = ("win_rate", "mean_score", "pachi")


def parse_rates(items):
    """Return a PolicyConfig with NAME=VALUE overrides; raise ValueError for a bad item."""
    fields = {f.name: f.type for f in dataclasses.fields(po.PolicyConfig)}
    overrides = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or name not in fields:
            raise ValueError(f"--rate {item!r}: expected NAME=VALUE, NAME one of "
                             f"{', '.join(fields)}")
        try:
            overrides[name] = int(value) if fields[name] in (int, "int") else float(value)
        except ValueError:
            raise ValueError(f"--rate {item!r}: {value!r} is not a number") from None
    return po.PolicyConfig(**overrides)


def playout_verdicts(position, runs, policy, seed):
    """Return (2p - 1, mean score) for black from runs playouts of position: p is black's win
    rate, the score black's area less white's and the komi."""
    b = position.board
    rng = po.new_rng(zlib.crc32(f"{seed}:{position.game}:{position.index}".encode()))
    owner = np.zeros(b.stones.shape[0], np.float64)
    black = po.playout_ownership(b, float(position.komi), runs, policy, rng, bd.copy_board(b),
                                 owner)
    return 2.0 * black - 1.0, float(owner.sum()) / runs - position.komi


def pachi_score(asker, record, position):
    """Return Pachi's mean playout score for black (its `gogui-score_est`) after the game's
    moves up to the position."""
    asker.require(f"boardsize {record.size}")
    asker.require("clear_board")
    asker.require(f"komi {position.komi:g}")
    for i in range(position.index):
        colour = "b" if record.colors[i] == bd.BLACK else "w"
        asker.require(f"play {colour} {point_to_vertex(record.points[i], record.size)}")
    response = asker.ask("gogui-score_est")
    found = _PACHI_SCORE.search(response.text) if response.ok else None
    if not found:
        raise EngineFault(f"gogui-score_est gave no playout score: {response.text[-200:]!r}")
    value = float(found.group(2))
    return value if found.group(1) == "B" else -value


def right(value, black_won):
    """Return 1, 0 or 0.5: whether a verdict for black (its sign) names the winner."""
    if value == 0:
        return 0.5
    return 1.0 if (value > 0) == black_won else 0.0


def score_rows(rows, key):
    """Return positions, accuracy and its Wilson 95% interval of verdict key over rows."""
    marks = [r[key] for r in rows if r.get(key) is not None]
    n = len(marks)
    if not n:
        return {"positions": 0, "accuracy": None, "interval": None}
    low, high = wilson_interval(sum(marks), n)
    return {"positions": n, "accuracy": round(sum(marks) / n, 4),
            "interval": [round(low, 4), round(high, 4)]}


def paired(rows, ours, theirs):
    """Return the counts of positions where both, only ours, only theirs or neither was right."""
    both = only_ours = only_theirs = neither = 0
    for r in rows:
        a, b = r[ours] == 1.0, r[theirs] == 1.0
        both += a and b
        only_ours += a and not b
        only_theirs += b and not a
        neither += not a and not b
    return {"both": both, "only_ours": only_ours, "only_pachi": only_theirs,
            "neither": neither}


def format_table(summary):
    """Return the accuracy table by stage, one column per verdict."""
    keys = [k for k in VERDICTS if summary["overall"][k]["positions"]]
    lines = [f"{summary['positions']} positions of {summary['games']} games; "
             f"{summary['playouts']} playouts each; policy {summary['policy']}",
             f"{'moves':>8}  {'positions':>9}  " + "  ".join(f"{k:>22}" for k in keys)]
    for label, row in list(summary["by_stage"].items()) + [("all", summary["overall"])]:
        cells = []
        for k in keys:
            m = row[k]
            cells.append(f"{'-':>22}" if m["accuracy"] is None else
                         f"{m['accuracy']:6.3f} [{m['interval'][0]:.3f}, "
                         f"{m['interval'][1]:.3f}]")
        lines.append(f"{label:>8}  {row['positions']:>9}  " + "  ".join(cells))
    return "\n".join(lines)


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m benchmarks.knowledge.playout_accuracy",
                                description=__doc__.split("\n")[0])
    add_position_arguments(p, games=250, per_game=2)
    p.add_argument("--playouts", type=int, default=2000,
                   help="our playouts per position; default 2000 (as Pachi's score estimate)")
    p.add_argument("--rate", action="append", default=[], metavar="NAME=VALUE",
                   help="a default-policy setting (engine.playout.PolicyConfig), repeatable")
    p.add_argument("--pachi", help="a Pachi command to ask gogui-score_est of each position")
    p.add_argument("--pachi-log", default=os.devnull,
                   help="file for Pachi's stderr (default: discarded)")
    p.add_argument("--rows", help="also write each position's verdicts to this JSON-lines file")
    p.add_argument("--timeout", type=float, default=120.0,
                   help="seconds Pachi may take over one answer; default 120")
    args = p.parse_args(argv)
    for name in ("games", "positions_per_game", "playouts"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    try:
        args.config = parse_rates(args.rate)
    except ValueError as exc:
        p.error(str(exc))
    return args


def without_setup(records, counts):
    """Yield the records without setup stones, counting the others in counts['setup']."""
    for record in records:
        if record.setup:
            counts["setup"] += 1
            continue
        yield record


def main(argv=None):
    """Return the exit status after measuring and printing the table and the JSON line."""
    args = parse_args(argv)
    if args.rows:       # made now, not after the hours of work that fill it
        os.makedirs(os.path.dirname(args.rows) or ".", exist_ok=True)
    policy = args.config.build()
    counts = nd.Stats()
    by_name = {}

    def remembered(records):
        for record in records:
            by_name[record.name] = record
            yield record

    records = remembered(without_setup(nd.read_games(args.data, size=SIZE), counts))
    asker = None
    if args.pachi:
        asker = Asker(args.pachi, args.pachi_log, args.timeout)
    rows = []
    start = time.time()
    try:
        for position in select_positions(records, args.games, args.positions_per_game,
                                         args.seed, counts):
            black_won = (position.outcome > 0) == (position.color == bd.BLACK)
            win_rate, mean_score = playout_verdicts(position, args.playouts, policy, args.seed)
            row = {"game": position.game, "index": position.index,
                   "stage": stage_of(position.index), "black_won": black_won,
                   "win_rate": right(win_rate, black_won),
                   "mean_score": right(mean_score, black_won),
                   "black_win_rate": round((win_rate + 1) / 2, 4),
                   "black_mean_score": round(mean_score, 2)}
            if asker:
                score = pachi_score(asker, by_name[position.game], position)
                row["pachi"] = right(score, black_won)
                row["pachi_black_mean_score"] = score
            rows.append(row)
            if len(rows) % 50 == 0:
                print(f"{len(rows)} positions, mean-score accuracy "
                      f"{score_rows(rows, 'mean_score')['accuracy']:.3f}", file=sys.stderr,
                      flush=True)
    except EngineFault as exc:
        print(f"\nerror: {exc}", file=sys.stderr)
        return 1
    finally:
        if asker:
            asker.engine.close()
    if not rows:
        print(f"error: no games with a winner in {args.data}", file=sys.stderr)
        return 1

    def part(selected):
        return {"positions": len(selected), **{k: score_rows(selected, k) for k in VERDICTS}}

    summary = {
        "data": args.data,
        "games": counts["games"],
        "positions": len(rows),
        "positions_per_game": args.positions_per_game,
        "seed": args.seed,
        "playouts": args.playouts,
        "policy": dataclasses.asdict(args.config),
        "pachi": args.pachi,
        "overall": part(rows),
        "by_stage": {label: part([r for r in rows if r["stage"] == label])
                     for label, _, _ in STAGES},
        "paired_mean_scores": paired(rows, "mean_score", "pachi") if asker else None,
        "skipped": {"no_winner": counts["no_winner"], "setup": counts["setup"]},
        "seconds": round(time.time() - start, 2),
    }
    if args.rows:
        with open(args.rows, "w", encoding="utf-8") as handle:
            handle.writelines(json.dumps(r) + "\n" for r in rows)
    print(format_table(summary), file=sys.stderr)
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
