"""How the engine ends, as a GUI or a match runner sees it:

    python -m benchmarks.robustness.ends [--size 9] [--rollouts 100000] [--repeat 1]

Starts `python gtp_main.py --net none` for every state (idle, a genmove's search, pondering
after our move, lz-analyze) and every ending (quit, end of input, SIGTERM, SIGINT, both pipes
closed as by a GUI that exited, and only the output pipe closed), each in a fresh process that
has first searched once (so that the numba cache is loaded), and reports the seconds from the
ending to the process's exit, its exit status and whether its stderr holds a traceback. The
last stdout line is one JSON object.

A closed output pipe alone is only met when the engine writes: during a genmove's search, not
before its answer, so that pair is left out (a GUI that exits closes our input too: "gone").
"""
import argparse
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.gtp_client import GTP_MAIN

ROOT = Path(GTP_MAIN).parent

STATES = ("idle", "search", "ponder", "analysis")
ENDINGS = ("quit", "eof", "SIGTERM", "SIGINT", "gone", "pipe")
LEFT_OUT = {("search", "pipe")}
# Playouts of our move before pondering: a short genmove, then 50 times as many to ponder.
PONDER_ROLLOUTS = 2000


class EngineProcess:
    """One `gtp_main.py` process; its stdout read line by line on a thread (from the raw pipe,
    so that the pipe can be closed under it), its stderr kept in a file."""

    def __init__(self, flags, stderr_path):
        with open(stderr_path, "wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, GTP_MAIN, *flags], cwd=ROOT,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, bufsize=0,
                start_new_session=True)
        self.stderr_path = stderr_path
        self.lines = []             # complete stdout lines, without their newline
        self._seen = threading.Condition()
        self._stop_reading = False
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        fd, partial = self.proc.stdout.fileno(), b""
        while not self._stop_reading:
            if not select.select([fd], [], [], 0.05)[0]:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            *complete, partial = (partial + chunk).split(b"\n")
            with self._seen:
                self.lines += [line.decode("utf-8", "replace") for line in complete]
                self._seen.notify_all()

    def send(self, line):
        """Write one command line."""
        self.proc.stdin.write((line + "\n").encode())
        self.proc.stdin.flush()

    def wait_line(self, predicate, start=0, timeout=600.0):
        """Return the index of the first stdout line from `start` on that satisfies predicate;
        raise TimeoutError after timeout seconds."""
        deadline = time.monotonic() + timeout
        with self._seen:
            while True:
                for i in range(start, len(self.lines)):
                    if predicate(self.lines[i]):
                        return i
                if self.proc.poll() is not None and not self._reader.is_alive():
                    raise TimeoutError("the engine exited")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no such line within {timeout} s")
                self._seen.wait(min(left, 0.1))

    def answer(self, command, timeout=600.0):
        """Send command and return its answer's lines (streamed lines included)."""
        start = len(self.lines)
        self.send(command)
        end = self.wait_line(lambda line: line == "", start, timeout)
        return self.lines[start:end]

    def stop_stream(self, start, timeout=600.0):
        """Stop the analysis stream whose lines begin at index start with a 'name' command and
        return once that command's answer is in: it comes after the blank line that ends the
        stream, so waiting for the first blank line alone would leave it to a later reader."""
        self.send("name")
        named = self.wait_line(lambda line: line == "= darkgo", start, timeout)
        self.wait_line(lambda line: line == "", named, timeout)

    def close_stdout(self):
        """Stop reading and close our end of the engine's stdout, as a GUI that went away."""
        self._stop_reading = True
        self._reader.join()
        self.proc.stdout.close()

    def stderr(self):
        return Path(self.stderr_path).read_text(errors="replace")

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def warm_up(engine, timeout=600.0):
    """Answer a command, run lz-analyze until its first info line (the search compiled or
    loaded from numba's cache) and stop it with the next command; then wait for gtp_main's
    background warm-up to log its end, if it logged its start (a genmove waits for it, not
    for a stop)."""
    engine.answer("name")
    start = len(engine.lines)
    engine.send("lz-analyze b 10")
    engine.wait_line(lambda line: line.startswith("info move"), start)
    engine.stop_stream(start)
    deadline = time.monotonic() + timeout
    while "warm-up" in engine.stderr() and not any(
            "warm-up" in line and ("search ready" in line or "failed" in line)
            for line in engine.stderr().splitlines()):
        if time.monotonic() > deadline:
            raise TimeoutError("the warm-up did not end")
        time.sleep(0.1)


def enter(engine, state):
    """Bring a warmed-up engine into state: 'idle', 'search' (a genmove searching), 'ponder'
    (pondering after our move) or 'analysis' (lz-analyze streaming)."""
    if state == "idle":
        return
    if state == "search":
        engine.send("genmove b")
        time.sleep(0.5)
    elif state == "ponder":
        engine.answer("genmove b")
        time.sleep(0.5)
    else:
        start = len(engine.lines)
        engine.send("lz-analyze b 10")
        engine.wait_line(lambda line: line.startswith("info move"), start)


def end(engine, ending):
    """Apply one of ENDINGS to the engine; return the seconds until it exited (None if it had
    not after 30 s, when it is killed)."""
    started = time.monotonic()
    if ending == "quit":
        engine.send("quit")
    elif ending == "eof":
        engine.proc.stdin.close()
    elif ending == "gone":
        engine.close_stdout()
        engine.proc.stdin.close()
    elif ending == "pipe":
        engine.close_stdout()
        try:    # an engine that writes nothing by itself meets the closed pipe answering
            engine.send("name")
        except BrokenPipeError:
            pass
    else:
        engine.proc.send_signal(getattr(signal, ending))
    try:
        engine.proc.wait(30)
    except subprocess.TimeoutExpired:
        engine.kill()
        return None
    return time.monotonic() - started


def measure(state, ending, size=9, rollouts=100_000, workdir=None):
    """Return a dict for one run: state, ending, seconds to exit, exit status, traceback (True
    when stderr holds one), the engine's stdout lines after the state was entered, and its
    stderr."""
    workdir = workdir or tempfile.mkdtemp()
    flags = ["--net", "none", "--boardsize", str(size), "--seed", "1",
             "--rollouts", str(PONDER_ROLLOUTS if state == "ponder" else rollouts)]
    if state == "ponder":
        flags.append("--ponder")
    engine = EngineProcess(flags, os.path.join(workdir, f"{state}-{ending}.log"))
    try:
        warm_up(engine)
        mark = len(engine.lines)
        enter(engine, state)
        seconds = end(engine, ending)
    finally:
        engine.kill()
    stderr = engine.stderr()
    return {"state": state, "ending": ending,
            "seconds": None if seconds is None else round(seconds, 3),
            "status": engine.proc.returncode,
            "traceback": "Traceback" in stderr or "Exception ignored" in stderr,
            "lines": engine.lines[mark:], "stderr": stderr}


def main(argv=None):
    """Run every state with every ending and print the JSON line."""
    parser = argparse.ArgumentParser(description="seconds from each ending to the exit")
    parser.add_argument("--size", type=int, default=9)
    parser.add_argument("--rollouts", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args(argv)
    runs = []
    for _ in range(args.repeat):
        for state in STATES:
            for ending in ENDINGS:
                if (state, ending) in LEFT_OUT:
                    continue
                run = measure(state, ending, args.size, args.rollouts)
                del run["lines"], run["stderr"]
                print(json.dumps(run), flush=True)
                runs.append(run)
    times = [r["seconds"] for r in runs if r["seconds"] is not None]
    result = {"benchmark": "ends", "size": args.size, "rollouts": args.rollouts,
              "runs": len(runs), "max_seconds": max(times) if times else None,
              "mean_seconds": round(sum(times) / len(times), 3) if times else None,
              "not_exited": sum(r["seconds"] is None for r in runs),
              "nonzero_status": sum(r["status"] != 0 for r in runs),
              "tracebacks": sum(r["traceback"] for r in runs),
              "by_run": {f"{r['state']}/{r['ending']}": r["seconds"] for r in runs}}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
