"""Complete games under a real clock, kept by the harness as a server (KGS) keeps it:

    python -m benchmarks.strength.clock --system absolute|byoyomi|canadian|all [--main S]
        [--period S] [--periods N] [--stones N] [--games N] [--size 19] [--lag 0.5] [--hog] [--cold]
        [--opponent "/usr/games/gnugo --mode gtp --level 1"] [--results FILE] [--logs DIR]
        [-- ENGINE FLAGS]

The time systems, with their defaults (--main, --period, --periods, --stones override them):

- absolute, `time_settings 60 0 0`: 60 s for the game, lost when they run out.
- byoyomi, `kgs-time_settings byoyomi 10 5 1`: 10 s of main time, then Japanese byo-yomi of
  1 period of 5 s: a move that takes longer than its period uses it up and goes on in the next;
  the game is lost when the last one runs out. The period starts afresh at every move.
- canadian, `kgs-time_settings canadian 30 10 5`: 30 s of main time, then 5 stones in every
  period of 10 s; the period starts afresh once its stones are played, and the game is lost
  when it runs out before them.

The engine (`python gtp_main.py` with the flags after `--`, or --engine CMD) is started afresh
for every game, so that every game's first genmove is a new process's, which loads the jitted
code from the checkout's cache (with --cold, compiles it: an empty cache folder per game);
that move is charged like any other. Before every genmove the engine is sent `time_left COLOUR
SECONDS STONES` as kgsGtp sends it: whole seconds, rounded down; STONES is 0 in main time, the
periods left in Japanese byo-yomi (KGS's extension) and the stones left in a canadian period.
A move is charged the wall time from sending genmove to its answer plus --lag seconds of
simulated network lag, slept before the answer is accepted. A game ends on a loss on time (the
engine is not waited for long past its time), a resignation, two passes or --max-moves, and is
then scored by the opponent's final_score (the engine's where the opponent gives none). The
opponent plays untimed, a fresh process every game, colours alternating (the engine is black
in the first game). With --hog a separate process burns a CPU core for the whole run.

Per game, on stderr and appended to the results file (--results, else one in the logs
folder: --logs, or a new temporary one; a rerun skips the games that the file already holds):
the result, whether it was lost on time, the clock at the end and the time left (what one more
move could have taken without losing on time), the least time left at any answer (how much
longer that answer could have taken), the slowest answer and the tightest, each with its
allowance (what the move could take without losing the game or a byo-yomi period: the main
time left plus the period it would spill into, in overtime the period or what is left of the
canadian one), and the share of the available time used: the time charged over the main time
plus the overtime the moves were given (a byo-yomi period for every move that ended in
byo-yomi and for every period used up, a canadian period for every period begun). The file
also holds every answer's seconds and allowance. The last stdout line is one JSON object with
the totals of each time system.
"""
import argparse
import contextlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

from benchmarks.gtp_client import EngineError, EngineTimeout, GtpEngine, darkgo_command
from benchmarks.strength.records import append_result, parse_score, read_results
from benchmarks.strength.soak import GNUGO
from benchmarks.time_control import SYSTEMS, GameClock, TimeSystem, time_system

# A genmove is awaited this long past the moment its clock ran out, so that a late answer's
# time is still measured; the game is lost either way.
GRACE = 10.0
# Untimed answers: setup commands, the opponent's moves, scoring.
UNTIMED = 600.0


@contextlib.contextmanager
def cpu_hog(enabled: bool):
    """Run a separate process that burns a CPU core for the duration of the block (none when
    not enabled); yield it or None."""
    if not enabled:
        yield None
        return
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
    try:
        yield hog
    finally:
        hog.kill()
        hog.wait()


class GameFault(Exception):
    """A game cannot go on: result is what is recorded for it."""

    def __init__(self, result: str, message: str):
        super().__init__(message)
        self.result = result


def other(colour: str) -> str:
    """Return the other GTP colour."""
    return "w" if colour == "b" else "b"


def ask(engine: GtpEngine, command: str, who: str, result: str) -> str:
    """Return the text of an accepted answer; raise GameFault with result (the game lost by
    who failed, or '?') when the engine refused, broke the protocol or failed."""
    try:
        response = engine.send(command, UNTIMED)
    except EngineError as exc:
        raise GameFault(result, f"{who} failed on '{command}': {exc}") from None
    if not response.ok:
        raise GameFault(result, f"{who} answered '{command}' with {response.text!r}")
    return response.text


class Game:
    """One game between the engine under its clock and the untimed opponent."""

    def __init__(self, system: TimeSystem, index: int, settings: dict, workdir: str):
        self.system = system
        self.index = index
        self.settings = settings
        self.ours = "b" if index % 2 == 0 else "w"
        self.clock = GameClock(system)
        # (move number, seconds charged, allowance, seconds to a loss on time) per genmove.
        self.answers: list[tuple[int, float, float, float]] = []
        self.moves = 0
        self.prefix = os.path.join(workdir, f"{system.name}-{index + 1:03d}")

    def play(self) -> dict:
        """Return the game's record, having played it with fresh engine processes."""
        env = None
        if self.settings["cold"]:
            cache = tempfile.mkdtemp(prefix=os.path.basename(self.prefix) + "-cache-",
                                     dir=os.path.dirname(self.prefix))
            env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        started = time.monotonic()
        engine = opponent = None
        try:
            engine = GtpEngine(self.settings["engine"], self.prefix + ".engine.log", env=env)
            opponent = GtpEngine(self.settings["opponent"], self.prefix + ".opponent.log")
            result, reason = self._play_moves(engine, opponent)
        except GameFault as fault:
            result, reason = fault.result, str(fault)
        finally:
            for process in (engine, opponent):
                if process is not None:
                    process.close()
        return self._record(result, reason, time.monotonic() - started)

    def _play_moves(self, engine: GtpEngine, opponent: GtpEngine) -> tuple[str, str]:
        """Return (result, how the game ended) after playing it out."""
        ours, theirs = self.ours, other(self.ours)
        forfeit = f"{theirs.upper()}+F"
        size, komi = self.settings["size"], self.settings["komi"]
        for command in (f"boardsize {size}", "clear_board", f"komi {komi:g}"):
            ask(engine, command, "engine", forfeit)
            ask(opponent, command, "opponent", "?")
        ask(engine, self.system.gtp(), "engine", forfeit)
        colour, passes = "b", 0
        while passes < 2 and self.moves < self.settings["max_moves"]:
            if colour == ours:
                vertex = self._genmove(engine)
                if vertex is None:
                    return f"{theirs.upper()}+T", "lost on time"
                if vertex == "resign":
                    return f"{theirs.upper()}+R", "engine resigned"
                ask(opponent, f"play {ours} {vertex}", "opponent", forfeit)
            else:
                vertex = ask(opponent, f"genmove {theirs}", "opponent", "?").lower()
                if vertex == "resign":
                    return f"{ours.upper()}+R", "opponent resigned"
                ask(engine, f"play {theirs} {vertex}", "engine", "?")
            self.moves += 1
            passes = passes + 1 if vertex == "pass" else 0
            colour = other(colour)
        ended = "two passes" if passes == 2 else f"move limit {self.settings['max_moves']}"
        for scorer, who in ((opponent, "opponent"), (engine, "engine")):
            try:
                reading = parse_score(ask(scorer, "final_score", who, "?"))
            except GameFault:
                continue
            if reading is not None:
                return reading[1], f"{ended}; scored by the {who}"
        return "?", f"{ended}; no score"

    def _genmove(self, engine: GtpEngine) -> str | None:
        """Return the engine's move (lower case), None when it lost on time, after charging
        its clock; raise GameFault if it failed."""
        clock, forfeit = self.clock, f"{other(self.ours).upper()}+F"
        seconds, stones = clock.time_left_args()
        ask(engine, f"time_left {self.ours} {seconds} {stones}", "engine", forfeit)
        allowance, to_loss = clock.allowance(), clock.to_loss()
        lag = self.settings["lag"]
        started = time.monotonic()
        try:
            response = engine.send(f"genmove {self.ours}", max(0.0, to_loss - lag) + GRACE)
        except EngineTimeout:
            response = None
        except EngineError as exc:
            raise GameFault(forfeit, f"engine failed on genmove: {exc}") from None
        time.sleep(lag)
        charged = time.monotonic() - started
        in_time = clock.charge(charged)
        self.answers.append((self.moves + 1, charged, allowance, to_loss))
        if not in_time:
            return None
        if response is None or not response.ok:
            text = "no answer" if response is None else repr(response.text)
            raise GameFault(forfeit, f"engine answered genmove with {text}")
        return response.text.lower()

    def _record(self, result: str, reason: str, duration: float) -> dict:
        """Return the game's record (see the module's docstring)."""
        clock = self.clock
        record = {"system": self.system.name, "game": self.index + 1, **self.settings,
                  "time_settings": self.system.gtp(), "colour": self.ours, "result": result,
                  "reason": reason, "won": result[:1].lower() == self.ours,
                  "loss_on_time": clock.lost, "moves": self.moves,
                  "our_moves": len(self.answers), "clock": clock.state(),
                  "time_left_s": round(max(0.0, clock.to_loss()), 3),
                  "used_s": round(clock.used, 3), "available_s": round(clock.available, 3),
                  "share_used": round(clock.used / clock.available, 4)
                  if clock.available > 0 else None,
                  "min_time_left_s": None, "slowest": None, "tightest": None,
                  "duration_s": round(duration, 1)}
        if self.answers:
            record["min_time_left_s"] = round(min(t - s for _, s, _, t in self.answers), 3)
            record["slowest"] = answer_figures(max(self.answers, key=lambda a: a[1]))
            record["tightest"] = answer_figures(
                max(self.answers, key=lambda a: a[1] / max(a[2], 1e-9)))
            record["answers"] = [[round(s, 3), round(a, 3)] for _, s, a, _ in self.answers]
        return record


def answer_figures(answer: tuple[int, float, float, float]) -> dict:
    """Return one genmove's figures for the record."""
    move, seconds, allowance, _ = answer
    return {"move": move, "seconds": round(seconds, 3), "allowance_s": round(allowance, 3),
            "ratio": round(seconds / allowance, 4) if allowance > 0 else None}


class ResultsFileError(Exception):
    """The results file holds games played with other settings."""


def load_results(path: str, settings: dict, systems: list[TimeSystem],
                 games: int) -> dict[tuple[str, int], dict]:
    """Return the finished games of these systems by (system, game number); raise
    ResultsFileError if one of them was played with other settings."""
    wanted = {system.name: system.gtp() for system in systems}
    records = {}
    for record in read_results(path):
        if record["system"] not in wanted or record["game"] > games:
            continue
        mine = {**settings, "time_settings": wanted[record["system"]]}
        theirs = {key: record.get(key) for key in mine}
        if theirs != mine:
            raise ResultsFileError(f"{path} holds {record['system']} game {record['game']} "
                                   f"played with other settings ({theirs}); use another "
                                   "--results file")
        records[record["system"], record["game"]] = record
    return records


def answer_text(answer: dict | None) -> str:
    """Return '2.31 s of 5.00 s (move 7)' for an answer's figures, 'none' for None."""
    if answer is None:
        return "none"
    return f"{answer['seconds']:.2f} s of {answer['allowance_s']:.2f} s (move {answer['move']})"


def describe(record: dict) -> str:
    """Return one human line about a finished game."""
    clock = ", ".join(f"{key.removesuffix('_s')} {value:g}"
                      for key, value in record["clock"].items())
    colour = "black" if record["colour"] == "b" else "white"
    line = (f"{record['system']} game {record['game']}: engine {colour}, {record['result']} "
            f"({record['reason']}), {record['moves']} moves; clock at the end: {clock}; time "
            f"left {record['time_left_s']:.1f} s; used {record['used_s']:.1f} of "
            f"{record['available_s']:.1f} s")
    if record["slowest"] is not None:
        line += (f"; slowest answer {answer_text(record['slowest'])}, tightest "
                 f"{answer_text(record['tightest'])}, least time left "
                 f"{record['min_time_left_s']:.2f} s")
    return line


def summarize(records: list[dict]) -> dict:
    """Return the totals of one time system's games."""
    timed = [r for r in records if r["slowest"] is not None]
    shares = [r["share_used"] for r in records if r["share_used"] is not None]

    def extreme(field: str, key) -> dict | None:
        """Return the game's answer in `field` that is largest by key, with its game."""
        if not timed:
            return None
        record = max(timed, key=lambda r: key(r[field]))
        return {"game": record["game"], **record[field]}

    return {
        "time_settings": records[0]["time_settings"], "games": len(records),
        "wins": sum(r["won"] for r in records),
        "losses_on_time": sum(r["loss_on_time"] for r in records),
        "forfeits": sum(r["result"].endswith("+F") and not r["won"] for r in records),
        "unscored": sum(r["result"] == "?" for r in records),
        "min_time_left_s": min((r["min_time_left_s"] for r in timed), default=None),
        "slowest": extreme("slowest", lambda a: a["seconds"]),
        "tightest": extreme("tightest", lambda a: a["ratio"] or 0.0),
        "mean_share_used": round(sum(shares) / len(shares), 4) if shares else None,
        "by_game": [{"game": r["game"], "colour": r["colour"], "result": r["result"],
                     "loss_on_time": r["loss_on_time"], "time_left_s": r["time_left_s"],
                     "share_used": r["share_used"], "moves": r["moves"]} for r in records],
    }


def parse_args(argv: list[str] | None):
    """Return (arguments, the time systems to play); exits with a usage error on bad ones."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.strength.clock",
                                description=__doc__.splitlines()[0])
    p.add_argument("--system", choices=[*SYSTEMS, "all"], default="all")
    p.add_argument("--main", type=float, help="main time in seconds")
    p.add_argument("--period", type=float, help="seconds of a byo-yomi or canadian period")
    p.add_argument("--periods", type=int, help="Japanese byo-yomi periods")
    p.add_argument("--stones", type=int, help="stones in a canadian period")
    p.add_argument("--games", type=int, default=10, help="games per time system; default 10")
    p.add_argument("--size", type=int, default=19)
    p.add_argument("--komi", type=float, default=7.5)
    p.add_argument("--lag", type=float, default=0.5,
                   help="simulated network lag charged on every answer; default 0.5 s")
    p.add_argument("--hog", action="store_true", help="burn a CPU core in a separate process")
    p.add_argument("--cold", action="store_true",
                   help="an empty compile cache for every game's engine")
    p.add_argument("--max-moves", type=int, help="moves before a game is scored as it stands; "
                                                 "default 2 x size^2")
    p.add_argument("--opponent", default=GNUGO, help=f"untimed opponent; default {GNUGO}")
    p.add_argument("--engine", help="engine command; default: python gtp_main.py")
    p.add_argument("--results", help="JSON-lines file of finished games; a rerun resumes")
    p.add_argument("--logs", help="folder for the engines' logs (and the results file unless "
                                  "--results is given); default a new temporary folder")
    p.add_argument("engine_flags", nargs="*", help="more engine flags, after --")
    args = p.parse_args(argv)
    if args.games < 1 or args.lag < 0:
        p.error("--games must be at least 1 and --lag not negative")
    names = SYSTEMS if args.system == "all" else (args.system,)
    try:
        systems = [time_system(name, args.main, args.period, args.periods, args.stones)
                   for name in names]
    except ValueError as exc:
        p.error(str(exc))
    # A mistyped command would otherwise be recorded as a forfeit in every game.
    for command in filter(None, (args.engine, args.opponent)):
        words = shlex.split(command)
        if not words or shutil.which(words[0]) is None:
            p.error(f"cannot find the program of command {command!r}")
    return args, systems


def main(argv: list[str] | None = None) -> int:
    """Return 0 when no game was lost on time or forfeited, after playing the games and
    printing the JSON line (1 otherwise, 2 for a results file of other settings)."""
    args, systems = parse_args(argv)
    base = darkgo_command(args.engine)
    settings = {"engine": " ".join([base] + [shlex.quote(f) for f in args.engine_flags]),
                "opponent": args.opponent, "size": args.size, "komi": args.komi,
                "lag": args.lag, "hog": args.hog, "cold": args.cold,
                "max_moves": args.max_moves or 2 * args.size * args.size}
    workdir = args.logs or tempfile.mkdtemp(prefix="darkgo-clock-")
    os.makedirs(workdir, exist_ok=True)
    results = args.results or os.path.join(workdir, "results.jsonl")
    try:
        done = load_results(results, settings, systems, args.games)
    except ResultsFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if done:
        print(f"resuming: {len(done)} games in {results}", file=sys.stderr)
    print(f"engine: {settings['engine']}; logs in {workdir}", file=sys.stderr)
    try:
        with cpu_hog(args.hog):
            for system in systems:
                for index in range(args.games):
                    if (system.name, index + 1) in done:
                        continue
                    record = Game(system, index, settings, workdir).play()
                    append_result(results, record)
                    done[system.name, index + 1] = record
                    print(describe(record), file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        print(f"interrupted: finished games are in {results}; rerun with --results "
              f"{results} to resume", file=sys.stderr)
        return 130
    by_system = {}
    for system in systems:
        records = [done[system.name, i + 1] for i in range(args.games)]
        by_system[system.name] = summarize(records)
        totals = by_system[system.name]
        print(f"{system.name} ({system.gtp()}): {totals['games']} games, "
              f"{totals['wins']} won, {totals['losses_on_time']} lost on time, "
              f"{totals['forfeits']} forfeited, {totals['unscored']} unscored; least time left "
              f"{totals['min_time_left_s']} s, slowest answer {answer_text(totals['slowest'])}, "
              f"tightest {answer_text(totals['tightest'])}, mean share used "
              f"{totals['mean_share_used']}", file=sys.stderr)
    losses = sum(s["losses_on_time"] for s in by_system.values())
    forfeits = sum(s["forfeits"] for s in by_system.values())
    print(json.dumps({"benchmark": "clock", **settings, "results": results, "logs": workdir,
                      "games": sum(s["games"] for s in by_system.values()),
                      "losses_on_time": losses, "forfeits": forfeits, "systems": by_system}))
    return 0 if losses == 0 and forfeits == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
