"""Reading in fights, scored on GNU Go's regression suites: its move-choice suites, and its
reading suites turned into move problems. A table on stderr and one JSON line last on stdout:

    python -m benchmarks.knowledge.reading GNUGO/regression -- --rollouts 5000 --threads 1
    python -m benchmarks.knowledge.reading GNUGO/regression --engine "gnugo --mode gtp"

GNUGO/regression is the folder of GNU Go's source that holds the suites and their games
(`fetch` github:runningskull/gnugo, then `git archive HEAD regression | tar x`; it is not
shipped here). Two parts, each a total and one row a suite:

- "moves": the tests of MOVE_SUITES that ask for a move with `reg_genmove` or `genmove` (560
  in GNU Go 3.8's tree), run as benchmarks.strength.regress runs them. `restricted_genmove`
  and `gg_genmove` are left out: they are GNU Go's own commands.
- "reading": the tests of READING_SUITES, which ask GNU Go's reading commands for a status,
  turned into move problems: the point that `owl_attack` (`owl_defend`) finds is the move
  expected of the attacker (the defender) of the dragon; `dragon_status`'s answer `critical A
  D` gives two problems, A for the attacker and D for the defender; `connect` (`disconnect`)
  the move for the owner of the first stone (its opponent); `analyze_semeai A B` the move for
  A's owner when A, moving first, wins and passing is not among the answers. Only answers
  that succeed outright (1; not ko, not failure) with a move give problems. The colour of the
  dragon is read from the loaded game (engine.sgf).

A problem is solved when the engine's move is among those expected (regardless of case). Each
suite runs in one engine process; --results writes one JSON line per problem. --replay serves
an engine without `loadsgf` and `reg_genmove` (Pachi): before each problem its position is set
up with `boardsize`, `clear_board`, `komi` and a `play` for every setup stone and move, and the
move is asked with `genmove`.
"""
import argparse
import json
import os
import re
import shlex
import sys
import tempfile
import time

from benchmarks.gtp_client import darkgo_command, split_engine_flags
from benchmarks.strength.regress import (SuiteError, Step, parse_suite, read_suite,
                                         resolve_loadsgf, run_suite)
from engine import board as bd
from engine import sgf
from engine.game import IllegalMove, color_from_text

MOVE_SUITES = ("seki", "golife", "thrash", "nicklas2", "trevor", "nando", "viking", "global",
               "tactics", "tactics1", "blunder", "kgs", "endgame", "strategy", "strategy2",
               "joseki")
READING_SUITES = ("owl", "ld_owl", "semeai", "connection")
MOVE_COMMANDS = ("reg_genmove", "genmove")
SOLVED = ("pass", "unexpected pass")
# One move, or alternatives in parentheses: "C3", "(A15|A18)".
_MOVES = r"([A-HJ-Za-hj-z]\d{1,2}|PASS|\([A-HJ-Za-hj-z0-9|]+\)|\(.*PASS.*\))"
_SUCCESS = re.compile(r"1 " + _MOVES)
_CRITICAL = re.compile(r"critical " + _MOVES + " " + _MOVES)
_SEMEAI = re.compile(r"1 \d " + _MOVES)


def move_pattern(text):
    """Return the alternatives of a move answer ('(A1|B2)' or 'A1') as 'A1|B2', or None
    when passing is among them (the position then asks for no move)."""
    moves = text.strip("()")
    if "PASS" in moves.upper().split("|"):
        return None
    return moves


def problems_of(command, expected):
    """Return [(dragon vertex, True for its owner to move, expected moves)] for one reading
    test's command and the pattern its answer must match."""
    words = command.split()
    kind, args = words[0], words[1:]
    if kind in ("owl_attack", "owl_defend") and (m := _SUCCESS.fullmatch(expected)):
        found = [(args[0], kind == "owl_defend", move_pattern(m.group(1)))]
    elif kind == "dragon_status" and (m := _CRITICAL.fullmatch(expected)):
        found = [(args[0], False, move_pattern(m.group(1))),
                 (args[0], True, move_pattern(m.group(2)))]
    elif kind in ("connect", "disconnect") and (m := _SUCCESS.fullmatch(expected)):
        found = [(args[0], kind == "connect", move_pattern(m.group(1)))]
    elif kind == "analyze_semeai" and (m := _SEMEAI.fullmatch(expected)):
        found = [(args[0], True, move_pattern(m.group(1)))]
    else:
        found = []
    return [f for f in found if f[2]]


class Position:
    """The position a suite's set-up has reached: its last `loadsgf` and the `play` and
    `undo` commands after it (GNU Go's suites add moves to a loaded game that way)."""

    def __init__(self):
        self.loadsgf = None
        self.moves = []
        self._game = None

    def follow(self, command):
        """Take one set-up command into account; return False for one it does not track."""
        kind = command.split()[0]
        if kind == "loadsgf":
            self.loadsgf, self.moves = command, []
        elif kind == "play":
            self.moves.append(command)
        elif kind == "undo" and self.moves:
            self.moves.pop()
        else:
            return False
        self._game = None
        return True

    def commands(self):
        """Return the set-up commands that reach the position from any other."""
        return [self.loadsgf] + self.moves if self.loadsgf else list(self.moves)

    def game(self):
        """Return the position as an engine.game.Game, or None when there is no loaded game
        or it cannot be read or replayed."""
        if self._game is None and self.loadsgf is not None:
            words = self.loadsgf.split()
            try:
                game = sgf.load_game(words[1], int(words[2]) if len(words) > 2 else None)
                for command in self.moves:
                    _, color, vertex = command.split()
                    game.play(color_from_text(color), game.parse_vertex(vertex))
            except (sgf.SgfError, ValueError, OSError, IllegalMove):
                return None
            self._game = game
        return self._game


def dragon_color(position, vertex):
    """Return the colour of the stone at vertex in the position, or None when the point is
    empty or the position cannot be read."""
    game = position.game()
    if game is None:
        return None
    try:
        color = game.color_at(game.parse_vertex(vertex))
    except ValueError:
        return None
    return color if color in (bd.BLACK, bd.WHITE) else None


def reading_suite(path):
    """Return (the text of a suite of move problems made from a GNU Go reading suite, tests
    that gave none); raise SuiteError for a file that cannot be read. Each problem comes
    with the set-up commands of its position."""
    try:
        with open(path, encoding="utf-8-sig", errors="replace") as f:
            steps = parse_suite(f.read())
    except OSError as exc:
        raise SuiteError(f"{path}: {exc.strerror or exc}") from None
    folder = os.path.dirname(os.path.abspath(path))
    position = Position()
    lines, skipped, number = [], 0, 0
    for step in steps:
        command = resolve_loadsgf(step.command, folder)
        if step.number is None:
            position.follow(standard_setup(command))
            continue
        problems = [] if step.expectation is None or step.expectation.negate else \
            problems_of(command, step.expectation.pattern)
        color = dragon_color(position, problems[0][0]) if problems else None
        if color is None:
            skipped += 1
            continue
        for _, owner_moves, moves in problems:
            mover = color if owner_moves else 3 - color
            number += 1
            lines.append(f"# {os.path.basename(path)} {step.number}: {command}")
            lines.extend(position.commands())
            lines.append(f"{number} reg_genmove {'black' if mover == bd.BLACK else 'white'}")
            lines.append(f"#? [{moves}]")
    return "\n".join(lines) + "\n", skipped


def standard_setup(command):
    """Return a set-up command in standard GTP: GNU Go's shorthands `black V`, `white V` and
    `trymove COLOR V` become `play`, and `popgo` becomes `undo` (for the suites' set-up they
    mean the same), so that every engine reaches the position GNU Go does."""
    words = command.split()
    if words[0] in ("black", "white") and len(words) == 2:
        return f"play {words[0]} {words[1]}"
    if words[0] == "trymove" and len(words) == 3:
        return f"play {words[1]} {words[2]}"
    return "undo" if words == ["popgo"] else command


def move_suite(path):
    """Return the steps of a move-choice suite: its set-up (standard_setup) and its
    reg_genmove and genmove tests, loadsgf paths resolved."""
    steps = [s for s in read_suite(path, only_genmove=True)
             if s.number is None or s.command.split()[0] in MOVE_COMMANDS]
    for step in steps:
        if step.number is None:
            step.command = standard_setup(step.command)
    return steps


def replayed(steps):
    """Return steps for an engine without loadsgf: each test preceded by the set-up of its
    position (Position) as boardsize, clear_board, komi and plays, and asking with
    `genmove`; raise SuiteError for a position that cannot be loaded."""
    out, position = [], Position()
    for step in steps:
        words = step.command.split()
        if step.number is None:
            if position.loadsgf is None and words[0] != "loadsgf" or \
                    not position.follow(step.command):
                out.append(step)
            continue
        if position.loadsgf is not None:
            game = position.game()
            if game is None:
                raise SuiteError(f"line {step.line}: cannot set up {position.commands()}")
            commands = [f"boardsize {game.size}", "clear_board", f"komi {game.rules.komi}"]
            commands += [f"play {'b' if color == bd.BLACK else 'w'} {game.vertex(p)}"
                         for color, p in game.setup + game.moves]
            out.extend(Step(step.line, None, command) for command in commands)
        command = step.command
        if words[0] in MOVE_COMMANDS:
            command = " ".join(["genmove"] + words[1:])
        out.append(Step(step.line, step.number, command, step.expectation))
    return out


def parse_args(argv):
    argv, flags = split_engine_flags(argv)
    p = argparse.ArgumentParser(prog="python -m benchmarks.knowledge.reading",
                                description=__doc__.split("\n")[0])
    p.add_argument("regression", help="GNU Go's regression folder")
    p.add_argument("--engine", help="engine command (default: darkgo's gtp_main.py)")
    p.add_argument("--part", choices=("moves", "reading", "all"), default="all")
    p.add_argument("--suites", nargs="+", help="only these suites (names without .tst)")
    p.add_argument("--timeout", type=float, default=600.0,
                   help="seconds an answer may take; default 600")
    p.add_argument("--results", help="write one JSON line per test to this file")
    p.add_argument("--replay", action="store_true",
                   help="set each position up with play commands and ask with genmove, for "
                        "an engine without loadsgf and reg_genmove")
    args = p.parse_args(argv)
    known = set(MOVE_SUITES) | set(READING_SUITES)
    if args.suites and not set(args.suites) <= known:
        p.error(f"unknown suites {sorted(set(args.suites) - known)}; known: {sorted(known)}")
    return args, flags


def main(argv=None):
    """Return 0 when every suite ran to its end, 1 when an engine broke off a suite, 2 for a
    suite that cannot be read (then none runs)."""
    args, flags = parse_args(argv)
    plan = []
    with tempfile.TemporaryDirectory(prefix="reading-") as folder:
        try:
            for part, names in (("moves", MOVE_SUITES), ("reading", READING_SUITES)):
                if args.part not in (part, "all"):
                    continue
                for name in names:
                    if args.suites and name not in args.suites:
                        continue
                    path = os.path.join(args.regression, f"{name}.tst")
                    skipped = 0
                    if part == "moves":
                        steps = move_suite(path)
                    else:
                        text, skipped = reading_suite(path)
                        converted = os.path.join(folder, f"{name}.tst")
                        with open(converted, "w") as f:
                            f.write(text)
                        steps = read_suite(converted, False)
                    plan.append((part, name, replayed(steps) if args.replay else steps,
                                 skipped))
        except SuiteError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        command = " ".join([darkgo_command(args.engine)] + [shlex.quote(f) for f in flags])
        print(f"engine: {command}", file=sys.stderr)
        out = open(args.results, "w") if args.results else None
        started = time.monotonic()
        rows, status = [], 0

        def on_result(result):
            if out is not None:
                out.write(json.dumps(result) + "\n")
                out.flush()

        try:
            for part, name, steps, skipped in plan:
                log_path = os.path.join(folder, f"{name}.log")
                results, refused, error = run_suite(name, steps, command, args.timeout,
                                                    log_path, on_result)
                if error is not None or refused:
                    status = 1
                    print(f"{name}: {error or refused}", file=sys.stderr)
                solved = sum(r["outcome"] in SOLVED for r in results)
                rows.append({"part": part, "suite": name, "problems": len(results),
                             "solved": solved, "without_a_problem": skipped})
                print(f"{part:8} {name:10} {solved:4} of {len(results):4}", file=sys.stderr)
        finally:
            if out is not None:
                out.close()
    totals = {part: {"problems": sum(r["problems"] for r in rows if r["part"] == part),
                     "solved": sum(r["solved"] for r in rows if r["part"] == part)}
              for part in ("moves", "reading")}
    print(json.dumps({"engine": command, "totals": totals, "suites": rows,
                      "seconds": round(time.monotonic() - started, 1)}))
    return status


if __name__ == "__main__":
    sys.exit(main())
