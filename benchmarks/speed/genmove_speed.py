"""Whole-search speed through GTP, as a user sees it, for one engine setting or several:

    python -m benchmarks.speed.genmove_speed --size 19 --rollouts 10000 --threads 1 [--moves 3]
    python -m benchmarks.speed.genmove_speed --rollouts 5000 --threads 1 2 auto --net none auto \\
        --positions empty middle [--rounds 2]

The second command compares the thread choices with and without the network: every pair of a
--threads and a --net value is a candidate, and each gets a fresh engine process, `python
gtp_main.py --rollouts R --threads T --net N --seed 1 --set early_stop=false
--resign-threshold 0` (or --engine PROGRAM with those flags). The benchmark waits for the engine's warm-up (final_score
waits for the compiler) and one untimed genmove, then for every position times --moves
genmoves, each from a fresh board: 'empty', or 'middle', the position after the first 100
moves of a 9-dan game (19x19 only). The engine's `cputime` around each move and the wall clock
give playouts (as the engine's log line counts them) per wall second and per CPU second, and
CPU seconds per wall second: how many cores the move kept busy. --rounds N runs every
candidate N times, in turn, so that a change in the machine's load spreads over all of them.
Run it on an idle machine; the load averages before and after are in the result.

--peer COMMAND times another GTP engine on the same positions in the same way (Pachi 12.90:
`env DATA_DIR=D D/pachi -t =10000 -r chinese --nodcnn threads=1,pondering=0,reset_tree`, its
playouts fixed by its own flags to --rollouts), its CPU time read from /proc, after one untimed
genmove; each of our --net none runs then carries cpu_ratio_to_peer, its playouts per CPU
second over the peer's.

One line per candidate and position goes to stderr; the last stdout line is one JSON object,
with the thread counts each engine logged it chose for the CPUs it may use, and each run's
speed-up in playouts per wall second over `--threads 1` with the same network and position.
"""
import argparse
import json
import os
import re
import sys
import tempfile
import time

import gtp_main
from benchmarks.gtp_client import GtpEngine, darkgo_command

# The first 100 moves (SGF points, black first) of a 9-dan game, tygem9d-2005.zip 75805760:
# a middle game with groups in contact all over the board.
MIDDLE_GAME = ("pddppqdcfqcnjpqnporproqoqprnrqsoqkomooqrqqqiqgpjcechcccbddbceccddbcceekcmchcheke"
               "jdjcdkbecfehgcgbhdfcgdebicibhbhafdedjbhcecidfbfkdidhfjejekgjfieiflgkglhlhmimilhk"
               "hnjmieicpkokrirhrjqhrgshpmpnolnlplonojnk")
POSITIONS = ("empty", "middle")
_SEARCH = re.compile(r"gtp INFO (\d+) playouts in [^\n]*?(?:; (\d+) network evaluations)?$",
                     re.MULTILINE)
_THREADS = re.compile(r"gtp_main INFO search threads (\d+)(?:, network threads (\d+))? "
                      r"\((?:auto: |--threads \d+; )(\d+) usable CPUs\)")


def resident_mib(pid):
    """Return the resident memory of a process in MiB (Linux /proc), or None."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def sgf_to_vertex(point, size=19):
    """Return the GTP vertex of a two-letter SGF point ('pd' -> 'Q16')."""
    column, row = ord(point[0]) - ord("a"), ord(point[1]) - ord("a")
    return "ABCDEFGHJKLMNOPQRSTUVWXYZ"[column] + str(size - row)


def setup_commands(position, size):
    """Return the GTP commands that set up a position on a fresh board."""
    commands = ["clear_board"]
    if position == "middle":
        points = [MIDDLE_GAME[i:i + 2] for i in range(0, len(MIDDLE_GAME), 2)]
        commands += [f"play {'bw'[i % 2]} {sgf_to_vertex(p)}" for i, p in enumerate(points)]
    return commands


def to_move(position):
    """Return the colour to move in a position."""
    return "b" if position == "empty" else "bw"[len(MIDDLE_GAME) // 2 % 2]


class LogReader:
    """The engine's stderr log, read on from where the last read stopped."""

    def __init__(self, path):
        self.path = path
        self.offset = 0

    def new_text(self):
        """Return what the engine logged since the last call."""
        with open(self.path, encoding="utf-8", errors="replace") as f:
            f.seek(self.offset)
            text = f.read()
            self.offset = f.tell()
        return text


def ask(engine, command, timeout=600):
    """Return the text of the engine's answer; raise RuntimeError on a '?' answer."""
    response = engine.send(command, timeout)
    if not response.ok:
        raise RuntimeError(f"engine refused {command!r}: {response.text}")
    return response.text


def process_cpu_seconds(pid):
    """Return the user + system CPU seconds of a process and its threads (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def last_search(text):
    """Return (playouts, network evaluations or None) of the last search line in an engine
    log text, or None when it has none."""
    found = _SEARCH.findall(text)
    if not found:
        return None
    playouts, evaluations = found[-1]
    return int(playouts), int(evaluations) if evaluations else None


def timed_genmoves(engine, size, positions, moves, cpu_seconds, search_done):
    """Return {position: per-move records} of genmoves, each from a fresh board set up to
    the position, as records {playouts, evaluations, wall, cpu}: cpu_seconds() reads the
    engine's CPU time, search_done() the playouts and network evaluations (None: unknown)
    of the move it just made."""
    records = {}
    for position in positions:
        records[position] = []
        for _ in range(moves):
            for setup in setup_commands(position, size):
                ask(engine, setup)
            cpu0 = cpu_seconds()
            wall0 = time.perf_counter()
            ask(engine, f"genmove {to_move(position)}")
            wall = time.perf_counter() - wall0
            cpu = cpu_seconds() - cpu0
            playouts, evaluations = search_done()
            records[position].append({"playouts": playouts, "evaluations": evaluations,
                                      "wall": wall, "cpu": cpu})
    return records


def measure_peer(command, size, positions, moves, playouts):
    """Start another engine that plays a fixed number of playouts a move and return
    {position: per-move records} as measure does, its CPU time from /proc."""
    log_path = os.path.join(tempfile.mkdtemp(prefix="genmove-speed-peer-"), "engine.log")
    engine = GtpEngine(command, log_path)
    try:
        ask(engine, f"boardsize {size}")
        ask(engine, "clear_board")
        ask(engine, "genmove b")                # untimed: pattern files, allocations
        return timed_genmoves(engine, size, positions, moves,
                              lambda: process_cpu_seconds(engine._proc.pid),
                              lambda: (playouts, None))
    finally:
        engine.close()


def measure(command, size, positions, moves, settings=()):
    """Start one engine and return (the thread counts it logged, {position: per-move
    records}, its resident memory in MiB), each record {playouts, wall, cpu} of one timed
    genmove; settings: GTP commands sent first (time_settings, say)."""
    log_path = os.path.join(tempfile.mkdtemp(prefix="genmove-speed-"), "engine.log")
    engine = GtpEngine(command, log_path)
    log = LogReader(log_path)

    def search_logged():
        """Return the playouts and network evaluations of the engine's last search line
        since the last call."""
        searched = last_search(log.new_text())
        if searched is None:
            raise RuntimeError(f"no search line on the engine's log {log_path}")
        return searched

    try:
        ask(engine, f"boardsize {size}")
        for setting in settings:
            ask(engine, setting)
        ask(engine, "clear_board")
        ask(engine, "final_score", 1200)        # waits for the background warm-up
        ask(engine, "genmove b")                # untimed: first search, allocations
        found = _THREADS.search(log.new_text())
        threads = dict.fromkeys(("search_threads", "network_threads", "usable_cpus"))
        if found is not None:
            threads.update(zip(threads, (None if n is None else int(n) for n in found.groups())))
        records = timed_genmoves(engine, size, positions, moves,
                                 lambda: float(ask(engine, "cputime")), search_logged)
        rss = resident_mib(engine._proc.pid)
    finally:
        engine.close()
    return threads, records, rss


def summary(records):
    """Return the speed figures of a candidate's timed moves on one position."""
    playouts = sum(r["playouts"] for r in records)
    evaluations = [r.get("evaluations") for r in records]
    wall = sum(r["wall"] for r in records)
    cpu = sum(r["cpu"] for r in records)
    return {"moves": len(records), "playouts_per_move": round(playouts / len(records)),
            "playouts_per_wall_second": round(playouts / wall, 1),
            # None when the clock's ticks saw no CPU time (a move far under 10 ms)
            "playouts_per_cpu_second": round(playouts / cpu, 1) if cpu > 0 else None,
            "wall_seconds_per_move": round(wall / len(records), 3),
            "cpu_seconds_per_move": round(cpu / len(records), 3),
            "cpu_per_wall": round(cpu / wall, 2),
            "wall_rates": [round(r["playouts"] / r["wall"], 1) for r in records],
            # 0 without the network; None for a peer
            "network_evaluations_per_move": round(sum(evaluations) / len(records))
            if all(n is not None for n in evaluations) else None}


def parse_args(argv):
    """Return the parsed command line; exit 2 on a bad one."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.speed.genmove_speed",
                                description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=19)
    p.add_argument("--rollouts", type=int, default=10000)
    p.add_argument("--threads", nargs="+", default=["1"],
                   type=lambda text: str(gtp_main.auto_or_count(text)),
                   help="one or more --threads values to compare (N or auto); default 1")
    p.add_argument("--net", nargs="+", choices=("none", "auto"), default=["none"],
                   help="one or more --net values to compare; default none")
    p.add_argument("--positions", nargs="+", choices=POSITIONS, default=["empty"],
                   help="positions to time, each from a fresh board; default empty")
    p.add_argument("--moves", type=int, default=3,
                   help="timed genmoves per candidate, position and round; default 3")
    p.add_argument("--rounds", type=int, default=1,
                   help="times every candidate is run, in turn, in a fresh engine; default 1")
    p.add_argument("--early-stop", action="store_true",
                   help="let the engine stop a move's search early (by default every move "
                        "runs all --rollouts, the same work for every candidate)")
    p.add_argument("--engine", default=None,
                   help="engine program, given the flags above; default: this repo's "
                        "gtp_main.py under this Python")
    p.add_argument("--peer", default=None, metavar="COMMAND",
                   help="another GTP engine to time the same way, set by its own flags to "
                        "--rollouts playouts a move (Pachi: -t =N); its CPU time is read "
                        "from /proc, and each of our --net none runs gets its ratio to it")
    args = p.parse_args(argv)
    if args.rollouts < 1 or args.moves < 1 or args.rounds < 1:
        p.error("--rollouts, --moves and --rounds must be at least 1")
    if "middle" in args.positions and args.size != 19:
        p.error("the middle-game position is on 19x19")
    return args


def main(argv=None):
    """Run the benchmark and print its JSON line."""
    args = parse_args(argv)
    program = darkgo_command(args.engine)
    candidates = [(t, n) for n in args.net for t in args.threads]
    load_before = os.getloadavg()
    started = time.perf_counter()
    records = {(t, n, p): [] for t, n in candidates + [("peer", None)]
               for p in args.positions}
    logged, rss = {}, {}
    for _ in range(args.rounds):
        for threads, net in candidates:
            command = (f"{program} --rollouts {args.rollouts} --threads {threads} --net {net} "
                       f"--seed 1 --resign-threshold 0"
                       + ("" if args.early_stop else " --set early_stop=false"))
            logged[threads, net], found, rss[threads, net] = measure(
                command, args.size, args.positions, args.moves)
            for position, moves in found.items():
                records[threads, net, position] += moves
        if args.peer:
            for position, moves in measure_peer(args.peer, args.size, args.positions,
                                                args.moves, args.rollouts).items():
                records["peer", None, position] += moves
    if args.peer:
        candidates.append(("peer", None))
    runs = []
    for threads, net in candidates:
        for position in args.positions:
            if threads == "peer":
                runs.append({"threads": "peer", "net": None, "position": position,
                             "command": args.peer, "search_threads": None,
                             "network_threads": None, **summary(records["peer", None, position])})
                continue
            runs.append({"threads": threads, "net": net, "position": position,
                         **logged[threads, net], **summary(records[threads, net, position]),
                         "resident_mib": None if rss[threads, net] is None
                         else round(rss[threads, net], 1)})
    for run in runs:
        one = [r for r in runs if r["threads"] == "1" and r["net"] == run["net"]
               and r["position"] == run["position"]]
        run["speedup_over_1_thread"] = round(run["playouts_per_wall_second"]
                                             / one[0]["playouts_per_wall_second"], 3) \
            if one else None
        peer = [r for r in runs if r["threads"] == "peer" and r["position"] == run["position"]]
        if peer and run["net"] == "none" and peer[0]["playouts_per_cpu_second"]:
            run["cpu_ratio_to_peer"] = round(run["playouts_per_cpu_second"]
                                             / peer[0]["playouts_per_cpu_second"], 3)
        print(f"--threads {run['threads']:>4} --net {str(run['net']):<4} {run['position']:<6}: "
              f"search {run['search_threads']}, network {run['network_threads']}; "
              f"{run['playouts_per_wall_second']:8.1f} playouts/wall s, "
              f"{run['playouts_per_cpu_second']} /CPU s, {run['cpu_per_wall']:.2f} cores, "
              f"{run['wall_seconds_per_move']:.2f} s/move", file=sys.stderr)
    result = {"benchmark": "genmove_speed", "size": args.size, "rollouts": args.rollouts,
              "moves": args.moves, "rounds": args.rounds, "early_stop": args.early_stop,
              "cpu_count": os.cpu_count(),
              "load_average_before": [round(x, 2) for x in load_before],
              "load_average_after": [round(x, 2) for x in os.getloadavg()],
              "seconds": round(time.perf_counter() - started, 1), "runs": runs}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
