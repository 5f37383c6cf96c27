"""Start-up as a GUI sees it: engine start to the first answer and to the first genmove.

    python -m benchmarks.speed.cold_start [--cold] [--time-settings "0 5 1"] [--ping SECONDS]
        [--moves N] [--engine CMD]

Starts `python gtp_main.py` (or --engine CMD) and sends what a GUI sends first: name,
protocol_version, version, boardsize, clear_board, komi, [time_settings,] the opponent's first
move (play b Q16), then genmove w (and more genmoves with --moves, colours alternating).
With --cold the engine gets a fresh, empty compile cache (NUMBA_CACHE_DIR set to a new
temporary folder), as after an install or an edit of the jitted sources; without it, the
checkout's cache, as filled by earlier runs. Reports seconds from the engine's start to each
answer, the longest setup-command answer, how long each genmove took and its move, and the
engine's log lines about its warm-up. With --ping, before the genmove it sends `komi 7.5` every
0.25 s for that many seconds and reports how long those answers took (the engine compiling in
the background meanwhile). The last stdout line is one JSON object.
"""
import argparse
import json
import os
import shutil
import tempfile
import time

from benchmarks.gtp_client import GtpEngine

SETUP = ("protocol_version", "version", "boardsize {size}", "clear_board", "komi 7.5")
FIRST_MOVE = "play b Q16"


def main(argv=None):
    """Run the benchmark and print its JSON line."""
    parser = argparse.ArgumentParser(description="engine start to first answer and genmove")
    parser.add_argument("--cold", action="store_true",
                        help="start with an empty compile cache (a fresh temporary folder)")
    parser.add_argument("--time-settings", default=None, metavar="'MAIN BYO STONES'",
                        help="send time_settings with these arguments before genmove")
    parser.add_argument("--size", type=int, default=19)
    parser.add_argument("--moves", type=int, default=1, help="genmoves in a row (w, b, ...)")
    parser.add_argument("--ping", type=float, default=0.0, metavar="SECONDS",
                        help="before the genmove, send 'komi 7.5' every 0.25 s for this long")
    parser.add_argument("--engine", default="python gtp_main.py",
                        help="engine command; default: this repo's gtp_main.py")
    args = parser.parse_args(argv)
    work = tempfile.mkdtemp()
    saved = os.environ.get("NUMBA_CACHE_DIR")
    if args.cold:
        os.environ["NUMBA_CACHE_DIR"] = os.path.join(work, "cache")
    started = time.perf_counter()
    engine = GtpEngine(args.engine, os.path.join(work, "engine.log"))
    if args.cold:
        if saved is None:
            del os.environ["NUMBA_CACHE_DIR"]
        else:
            os.environ["NUMBA_CACHE_DIR"] = saved
    answers = []

    def ask(command, timeout=600, record=True):
        sent = time.perf_counter()
        response = engine.send(command, timeout)
        done = time.perf_counter()
        answer = {"command": command, "ok": response.ok, "answer": response.text,
                  "at": round(done - started, 2), "took": round(done - sent, 3)}
        if record:
            answers.append(answer)
        return answer

    try:
        first = ask("name")
        setup = [ask(c.format(size=args.size)) for c in SETUP]
        if args.time_settings:
            setup.append(ask(f"time_settings {args.time_settings}"))
        setup.append(ask(FIRST_MOVE))
        pings = []
        ping_end = time.perf_counter() + args.ping
        while time.perf_counter() < ping_end:
            pings.append(ask("komi 7.5", record=False)["took"])
            time.sleep(0.25)
        moves = [ask(f"genmove {'wb'[i % 2]}") for i in range(args.moves)]
    finally:
        engine.close()
        with open(os.path.join(work, "engine.log"), encoding="utf-8", errors="replace") as f:
            log = [line.split(" ", 2)[-1].strip() for line in f if "warm" in line]
        shutil.rmtree(work, ignore_errors=True)
    result = {"benchmark": "cold_start", "cold": args.cold, "engine": args.engine,
              "time_settings": args.time_settings, "size": args.size,
              "first_answer_s": first["at"],
              "longest_setup_answer_s": max(a["took"] for a in setup),
              "pings": len(pings),
              "ping_median_s": sorted(pings)[len(pings) // 2] if pings else None,
              "ping_max_s": max(pings) if pings else None,
              "first_genmove_answer_s": moves[0]["at"],
              "genmove_seconds": [m["took"] for m in moves],
              "moves": [m["answer"] for m in moves], "answers": answers, "log": log}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
