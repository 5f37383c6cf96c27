"""GTP transcripts: tests/gtp/*.gtp sessions replayed at a fixed seed against expected answers.

A transcript holds '> command' lines (Python escapes such as \\x00 allowed), each followed by
the expected answer without its closing blank line. An expected line starting with '~ ' is a
regular expression the answer line must match in full. The first line may be
'# flags: ...' with gtp_main.py flags; loadsgf paths are relative to tests/gtp.
"""
import io
import re
from pathlib import Path

import pytest

import gtp_main

HERE = Path(__file__).parent / "gtp"
# The seed means something only with one search thread (the default, auto, may run more).
DEFAULT_FLAGS = ["--rollouts", "300", "--seed", "1", "--threads", "1", "--set", "ownership_runs=200",
                 "--boardsize", "9", "--komi", "7"]


def parse_transcript(path):
    """Return (flags, [(command, [expected lines])]) from a transcript file."""
    flags, steps = list(DEFAULT_FLAGS), []
    for line in path.read_text().splitlines():
        if line.startswith("# flags:"):
            flags += line[len("# flags:"):].split()
        elif line.startswith("> "):
            steps.append((line[2:].encode().decode("unicode_escape"), []))
        elif line.startswith("#") or not line.strip():
            continue
        else:
            steps[-1][1].append(line)
    return flags, steps


def answer_lines(text):
    """Split an engine's output for one command into lines without the closing blank line."""
    assert text.endswith("\n\n"), f"response not ended by a blank line: {text!r}"
    body = text[:-2]
    assert "\n\n" not in body, f"blank line inside a response: {text!r}"
    return body.split("\n") if body else []


@pytest.mark.parametrize("path", sorted(HERE.glob("*.gtp")), ids=lambda p: p.stem)
def test_transcript(path, monkeypatch):
    monkeypatch.chdir(HERE)
    flags, steps = parse_transcript(path)
    engine = gtp_main.build_engine(gtp_main.build_parser().parse_args(flags))
    for command, expected in steps:
        out = io.StringIO()
        engine.handle_line(command + "\n", out)
        got = answer_lines(out.getvalue()) if out.getvalue() else []
        assert len(got) == len(expected), f"{command!r}: got {got!r}, expected {expected!r}"
        for g, e in zip(got, expected):
            if e.startswith("~ "):
                assert re.fullmatch(e[2:], g), f"{command!r}: {g!r} does not match {e[2:]!r}"
            else:
                assert g == e, f"{command!r}: got {g!r}, expected {e!r}"


def test_genmove_charges_its_time_to_the_engines_clock_and_time_left_corrects_it():
    engine = gtp_main.build_engine(gtp_main.build_parser().parse_args(DEFAULT_FLAGS))
    out = io.StringIO()
    engine.serve(io.StringIO("time_settings 3600 0 0\ngenmove b\n"), out)
    black = engine.player.clocks[1]
    assert black.known and 0 < black.seconds < 3600 and black.stones == 0
    assert not engine.player.clocks[2].known                # white has not moved
    engine.serve(io.StringIO("time_left b 45 0\n"), io.StringIO())
    assert engine.player.clocks[1].seconds == 45


def test_ten_thousand_character_line_gets_one_error_and_engine_goes_on():
    engine = gtp_main.build_engine(gtp_main.build_parser().parse_args(DEFAULT_FLAGS))
    out = io.StringIO()
    engine.serve(io.StringIO("play b " + "D4 " * 3400 + "\nname\n"), out)
    assert out.getvalue() == "? line too long\n\n= darkgo\n\n"


def test_internal_error_becomes_error_answer_and_loop_goes_on(monkeypatch, capsys):
    engine = gtp_main.build_engine(gtp_main.build_parser().parse_args(DEFAULT_FLAGS))

    def broken(args):
        raise RuntimeError("boom")
    monkeypatch.setitem(engine.handlers, "name", broken)
    out = io.StringIO()
    engine.serve(io.StringIO("3 name\nversion\n"), out)
    assert out.getvalue().startswith("?3 internal error: RuntimeError\n\n= ")


def test_random_garbage_never_takes_the_loop_down():
    import random
    rng = random.Random(5)
    words = ["play", "genmove", "boardsize", "komi", "undo", "b", "w", "D4", "pass", "99",
             "-1", "loadsgf", "fixed_handicap", "set_free_handicap", "time_left", "x", "",
             "final_status_list", "list_stones", "\x00", "\x7f", "#", "1.5e999", "nan"]
    lines = []
    for _ in range(300):
        lines.append(" ".join(rng.choice(words) for _ in range(rng.randint(0, 5))))
    engine = gtp_main.build_engine(gtp_main.build_parser().parse_args(
        DEFAULT_FLAGS[:1] + ["20"] + DEFAULT_FLAGS[2:]))
    out = io.StringIO()
    engine.serve(io.StringIO("\n".join(lines) + "\nname\n"), out)
    assert out.getvalue().endswith("= darkgo\n\n")
    for block in out.getvalue().split("\n\n")[:-1]:
        assert block.lstrip("\n")[0] in "=?", block


def test_printsgf_names_the_engine_only_for_the_colours_it_generated_moves_for():
    from sgfmill import sgf as sgfmill
    engine = gtp_main.build_engine(gtp_main.build_parser().parse_args(DEFAULT_FLAGS))

    def players():
        out = io.StringIO()
        engine.handle_line("printsgf\n", out)
        root = sgfmill.Sgf_game.from_string(out.getvalue()[2:]).get_root()
        return tuple(root.get(p) if root.has_property(p) else None for p in ("PB", "PW"))

    for command in ("play b E5", "genmove w", "play b C3"):
        engine.handle_line(command + "\n", io.StringIO())
    assert players() == (None, "darkgo 0.1.0")
    engine.handle_line("undo\n", io.StringIO())
    engine.handle_line("undo\n", io.StringIO())
    assert players() == (None, None)
    engine.handle_line("genmove b\n", io.StringIO())
    assert players() == ("darkgo 0.1.0", None)
    engine.handle_line("clear_board\n", io.StringIO())
    assert players() == (None, None)


@pytest.mark.parametrize("rules,score", [(None, "B+78.5"), ("chinese", "B+78.5"),
                                         ("aga", "B+79.5"), ("japanese", "B+79.5"),
                                         ("new_zealand", "B+80.5")])
def test_kgs_rules_give_white_kgs_handicap_compensation_at_the_count(rules, score, tmp_path):
    # Two handicap stones own the whole 9x9 board: 81 points less komi 0.5, less a point a
    # stone under KGS's chinese and plain GTP (GNU Go's Chinese count gives B+78.5 too), a
    # point for each but the first under KGS's aga (and japanese, counted by area as Pachi
    # does), none under new_zealand.
    engine = gtp_main.build_engine(gtp_main.build_parser().parse_args(DEFAULT_FLAGS))
    setup = ([f"kgs-rules {rules}"] if rules else []) + [
        "boardsize 9", "clear_board", "komi 0.5", "set_free_handicap C3 G7", "play w pass",
        "play b pass"]
    for command in setup:
        out = io.StringIO()
        engine.handle_line(command + "\n", out)
        assert out.getvalue() == "= \n\n" or out.getvalue() == "=\n\n", command
    # The same count after the game goes through a file (loadsgf takes the file's komi and
    # keeps the engine's rules).
    for command in ("final_score", f"printsgf {tmp_path}/game.sgf", "clear_board",
                    f"loadsgf {tmp_path}/game.sgf", "final_score"):
        out = io.StringIO()
        engine.handle_line(command + "\n", out)
        if command == "final_score":
            assert answer_lines(out.getvalue()) == [f"= {score}"]
    assert engine.game.rules.komi == 0.5 and engine.game.handicap == 2
