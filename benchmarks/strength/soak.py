"""A long run in one engine process, as a KGS bot or a long gogui-twogtp match has it:

    python -m benchmarks.strength.soak --games 200 --size 19 --rollouts 300 [--ponder] [--analyze]
        [--opponent "/usr/games/gnugo --mode gtp --level 1"] [-- ENGINE FLAGS]

One `gtp_main.py` process plays every game against the opponent (a fresh opponent process per
game), colours alternating, each game from boardsize/clear_board/komi to two passes, a
resignation or the move limit. With --ponder the engine ponders while the opponent thinks; with
--analyze it also streams lz-analyze for a moment between moves (stopped by the next command).
Counts crashes (the engine process gone: it is restarted and the game lost), our illegal moves
(a genmove the opponent refuses), the opponent's moves we refuse, and unreadable answers;
reports the engine's resident memory after every game, the tree pool's high-water mark (from
the search log lines) and the results. The last stdout line is one JSON object; Ctrl-C (SIGINT)
ends the run early and still prints it for the games finished ("interrupted": true).
"""
import argparse
import json
import os
import re
import shlex
import sys
import tempfile
import time

from benchmarks.robustness.ends import EngineProcess
from benchmarks.speed.genmove_speed import resident_mib
from benchmarks.gtp_client import EngineError, GtpEngine

GNUGO = "/usr/games/gnugo --mode gtp --level 1"
_TREE = re.compile(r"tree (\d+) of (\d+) nodes, (\d+) of (\d+) edges")


class EngineGone(Exception):
    """The engine process under test exited."""


class Soak:
    """The engine under test, restarted after a crash, and the counts so far."""

    def __init__(self, flags, workdir):
        self.flags = flags
        self.workdir = workdir
        self.crashes = 0
        self.starts = 0
        self.stderr_paths = []
        self.engine = self._start()

    def _start(self):
        self.starts += 1
        path = os.path.join(self.workdir, f"engine-{self.starts}.log")
        self.stderr_paths.append(path)
        return EngineProcess(self.flags, path)

    def ask(self, command, timeout):
        """Return the engine's answer lines to command; raise EngineGone if it died."""
        try:
            return self.engine.answer(command, timeout)
        except TimeoutError as exc:
            raise EngineGone(str(exc)) from None

    def analyze_briefly(self, colour, seconds):
        """Stream lz-analyze for colour about `seconds`, then stop it with 'name'."""
        engine = self.engine
        start = len(engine.lines)
        engine.send(f"lz-analyze {colour} 10")
        time.sleep(seconds)
        try:
            engine.stop_stream(start, 60)
        except TimeoutError as exc:
            raise EngineGone(str(exc)) from None

    def restart(self):
        self.crashes += 1
        self.engine.kill()
        self.engine = self._start()

    def rss(self):
        return resident_mib(self.engine.proc.pid)

    def close(self):
        try:
            self.engine.send("quit")
            self.engine.proc.wait(30)
        except Exception:   # a crashed engine needs no quit
            pass
        self.engine.kill()

    def tree_high_water(self, max_nodes):
        """Return the most nodes and edges the search's tree held after any move (the warm-up's
        small private tree left out)."""
        nodes = edges = 0
        for path in self.stderr_paths:
            with open(path, errors="replace") as f:
                for line in f:
                    match = _TREE.search(line)
                    if match and int(match.group(2)) == max_nodes:
                        nodes = max(nodes, int(match.group(1)))
                        edges = max(edges, int(match.group(3)))
        return nodes, edges


def play_game(soak, opponent_command, index, args, workdir):
    """Play one game; return its record."""
    ours = "b" if index % 2 == 0 else "w"
    record = {"game": index + 1, "colour": ours, "moves": 0, "illegal": 0, "refused": 0,
              "unreadable": 0, "crash": False}
    opponent = GtpEngine(opponent_command, os.path.join(workdir, f"opponent-{index + 1}.log"))
    started = time.monotonic()
    try:
        for command in (f"boardsize {args.size}", "clear_board", f"komi {args.komi:g}"):
            soak.ask(command, 600)
            opponent.send(command, 60)
        colour, passes, result = "b", 0, None
        while passes < 2 and record["moves"] < args.max_moves:
            if colour == ours:
                answer = soak.ask(f"genmove {colour}", 600)
                if not answer or not answer[0].startswith("= "):
                    record["unreadable"] += 1
                    result = f"{'W' if colour == 'b' else 'B'}+F"
                    break
                vertex = answer[0][2:].strip()
                if vertex.lower() == "resign":
                    result = f"{'W' if colour == 'b' else 'B'}+R"
                    break
                if not opponent.send(f"play {colour} {vertex}", 60).ok:
                    record["illegal"] += 1
                    result = f"{'W' if colour == 'b' else 'B'}+F"
                    break
            else:
                reply = opponent.send(f"genmove {colour}", 600)
                vertex = reply.text.strip()
                if vertex.lower() == "resign":
                    result = f"{'W' if colour == 'b' else 'B'}+R"
                    break
                answer = soak.ask(f"play {colour} {vertex}", 600)
                if answer and answer[0].startswith("?"):
                    record["refused"] += 1
                    result = f"{'B' if colour == 'b' else 'W'}+F"
                    break
            record["moves"] += 1
            passes = passes + 1 if vertex.lower() == "pass" else 0
            colour = "w" if colour == "b" else "b"
            if args.analyze and colour != ours:     # between our move and the opponent's
                soak.analyze_briefly(colour, 0.2)
        if result is None:
            result = opponent.send("final_score", 600).text.strip()
    except EngineGone as exc:
        record["crash"] = True
        result = f"{'W' if ours == 'b' else 'B'}+F"
        record["error"] = str(exc)
        soak.restart()
    except EngineError as exc:
        result = "?"
        record["error"] = f"opponent: {exc}"
    finally:
        opponent.close()
    record["result"] = result
    record["won"] = bool(result) and result[:1].lower() == ours
    record["seconds"] = round(time.monotonic() - started, 1)
    record["rss_mib"] = soak.rss()
    return record


def main(argv=None):
    """Run the soak and print its JSON line."""
    parser = argparse.ArgumentParser(description="many games in one engine process")
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--size", type=int, default=19)
    parser.add_argument("--komi", type=float, default=7.5)
    parser.add_argument("--rollouts", type=int, default=300)
    parser.add_argument("--max-moves", type=int, default=None,
                        help="moves before a game is scored as it stands; default 2 x size^2")
    parser.add_argument("--ponder", action="store_true")
    parser.add_argument("--analyze", action="store_true",
                        help="stream lz-analyze for 0.2 s after each opponent move")
    parser.add_argument("--opponent", default=GNUGO)
    parser.add_argument("--memory-game", type=int, default=20,
                        help="the game after which the reference resident memory is taken")
    parser.add_argument("engine_flags", nargs="*", help="more gtp_main.py flags, after --")
    args = parser.parse_args(argv)
    args.max_moves = args.max_moves or 2 * args.size * args.size
    max_nodes = 400_000
    for flag, value in zip(args.engine_flags, args.engine_flags[1:]):
        if flag == "--set" and value.startswith("max_nodes="):
            max_nodes = int(value.partition("=")[2])
    flags = ["--rollouts", str(args.rollouts), "--boardsize", str(args.size),
             *(["--ponder"] if args.ponder else []), *args.engine_flags]
    workdir = tempfile.mkdtemp(prefix="darkgo-soak-")
    soak = Soak(flags, workdir)
    records = []
    started = time.monotonic()
    interrupted = False
    try:
        for index in range(args.games):
            records.append(play_game(soak, args.opponent, index, args, workdir))
            print(json.dumps(records[-1]), flush=True)
    except KeyboardInterrupt:   # a long soak stopped by hand reports the games it finished
        interrupted = True
    finally:
        soak.close()
    nodes, edges = soak.tree_high_water(max_nodes)
    reference = records[min(args.memory_game, len(records)) - 1]["rss_mib"] if records else None
    last = records[-1]["rss_mib"] if records else None
    result = {
        "benchmark": "soak", "games": len(records), "size": args.size,
        "rollouts": args.rollouts, "ponder": args.ponder, "analyze": args.analyze,
        "interrupted": interrupted,
        "opponent": args.opponent, "engine_flags": " ".join(shlex.quote(f) for f in flags),
        "crashes": soak.crashes, "illegal_moves": sum(r["illegal"] for r in records),
        "refused_opponent_moves": sum(r["refused"] for r in records),
        "unreadable_answers": sum(r["unreadable"] for r in records),
        "wins": sum(r["won"] for r in records),
        "moves": sum(r["moves"] for r in records),
        "memory_reference_game": min(args.memory_game, len(records)),
        "rss_mib_reference": reference, "rss_mib_last": last,
        "rss_growth": None if not reference or last is None else round(last / reference - 1, 4),
        "tree_nodes_high_water": nodes, "tree_edges_high_water": edges,
        "max_nodes": max_nodes, "seconds": round(time.monotonic() - started, 1),
        "logs": workdir,
    }
    print(json.dumps(result))
    return 0 if soak.crashes == 0 and result["illegal_moves"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
