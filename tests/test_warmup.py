"""Cold start: the background warm-up compiles what genmove needs while setup commands are
answered; a genmove that comes first gets a legal move without search; --warm-up fills the cache
and exits. No test depends on timing: a warm-up held at a gate stays unfinished as long as a
test needs it to."""
import io
import json
import os
import subprocess
import sys
import threading
import time

import pytest

import engine
import gtp_main
from asciiboard import game_from_diagram
from engine import board as bd
from engine import player as pl
from engine import warmup as wu
from engine.config import NET_VALUE_WEIGHT
from engine.gtp import GtpEngine
from engine.player import Player, PlayerConfig, quick_move
from engine.search_config import SearchConfig
from engine.time_policy import TimeControl

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class HeldWarmup(wu.Warmup):
    """A Warmup whose stages after "rules" (and "net" too with hold_net) wait at a gate and then
    do nothing, so that it stays unfinished until the test opens the gate."""

    def __init__(self, config, hold_net=True):
        super().__init__(config)
        self.gate = threading.Event()
        self.hold_net = hold_net

    def _net(self, engine):
        if self.hold_net:
            self.gate.wait()
        else:
            super()._net(engine)

    def _search(self, engine):
        self.gate.wait()


def empty(size=9):
    return game_from_diagram("\n".join(["." * size] * size))


def player(evaluator=None):
    return Player(PlayerConfig(rollouts=100, ownership_runs=50, search=SearchConfig(seed=1)), 9,
                  evaluator)


def test_setup_commands_are_answered_and_a_timed_genmove_played_while_the_warm_up_runs(
        monkeypatch, capsys):
    made = []

    def held(config, compiler):
        assert compiler[1:3] == [os.path.join(ROOT, "gtp_main.py"), "--warm-up"]
        made.append(HeldWarmup(config))
        return made[-1]
    monkeypatch.setattr(gtp_main, "Warmup", held)
    monkeypatch.setattr(sys, "stdin", io.StringIO(
        "name\nboardsize 9\nclear_board\nkomi 6.5\ntime_settings 0 1 1\nplay b E5\n"
        "genmove w\nquit\n"))
    try:
        assert gtp_main.main(["--net", "none", "--seed", "1", "--log-level", "error"]) == 0
        assert not made[0].finished()
    finally:
        made[0].gate.set()
    answers = capsys.readouterr().out.split("\n\n")[:-1]
    assert answers[:6] == ["= darkgo", "=", "=", "=", "=", "="]
    move = answers[6][2:]
    game = empty()
    game.play(bd.BLACK, game.parse_vertex("E5"))
    assert move != "pass" and game.is_legal(game.parse_vertex(move), bd.WHITE)


def test_a_timed_genmove_during_the_warm_up_plays_the_networks_best_move():
    from nets import model as nm
    evaluator = nm.Policy(model=nm.PolicyNet(nm.make_config("tiny")), device="cpu")
    p = player(evaluator)
    warmup = HeldWarmup(p.config, hold_net=False).use(evaluator).start()
    p.warmup = warmup
    try:
        assert warmup.wait(stage="net")
        game = empty()
        game.play(bd.BLACK, game.parse_vertex("E5"))
        p.time = TimeControl(0, 1, 1, 0, False)
        move = p.genmove(game, bd.WHITE)
        assert not warmup.finished() and p.last_result is None
        assert move == p.network_move(game, bd.WHITE, resign=False)
        assert game.is_legal(move, bd.WHITE)
    finally:
        warmup.gate.set()


def test_an_untimed_genmove_waits_for_the_warm_up_to_search():
    p = player()
    warmup = HeldWarmup(p.config).use(None).start()
    p.warmup = warmup
    threading.Timer(0.2, warmup.gate.set).start()
    move = p.genmove(empty(), bd.BLACK)
    assert warmup.finished() and p.last_result is not None
    assert move == p.last_result.best.point


def test_an_untimed_genmove_waits_only_so_long(monkeypatch):
    monkeypatch.setattr(pl, "UNTIMED_WARMUP_WAIT", 0.0)
    p = player()
    p.warmup = HeldWarmup(p.config).use(None).start()
    try:
        move = p.genmove(empty(), bd.BLACK)
        assert p.last_result is None and move == quick_move(empty(), bd.BLACK)
    finally:
        p.warmup.gate.set()


def test_a_stop_ends_the_wait_for_the_warm_up():
    class Unfinished:
        """A warm-up that never finishes and records how long it was asked to wait."""
        waits = []

        def finished(self):
            return False

        def cached(self):
            return False

        def wait(self, timeout=None, stage=None):
            self.waits.append(timeout)
            return False

    p = player()
    p.warmup = Unfinished()
    stop = threading.Event()
    stop.set()
    assert p._wait_for_warmup(None, stop) is False
    assert p.warmup.waits == [pl.WARMUP_POLL]        # one poll, not UNTIMED_WARMUP_WAIT


@pytest.mark.parametrize("cached", [True, False])
def test_the_wait_names_the_warm_up_command_only_when_the_cache_lacks_the_search(cached,
                                                                                 caplog):
    class Loading:
        """A warm-up that finishes at the first wait, its code in the cache or not."""
        def finished(self):
            return False

        def cached(self):
            return cached

        def wait(self, timeout=None, stage=None):
            return True

    p = player()
    p.warmup = Loading()
    with caplog.at_level("INFO", logger="player"):
        assert p._wait_for_warmup(None)
    [line] = [r.getMessage() for r in caplog.records if "waiting up to" in r.getMessage()]
    assert ("--warm-up" in line) is not cached
    assert ("from the cache" in line) is cached


def test_pondering_starts_only_after_the_warm_up():
    args = gtp_main.build_parser().parse_args(["--ponder", "--net", "none", "--boardsize", "9"])
    engine = gtp_main.build_engine(args)
    warmup = HeldWarmup(engine.player.config).use(None).start()
    resume = gtp_main.hold_pondering_for(engine, warmup)
    assert not engine.ponder
    warmup.gate.set()
    resume.join()
    assert engine.ponder


class SearchlessWarmup(wu.Warmup):
    """A Warmup whose search stage only records whether the compiler process had ended."""

    def _search(self, engine):
        process = self._compiler_process
        self.compiler_done_first = process is not None and process.poll() is not None


def started_compiler(warmup):
    """Return the warm-up's compiler process once the rules stage has started it."""
    deadline = time.monotonic() + 120
    while warmup._compiler_process is None and time.monotonic() < deadline:
        time.sleep(0.01)
    return warmup._compiler_process


def compiler_writing(path, seconds):
    return [sys.executable, "-c",
            f"import pathlib, time; time.sleep({seconds}); pathlib.Path({str(path)!r}).touch()"]


def test_on_a_cold_cache_the_search_stage_waits_for_the_compiler_process(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    assert not wu.search_cached()
    written = tmp_path / "compiled"
    warmup = SearchlessWarmup(player().config, compiler_writing(written, 0.5)).use(None).start()
    assert warmup.wait(timeout=120)
    assert warmup.compiler_done_first and written.exists() and not warmup.failed


def test_on_a_warm_cache_no_compiler_process_runs(tmp_path, monkeypatch):
    index = tmp_path / "cache" / "engine_0123" / "tree.search_step-548.py311.nbi"
    index.parent.mkdir(parents=True)
    index.touch()
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    assert wu.search_cached()
    written = tmp_path / "compiled"
    warmup = SearchlessWarmup(player().config, compiler_writing(written, 0)).use(None).start()
    assert warmup.wait(timeout=120)
    assert warmup._compiler_process is None and not written.exists()


def test_the_compiler_process_starts_after_the_rules_and_never_after_a_stop(tmp_path,
                                                                           monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    warmup = HeldWarmup(player().config)
    warmup.compiler = compiler_writing(tmp_path / "compiled", 60)
    warmup.stop_compiler()
    warmup.use(None).start()
    try:
        assert warmup.wait(timeout=120, stage="rules")
        time.sleep(0.2)
        assert warmup._compiler_process is None
    finally:
        warmup.gate.set()


def test_stop_compiler_ends_a_running_compiler_process(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    written = tmp_path / "compiled"
    warmup = HeldWarmup(player().config)
    warmup.compiler = compiler_writing(written, 60)
    warmup.use(None).start()
    try:
        process = started_compiler(warmup)
        assert process.poll() is None
        warmup.stop_compiler()
        assert process.poll() is not None and not written.exists()
    finally:
        warmup.gate.set()


def test_closing_the_engine_ends_the_compiler_process(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    engine = GtpEngine(player(), size=9)
    warmup = HeldWarmup(engine.player.config)
    warmup.compiler = compiler_writing(tmp_path / "compiled", 60)
    engine.player.warmup = warmup.use(None).start()
    try:
        process = started_compiler(warmup)
        engine.close()
        assert process.poll() is not None
    finally:
        warmup.gate.set()


def test_quick_move_captures_the_largest_chain_in_atari():
    game = game_from_diagram("""
        . . . . .
        . X X . .
        X O O . .
        . X X . .
        O X . . .
        """)
    assert game.vertex(quick_move(game, bd.BLACK)) == "D3"
    assert game.vertex(quick_move(game, bd.WHITE)) == "D3"     # and white saves them there


def test_quick_move_saves_its_chain_in_atari_when_that_gives_it_room():
    game = game_from_diagram("""
        . . . . .
        . . . . .
        . . X . .
        . X O X .
        . . . . .
        """)
    assert game.vertex(quick_move(game, bd.WHITE)) == "C1"


def test_quick_move_opens_on_a_4_4_point_and_never_fills_its_own_eye():
    assert empty(19).vertex(quick_move(empty(19), bd.BLACK)) in ("D4", "D16", "Q4", "Q16")
    game = game_from_diagram("""
        . X . X O
        X X X X O
        X X X O O
        O O O O .
        . . . . .
        """)
    move = quick_move(game, bd.BLACK)
    assert move not in (game.parse_vertex("A5"), game.parse_vertex("C5"))


def test_quick_move_passes_without_a_safe_move():
    game = game_from_diagram("""
        . X .
        X X X
        . X .
        """)
    assert quick_move(game, bd.BLACK) == bd.PASS


def test_warm_up_flag_fills_the_cache_and_exits_0():
    done = subprocess.run([sys.executable, "gtp_main.py", "--warm-up"], cwd=ROOT,
                          capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr
    assert "warm-up done" in done.stderr
    assert wu.search_cached()     # the folder this process and the child share


# Run in a fresh interpreter: once the warm-up is through a stage, the 19x19 commands of that
# stage must find every jitted function they call compiled for their argument types (a compile
# would wait for the compiler's lock, which the warm-up holds while it compiles the search).
COVERAGE = r"""
import gc, io, json, sys
sys.path.insert(0, ".")
import engine
import gtp_main
from numba.core.registry import CPUDispatcher
sys.path.insert(0, "tests")
from test_warmup import HeldWarmup

def signatures():
    return {f"{d.py_func.__module__}.{d.py_func.__qualname__}": len(d.signatures)
            for d in gc.get_objects() if isinstance(d, CPUDispatcher)}

def run(engine, commands):
    before = signatures()
    for command in commands:
        engine.handle_line(command + "\n", io.StringIO())
    return sorted(k for k, v in signatures().items() if v != before.get(k, 0))

args = gtp_main.build_parser().parse_args(sys.argv[1:] + ["--rollouts", "100", "--seed", "1",
                                                          "--set", "ownership_runs=50"])
evaluator = gtp_main.load_evaluator(args)
engine = gtp_main.build_engine(args, evaluator)
warmup = HeldWarmup(engine.player.config).use(evaluator).start()
assert warmup.wait(stage="rules")
setup = ["boardsize 19", "komi 6.5", "time_settings 0 5 1", "play b Q16", "play w D4",
         "play b D5", "play w C5", "undo", "showboard", "clear_board", "fixed_handicap 4",
         "clear_board", "set_free_handicap D4 Q16 K10", "clear_board", "place_free_handicap 5",
         "clear_board", "time_left b 4 1"]
after_rules = run(engine, setup)
warmup.gate.set()
warmup.wait()
# The held stages did nothing: the real warm-up compiles the rest now.
wu = gtp_main.Warmup(engine.player.config).use(evaluator)
wu.run()
game = ["clear_board", "kgs-time_settings none", "play b Q16", "genmove w", "genmove b",
        "reg_genmove w", "genmove w", "play b pass", "genmove w", "kgs-genmove_cleanup b",
        "final_score", "final_status_list dead", "gogui-ownership", "gogui-visits b",
        "time_settings 0 5 1", "genmove b"]
after_all = run(engine, game)
print(json.dumps({"after_rules": after_rules, "after_all": after_all, "failed": wu.failed}))
"""


@pytest.mark.parametrize("flags", [["--net", "none"], []], ids=["no-net", "net"])
def test_after_the_9x9_warm_up_a_19x19_game_compiles_nothing(flags):
    done = subprocess.run([sys.executable, "-c", COVERAGE, *flags], cwd=ROOT,
                          capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {"after_rules": [], "after_all": [], "failed": False}


def test_the_warm_up_logs_its_searches_below_info(caplog):
    """Match logs and SGF comments take every info-level search line for a real move's."""
    config = PlayerConfig(rollouts=100, ownership_runs=50, search=SearchConfig(seed=1))
    with caplog.at_level("DEBUG", logger="gtp"):
        assert wu.Warmup(config).use(None).run() >= 0
    searches = [r for r in caplog.records if "playouts in" in r.getMessage()]
    assert searches and all(r.levelname == "DEBUG" for r in searches)


def test_the_compile_cache_folder_changes_with_the_jitted_sources_only(tmp_path):
    for folder in ("engine", "nets", "benchmarks"):
        (tmp_path / folder).mkdir()
    jitted = tmp_path / "engine" / "core.py"
    mention = tmp_path / "engine" / "front.py"       # names numba, compiles nothing
    jitted.write_text("from numba import njit\n\n\n@njit\ndef f():\n    return 1\n")
    mention.write_text("# numba's cache is loaded by the first search\n")
    first = engine.numba_cache_dir(tmp_path)
    assert first.parent == tmp_path / ".numba_cache"
    mention.write_text("# numba's cache is loaded by the first search, as before\n")
    assert engine.numba_cache_dir(tmp_path) == first
    jitted.write_text("import numba\n\n\n@numba.njit\ndef f():\n    return 2\n")
    second = engine.numba_cache_dir(tmp_path)
    assert second != first
    nested = tmp_path / "benchmarks" / "speed" / "kernel.py"    # a benchmark's own jitted code
    nested.parent.mkdir()
    nested.write_text("from numba import njit\n\n\n@njit\ndef g():\n    return 1\n")
    assert engine.numba_cache_dir(tmp_path) != second


@pytest.mark.parametrize("leaving", [False, True])
def test_a_warm_up_failure_is_an_error_unless_the_engine_is_leaving(tmp_path, caplog, leaving):
    # gtp_main stops the warm-up when start-up fails (a bad shapes file here); the warm-up's
    # own failure on the same file then logged a traceback, at times after a test's log
    # stream had closed ('--- Logging error ---' in the suite's output).
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"junk")
    config = PlayerConfig(rollouts=100, search=SearchConfig(seed=1, shapes=str(junk)))
    warmup = wu.Warmup(config)
    if leaving:
        warmup.stop_compiler()
    warmup.use(None).run()
    assert warmup.failed and warmup.finished()
    errors = [r for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == (0 if leaving else 1)


@pytest.mark.parametrize("flags, weight", [
    ([], NET_VALUE_WEIGHT),
    (["--weights", os.path.join(ROOT, "weights", "cpu.pt")], 0.0),
    (["--set", "value_weight=0.5"], 0.5)])
def test_main_searches_with_the_value_mix_its_weights_allow(monkeypatch, flags, weight):
    made, served = [], []

    def held(config, compiler):
        made.append(HeldWarmup(config))
        return made[-1]
    monkeypatch.setattr(gtp_main, "Warmup", held)
    monkeypatch.setattr(gtp_main, "run_gtp", served.append)
    try:
        assert gtp_main.main(["--device", "cpu", "--log-level", "error", *flags]) == 0
    finally:
        made[0].gate.set()
    search = served[0].player.config.search
    assert (search.value_weight, search.value_until) == (weight, 200)
