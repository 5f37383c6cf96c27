"""Where an engine's final choice passed over its most visited move in a match, and what followed.

A line a game on stderr and one JSON line last on stdout:

    python -m benchmarks.choice_changes --records runs/m_minprior02_99 --engine A

The records are a benchmarks.match folder: its results.jsonl and the SGFs, whose move comments
carry the search line darkgo logged for the move (win rate; top: vertex visits win rate [pPRIOR],
...). A move of the engine is a change when it is not the line's most visited move: the final
choice (`--choice-min-prior`, `--favourite-margin`, `--choice-prior-power`) took another. For
each change the summary counts the gap (the most visited move's win rate less the played
move's), the passed-over move's prior where the line gives priors, and repeats: changes that
pass over the same point as the engine's previous change, one or two of its moves before.
The drift of a move is the engine's root win rate --horizon of its own moves later less the
one before the move (for moves with that many own searched moves after them). The drift after
the changes against the drift after the other moves says what the changes cost in the engine's
own estimate, the opponent's replies included. Games are split by whether the engine won them.
"""
import argparse
import json
import re
import statistics
import sys
from pathlib import Path

from sgfmill import sgf

_SEARCH_LINE = re.compile(r"win rate ([\d.]+); top: ([^;\n]*)")
COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"   # GTP's, up to 25x25


def vertex(move):
    """Return the GTP vertex of an sgfmill move ((row, col), None for a pass)."""
    if move is None:
        return "PASS"
    row, col = move
    return f"{COLUMNS[col]}{row + 1}"


def parse_search_line(comment):
    """Return (root win rate, [(vertex, visits, win rate, prior or None), ...]) from a move's
    comment, None when it carries no search line."""
    found = _SEARCH_LINE.search(comment)
    if not found:
        return None
    top = []
    for entry in found.group(2).split(", "):
        words = entry.split()
        if len(words) < 3:
            continue
        prior = float(words[3][1:]) if len(words) > 3 and words[3].startswith("p") else None
        top.append((words[0].upper(), int(words[1]), float(words[2]), prior))
    return (float(found.group(1)), top) if top else None


def engine_moves(sgf_bytes, colour):
    """Return the searched moves of colour in a game: dicts with the move number (1-based), the
    played vertex, the root win rate and the line's top moves."""
    game = sgf.Sgf_game.from_bytes(sgf_bytes)
    moves = []
    for number, node in enumerate(game.get_main_sequence()[1:], start=1):
        node_colour, move = node.get_move()
        if node_colour != colour or not node.has_property("C"):
            continue
        line = parse_search_line(node.get("C"))
        if line is not None:
            moves.append({"number": number, "played": vertex(move),
                          "root": line[0], "top": line[1]})
    return moves


def game_changes(moves, horizon):
    """Return (changes, drifts after changes, drifts after the other moves) of one engine's
    moves in a game, as engine_moves gives them."""
    changes, changed_drifts, other_drifts = [], [], []
    previous_passed = []        # the points passed over at the engine's last two moves
    for i, move in enumerate(moves):
        best = move["top"][0]
        passed = best[0] if move["played"] != best[0] else None
        if passed is not None:
            played = next((t for t in move["top"] if t[0] == move["played"]), None)
            changes.append({"move": move["number"], "passed": passed, "played": move["played"],
                            "gap": None if played is None else round(best[2] - played[2], 4),
                            "passed_prior": best[3],
                            "played_prior": None if played is None else played[3],
                            "repeat": passed in previous_passed})
        if i + horizon < len(moves):
            drift = moves[i + horizon]["root"] - move["root"]
            (changed_drifts if passed is not None else other_drifts).append(drift)
        previous_passed = (previous_passed + [passed])[-2:]
    return changes, changed_drifts, other_drifts


def mean(values):
    return round(statistics.fmean(values), 4) if values else None


def summarize(games):
    """Return the JSON summary of per-game dicts (won, changes, drifts)."""
    def part(rows):
        changes = [c for g in rows for c in g["changes"]]
        gaps = [c["gap"] for c in changes if c["gap"] is not None]
        priors = [c["passed_prior"] for c in changes if c["passed_prior"] is not None]
        return {
            "games": len(rows),
            "changes": len(changes),
            "changes_per_game": round(len(changes) / len(rows), 2) if rows else None,
            "repeats": sum(c["repeat"] for c in changes),
            "mean_gap": mean(gaps),
            "median_passed_prior": round(statistics.median(priors), 4) if priors else None,
            "drift_after_changes": mean([d for g in rows for d in g["changed_drifts"]]),
            "drift_after_others": mean([d for g in rows for d in g["other_drifts"]]),
        }
    return {"all": part(games), "won": part([g for g in games if g["won"]]),
            "lost": part([g for g in games if not g["won"]])}


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m benchmarks.choice_changes",
                                description=__doc__.split("\n")[0])
    p.add_argument("--records", required=True, type=Path,
                   help="a benchmarks.match folder: results.jsonl and the games' SGFs")
    p.add_argument("--engine", choices=("A", "B"), required=True,
                   help="whose moves: A (the match's --black) or B")
    p.add_argument("--horizon", type=int, default=5,
                   help="own moves ahead at which the drift is read; default 5")
    args = p.parse_args(argv)
    if args.horizon < 1:
        p.error("--horizon must be at least 1")
    return args


def main(argv=None):
    """Return the exit status after printing a line a game and the JSON summary."""
    args = parse_args(argv)
    results = args.records / "results.jsonl"
    try:
        lines = results.read_text().splitlines()
    except OSError as exc:
        print(f"error: cannot read {results}: {exc}", file=sys.stderr)
        return 2
    games = []
    for text in lines:
        try:
            record = json.loads(text)
            if not record.get("scored") or not record.get("sgf"):
                continue
            colour = "b" if record["black_engine"] == args.engine else "w"
            moves = engine_moves((args.records / record["sgf"]).read_bytes(), colour)
        except (ValueError, KeyError, OSError) as exc:
            print(f"error: {results}: a record cannot be read: {exc}", file=sys.stderr)
            return 2
        changes, changed_drifts, other_drifts = game_changes(moves, args.horizon)
        won = record["winner_engine"] == args.engine
        games.append({"index": record["index"], "won": won, "changes": changes,
                      "changed_drifts": changed_drifts, "other_drifts": other_drifts})
        passed = " ".join(f"{c['move']}:{c['passed']}>{c['played']}"
                          + ("*" if c["repeat"] else "") for c in changes)
        print(f"game {record['index']:3d} {colour} {'won ' if won else 'lost'} "
              f"{record['result']:8s} {len(changes):2d} changes: {passed}", file=sys.stderr)
    summary = {"records": str(args.records), "engine": args.engine, "horizon": args.horizon,
               **summarize(games)}
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
