"""Compiling ahead of need: the jitted core compiles on first use, which from an empty cache
takes a minute or two (and loading it from the cache a few seconds), far more than a move's time.

A Warmup replays a short session on a 9x9 board through a private engine with the same settings
(fewer playouts, a small tree), so that everything the commands run is compiled, or loaded from
the on-disk cache, before a real game asks for it. Compiled code is specialised by argument types
only, and boards of every size share their array types: after the 9x9 session a 19x19 game
compiles nothing (tests/test_warmup.py checks it). It runs in stages, each marked done as it
ends, so that a timed genmove arriving meanwhile can use what is ready (Player.early_move):

- "rules": moves, captures, ko, suicide, undo, handicap, and the quick move without search;
- "net": the network's input features and a first forward pass (only with a network);
- "search": genmoves with tree reuse, pass and cleanup decisions, dead stones and scores.

gtp_main starts one on a thread before it serves GTP (setup commands are answered meanwhile),
and `gtp_main.py --warm-up` runs one in the foreground and exits, to fill the cache at install.

Compiling holds the GIL for seconds at a time (LLVM optimises a big function without releasing
it), so a compile on the serving process's thread stalls the GTP loop: a move's clock runs on
while its answer waits. When the cache lacks the search, the serving process therefore hands
the long part to a compiler process (`gtp_main.py --warm-up`, which fills the same cache) and
loads what it wrote: its own "rules" and "net" stages still compile in-process (they are short
and needed first; the compiler process starts once the rules are compiled, so as not to slow
them), its "search" stage waits for the compiler and then only loads.
"""
import io
import logging
import os
import pathlib
import subprocess
import threading
import time
from dataclasses import replace

from engine import board as bd
from engine.gtp import GtpEngine
from engine.player import Player, quick_move

log = logging.getLogger("warmup")

STAGES = ("rules", "net", "search")
SIZE = 9
ROLLOUTS = 300         # enough for the early-stop check, which runs every 64 playouts
OWNERSHIP_RUNS = 64
MAX_NODES = 4096

# Shapes away from the top and right edges, so that they are the same on every board from 9x9
# up; the '?' answers (ko, occupied point, suicide) are part of the warm-up.
RULES_SESSION = (
    "boardsize 9", "clear_board", "komi 7",
    "play b D5", "play w F4", "play b E4", "play w F6", "play b E6", "play w G5",
    "play b C3", "play w E5", "play b F5", "play w E5", "play w D5",
    "play b A2", "play b B1", "play w A1", "play w pass", "undo", "undo",
    "showboard", "list_stones black", "printsgf",
    "clear_board", "fixed_handicap 2", "clear_board", "place_free_handicap 3",
    "clear_board", "set_free_handicap C3 G7", "time_settings 0 5 1", "time_left b 4 1",
)
# Ends with a white stone dead in black's corner, for kgs-genmove_cleanup's attack on it.
SEARCH_SESSION = (
    "play b C3", "play w G7",
    "genmove b", "genmove w", "reg_genmove b", "genmove b", "play w pass", "genmove b",
    "final_score", "final_status_list dead", "final_status_list seki", "gogui-ownership",
    "gogui-visits w", "clear_board", "play b A3", "play b B3", "play b C3", "play b C2",
    "play b C1", "play w B1", "kgs-genmove_cleanup b",
)


class Warmup:
    """Compiles, or loads from the cache, the jitted code of every command, stage by stage."""

    def __init__(self, config, compiler=None):
        """config: the engine's PlayerConfig. The network comes later, by use(): the "rules"
        stage runs while it loads. compiler: the command (argv) of a process that fills the
        compile cache, run from the end of the "rules" stage when search_cached() says the
        cache lacks the search; the "search" stage waits for it to end."""
        self.config = config
        self.compiler = compiler
        self._compiler_process = None
        self._compiler_lock = threading.Lock()
        self._compiler_stopped = False
        self.evaluator = None
        self.seconds = {}             # stage -> seconds it took
        self.failed = False           # a stage raised (logged); the rest compiles when used
        self._evaluator_known = threading.Event()
        self._done = {s: threading.Event() for s in STAGES}
        self._finished = threading.Event()

    def use(self, evaluator):
        """Hand over the engine's network (None for none), which the stages after "rules"
        need; return self."""
        self.evaluator = evaluator
        self._evaluator_known.set()
        return self

    def has(self, stage):
        """Return True when stage (one of STAGES) is done, or had nothing to do."""
        return self._done[stage].is_set()

    def cached(self):
        """Return True when the compile cache holds the search (the warm-up loads it, in
        seconds, instead of compiling it)."""
        return search_cached()

    def finished(self):
        """Return True when every stage is done (or the warm-up failed and gave up)."""
        return self._finished.is_set()

    def wait(self, timeout=None, stage=None):
        """Return True once stage (by default every stage) is done, False if timeout seconds
        passed first."""
        return (self._finished if stage is None else self._done[stage]).wait(timeout)

    def start(self):
        """Run the stages on a daemon thread (the compiler process, if the cache needs it,
        from the end of the "rules" stage); return self."""
        threading.Thread(target=self.run, name="warmup", daemon=True).start()
        return self

    def run(self):
        """Run every stage on this thread (waiting for use() after "rules"); return the total
        seconds. A failure is logged and ends the warm-up early, marking it finished: what is
        left compiles when first used."""
        started = time.perf_counter()
        engines = []
        try:
            # The private engine comes first: its construction compiles what the real one's
            # needs, so that gtp_main's main thread finds that ready.
            engines.append(self._engine(None))
            self._stage("rules", engines[-1], started)
            # Not earlier: on a small machine the two compiles would share the CPU, and a
            # genmove on a cold cache cannot answer before the rules are compiled.
            self._start_compiler()
            self._evaluator_known.wait()
            if self.evaluator is not None:
                engines.append(self._engine(self.evaluator))
                self._stage("net", engines[-1], started)
            self._done["net"].set()
            self._wait_for_compiler(started)
            self._stage("search", engines[-1], started)
        except Exception:
            self.failed = True
            if self._compiler_stopped:
                # The engine is leaving (stop_compiler): a start-up that failed, reported
                # where it failed, or a close; this thread's failure is no news then, and its
                # log record could outlive the log's stream.
                log.debug("warm-up ended by a failure while the engine left", exc_info=True)
            else:
                log.exception("warm-up failed; what it did not reach compiles when first used")
        finally:
            self.stop_compiler()
            for engine in engines:
                engine.player.search.close()
            for event in self._done.values():
                event.set()
            self._finished.set()
        return time.perf_counter() - started

    def _start_compiler(self):
        with self._compiler_lock:
            if self.compiler is None or self._compiler_stopped or search_cached():
                return
            log.info("warm-up: compiling the search in a separate process")
            self._compiler_process = subprocess.Popen(self.compiler, stdin=subprocess.DEVNULL,
                                                      stdout=subprocess.DEVNULL,
                                                      stderr=subprocess.DEVNULL)

    def _wait_for_compiler(self, started):
        process = self._compiler_process
        if process is None:
            return
        status = process.wait()
        log.info("warm-up: compiler process ended with status %d after %.1f s", status,
                 time.perf_counter() - started)

    def stop_compiler(self):
        """End the compiler process, if one is running, and start none after this (the
        engine is leaving: a failure of the stages from now on is not logged as an error)."""
        with self._compiler_lock:
            self._compiler_stopped = True
            process = self._compiler_process
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()

    def _stage(self, stage, engine, started):
        t = time.perf_counter()
        getattr(self, "_" + stage)(engine)
        self.seconds[stage] = time.perf_counter() - t
        self._done[stage].set()
        log.info("warm-up: %s ready after %.1f s", stage, time.perf_counter() - started)

    def _engine(self, evaluator):
        search = replace(self.config.search, threads=1, max_nodes=MAX_NODES,
                         max_edges=MAX_NODES * 20)
        config = replace(self.config, rollouts=ROLLOUTS, ownership_runs=OWNERSHIP_RUNS,
                         search=search)
        engine = GtpEngine(Player(config, SIZE, evaluator), size=SIZE)
        engine.search_log_level = logging.DEBUG
        return engine

    @staticmethod
    def _session(engine, commands):
        for command in commands:
            out = io.StringIO()
            engine.handle_line(command + "\n", out)
            log.debug("warm-up: %s -> %s", command, out.getvalue().strip())

    def _rules(self, engine):
        self._session(engine, RULES_SESSION)
        game, player = engine.game, engine.player
        player.move_time(game, bd.BLACK)
        quick_move(game, bd.BLACK)

    def _net(self, engine):
        engine.player.network_move(engine.game, bd.BLACK, resign=False)
        # The search reads the value head too: with ONNX Runtime that is a graph of its own,
        # exported here rather than in the first move's search.
        engine.player.evaluator.point_evaluate([engine.game.board], komi=engine.game.scoring_komi)

    def _search(self, engine):
        self._session(engine, SEARCH_SESSION)


def search_cached():
    """Return True when numba's cache (NUMBA_CACHE_DIR) holds the search's compiled code."""
    folder = os.environ.get("NUMBA_CACHE_DIR")
    return bool(folder) and any(pathlib.Path(folder).glob("*/tree.search_step-*.nbi"))
