"""Where an engine's final choice passed over its most visited move in a match, and what followed.

A line a game on stderr and one JSON line last on stdout:

    python -m benchmarks.choice_changes --records runs/m_minprior02_99 --engine A

The records are a benchmarks.match folder: its results.jsonl (the last record of each game; a
line cut short by a killed run is skipped, as the match runner skips it) and the scored games'
SGFs, whose move comments carry the search line darkgo logged for the move (win rate; top:
vertex visits win rate [pPRIOR] ...). A searched move of the engine is a change when it is not
the line's most visited move: the final choice (`--choice-min-prior`, `--favourite-margin`,
`--choice-prior-power`) took another. A pass after a search that put another move first is the
engine's settled-position check, not the final choice: such passes are counted apart. For each
change the summary counts the gap (the most visited move's win rate less the played move's),
the median priors of the passed-over and the played moves where the line gives priors, and
repeats: changes that pass over the same point as a change at one of the engine's two previous
searched moves. The drift of a searched move is the engine's root win rate --horizon of its
own searched moves later less the one of that move's search (for the moves with that many
after them). The drift after the changes against the drift after the other moves says what the
changes cost in the engine's own estimate, the opponent's replies included. The summary is
given for all games and for those the engine won and lost (draws only in all).
"""
import argparse
import json
import re
import statistics
import sys
from pathlib import Path

from sgfmill import sgf

from benchmarks.match import read_results

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
    try:
        for entry in found.group(2).split(", "):
            words = entry.split()
            if len(words) < 3:
                continue
            prior = next((float(w[1:]) for w in words[3:] if w.startswith("p")), None)
            top.append((words[0].upper(), int(words[1]), float(words[2]), prior))
        return (float(found.group(1)), top) if top else None
    except ValueError:      # not darkgo's line after all: the move counts as unsearched
        return None


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
    """Return (changes, settled passes, drifts after changes, drifts after the other moves) of
    one engine's moves in a game, as engine_moves gives them."""
    changes, changed_drifts, other_drifts = [], [], []
    settled_passes = 0
    previous_passed = []        # the points passed over at the engine's last two moves
    for i, move in enumerate(moves):
        best = move["top"][0]
        passed = best[0] if move["played"] != best[0] else None
        if passed is not None and move["played"] == "PASS":
            settled_passes += 1
            passed = None
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
    return changes, settled_passes, changed_drifts, other_drifts


def mean(values):
    """Return the mean rounded to 4 places, None for no values."""
    return round(statistics.fmean(values), 4) if values else None


def median(values):
    """Return the median rounded to 4 places, None for no values."""
    return round(statistics.median(values), 4) if values else None


def summarize(games):
    """Return the JSON summary of per-game dicts (won: True, False or None for a draw; changes,
    settled passes, drifts)."""
    def part(rows):
        changes = [c for g in rows for c in g["changes"]]
        return {
            "games": len(rows),
            "changes": len(changes),
            "changes_per_game": round(len(changes) / len(rows), 2) if rows else None,
            "repeats": sum(c["repeat"] for c in changes),
            "settled_passes": sum(g["settled_passes"] for g in rows),
            "mean_gap": mean([c["gap"] for c in changes if c["gap"] is not None]),
            "median_passed_prior": median([c["passed_prior"] for c in changes
                                           if c["passed_prior"] is not None]),
            "median_played_prior": median([c["played_prior"] for c in changes
                                           if c["played_prior"] is not None]),
            "drift_after_changes": mean([d for g in rows for d in g["changed_drifts"]]),
            "drift_after_others": mean([d for g in rows for d in g["other_drifts"]]),
        }
    return {"all": part(games), "won": part([g for g in games if g["won"] is True]),
            "lost": part([g for g in games if g["won"] is False])}


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
    if not results.is_file():
        print(f"error: cannot read {results}: no such file", file=sys.stderr)
        return 2
    try:
        latest = {record["index"]: record for record in read_results(str(results))}
    except (OSError, KeyError, TypeError) as exc:
        print(f"error: cannot read {results}: {exc}", file=sys.stderr)
        return 2
    games = []
    for index, record in latest.items():
        if not record.get("scored") or not record.get("sgf"):
            continue
        try:
            colour = "b" if record["black_engine"] == args.engine else "w"
            moves = engine_moves((args.records / record["sgf"]).read_bytes(), colour)
            winner = record["winner_engine"]
            result = record["result"]
        except (ValueError, KeyError, OSError) as exc:
            print(f"error: {results}: game {index} cannot be read: {exc}", file=sys.stderr)
            return 2
        changes, settled_passes, changed_drifts, other_drifts = game_changes(moves,
                                                                             args.horizon)
        won = None if winner is None else winner == args.engine
        games.append({"won": won, "changes": changes, "settled_passes": settled_passes,
                      "changed_drifts": changed_drifts, "other_drifts": other_drifts})
        passed = " ".join(f"{c['move']}:{c['passed']}>{c['played']}"
                          + ("*" if c["repeat"] else "") for c in changes)
        outcome = {True: "won ", False: "lost", None: "draw"}[won]
        print(f"game {index:3d} {colour} {outcome} {result:8s} {len(changes):2d} changes: "
              f"{passed}", file=sys.stderr)
    summary = {"records": str(args.records), "engine": args.engine, "horizon": args.horizon,
               **summarize(games)}
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
