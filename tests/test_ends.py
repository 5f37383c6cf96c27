"""How a session ends: quit, end of input, SIGTERM, SIGINT and a closed output pipe, during a
genmove's search, pondering and lz-analyze, each ending the process quickly with status 0 and
no traceback; and the loop's own rules for ending, in-process."""
import io
import os
import re
import threading
import time

import pytest

import gtp_main
from benchmarks.robustness import ends


def engine(*flags):
    args = ["--net", "none", "--boardsize", "9", "--seed", "1", "--log-level", "error", *flags]
    return gtp_main.build_engine(gtp_main.build_parser().parse_args(args))


def answers(text):
    """Return the answers in a session's output, without their closing blank lines."""
    assert text.endswith("\n\n") or not text
    return text[:-2].split("\n\n") if text else []


def pipe_input(lines_at):
    """Return a readable stream fed on a thread with (delay in seconds, text) pairs, then
    closed (end of input) after the last one unless its text is None."""
    r, w = os.pipe()

    def feed():
        with os.fdopen(w, "w") as f:
            for delay, text in lines_at:
                time.sleep(delay)
                if text is None:
                    time.sleep(3600)
                f.write(text)
                f.flush()
    threading.Thread(target=feed, name="feed", daemon=True).start()
    return os.fdopen(r)


def test_a_quit_that_arrives_while_a_move_is_searched_cuts_the_search_short():
    e = engine("--rollouts", "100000")
    e.player.search.run(e.game, 10)     # compiled before the clock starts
    out = io.StringIO()
    started = time.monotonic()
    e.serve(pipe_input([(0, "genmove b\n"), (0.5, "quit\n"), (0, None)]), out)
    assert time.monotonic() - started < 5
    move, quit = answers(out.getvalue())
    assert re.fullmatch(r"= [A-HJ][1-9]", move) and quit == "="
    assert e.player.last_result.playouts < 100000


def test_commands_queued_before_quit_are_served_in_full():
    e = engine("--rollouts", "300", "--set", "early_stop=false")
    out = io.StringIO()
    e.serve(io.StringIO("genmove b\nquit\n"), out)
    move, quit = answers(out.getvalue())
    assert move.startswith("= ") and quit == "="
    assert e.player.last_result.playouts >= 300


def test_end_of_input_while_a_move_is_searched_answers_the_move_found_so_far():
    e = engine("--rollouts", "100000")
    e.player.search.run(e.game, 10)
    out = io.StringIO()
    started = time.monotonic()
    e.serve(pipe_input([(0, "genmove b\n"), (0.5, "")]), out)
    assert time.monotonic() - started < 5
    assert re.fullmatch(r"= [A-HJ][1-9]", answers(out.getvalue())[0])


def test_stop_ends_pondering_unanswered_and_leaves_no_search_thread():
    e = engine("--rollouts", "300", "--ponder")
    e.player.search.run(e.game, 10)
    before = set(threading.enumerate())
    out = io.StringIO()
    stopper = threading.Timer(1.0, e.stop, args=(15,))
    stopper.start()
    started = time.monotonic()
    e.serve(pipe_input([(0, "genmove b\n"), (0, None)]), out)
    assert time.monotonic() - started < 5
    stopper.join()
    assert len(answers(out.getvalue())) == 1      # the genmove; pondering has no answer
    left = [t for t in set(threading.enumerate()) - before
            if t.is_alive() and t.name not in ("gtp-reader", "feed")]
    assert left == []
    assert e.signal_received == 15


def test_a_second_stop_signal_exits_at_once():
    e = engine()
    e.stop(15)
    with pytest.raises(SystemExit) as info:
        e.stop(15)
    assert info.value.code == 0


class _ClosedPipe(io.StringIO):
    def write(self, text):
        raise BrokenPipeError(32, "Broken pipe")


def test_lost_output_ends_the_loop_quietly():
    e = engine("--rollouts", "300")
    e.serve(pipe_input([(0, "name\n"), (0, "genmove b\n"), (0, None)]), _ClosedPipe())
    assert e.output_gone and not e.game.moves


RUNS = [(state, ending) for state in ("search", "ponder", "analysis")
        for ending in ("quit", "eof", "SIGTERM", "SIGINT")] + \
       [("idle", "pipe"), ("analysis", "pipe"), ("search", "gone")]


@pytest.mark.parametrize("state,ending", RUNS, ids=[f"{s}-{e}" for s, e in RUNS])
def test_the_engine_process_ends_quickly_with_status_0(state, ending, tmp_path):
    run = ends.measure(state, ending, workdir=str(tmp_path))
    assert run["seconds"] is not None and run["seconds"] < 5, run["stderr"][-2000:]
    assert run["status"] == 0, run["stderr"][-2000:]
    assert not run["traceback"], run["stderr"][-2000:]
    if state == "search" and ending in ("quit", "eof"):
        assert re.fullmatch(r"= [A-HJ][1-9]", run["lines"][0])   # the move found so far
    if state == "search" and ending.startswith("SIG"):
        assert run["lines"] == []                                # left unanswered
