"""benchmarks.knowledge.ladder_runs: futile ladder extensions counted in game records, and an
engine asked in the same positions (a scripted GTP engine)."""
import json
import shlex
import sys
import tarfile

import pytest

from benchmarks.knowledge import ladder_runs

# tests/test_ladder.py's LADDER with D3 open: White's atari at D3 leaves Black D4 one
# liberty, E4, and extending there runs into a working ladder.
SETUP = "AB[df]AW[de][ee][cf]"


def game(black, white, moves):
    return f"(;GM[1]FF[4]SZ[9]KM[7.5]PB[{black}]PW[{white}]RE[W+R]{SETUP}{moves})"


def run(paths, capsys, *extra):
    ladder_runs.main(["--games", *map(str, paths), *extra])
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_an_extension_into_a_working_ladder_is_counted(tmp_path, capsys):
    (tmp_path / "ran.sgf").write_text(game("darkgo 0.1.0", "Pachi", ";W[dg];B[ef];W[ff]"))
    (tmp_path / "left.sgf").write_text(game("darkgo 0.1.0", "Pachi", ";W[dg];B[ic]"))
    (tmp_path / "others.sgf").write_text(game("GNU Go", "Pachi", ";W[dg];B[ef]"))
    result = run([tmp_path], capsys)
    assert (result["games"], result["skipped"]) == (2, 1)
    assert (result["chased_positions"], result["futile_extensions"]) == (2, 1)
    assert result["moves"] == {"ran.sgf:ran.sgf": [2]} and result["share_extended"] == 0.5


def test_only_the_named_players_moves_count_and_archives_are_read(tmp_path, capsys):
    sgf_path = tmp_path / "game-000.sgf"
    sgf_path.write_text(game("Fuego", "darkgo", ";W[dg];B[ef]"))
    archive = tmp_path / "records.tar.xz"
    with tarfile.open(archive, "w:xz") as t:
        t.add(sgf_path, "records/game-000.sgf")
    assert run([archive], capsys)["futile_extensions"] == 0
    assert run([archive], capsys, "--player", "fuego")["moves"] == {
        "records.tar.xz:game-000.sgf": [2]}


def test_no_games_of_the_player_is_a_clear_error(tmp_path):
    (tmp_path / "a.sgf").write_text(game("GNU Go", "Pachi", ";W[dg]"))
    with pytest.raises(SystemExit, match="no games of a player named 'darkgo'"):
        ladder_runs.main(["--games", str(tmp_path)])
    with pytest.raises(SystemExit, match="no such file"):
        ladder_runs.main(["--games", str(tmp_path / "missing")])


# The same ladder reached by moves alone, which GTP can replay: Black's other stones sit in the
# top-left corner, away from the ladder's path. After White's atari at D3 (move 8) Black's move
# 9 has the futile escape E4.
MOVES = ";B[df];W[de];B[aa];W[ee];B[ca];W[cf];B[ac];W[dg]"

# A GTP engine that logs every command to the file argv[2] and answers genmove with argv[1].
FAKE_ENGINE = r'''
import sys
answer, log = sys.argv[1], open(sys.argv[2], "a")
for line in sys.stdin:
    cmd_id, cmd, *rest = line.split()
    log.write(" ".join([cmd] + rest) + "\n")
    log.flush()
    reply = {"name": "Fake", "version": "1", "genmove": answer}.get(cmd, "")
    print(f"={cmd_id} {reply}\n", flush=True)
    if cmd == "quit":
        break
'''


def moves_game(moves):
    return f"(;GM[1]FF[4]SZ[9]KM[7.5]PB[darkgo 0.1.0]PW[Pachi]RE[W+R]{moves})"


def ask(tmp_path, capsys, answer):
    """Return the engine summary of --ask with the fake engine answering answer, and the
    commands it was sent."""
    script = tmp_path / "fake.py"
    script.write_text(FAKE_ENGINE)
    log = tmp_path / f"fake-{answer}.log"
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {answer} " \
              f"{shlex.quote(str(log))}"
    result = run([tmp_path / "games"], capsys, "--ask", "--engine", command)
    return result["engine"], log.read_text().splitlines()


def test_ask_replays_each_chased_position_and_counts_futile_answers(tmp_path, capsys):
    (tmp_path / "games").mkdir()
    (tmp_path / "games" / "g.sgf").write_text(moves_game(MOVES + ";B[hh]"))
    ran, commands = ask(tmp_path, capsys, "E4")
    assert (ran["positions"], ran["left_out"], ran["futile_extensions"]) == (1, 0, 1)
    assert ran["moves"] == {"g.sgf:g.sgf": [9]} and ran["share_extended"] == 1.0
    played = ["play b D4", "play w D5", "play b A9", "play w E5", "play b C9", "play w C4",
              "play b A7", "play w D3"]
    start = commands.index("boardsize 9")
    assert commands[start:start + 12] == ["boardsize 9", "clear_board", "komi 7.5", *played,
                                          "genmove b"]
    left, _ = ask(tmp_path, capsys, "H2")
    assert (left["positions"], left["futile_extensions"], left["share_extended"]) == (1, 0, 0.0)
    assert left["moves"] == {}


def test_ask_leaves_out_games_whose_setup_gtp_cannot_give(tmp_path, capsys):
    (tmp_path / "games").mkdir()
    (tmp_path / "games" / "setup.sgf").write_text(game("darkgo", "Pachi", ";W[dg];B[ef]"))
    (tmp_path / "games" / "moves.sgf").write_text(moves_game(MOVES + ";B[ef]"))
    result, _ = ask(tmp_path, capsys, "E4")
    assert (result["positions"], result["left_out"], result["futile_extensions"]) == (1, 1, 1)


@pytest.mark.parametrize("extra", [["--", "--rollouts", "50"], ["--engine", "gnugo"],
                                   ["--timeout-per-move", "5"]])
def test_engine_options_without_ask_are_refused(tmp_path, capsys, extra):
    (tmp_path / "a.sgf").write_text(moves_game(MOVES + ";B[ef]"))
    with pytest.raises(SystemExit):
        ladder_runs.main(["--games", str(tmp_path), *extra])
    assert "need --ask" in capsys.readouterr().err
