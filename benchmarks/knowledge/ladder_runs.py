"""Ladders run out in game records: how often a player extends a chain that the last move put
in atari where the extension runs into a working ladder (engine.ladder.futile_escapes), out of
the positions where it had such an extension; one JSON line last.

    python -m benchmarks.knowledge.ladder_runs --games runs/m_pachi10k_92 [--player darkgo]

--games takes SGF files, directories and archives (zip, tar, tar.xz: a record archive of
benchmarks/records as it is). The player is found by name in PB and PW (a substring, any
case); games it did not play in are counted and left out.
"""
import argparse
import json
import os
import sys

import numpy as np
from sgfmill import sgf

from engine import board as bd
from engine import ladder as ld
from nets import data as nd


def player_colors(data, player):
    """Return the colours (BLACK, WHITE) whose player name in PB / PW contains player (any
    case), and the board size, of one SGF game's bytes."""
    game = sgf.Sgf_game.from_bytes(data)
    root = game.get_root()
    colors = [color for color, key in ((bd.BLACK, "PB"), (bd.WHITE, "PW"))
              if root.has_property(key) and player.lower() in root.get(key).lower()]
    return colors, game.get_size()


def count_game(record, colors):
    """Return (positions where one of colors had a futile escape to play, the move numbers
    (1-based) where it played one) of a Record."""
    b = nd.new_game_board(record)
    sc = ld.new_ladder_scratch(b.stones.shape[0])
    escapes = np.zeros(4, np.int32)
    chased, played = 0, []
    for i in range(len(record.points)):
        color = int(record.colors[i])
        if color in colors:
            found = ld.futile_escapes(b, color, sc, escapes)
            if found:
                chased += 1
                if int(record.points[i]) in escapes[:found]:
                    played.append(i + 1)
        bd.play(b, int(record.points[i]), color)
    return chased, played


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--games", nargs="+", required=True, help="SGF files, directories, archives")
    p.add_argument("--player", default="darkgo", help="name in PB / PW (default darkgo)")
    args = p.parse_args(argv)
    try:
        inputs = nd.list_inputs(args.games)
    except FileNotFoundError as e:
        sys.exit(f"--games: no such file or directory: {e}")
    games, skipped, chased, runs = 0, 0, 0, {}
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
            game_chased, played = count_game(records[0], colors)
            chased += game_chased
            if played:
                runs[f"{os.path.basename(path)}:{name}"] = played
    if not games:
        sys.exit(f"no games of a player named {args.player!r} in {args.games}")
    extensions = sum(len(v) for v in runs.values())
    print(json.dumps({"player": args.player, "games": games, "skipped": skipped,
                      "chased_positions": chased, "futile_extensions": extensions,
                      "games_with_one": len(runs),
                      "share_extended": round(extensions / chased, 4) if chased else None,
                      "moves": runs}))


if __name__ == "__main__":
    main()
