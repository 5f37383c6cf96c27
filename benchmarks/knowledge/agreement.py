"""How often an engine's genmove plays the game's move, one position per game, over GTP.

One JSON line is printed last.

    python -m benchmarks.knowledge.agreement --data ../shared/data/tygem9d/tygem9d-2011.zip \
        --positions 300 -- --rollouts 5000
    python -m benchmarks.knowledge.agreement --data ../shared/data/tygem9d/tygem9d-2011.zip \
        --positions 300 -- --policy-only

Games are taken in archive order, one position from each: a move picked uniformly among the
game's non-pass moves by a generator seeded with --seed and the game's name (so a game's pick
does not depend on which games came before it), games shorter than --min-moves skipped. For
every position one engine process gets `boardsize 19`, `clear_board` (darkgo forgets its tree
there), `komi` (the game's own, from its KM, unless --komi says another: a search plays for
the win, so its move can depend on the komi the professionals played under), the game's
handicap stones (`set_free_handicap`), a `play` for every earlier move, and `genmove` for the
side to move; 'pass' and 'resign' count as misses.

The engine is `python gtp_main.py --resign-threshold 0` (never resign) with the flags after `--`
appended (a later flag wins, so `-- --resign-threshold 0.1` turns resigning back on); --engine
replaces the whole command, flags after `--` still appended. With --results, one JSON line per
position is appended as it finishes, and a rerun skips the games already there, so an
interrupted run resumes. --skip N starts after the first N usable games, so one long run can
be split over processes: run `--positions 600` and `--skip 600 --positions 600` with two
results files, join the files, and run `--positions 1200` on the joined one, which finds every
position done and prints the summary of all 1,200.

With --analyze the move is asked with `lz-genmove_analyze` and each result also keeps the root's
statistics the engine chose from (every move it lists: darkgo lists those with at least a tenth
of the most visited move's visits); --favourite-margins then adds to the summary the agreement
the same searches would have had under each `favourite_margin` of darkgo's final choice
(engine.player.robust_choice applied to the recorded moves), free of the run-to-run noise of a
second run.
"""
import argparse
import itertools
import json
import os
import random
import shlex
import shutil
import statistics
import sys
import tempfile
import time

from benchmarks.gtp_client import GTP_MAIN, EngineError, GtpEngine, split_engine_flags
from benchmarks.strength.records import append_result
from benchmarks.strength.stats import wilson_interval
from engine import board as bd
from engine.game import xy_to_vertex
from engine.player import FAVOURITE_MIN_SHARE, robust_choice
from engine.search import MoveStats, SearchResult
from nets import data as nd

SIZE = 19
# Stages by the number of moves played before the position: (label, first, last or None).
STAGES = (("0-49", 0, 49), ("50-99", 50, 99), ("100-149", 100, 149), ("150-199", 150, 199),
          ("200+", 200, None))


class ResultsFileError(Exception):
    """The results file holds positions of another engine, seed or komi."""


class EngineFault(Exception):
    """The engine failed an answer the benchmark cannot do without; the run stops."""


def point_to_vertex(p, size=SIZE):
    """Return the GTP vertex of an engine point (padded board, row 0 at the bottom), or 'pass'."""
    if p == bd.PASS:
        return "pass"
    w = size + 2
    return xy_to_vertex(p % w - 1, p // w - 1)


def stage_of(index):
    """Return the label of the stage that a position after index moves belongs to."""
    for label, first, last in STAGES:
        if index >= first and (last is None or index <= last):
            return label
    raise ValueError(f"negative move index {index}")


def pick_move(record, seed, min_moves):
    """Return the index of the move to predict in record, or None when the game has fewer than
    min_moves moves or no move other than passes.

    The pick is uniform over the non-pass moves and depends only on seed and the game's name.
    """
    if len(record.points) < min_moves:
        return None
    candidates = [i for i, p in enumerate(record.points) if p != bd.PASS]
    if not candidates:
        return None
    return random.Random(f"{seed}:{record.name}").choice(candidates)


def handicap_of(record):
    """Return the GTP vertices of the record's setup stones when they are all black (a free
    handicap); raise ValueError for other setups, which GTP cannot give an engine."""
    if not record.setup:
        return []
    if any(color != bd.BLACK for color, _ in record.setup) or len(record.setup) < 2:
        raise ValueError("setup stones other than a black handicap")
    return [point_to_vertex(p, record.size) for _, p in record.setup]


def select_positions(records, seed, min_moves, skipped, stages=None):
    """Yield (record, move index) for every usable game in order, counting the games left out
    in skipped by reason (short, setup, duplicate, and stage: the pick falls outside the
    stage labels given in stages, when given)."""
    seen = set()
    for record in records:
        if record.name in seen:
            # Results are keyed by game name, so a second game of the same name is left out.
            skipped["duplicate"] += 1
            continue
        seen.add(record.name)
        index = pick_move(record, seed, min_moves)
        if index is None:
            skipped["short"] += 1
            continue
        if stages is not None and stage_of(index) not in stages:
            skipped["stage"] += 1
            continue
        try:
            handicap_of(record)
        except ValueError:
            skipped["setup"] += 1
            continue
        yield record, index


def check_engine_program(parser, engine):
    """Exit through parser.error when the program of the engine command (None: this Python)
    cannot be found."""
    words = shlex.split(engine) if engine is not None else [sys.executable]
    if not words or shutil.which(words[0]) is None:
        parser.error(f"cannot find the program of engine command {engine!r}")


def engine_command(engine, flags):
    """Return the engine command: the given one or darkgo without resigning, flags appended."""
    if engine is None:
        base = (f"{shlex.quote(sys.executable)} {shlex.quote(os.path.relpath(GTP_MAIN))} "
                "--resign-threshold 0")
    else:
        base = engine
    return " ".join([base] + [shlex.quote(f) for f in flags])


def load_results(path, command, seed, komi):
    """Return the records of the results file by game name; raise ResultsFileError if one was
    made by another engine command, seed or komi."""
    records = {}
    if path is None or not os.path.exists(path):
        return records
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                # A line cut short when a run was killed mid-write; that position is redone.
                continue
            if (record["engine"], record["seed"], record["komi"]) != (command, seed, komi):
                raise ResultsFileError(
                    f"{path} holds game {record['game']} from another engine, seed or komi "
                    f"({record['engine']!r}, seed {record['seed']}, komi {record['komi']}); "
                    "use another --results file")
            records[record["game"]] = record
    return records


class Asker:
    """The engine of a run, with its GTP answers checked."""

    def __init__(self, command, log_path, timeout, tail_timeout=1.0):
        self.command = command
        self.timeout = timeout
        self.engine = GtpEngine(command, log_path, tail_timeout=tail_timeout)

    def ask(self, command, timeout=None):
        """Return the engine's Response; raise EngineFault if it died, hung or broke GTP."""
        try:
            response = self.engine.send(command, timeout or self.timeout)
        except EngineError as exc:
            raise EngineFault(f"engine failed on '{command}': {exc}") from None
        if response.ok is None:
            raise EngineFault(f"unreadable answer to '{command}': {response.text!r}")
        return response

    def require(self, command):
        """Return after the engine accepted command; raise EngineFault if it refused."""
        response = self.ask(command)
        if not response.ok:
            raise EngineFault(f"engine refused '{command}': {response.text}")

    def identity(self):
        """Return the engine's 'name version', or None when it gives no name."""
        name = self.ask("name")
        if not name.ok or not name.text:
            return None
        version = self.ask("version")
        return f"{name.text} {version.text}".strip() if version.ok else name.text


def parse_root(text):
    """Return [[vertex, visits, win rate, prior], ...] from the last 'info move' line of an
    lz-genmove_analyze answer (win rates and priors in 1/10000ths there), [] when none."""
    infos = [line for line in text.splitlines() if line.startswith("info move ")]
    if not infos:
        return []
    root = []
    for entry in infos[-1][len("info move "):].split(" info move "):
        words = entry.split()
        fields = dict(zip(words[1::2], words[2::2]))
        root.append([words[0], int(fields["visits"]), int(fields["winrate"]) / 10000,
                     int(fields["prior"]) / 10000])
    return root


# The summary's rechoice tables and the engine flag each rechooses under (the benchmark's own
# option is the flag's plural).
RECHOICE_FLAGS = (("favourite_margins", "--favourite-margin"),)


def rechosen(root, margin):
    """Return the vertex darkgo's final choice picks from recorded root moves under margin
    (the config key favourite_margin)."""
    children = sorted((MoveStats(vertex, visits, winrate, prior)
                       for vertex, visits, winrate, prior in root),
                      key=lambda m: -m.visits)
    choice = robust_choice(SearchResult(children, 0, 0.5, 0.0), margin)
    return None if choice is None else choice.point


def run_position(asker, record, index, komi=None, analyze=False):
    """Return the result dict of one position: the engine's move against the game's, or a dict
    with 'skipped' set when the engine refused one of the game's moves. komi None gives the
    engine the game's own. With analyze, the move comes from lz-genmove_analyze and the dict
    keeps the root's moves ('root')."""
    size = record.size
    komi = record.komi if komi is None else komi
    asker.require(f"boardsize {size}")
    asker.require("clear_board")
    asker.require(f"komi {komi:g}")
    handicap = handicap_of(record)
    if handicap:
        asker.require("set_free_handicap " + " ".join(handicap))
    for i in range(index):
        colour = "b" if record.colors[i] == bd.BLACK else "w"
        command = f"play {colour} {point_to_vertex(record.points[i], size)}"
        response = asker.ask(command)
        if not response.ok:
            return {"skipped": f"engine refused move {i}: '{command}': {response.text}"}
    colour = "b" if record.colors[index] == bd.BLACK else "w"
    expected = point_to_vertex(record.points[index], size)
    started = time.monotonic()
    # An interval of an hour: the only info line is the finished search's.
    command = f"lz-genmove_analyze {colour} 360000" if analyze else f"genmove {colour}"
    response = asker.ask(command)
    seconds = time.monotonic() - started
    if not response.ok:
        raise EngineFault(f"{command} failed: {response.text}")
    extra = {}
    if analyze:
        plays = [line for line in response.text.splitlines() if line.startswith("play ")]
        if not plays:
            raise EngineFault(f"{command} gave no move: {response.text!r}")
        played = plays[-1].split()[1]
        extra["root"] = parse_root(response.text)
    else:
        played = response.text.strip()
    return {"colour": colour, "expected": expected, "played": played,
            "agreed": played.upper() == expected.upper(), "seconds": round(seconds, 4), **extra}


def summarize(results, command, args, engine_name, skipped):
    """Return the JSON summary of the scored results (those without 'skipped')."""
    scored = [r for r in results if "skipped" not in r]
    n = len(scored)
    agreed = sum(r["agreed"] for r in scored)
    low, high = wilson_interval(agreed, n)
    by_stage = {}
    for label, _, _ in STAGES:
        rows = [r for r in scored if r["stage"] == label]
        k = sum(r["agreed"] for r in rows)
        lo, hi = wilson_interval(k, len(rows))
        by_stage[label] = {"positions": len(rows), "agreed": k,
                           "agreement": round(k / len(rows), 4) if rows else None,
                           "interval": [round(lo, 4), round(hi, 4)]}
    return {
        "positions": n,
        "agreed": agreed,
        "agreement": round(agreed / n, 4) if n else None,
        "interval": [round(low, 4), round(high, 4)],
        "by_stage": by_stage,
        "seconds_per_move": round(sum(r["seconds"] for r in scored) / n, 4) if n else None,
        # The median is what a move costs once the engine's first-call compilation is paid.
        "seconds_per_move_median": round(statistics.median(r["seconds"] for r in scored), 4)
        if n else None,
        "passes": sum(r["played"].lower() == "pass" for r in scored),
        "resigns": sum(r["played"].lower() == "resign" for r in scored),
        "engine": command,
        "engine_name": engine_name,
        "data": args.data,
        "seed": args.seed,
        "komi": args.komi,
        "min_moves": args.min_moves,
        "split": args.split,
        "stages": args.stages,
        "skip": args.skip,
        "skipped": dict(skipped),
        "favourite_margins": rechosen_agreement(scored, args.favourite_margins),
    }


def rechosen_agreement(scored, margins):
    """Return {margin: {positions, agreed}} over the results that carry root moves: how many
    agree with the game when the final choice is rechosen under each margin."""
    rooted = [r for r in scored if r.get("root")]
    table = {}
    for key in margins:
        agreed = sum((rechosen(r["root"], key) or "").upper() == r["expected"].upper()
                     for r in rooted)
        table[f"{key:g}"] = {"positions": len(rooted), "agreed": agreed}
    return table


def format_table(summary):
    """Return a human-readable table of agreement by stage and overall."""
    lines = [f"engine: {summary['engine']}", f"{'moves':>8}  {'positions':>9}  {'agreed':>6}  "
             f"{'rate':>6}  95% interval"]
    rows = list(summary["by_stage"].items()) + [("all", summary)]
    for label, row in rows:
        rate = "n/a" if row["agreement"] is None else f"{row['agreement']:.3f}"
        low, high = row["interval"]
        lines.append(f"{label:>8}  {row['positions']:>9}  {row['agreed']:>6}  {rate:>6}  "
                     f"[{low:.3f}, {high:.3f}]")
    for key, flag in RECHOICE_FLAGS:
        for value, row in summary[key].items():
            lines.append(f"final choice with {flag} {value}: {row['agreed']} of "
                         f"{row['positions']}")
    if summary["seconds_per_move"] is not None:
        lines.append(f"{summary['seconds_per_move']:.3f} s per genmove (median "
                     f"{summary['seconds_per_move_median']:.3f} s)")
    return "\n".join(lines)


def parse_args(argv):
    """Return (parsed arguments, engine flags): the words after the first '--' are the flags."""
    argv, flags = split_engine_flags(argv)
    p = argparse.ArgumentParser(prog="python -m benchmarks.knowledge.agreement",
                                description=__doc__.split("\n")[0],
                                usage="%(prog)s --data PATH [options] [-- engine flags...]")
    p.add_argument("--data", nargs="+", required=True, help="SGF files, directories, archives")
    p.add_argument("--positions", type=int, required=True,
                   help="positions to measure, one per game")
    p.add_argument("--seed", type=int, default=0, help="seed of the move picks; default 0")
    p.add_argument("--engine", help="whole engine command (default: python gtp_main.py "
                                    "--resign-threshold 0)")
    p.add_argument("--komi", type=float, help="komi given to the engine; default: each game's "
                                              "own (its KM)")
    p.add_argument("--min-moves", type=int, default=20,
                   help="skip games with fewer moves than this; default 20")
    p.add_argument("--split", choices=["all", "train", "val"], default="all",
                   help="only games of this hash split (default: every game)")
    p.add_argument("--stages", nargs="+", choices=[label for label, _, _ in STAGES],
                   metavar="STAGE",
                   help="only the games whose picked move falls in these stages (each pick "
                        "stays the one it is without the filter); default: every stage")
    p.add_argument("--skip", type=int, default=0, metavar="N",
                   help="leave out the first N usable games (after --stages), to split a run "
                        "over processes; default 0")
    p.add_argument("--results", help="JSON-lines file of finished positions; a rerun resumes")
    p.add_argument("--engine-log", help="engine stderr goes here (default: a temporary file)")
    p.add_argument("--timeout-per-move", type=float, default=600.0,
                   help="seconds the engine may take over one answer; default 600")
    p.add_argument("--analyze", action="store_true",
                   help="ask lz-genmove_analyze and keep the root's moves in each result")
    p.add_argument("--favourite-margins", type=float, nargs="+", default=[], metavar="M",
                   help="with --analyze: also report the agreement of the final choice "
                        "rechosen under each of these favourite_margin values (needs the "
                        f"moves with at least {FAVOURITE_MIN_SHARE:g} of the most visited "
                        "move's visits in the root's list)")
    args = p.parse_args(argv)
    for key, flag in RECHOICE_FLAGS:
        if getattr(args, key) and not args.analyze:
            p.error(f"{flag}s needs --analyze")
    if args.positions < 1:
        p.error("--positions must be at least 1")
    if args.skip < 0:
        p.error("--skip must be 0 or more")
    check_engine_program(p, args.engine)
    return args, flags


def main(argv=None):
    """Return the exit status after measuring agreement and printing the table and JSON."""
    args, flags = parse_args(argv)
    command = engine_command(args.engine, flags)
    try:
        done = load_results(args.results, command, args.seed, args.komi)
    except ResultsFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if done:
        print(f"resuming: {len(done)} positions in {args.results}", file=sys.stderr)
    log_path = args.engine_log
    if log_path is None:
        fd, log_path = tempfile.mkstemp(prefix="agreement-engine-", suffix=".log")
        os.close(fd)
    print(f"engine: {command} (stderr to {log_path})", file=sys.stderr)
    stats = nd.Stats()
    skipped = nd.Stats()
    records = nd.read_games(args.data, split=args.split, size=SIZE, stats=stats)
    results = []
    scored = []
    asker = None
    engine_name = None
    status = 0
    try:
        positions = select_positions(records, args.seed, args.min_moves, skipped, args.stages)
        for record, index in itertools.islice(positions, args.skip, None):
            result = done.get(record.name)
            if result is None or result["move"] != index:
                if asker is None:
                    # lz-genmove_analyze is silent while it searches: wait the move's time
                    # for the lines after its '='.
                    asker = Asker(command, log_path, args.timeout_per_move,
                                  args.timeout_per_move if args.analyze else 1.0)
                    engine_name = asker.identity()
                outcome = run_position(asker, record, index, args.komi, args.analyze)
                result = {"game": record.name, "move": index, "stage": stage_of(index),
                          **outcome, "engine": command, "engine_name": engine_name,
                          "seed": args.seed, "komi": args.komi}
                if args.results is not None:
                    append_result(args.results, result)
            results.append(result)
            engine_name = engine_name or result.get("engine_name")
            if "skipped" in result:
                skipped["refused"] += 1
                print(f"{record.name} skipped: {result['skipped']}", file=sys.stderr)
                continue
            scored.append(result)
            agreed = sum(r["agreed"] for r in scored)
            print(f"position {len(scored)}/{args.positions} {record.name} move {index}: "
                  f"{result['played']} (game {result['expected']}) "
                  f"{'agree' if result['agreed'] else 'miss'}; agreement {agreed}/{len(scored)} "
                  f"= {agreed / len(scored):.3f}", file=sys.stderr, flush=True)
            if len(scored) >= args.positions:
                break
    except EngineFault as exc:
        print(f"error: {exc} (engine log {log_path})" + (
            "; finished positions are kept in the results file, rerun to resume"
            if args.results else ""), file=sys.stderr)
        status = 1
    except KeyboardInterrupt:
        if asker is not None:
            asker.engine.kill()
        print("interrupted" + ("; finished positions are kept in the results file, rerun the "
                               "same command to resume" if args.results else ""),
              file=sys.stderr)
        status = 130
    finally:
        if asker is not None:
            asker.engine.close()
    if status:
        return status
    skipped.update({k: v for k, v in stats.items() if k != "games"})
    summary = summarize(results, command, args, engine_name, skipped)
    if summary["positions"] < args.positions:
        print(f"warning: only {summary['positions']} positions in the data", file=sys.stderr)
    print(format_table(summary))
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
