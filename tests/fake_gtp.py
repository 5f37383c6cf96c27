"""A scripted GTP engine for the tests of the match and clock benchmarks: genmove plays --moves
in order, then passes; the other options make it misbehave on purpose, slow it down or record
what it was sent, so that a runner's bookkeeping can be checked. Commands carry ids, as the
benchmarks' GTP client sends them."""
import argparse
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("--name", default="Fake")
parser.add_argument("--moves", default="")
parser.add_argument("--score", default="B+10")
parser.add_argument("--reject", default="", help="vertex that play answers with '? illegal move'")
parser.add_argument("--genmove-raw", help="raw text written in answer to genmove")
parser.add_argument("--genmove-seconds", type=float, default=0.0,
                    help="seconds genmove sleeps before it answers")
parser.add_argument("--hang-genmove", action="store_true")
parser.add_argument("--die-genmove", action="store_true")
parser.add_argument("--log-search", action="store_true", help="log darkgo's search line")
parser.add_argument("--log", help="file to which every command is appended, without its id")
parser.add_argument("--handicap", default="",
                    help="comma-separated vertices that fixed_handicap answers with")
parser.add_argument("--refuse", action="append", default=[],
                    help="command answered as unknown, as an engine without it answers")
parser.add_argument("--accept", action="append", default=[],
                    help="command answered with an empty success")
args = parser.parse_args()
moves = [m for m in args.moves.split(",") if m]
for line in sys.stdin:
    words = line.split()
    cmd_id, cmd, rest = words[0], words[1], words[2:]
    if args.log:
        with open(args.log, "a") as log:
            log.write(" ".join(words[1:]) + "\n")
    answer, ok = "", True
    if cmd in args.refuse:
        ok, answer = False, "unknown command"
    elif cmd == "name":
        answer = args.name
    elif cmd == "version":
        answer = "1.0"
    elif cmd in ("boardsize", "clear_board", "komi", "time_settings", "kgs-time_settings",
                 "time_left") or cmd in args.accept:
        pass
    elif cmd == "play":
        ok = rest[1].upper() != args.reject.upper()
        answer = "" if ok else "illegal move"
    elif cmd in ("genmove", "reg_genmove"):
        time.sleep(args.genmove_seconds)
        if args.hang_genmove:
            time.sleep(60)
        if args.die_genmove:
            sys.exit(1)
        if args.genmove_raw is not None:
            sys.stdout.write(args.genmove_raw.replace("ID", cmd_id))
            sys.stdout.flush()
            continue
        answer = moves.pop(0) if moves else "pass"
        if args.log_search:
            sys.stderr.write(f"2026-01-01 00:00:00,000 gtp INFO {len(moves)} playouts in 0.10s "
                             f"(10/s); win rate 0.600; top: {answer.upper()} 9 0.610, B2 1 0.5; "
                             f"pv {answer.upper()} D4; tree 5 of 10 nodes, 4 of 20 edges\n")
            sys.stderr.flush()
    elif cmd == "fixed_handicap" and args.handicap:
        answer = " ".join(args.handicap.split(","))
    elif cmd == "final_score":
        answer = args.score
    elif cmd == "gogui-score_est":          # Pachi's playout score estimate, in its format
        answer = f"INFLUENCE  A1 0.0\nTEXT {args.score}   Playouts: {args.score}"
    elif cmd == "quit":
        print(f"={cmd_id}\n", flush=True)
        break
    else:
        ok, answer = False, "unknown command"
    print(f"{'=' if ok else '?'}{cmd_id} {answer}\n", flush=True)
