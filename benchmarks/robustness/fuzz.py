"""Fuzzing the GTP front end at scale, in-process:

    python -m benchmarks.robustness.fuzz [--lines 100000] [--seed 1] [--rollouts 8]

Builds the engine as gtp_main does (--net none, one search thread so that --seed replays the
engine's moves too, a tiny playout budget, a small tree) and feeds it random lines through
GtpEngine.handle_line: random bytes, control characters, huge numbers, wrong arities, every
command name with garbage arguments, all interleaved with legal play on small boards (genmove
and the other searching commands rare). Each line is checked: exactly one
answer for a command and none for a line that the spec's preprocessing leaves empty, each
answer starting '=' or '?' with the command's id, no exception escaping, no internal error on
the log, and the game (board, history, komi, rules, clocks) unchanged after every '?'. Runs in
a temporary folder, as printsgf writes files. The last stdout line is one JSON object: lines,
lines per second, failures and the first failing lines.
"""
import argparse
import json
import logging
import os
import random
import re
import tempfile
import time

import gtp_main
from engine import board as bd
from engine.gtp import MAX_LINE
from engine.gtp_analysis import STREAMING

# Commands that search or run playouts: kept rare so that 100,000 lines take minutes.
EXPENSIVE = ("genmove", "reg_genmove", "kgs-genmove_cleanup", "lz-genmove_analyze",
             "gogui-visits", "lz-analyze", "kata-analyze", "final_score",
             "final_status_list", "gogui-ownership")
SIZES = (2, 3, 5, 7, 9, 9, 9, 13, 19, 25)

COLORS = ("b", "w", "B", "W", "black", "white", "BLACK", "Black", "x", "o", "bw", "", "empty")
VERTICES = ("A1", "a1", "J9", "T19", "Z25", "Z26", "I5", "i1", "A0", "A-1", "A1.5", "AA1",
            "pass", "PASS", "Pass", "resign", "tt", "1A", "A", "1", "A99999999999999999999",
            "E5", "C3", "B2", "H8", "\u00c51")
NUMBERS = ("0", "1", "-1", "2", "3", "7", "25", "26", "-0", "0.5", "1e308", "-1e308", "1e309",
           "nan", "NaN", "inf", "-inf", "infinity", "99999999999999999999999999999",
           "-99999999999999999999", "0x10", "1_000", "+5", "5.", ".5", "\u0663", "\u00b2",
           str(2 ** 31), str(2 ** 63), str(2 ** 64 + 1), "1" * 300)
WORDS = ("interval", "ownership", "true", "false", "minmoves", "avoid", "allow", "dead",
         "alive", "seki", "none", "absolute", "byoyomi", "canadian", "chinese", "japanese",
         "aga", "new_zealand", "game", "private", "nobody", "#", "=", "?", "\\", "'", '"',
         "play", "genmove", "quit")


def spec_preprocess(raw):
    """Return the command part of a raw line as the GTP spec defines it: control characters
    other than HT and LF removed, HT turned into a space, a comment dropped, blanks stripped
    (written apart from engine.gtp, to check it)."""
    text = "".join(c for c in raw.replace("\t", " ")
                   if not (ord(c) < 32 and c != "\n" or ord(c) == 127))
    return text.split("#", 1)[0].strip()


def expected_id(raw):
    """Return the id the answer to a raw line must carry ('' when none), or None when the
    line gets no answer."""
    if len(raw) > MAX_LINE:
        match = re.match(r"\s*([0-9]+)\s", raw)
        return match.group(1) if match else ""
    command = spec_preprocess(raw)
    if not command:
        return None
    first = command.split()[0]
    return first if re.fullmatch(r"[0-9]+", first) else ""


def state(engine):
    """Return a comparable snapshot of what a '?' answer must leave alone."""
    game, player = engine.game, engine.player
    return (game.size, game.board.stones.tobytes(), tuple(game.moves), tuple(game.setup),
            game.handicap, game.to_play, game.rules, engine.kgs_rules, repr(player.time),
            repr(player.clocks), len(engine._generated))


class _ErrorCount(logging.Handler):
    def __init__(self):
        super().__init__(logging.ERROR)
        self.records = []

    def emit(self, record):
        self.records.append(record.getMessage()[:500])


class Fuzzer:
    """One engine fed checked lines; failures collects (line, problem) pairs."""

    def __init__(self, rollouts=8, seed=1, size=9):
        args = gtp_main.build_parser().parse_args(
            ["--net", "none", "--rollouts", str(rollouts), "--seed", str(seed), "--threads", "1",
             "--boardsize", str(size), "--set", "ownership_runs=16", "--set", "max_nodes=2000"])
        self.engine = gtp_main.build_engine(args)
        self.errors = _ErrorCount()
        logging.getLogger().addHandler(self.errors)
        self.failures = []
        self.answers = {"=": 0, "?": 0}
        self.lines = 0

    def close(self):
        logging.getLogger().removeHandler(self.errors)
        self.engine.close()

    def feed(self, raw):
        """Send one raw line (its newline added) and check the answer; return the problems
        found (also added to self.failures)."""
        engine = self.engine
        if not raw.endswith("\n"):
            raw += "\n"
        want_id = expected_id(raw)
        before = state(engine)
        errors_before = len(self.errors.records)
        command = spec_preprocess(raw).split()
        streaming = any(word in STREAMING for word in command[:2])
        if streaming:   # an analysis runs until the next command arrives: let it be waiting
            engine.pending.put("name\n")
        problems = []
        out = _Capture()
        try:
            engine.handle_line(raw, out)
        except BaseException as exc:   # noqa: B902 (a fuzz counts whatever escapes)
            problems.append(f"exception escaped: {type(exc).__name__}: {exc}"[:300])
        finally:
            if streaming:
                while not engine.pending.empty():
                    engine.pending.get()
            engine.quit = False
        problems += self._check_answers(out.getvalue(), want_id)
        if len(self.errors.records) > errors_before:
            problems.append("error logged: " + self.errors.records[errors_before])
        if out.getvalue().startswith("?") and state(engine) != before:
            problems.append("state changed after a '?' answer")
        self.lines += 1
        for p in problems:
            self.failures.append((raw, p))
        return problems

    def _check_answers(self, text, want_id):
        if want_id is None:
            return [] if not text else [f"answer to a line with no command: {text[:100]!r}"]
        if not text.endswith("\n\n"):
            return [f"answer not ended by a blank line: {text[-100:]!r}"]
        answers = text[:-2].split("\n\n")
        if len(answers) != 1:
            return [f"{len(answers)} answers: {text[:200]!r}"]
        answer = answers[0]
        self.answers[answer[:1]] = self.answers.get(answer[:1], 0) + 1
        if not re.match(re.escape("=" + want_id) + r"(\s|$)|" + re.escape("?" + want_id)
                        + r"(\s|$)", answer):
            return [f"answer does not start with '=' or '?' and id {want_id!r}: "
                    f"{answer[:100]!r}"]
        return []


class _Capture:
    """A text stream that keeps what is written (a StringIO without its thread-safety
    questions, as analysis writes from the search's progress callback)."""

    def __init__(self):
        self.parts = []

    def write(self, text):
        self.parts.append(text)

    def flush(self):
        pass

    def getvalue(self):
        return "".join(self.parts)


def random_bytes_line(rng):
    """Random bytes as the reader decodes them (UTF-8 with replacement)."""
    data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 60)))
    return data.decode("utf-8", "replace").replace("\n", " ")


def control_line(rng, commands):
    """A command drowned in control characters, tabs, comments and stray blanks."""
    junk = [chr(c) for c in list(range(0, 9)) + [11, 12, 13] + list(range(14, 32)) + [127]]
    words = [rng.choice(commands)] + [rng.choice(COLORS + VERTICES) for _ in range(2)]
    out = []
    for w in words:
        out.append("".join(rng.choice(junk) if rng.random() < 0.3 else c for c in w))
    sep = rng.choice((" ", "\t", " \t ", "\x00 ", "  "))
    line = sep.join(out)
    return rng.choice((line, line + " # comment", "#" + line, "   ", "\t", "\x00\x01",
                       line + "\r", "\r", ""))


def garbage_args(rng, tmp):
    pools = (COLORS, VERTICES, NUMBERS, WORDS, _paths(tmp))
    args = []
    for _ in range(rng.choice((0, 1, 1, 2, 2, 3, 4, 6))):
        pool = rng.choice(pools)
        args.append(rng.choice(pool) if rng.random() < 0.9 else random_bytes_line(rng).strip())
    return [a for a in args if a]


def _paths(tmp):
    return (os.path.join(tmp, "saved.sgf"), os.path.join(tmp, "no", "such", "dir.sgf"),
            "/proc/version", "/dev/full", "/dev/null", tmp, "saved.sgf", "/nonexistent.sgf")


def legal_play(rng, engine):
    game = engine.game
    color = game.to_play if rng.random() < 0.9 else 3 - game.to_play
    empty = [p for p in game.on_board_points() if game.color_at(p) == bd.EMPTY]
    if not empty or rng.random() < 0.02:
        vertex = "pass"
    else:
        vertex = game.vertex(rng.choice(empty))
        vertex = vertex.lower() if rng.random() < 0.3 else vertex
    return f"play {'b' if color == bd.BLACK else 'w'} {vertex}"


def make_line(rng, engine, tmp):
    """Return one random line (without its newline) and its kind."""
    commands = sorted(engine.handlers)
    cheap = [c for c in commands if c not in EXPENSIVE]
    r = rng.random()
    if r < 0.38:
        kind, line = "play", legal_play(rng, engine)
    elif r < 0.66:
        kind = "garbage"
        line = " ".join([rng.choice(cheap)] + garbage_args(rng, tmp))
    elif r < 0.74:
        kind, line = "bytes", random_bytes_line(rng)
    elif r < 0.82:
        kind, line = "control", control_line(rng, commands)
    elif r < 0.86:
        kind = "huge"
        name = rng.choice(("boardsize", "komi", "fixed_handicap", "place_free_handicap",
                           "time_settings", "time_left", "kgs-time_settings", "loadsgf",
                           "undo", "known_command", "list_stones"))
        line = " ".join([name] + [rng.choice(NUMBERS) for _ in range(rng.randrange(0, 4))])
    elif r < 0.89:
        kind = "unknown"
        line = rng.choice(("PLAY b A1", "Genmove b", "GENMOVE", "play\u00a0b A1", "play-b",
                           "", "=", "?", "0", "00", "1 ", "12 12", "list_command",
                           "kgs-genmove", "lz-analyse", "quitt", "quit now", "x" * MAX_LINE,
                           "1 " + "y" * MAX_LINE, " " * (MAX_LINE + 1), "\u00b2 name",
                           "\u0663 name", "\ufeffname"))
    elif r < 0.93:
        kind, line = "undo", "undo"
    elif r < 0.945:
        kind = "new game"
        line = rng.choice(("clear_board", f"boardsize {rng.choice(SIZES)}",
                           f"fixed_handicap {rng.randrange(2, 10)}",
                           f"komi {rng.choice(('0', '6.5', '7.5', '-3'))}",
                           "kgs-time_settings none", "time_settings 0 1 0"))
    elif r < 0.955:
        kind = "expensive"
        line = " ".join([rng.choice(EXPENSIVE)] + garbage_args(rng, tmp)[:2])
    elif r < 0.962:
        kind = "expensive"
        color = rng.choice(("b", "w"))
        line = rng.choice((f"genmove {color}", f"reg_genmove {color}",
                           f"kgs-genmove_cleanup {color}", f"lz-genmove_analyze {color} 1",
                           f"lz-analyze {color} 1", f"kata-analyze {color} 1 ownership true",
                           "final_score", "final_status_list dead", "gogui-ownership",
                           f"gogui-visits {color}"))
    else:
        kind = "file"
        line = rng.choice(("printsgf", "loadsgf", "printsgf " + rng.choice(_paths(tmp)),
                           "loadsgf " + rng.choice(_paths(tmp)),
                           f"loadsgf {rng.choice(_paths(tmp))} {rng.choice(NUMBERS)}"))
    if rng.random() < 0.15:
        line = rng.choice(("1", "0", "007", "42", "12345678901234567890")) + " " + line
    return line, kind


def run(lines, seed=1, rollouts=8, progress_every=0):
    """Fuzz `lines` lines; return the result dict."""
    rng = random.Random(seed)
    tmp = tempfile.mkdtemp(prefix="darkgo-fuzz-")
    cwd = os.getcwd()
    os.chdir(tmp)
    level = logging.getLogger().level
    logging.getLogger().setLevel(logging.ERROR)
    fuzzer = Fuzzer(rollouts=rollouts, seed=seed)
    fuzzer.feed("play b E5")    # compiled before the clock starts
    fuzzer.feed("genmove w")
    fuzzer.feed("clear_board")
    fuzzer.lines = 0
    kinds, failing_kinds = {}, {}
    started = time.perf_counter()
    try:
        for i in range(lines):
            line, kind = make_line(rng, fuzzer.engine, tmp)
            kinds[kind] = kinds.get(kind, 0) + 1
            if fuzzer.feed(line):
                failing_kinds[kind] = failing_kinds.get(kind, 0) + 1
            # Long games only fill the board: start afresh now and then.
            if len(fuzzer.engine.game.moves) > 3 * fuzzer.engine.game.size ** 2:
                fuzzer.feed("clear_board")
            if progress_every and (i + 1) % progress_every == 0:
                print(json.dumps({"lines": i + 1, "failures": len(fuzzer.failures),
                                  "seconds": round(time.perf_counter() - started, 1)}),
                      flush=True)
    finally:
        seconds = time.perf_counter() - started
        fuzzer.close()
        os.chdir(cwd)
        logging.getLogger().setLevel(level)
    examples = []
    for raw, problem in fuzzer.failures:
        if len(examples) >= 20:
            break
        examples.append({"line": repr(raw[:200]), "problem": problem})
    return {"benchmark": "fuzz", "lines": fuzzer.lines, "seed": seed, "rollouts": rollouts,
            "seconds": round(seconds, 1),
            "lines_per_second": round(fuzzer.lines / max(seconds, 1e-9), 1),
            "answers": fuzzer.answers, "kinds": kinds,
            "failures": len(fuzzer.failures), "failing_kinds": failing_kinds,
            "failure_examples": examples}


def main(argv=None):
    """Run the fuzz and print its JSON line."""
    parser = argparse.ArgumentParser(description="in-process GTP fuzz")
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rollouts", type=int, default=8,
                        help="playouts per genmove (and per analysis step's budget)")
    parser.add_argument("--progress", type=int, default=10_000,
                        help="print a progress line every N lines (0: none)")
    args = parser.parse_args(argv)
    print(json.dumps(run(args.lines, args.seed, args.rollouts, args.progress)))


if __name__ == "__main__":
    main()
