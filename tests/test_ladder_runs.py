"""benchmarks.knowledge.ladder_runs: futile ladder extensions counted in game records."""
import json
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
