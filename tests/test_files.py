"""Files the engine is pointed at: a log file it cannot open or write, printsgf to a path it
cannot write, loadsgf of files too large, too long, of a board size we do not play or holding
several games. Each gives a clear error and leaves the game as it was."""
import io
import os

import pytest

import gtp_main
from engine import sgf


@pytest.mark.parametrize("path", ["/dev/full", "/nonexistent/dir/darkgo.log", "/proc/version",
                                  "."])
def test_a_log_file_that_cannot_be_written_is_a_clear_start_up_error(path, capsys):
    if not os.path.exists(path) and path.startswith(("/dev", "/proc")):
        pytest.skip(f"no {path} here")
    assert gtp_main.main(["--net", "none", "--log-file", path]) == 2
    err = capsys.readouterr().err
    assert "cannot open log file" in err and err.count("\n") == 1


def engine():
    args = ["--net", "none", "--boardsize", "9", "--seed", "1", "--rollouts", "50",
            "--log-level", "error"]
    e = gtp_main.build_engine(gtp_main.build_parser().parse_args(args))
    for line in ("play b E5", "play w C3", "play b G7"):
        assert answer(e, line) == "="
    return e


def answer(e, line):
    out = io.StringIO()
    e.handle_line(line + "\n", out)
    return out.getvalue().rstrip("\n")


def state(e):
    return answer(e, "list_stones black"), answer(e, "list_stones white"), list(e.game.moves)


@pytest.mark.parametrize("path", ["/dev/full", "/nonexistent/dir/game.sgf", "/proc/version",
                                  "."])
def test_printsgf_to_a_path_that_cannot_be_written_says_why_and_keeps_the_game(path):
    if not os.path.exists(os.path.dirname(path) or ".") and path.startswith(("/dev", "/proc")):
        pytest.skip(f"no {path} here")
    e = engine()
    before = state(e)
    reply = answer(e, f"printsgf {path}")
    assert reply.startswith("? cannot save file: ") and len(reply) > len("? cannot save file: ")
    assert state(e) == before


def test_printsgf_writes_a_file_that_loadsgf_reads_back(tmp_path):
    e = engine()
    path = tmp_path / "game.sgf"
    assert answer(e, f"printsgf {path}") == "="
    before = state(e)
    assert answer(e, "clear_board") == "="
    assert answer(e, f"loadsgf {path}") == "="
    assert state(e) == before


def test_loadsgf_refuses_a_file_over_the_size_cap_without_reading_it(tmp_path):
    path = tmp_path / "huge.sgf"
    with open(path, "wb") as f:
        f.write(b"(;SZ[19];B[aa])")
        f.truncate(50 << 20)     # 50 MB, sparse: nothing to write
    e = engine()
    before = state(e)
    assert answer(e, f"loadsgf {path}") == \
        f"? cannot load file: file too large (the limit is {sgf.MAX_SGF_BYTES >> 20} MiB)"
    assert state(e) == before


def test_loadsgf_refuses_an_endless_file():
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero here")
    e = engine()
    before = state(e)
    assert answer(e, "loadsgf /dev/zero").startswith("? cannot load file: file too large")
    assert state(e) == before


def test_loadsgf_refuses_a_game_of_10000_moves_but_loads_its_beginning(tmp_path):
    path = tmp_path / "long.sgf"
    path.write_text("(;SZ[9]KM[7]" + ";B[ee];W[cc];B[gg]" + ";W[];B[]" * 4998 + ")")
    e = engine()
    before = state(e)
    reply = answer(e, f"loadsgf {path}")
    assert reply.startswith(f"? cannot load file: more than {sgf.MAX_SGF_MOVES} moves")
    assert state(e) == before
    assert answer(e, f"loadsgf {path} 11") == "="
    assert len(e.game.moves) == 10 and answer(e, "list_stones black") == "= G3 E5"


@pytest.mark.parametrize("size,reason", [
    (27, "not a valid SGF file: size out of range: 27"),
    (1, "board size 1 not supported (2..25)"),
    (26, "board size 26 not supported (2..25)")])
def test_loadsgf_of_a_board_size_we_do_not_play_says_so_and_keeps_the_game(tmp_path, size,
                                                                           reason):
    path = tmp_path / f"size{size}.sgf"
    path.write_text(f"(;SZ[{size}];B[aa])")
    e = engine()
    before = state(e)
    assert answer(e, f"loadsgf {path}") == f"? cannot load file: {reason}"
    assert state(e) == before


def test_loadsgf_of_a_collection_loads_its_first_game(tmp_path):
    path = tmp_path / "collection.sgf"
    path.write_text("(;SZ[9]KM[6.5];B[ee];W[cc])\n(;SZ[13];B[aa];W[bb];B[cc])\n")
    e = engine()
    assert answer(e, f"loadsgf {path}") == "="
    assert e.game.size == 9 and e.game.rules.komi == 6.5
    assert answer(e, "list_stones black") == "= E5" and answer(e, "list_stones white") == "= C7"


def test_loadsgf_takes_a_game_of_exactly_the_move_cap(tmp_path):
    path = tmp_path / "cap.sgf"
    path.write_text("(;SZ[9]" + ";B[];W[]" * (sgf.MAX_SGF_MOVES // 2) + ";C[the end])")
    e = engine()
    assert answer(e, f"loadsgf {path}") == "="
    assert len(e.game.moves) == sgf.MAX_SGF_MOVES


@pytest.mark.parametrize("text,move_number,black,white,to_move", [
    # Setup stones in the node before the first move are part of the position before it.
    ("(;GM[1]FF[4]SZ[9];AB[cc][dd]AW[gg];W[ee];B[ff])", 1, "C7 D6", "G3", "white"),
    ("(;GM[1]FF[4]SZ[9];AB[cc][dd]AW[gg];W[ee];B[ff])", 2, "C7 D6", "G3 E5", "black"),
    # The side to move is the colour of the move the position stands before.
    ("(;GM[1]FF[4]SZ[9]AB[cc][gg];W[ee];B[cg])", 1, "C7 G3", "", "white"),
    ("(;GM[1]FF[4]SZ[9];B[cc];B[dd];W[ee])", 2, "C7", "", "black"),
])
def test_loadsgf_with_a_move_number_gives_the_position_before_that_move(tmp_path, text,
                                                                         move_number, black,
                                                                         white, to_move):
    path = tmp_path / "game.sgf"
    path.write_text(text)
    e = engine()
    assert answer(e, f"loadsgf {path} {move_number}") == "="
    assert set(answer(e, "list_stones black")[1:].split()) == set(black.split())
    assert set(answer(e, "list_stones white")[1:].split()) == set(white.split())
    assert (e.game.to_play == 1) == (to_move == "black")


@pytest.mark.parametrize("text,move_number,to_move", [
    ("(;GM[1]FF[4]SZ[9];W[ee];B[cc])", 1, 2),           # White first, before any move
    ("(;GM[1]FF[4]SZ[9];B[cc];B[dd];W[ee])", 2, 1),     # Black twice
    ("(;GM[1]FF[4]SZ[9];B[cc];W[dd])", None, 1),        # alternating: no PL written
])
def test_printsgf_keeps_a_side_to_move_the_moves_do_not_give(tmp_path, text, move_number,
                                                            to_move):
    path = tmp_path / "game.sgf"
    path.write_text(text)
    e = engine()
    assert answer(e, f"loadsgf {path} {move_number or ''}".rstrip()) == "="
    assert e.game.to_play == to_move
    saved = tmp_path / "saved.sgf"
    assert answer(e, f"printsgf {saved}") == "="
    assert ("PL[" in saved.read_text()) == (move_number is not None)
    moves = list(e.game.moves)
    assert answer(e, "clear_board") == "=" and answer(e, f"loadsgf {saved}") == "="
    assert e.game.to_play == to_move and list(e.game.moves) == moves


def test_printsgf_of_setup_stones_alone_keeps_the_side_to_move(tmp_path):
    path = tmp_path / "setup.sgf"
    path.write_text("(;GM[1]FF[4]SZ[9]AB[cc]AW[gg]PL[W])")
    e = engine()
    assert answer(e, f"loadsgf {path}") == "=" and e.game.to_play == 2
    saved = tmp_path / "saved.sgf"
    assert answer(e, f"printsgf {saved}") == "="
    assert answer(e, "clear_board") == "=" and answer(e, f"loadsgf {saved}") == "="
    assert e.game.to_play == 2 and answer(e, "list_stones white") == "= G3"


def test_a_file_name_that_is_not_utf8_loads_and_keeps_the_session_going(tmp_path):
    # A Latin-1 file name on a stdin decoded as strict UTF-8 (en_US.UTF-8): the byte once
    # ended the reader as if input had closed, leaving this and every later command unanswered.
    from engine.gtp import run_gtp
    e = engine()
    name = os.fsencode(tmp_path) + b"/caf\xe9.sgf"
    with open(name, "w") as f:
        f.write("(;GM[1]FF[4]SZ[9];B[cc];W[gg])")
    commands = b"loadsgf " + name + b"\nlist_stones black\nloadsgf " + name + b"x\nname\nquit\n"
    inp = io.TextIOWrapper(io.BytesIO(commands), encoding="utf-8", errors="strict")
    raw_out = io.BytesIO()
    out = io.TextIOWrapper(raw_out, encoding="utf-8", errors="strict", write_through=True)
    run_gtp(e, inp, out)
    answers = raw_out.getvalue().decode("ascii").split("\n\n")
    assert answers[:2] == ["=", "= C7"]
    assert answers[2].startswith("? cannot load file: ") and "\\udce9" in answers[2]
    assert answers[3:] == ["= darkgo", "=", ""]


def test_a_handicap_set_up_after_the_root_node_is_a_handicap(tmp_path):
    path = tmp_path / "handicap.sgf"
    path.write_text("(;GM[1]FF[4]SZ[9]KM[0.5]HA[2];AB[cc][gg];W[ee];B[ff])")
    e = engine()
    assert answer(e, f"loadsgf {path} 1") == "="
    assert e.game.handicap == 2 and e.game.to_play == 2 and e.game.scoring_komi == 2.5
    assert answer(e, f"loadsgf {path}") == "=" and e.game.handicap == 2


def test_printsgf_names_the_rules_the_result_was_counted_by():
    e = engine()
    assert "RU[Chinese]" in answer(e, "printsgf")
    assert answer(e, "kgs-rules new_zealand") == "="
    assert "RU[NZ]" in answer(e, "printsgf")


def test_showboard_gives_the_handicap_compensation_beside_the_komi():
    e = engine()
    for line in ("clear_board", "komi 0.5", "fixed_handicap 3"):
        assert answer(e, line).startswith("=")
    assert "komi 0.5 (+3 for the handicap); " in answer(e, "showboard")
    assert answer(e, "kgs-rules aga") == "="
    assert "komi 0.5 (+2 for the handicap); " in answer(e, "showboard")


def test_without_stdin_or_stdout_the_session_ends_at_once(monkeypatch):
    # Started with <&- (no stdin) the reader thread died on None and the loop waited for good.
    from engine.gtp import run_gtp
    monkeypatch.setattr("sys.stdin", None)
    out = io.StringIO()
    run_gtp(engine(), None, out)
    assert out.getvalue() == ""
    monkeypatch.setattr("sys.stdout", None)
    e = engine()
    run_gtp(e, io.StringIO("name\nname\n"), None)
    assert e.output_gone
