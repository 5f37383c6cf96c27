"""Ladders run out in game records: how often a player extends a chain that the last move put
in atari where the extension runs into a working ladder (engine.ladder.futile_escapes), out of
the positions where it had such an extension; and, with --ask, how often an engine's genmove
plays one in those same positions. One JSON line last.

    python -m benchmarks.knowledge.ladder_runs --games runs/m_pachi10k_92 [--player darkgo]
    python -m benchmarks.knowledge.ladder_runs --games benchmarks/records/m_pachi1k_34.tar.xz \
        --ask -- --rollouts 5000 --threads 1 --seed 1

--games takes SGF files, directories and archives (zip, tar, tar.xz: a record archive of
benchmarks/records as it is). The player is found by name in PB and PW (a substring, any
case); games it did not play in are counted and left out.

--ask replays each such position into one engine process over GTP, as
benchmarks.knowledge.agreement does (`boardsize`, `clear_board`, the game's `komi`, a `play` for
every earlier move), asks `genmove` for the player's colour, and counts the answers that are
one of the position's futile escapes: a quick check, position by position, of whether a change
stops the engine running the ladders its games ran. The engine is `python gtp_main.py
--resign-threshold 0` with the flags after `--` appended, or --engine's command.
"""
import argparse
import json
import os
import sys
import tempfile

import numpy as np
from sgfmill import sgf

from benchmarks.gtp_client import split_engine_flags
from benchmarks.knowledge.agreement import (Asker, EngineFault, check_engine_program,
                                            engine_command, handicap_of, point_to_vertex,
                                            run_position)
from benchmarks.strength.stats import wilson_interval
from engine import board as bd
from engine import ladder as ld
from nets import data as nd

# Seconds the engine may take over one answer, unless --timeout-per-move says otherwise.
DEFAULT_TIMEOUT = 600.0


def player_colors(data, player):
    """Return the colours (BLACK, WHITE) whose player name in PB / PW contains player (any
    case), and the board size, of one SGF game's bytes."""
    game = sgf.Sgf_game.from_bytes(data)
    root = game.get_root()
    colors = [color for color, key in ((bd.BLACK, "PB"), (bd.WHITE, "PW"))
              if root.has_property(key) and player.lower() in root.get(key).lower()]
    return colors, game.get_size()


def chased_positions(record, colors):
    """Return [(move index, the futile escapes' points), ...] for the positions of a Record
    where one of colors was to move and had a futile escape to play."""
    b = nd.new_game_board(record)
    sc = ld.new_ladder_scratch(b.stones.shape[0])
    escapes = np.zeros(4, np.int32)
    positions = []
    for i in range(len(record.points)):
        color = int(record.colors[i])
        if color in colors:
            found = ld.futile_escapes(b, color, sc, escapes)
            if found:
                positions.append((i, [int(p) for p in escapes[:found]]))
        bd.play(b, int(record.points[i]), color)
    return positions


def ask_engine(chased, command, log_path, timeout):
    """Ask the engine genmove at each (label, record, index, escapes) of chased; return
    (positions asked, {label: [move numbers where it played a futile escape]}, positions left
    out: games whose setup GTP cannot give, or whose moves the engine refused). Raise
    EngineFault when the engine fails."""
    asker = None
    asked, runs, left_out = 0, {}, 0
    try:
        for label, record, index, escapes in chased:
            try:
                handicap_of(record)
            except ValueError as exc:
                left_out += 1
                print(f"{label} move {index + 1} skipped: {exc}", file=sys.stderr)
                continue
            if asker is None:
                asker = Asker(command, log_path, timeout)
            outcome = run_position(asker, record, index)
            if "skipped" in outcome:
                left_out += 1
                print(f"{label} move {index + 1} skipped: {outcome['skipped']}",
                      file=sys.stderr)
                continue
            asked += 1
            futile = {point_to_vertex(p, record.size).upper() for p in escapes}
            if outcome["played"].upper() in futile:
                runs.setdefault(label, []).append(index + 1)
            extended = sum(len(v) for v in runs.values())
            print(f"{label} move {index + 1}: {outcome['played']} (futile: "
                  f"{' '.join(sorted(futile))}); extended {extended}/{asked}",
                  file=sys.stderr, flush=True)
    finally:
        if asker is not None:
            asker.engine.close()
    return asked, runs, left_out


def parse_args(argv):
    """Return (parsed arguments, engine flags): the words after the first '--' are the flags."""
    argv, flags = split_engine_flags(argv)
    p = argparse.ArgumentParser(prog="python -m benchmarks.knowledge.ladder_runs",
                                description=__doc__.split("\n")[0],
                                usage="%(prog)s --games PATH... [options] [-- engine flags...]")
    p.add_argument("--games", nargs="+", required=True, help="SGF files, directories, archives")
    p.add_argument("--player", default="darkgo", help="name in PB / PW (default darkgo)")
    p.add_argument("--ask", action="store_true",
                   help="also ask an engine's genmove in every position where the player had "
                        "a futile escape")
    p.add_argument("--engine", help="with --ask, the whole engine command (default: python "
                                    "gtp_main.py --resign-threshold 0)")
    p.add_argument("--engine-log", help="engine stderr goes here (default: a temporary file)")
    p.add_argument("--timeout-per-move", type=float, default=DEFAULT_TIMEOUT,
                   help=f"seconds the engine may take over one answer; default "
                        f"{DEFAULT_TIMEOUT:g}")
    args = p.parse_args(argv)
    if not args.ask and (args.engine is not None or args.engine_log is not None or flags
                         or args.timeout_per_move != DEFAULT_TIMEOUT):
        p.error("--engine, --engine-log, --timeout-per-move and engine flags need --ask")
    if args.timeout_per_move <= 0:
        p.error("--timeout-per-move must be above 0")
    check_engine_program(p, args.engine)
    return args, flags


def main(argv=None):
    args, flags = parse_args(argv)
    try:
        inputs = nd.list_inputs(args.games)
    except FileNotFoundError as e:
        sys.exit(f"--games: no such file or directory: {e}")
    games, skipped, chased, runs = 0, 0, [], {}
    for path in inputs:
        for name, data in nd.read_path(path):
            try:
                colors, size = player_colors(data, args.player)
            except ValueError:
                skipped += 1
                continue
            records = nd.parse_sgf_bytes(name, data, size) if colors else []
            if not records:
                skipped += 1
                continue
            games += 1
            label = f"{os.path.basename(path)}:{name}"
            record = records[0]
            for index, escapes in chased_positions(record, colors):
                chased.append((label, record, index, escapes))
                if int(record.points[index]) in escapes:
                    runs.setdefault(label, []).append(index + 1)
    if not games:
        sys.exit(f"no games of a player named {args.player!r} in {args.games}")
    extensions = sum(len(v) for v in runs.values())
    summary = {"player": args.player, "games": games, "skipped": skipped,
               "chased_positions": len(chased), "futile_extensions": extensions,
               "games_with_one": len(runs),
               "share_extended": round(extensions / len(chased), 4) if chased else None,
               "moves": runs}
    if args.ask:
        command = engine_command(args.engine, flags)
        log_path = args.engine_log
        if log_path is None:
            fd, log_path = tempfile.mkstemp(prefix="ladder-runs-engine-", suffix=".log")
            os.close(fd)
        print(f"engine: {command} (stderr to {log_path})", file=sys.stderr)
        try:
            asked, engine_runs, left_out = ask_engine(chased, command, log_path,
                                                     args.timeout_per_move)
        except EngineFault as exc:
            sys.exit(f"error: {exc} (engine log {log_path})")
        extended = sum(len(v) for v in engine_runs.values())
        low, high = wilson_interval(extended, asked)
        summary["engine"] = {
            "command": command, "positions": asked, "left_out": left_out,
            "futile_extensions": extended,
            "share_extended": round(extended / asked, 4) if asked else None,
            "ci95": [round(low, 4), round(high, 4)], "moves": engine_runs}
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
