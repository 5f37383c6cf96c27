"""Play a match between two GTP engines: SGF files, a results file, a JSON summary printed last.

Engine A is the one given as --black, engine B the one given as --white; with alternation (the
default) they swap colours in odd-numbered games. Games already in the results file are skipped,
so rerunning an interrupted match resumes it.

With --clock the games are played under a time control that the runner keeps, as a server or
gogui-twogtp keeps it: each engine is told the time settings as kgsGtp tells them
(`kgs-time_settings`, `time_settings` for absolute time; an engine that refuses that gets the
plain `time_settings`) and before every genmove `time_left` as kgsGtp sends it; an answer is
charged its wall time from genmove to the answer, and the engine whose clock runs out loses
the game on time. Equal-time matches between engines that need different numbers of
playouts for the same work are played so (give each engine a --rollouts cap it will not reach).
Every record keeps each side's time used, its slowest answer and its clock at the end.

With --keep-engines each engine runs as one process for all the games a worker thread plays
(--parallel of each), as gogui-twogtp and kgsGtp run an engine: every game begins with
boardsize, clear_board and komi (and the time settings) to the same process, and its record
says how many games each process had played before it (`process_games`). An engine that
faults is started afresh for the next game. The commands may not use '{game}'.

With --handicap N every game starts from GTP's fixed handicap of N stones, as a server's
handicap game does: each engine (and the referee) is sent `fixed_handicap N` after the komi and
must answer with the standard points, Black's stones stand on the board and White moves first.
The SGF records them (HA, AB). Give --komi as the server would (KGS: 0.5); how the handicap is
compensated at the count is the referee's rules'.

This module holds the command line and the schedule (games on worker threads, the SPRT's
early stop, resuming); benchmarks.strength.game plays each game, .records keeps the results
file and the SGFs, .report and .stats sum the games up.
"""

import argparse
import concurrent.futures
import json
import os
import shlex
import shutil
import sys
import threading

from benchmarks.strength.game import Abandoned, GameRunner
from benchmarks.strength.records import (MatchConfig, ResultsFileError, append_result,
                                         handicap_stones, load_results, sole_runner)
from benchmarks.strength.report import format_table, summarize, write_plot
from benchmarks.strength.stats import game_score, sprt_decide, sprt_scores
from benchmarks.time_control import SYSTEMS, time_system


class MatchRunner:
    """Plays a match's games on worker threads, appending each to the results file as it ends."""

    def __init__(self, config: MatchConfig, finished: int, scores: list[float] | None = None):
        self.config = config
        self.finished = finished
        self.games = GameRunner(config)
        self._lock = threading.Lock()
        # A's scores in finishing order, for the SPRT; decided once a bound has been crossed.
        self.scores = list(scores or [])
        self.decided = self._sprt_decided()

    def _sprt_decided(self) -> bool:
        """Return whether --sprt is on and its test has crossed a bound on the scores so far."""
        if self.config.sprt is None:
            return False
        elo0, elo1 = self.config.sprt
        state = sprt_decide(self.scores, elo0, elo1, self.config.sprt_alpha,
                            self.config.sprt_beta)
        return state["decision"] != "undecided"

    def stop(self) -> None:
        """Return after every running engine is killed; games in progress then end unrecorded."""
        self.games.stop()

    def play_and_record(self, index: int) -> None:
        """Return after playing game index and appending its record; at once if stopped.

        Once the SPRT has decided, games not yet started are skipped; running ones finish.
        """
        if self.decided:
            return
        try:
            record = self.games.play_game(index)
        except Abandoned:
            return
        with self._lock:
            append_result(self.config.results, record)
            self.finished += 1
            print(f"game {index:03d}: engine {record['black_engine']} black, {record['result']} "
                  f"({record['reason']}), {record['moves']} moves, {record['duration_s']:.1f} s "
                  f"[{self.finished}/{self.config.games}]", file=sys.stderr)
            score = game_score(record)
            if score is not None and not self.decided:
                self.scores.append(score)
                self.decided = self._sprt_decided()
                if self.decided:
                    print(f"SPRT decided after {len(self.scores)} scored games: no new games "
                          "are started", file=sys.stderr)


def parse_args(argv: list[str] | None) -> MatchConfig:
    """Return the match configuration given on the command line."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.strength.match",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--black", required=True, help="engine A (black in even games)")
    parser.add_argument("--white", required=True, help="engine B (white in even games)")
    parser.add_argument("--games", type=int, required=True)
    parser.add_argument("--size", type=int, required=True)
    parser.add_argument("--komi", type=float, required=True)
    parser.add_argument("--sgf-dir", required=True)
    parser.add_argument("--referee", help="engine that scores finished games with final_score")
    parser.add_argument("--parallel", type=int, default=1,
                        help="games played at once; default 1. darkgo's default --threads "
                        "auto takes every CPU, so give its engine commands --threads to share "
                        "them")
    parser.add_argument("--results", help="JSON-lines results file (default SGF_DIR/results.jsonl)")
    parser.add_argument("--max-moves", type=int,
                        help="moves after which a game is stopped and scored (default 3*S*S)")
    parser.add_argument("--alternate", action=argparse.BooleanOptionalAction, default=True,
                        help="swap colours in odd-numbered games")
    parser.add_argument("--timeout-per-move", type=float, default=120.0,
                        help="seconds an engine may take over one answer before it is killed")
    parser.add_argument("--sprt", metavar="ELO0,ELO1",
                        help="stop early on a sequential probability ratio test of H0: A is ELO0 "
                        "better than B against H1: ELO1 (Bernoulli LLR, draws as half)")
    parser.add_argument("--sprt-alpha", type=float, default=0.05,
                        help="SPRT false-positive rate (accepting H1 when H0 holds)")
    parser.add_argument("--sprt-beta", type=float, default=0.05,
                        help="SPRT false-negative rate (accepting H0 when H1 holds)")
    parser.add_argument("--clock", choices=SYSTEMS,
                        help="play under this time control, kept by the runner (module help); "
                        "its values from --main, --period, --periods, --stones")
    parser.add_argument("--main", type=float, help="--clock: main time in seconds")
    parser.add_argument("--period", type=float,
                        help="--clock: seconds of a byo-yomi or canadian period")
    parser.add_argument("--periods", type=int, help="--clock byoyomi: number of periods")
    parser.add_argument("--stones", type=int, help="--clock canadian: stones per period")
    parser.add_argument("--keep-engines", action="store_true",
                        help="run each engine as one process across the games of each worker "
                             "(as gogui-twogtp and kgsGtp do) instead of one a game")
    parser.add_argument("--handicap", type=int, default=0, metavar="N",
                        help="start every game from GTP's fixed handicap of N stones for "
                        "black, white to move (module help); default 0")
    parser.add_argument("--plot", metavar="FILE",
                        help="write a PNG of A's running win rate and the score margins "
                        "(needs matplotlib: pip install .[plot])")
    args = parser.parse_args(argv)
    sprt = None
    if args.sprt is not None:
        try:
            sprt = tuple(float(x) for x in args.sprt.split(","))
        except ValueError:
            sprt = ()
        if len(sprt) != 2 or not sprt[0] < sprt[1]:
            parser.error("--sprt takes two Elo values ELO0,ELO1 with ELO0 < ELO1")
        if not (0 < args.sprt_alpha < 1 and 0 < args.sprt_beta < 1):
            parser.error("--sprt-alpha and --sprt-beta must be between 0 and 1")
    clock = None
    if args.clock is not None:
        try:
            clock = time_system(args.clock, args.main, args.period, args.periods, args.stones)
        except ValueError as exc:
            parser.error(f"--clock: {exc}")
    elif any(value is not None for value in (args.main, args.period, args.periods, args.stones)):
        parser.error("--main, --period, --periods and --stones need --clock")
    if not 2 <= args.size <= 25:
        parser.error("--size must be between 2 and 25")
    try:
        handicap_stones(args.size, args.handicap)
    except ValueError:
        parser.error(f"--handicap {args.handicap}: a {args.size}x{args.size} board takes a "
                     "fixed handicap of 2-9 stones (2-4 on 7x7 and even sizes, none below 7)")
    if args.keep_engines and any("{game}" in c for c in (args.black, args.white)):
        parser.error("--keep-engines: a kept engine plays every game with one command, so "
                     "'{game}' cannot change it")
    if args.games < 1 or args.parallel < 1:
        parser.error("--games and --parallel must be at least 1")
    # A mistyped command would otherwise be recorded as a forfeit in every game.
    for command in filter(None, (args.black, args.white, args.referee)):
        words = shlex.split(command)
        if not words or shutil.which(words[0]) is None:
            parser.error(f"cannot find the program of engine command {command!r}")
    return MatchConfig(
        engine_a=args.black, engine_b=args.white, games=args.games, size=args.size,
        komi=args.komi, sgf_dir=args.sgf_dir,
        results=args.results or os.path.join(args.sgf_dir, "results.jsonl"),
        referee=args.referee, parallel=args.parallel,
        max_moves=args.max_moves if args.max_moves is not None else 3 * args.size * args.size,
        alternate=args.alternate, timeout=args.timeout_per_move, sprt=sprt,
        sprt_alpha=args.sprt_alpha, sprt_beta=args.sprt_beta, plot=args.plot, clock=clock,
        handicap=args.handicap, keep_engines=args.keep_engines)


def run_match(config: MatchConfig) -> list[dict]:
    """Return the records of all finished games in finishing order, playing those not yet in the
    results file (none once an SPRT has decided), with the results file to this runner alone."""
    os.makedirs(config.sgf_dir, exist_ok=True)
    with sole_runner(config.results):
        records = load_results(config)
        pending = [i for i in range(config.games) if i not in records]
        if records:
            print(f"resuming: {len(records)} games already finished, {len(pending)} to play",
                  file=sys.stderr)
        # The results file is in finishing order, so a resumed SPRT sees the same sequence.
        runner = MatchRunner(config, len(records), sprt_scores(list(records.values())))
        if runner.decided:
            print("the SPRT has already decided: no games to play", file=sys.stderr)
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=config.parallel)
        futures = [pool.submit(runner.play_and_record, i) for i in pending]
        try:
            for future in concurrent.futures.as_completed(futures):
                future.result()
        except BaseException:
            runner.stop()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        finally:
            runner.games.close_kept()
        pool.shutdown()
        return list(load_results(config).values())


def main(argv: list[str] | None = None) -> int:
    """Return the exit status after running the match and printing the table and JSON summary."""
    config = parse_args(argv)
    try:
        records = run_match(config)
    except KeyboardInterrupt:
        print("interrupted: finished games are saved; rerun the same command to resume",
              file=sys.stderr)
        return 130
    except ResultsFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    summary = summarize(config, records)
    print(format_table(summary, sorted(records, key=lambda r: r["index"])))
    if config.plot is not None and not write_plot(config.plot, summary, records):
        print(f"--plot: matplotlib is not installed (pip install .[plot]); {config.plot} not "
              "written", file=sys.stderr)
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
