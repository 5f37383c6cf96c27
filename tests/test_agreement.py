"""Tests for the agreement benchmark: position picks, coordinates, the GTP conversation (with a
scripted oracle engine), resuming, and one short run of the real engine."""

import json
import os
import shlex
import subprocess
import sys
import zipfile

import pytest
from sgfmill import common

from benchmarks.knowledge import agreement
from engine import board as bd
from nets import data as nd
from sgf_moves import non_touching_moves

# A scripted GTP engine that logs every command to --log. genmove answers the game's next move
# when the moves played so far are a prefix of one of the games in --games (a JSON list of vertex
# lists), so it agrees with every position exactly when the benchmark replays the games right;
# otherwise, or with --always, it answers --always (default 'pass'). lz-genmove_analyze answers
# 'pass' as the most visited move and the game's move as the network's favourite, two win-rate
# points behind, so only a negative favourite_margin picks the game's move.
ORACLE = r'''
import argparse, json, sys
parser = argparse.ArgumentParser()
parser.add_argument("--games", required=True)
parser.add_argument("--log", required=True)
parser.add_argument("--always")
args = parser.parse_args()
games = [[v.upper() for v in game] for game in json.load(open(args.games))]
moves = []
log = open(args.log, "a")
for line in sys.stdin:
    cmd_id, cmd, *rest = line.split()
    log.write(" ".join([cmd] + rest) + "\n")
    log.flush()
    answer = ""
    if cmd == "name":
        answer = "Oracle"
    elif cmd == "version":
        answer = "1"
    elif cmd in ("boardsize", "clear_board"):
        moves = []
    elif cmd == "play":
        moves.append(rest[1].upper())
    elif cmd in ("genmove", "lz-genmove_analyze"):
        answer = args.always or "pass"
        if args.always is None:
            for game in games:
                if game[:len(moves)] == moves and len(game) > len(moves):
                    answer = game[len(moves)]
                    break
        if cmd == "lz-genmove_analyze":
            answer = ("\ninfo move pass visits 100 winrate 5000 prior 1000 order 0 pv pass "
                      f"info move {answer} visits 60 winrate 4800 prior 6000 order 1 pv {answer}"
                      "\nplay pass")
    print(f"={cmd_id} {answer}\n", flush=True)
    if cmd == "quit":
        break
'''


def _sgf(moves):
    """Return the SGF text of a 19x19 game with the given moves (None for a pass)."""
    nodes = []
    for i, move in enumerate(moves):
        colour = "B" if i % 2 == 0 else "W"
        if move is None:
            nodes.append(f";{colour}[]")
        else:
            row, col = move
            # SGF letters count rows from the top; sgfmill rows from the bottom.
            nodes.append(f";{colour}[{chr(97 + col)}{chr(97 + 18 - row)}]")
    return "(;FF[4]GM[1]SZ[19]KM[6.5]RE[B+R]" + "".join(nodes) + ")"


@pytest.fixture
def archive(tmp_path):
    """Return (zip path, {game name: GTP vertices of its moves}) for three 35-move games (one
    with a pass) and one 6-move game that is too short."""
    games = {"a.sgf": non_touching_moves(35, 0), "b.sgf": non_touching_moves(36, 7),
             "short.sgf": non_touching_moves(6, 3), "c.sgf": non_touching_moves(34, 20)}
    games["b.sgf"][10] = None
    path = tmp_path / "games.zip"
    with zipfile.ZipFile(path, "w") as z:
        for name, moves in games.items():
            z.writestr(name, _sgf(moves))
    vertices = {name: [common.format_vertex(m) for m in moves] for name, moves in games.items()}
    return str(path), vertices


def _oracle(tmp_path, vertices, always=None):
    """Return (engine command, command log path) of the oracle engine for these games."""
    games_path = tmp_path / "oracle-games.json"
    games_path.write_text(json.dumps(list(vertices.values())))
    script = tmp_path / "oracle.py"
    script.write_text(ORACLE)
    log = tmp_path / "oracle.log"
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} " \
              f"--games {shlex.quote(str(games_path))} --log {shlex.quote(str(log))}"
    if always:
        command += f" --always {always}"
    return command, log


def _run(capsys, argv):
    """Return (exit status, JSON summary of the last stdout line) of one in-process run."""
    status = agreement.main(argv)
    out = capsys.readouterr().out.strip().splitlines()
    return status, json.loads(out[-1]) if status == 0 else None


def _write(zip_path, text, name):
    """Return the path of an SGF file holding text, next to zip_path."""
    path = os.path.join(os.path.dirname(zip_path), name)
    with open(path, "w") as handle:
        handle.write(text)
    return path


def test_point_to_vertex_matches_the_sgf_reader(archive):
    path, vertices = archive
    records = {r.name: r for r in nd.read_games([path])}
    # Corners and a known point: SGF 'aa' is the top left, A19; engine point 1*21+1 is A1.
    assert agreement.point_to_vertex(22) == "A1"
    assert agreement.point_to_vertex(19 * 21 + 19) == "T19"
    assert agreement.point_to_vertex(bd.PASS) == "pass"
    b = next(nd.read_games([_write(path, "(;FF[4]SZ[19];B[aa];W[pd])", "corner.sgf")]))
    assert [agreement.point_to_vertex(int(p)) for p in b.points] == ["A19", "Q16"]
    for name, record in records.items():
        got = [agreement.point_to_vertex(int(p)) for p in record.points]
        assert got == vertices[name]


def test_picks_one_non_pass_move_per_game_reproducibly(archive):
    path, _ = archive
    records = list(nd.read_games([path]))
    picks = [(r.name, i) for r, i in agreement.select_positions(records, 1, 20, nd.Stats())]
    assert [name for name, _ in picks] == ["a.sgf", "b.sgf", "c.sgf"]
    again = [(r.name, i) for r, i in agreement.select_positions(records, 1, 20, nd.Stats())]
    assert picks == again
    # The pick of a game does not depend on the games before it.
    by_name = {r.name: r for r in records}
    assert agreement.pick_move(by_name["c.sgf"], 1, 20) == dict(picks)["c.sgf"]
    b = by_name["b.sgf"]
    seen = {agreement.pick_move(b, seed, 20) for seed in range(300)}
    assert 10 not in seen                      # the pass
    assert seen == set(range(36)) - {10}       # every other move can be picked
    # Different seeds give different picks.
    assert len({agreement.pick_move(by_name["a.sgf"], seed, 20) for seed in range(20)}) > 1
    skipped = nd.Stats()
    list(agreement.select_positions(records, 1, 20, skipped))
    assert skipped == {"short": 1}
    assert agreement.pick_move(by_name["a.sgf"], 1, 36) is None
    # A stage filter keeps each pick as it is and leaves out the games picked elsewhere.
    assert {agreement.stage_of(i) for _, i in picks} == {"0-49"}
    skipped = nd.Stats()
    kept = [(r.name, i) for r, i in agreement.select_positions(records, 1, 20, skipped,
                                                                ["0-49", "200+"])]
    assert kept == picks and "stage" not in skipped
    assert list(agreement.select_positions(records, 1, 20, skipped, ["200+"])) == []
    assert skipped["stage"] == len(picks)
    assert agreement.stage_of(0) == "0-49" and agreement.stage_of(49) == "0-49"
    assert agreement.stage_of(150) == "150-199" and agreement.stage_of(250) == "200+"


def test_oracle_engine_agrees_everywhere_and_resume_skips_done_games(archive, tmp_path, capsys):
    path, vertices = archive
    command, log = _oracle(tmp_path, vertices)
    results = str(tmp_path / "results.jsonl")
    base = ["--data", path, "--seed", "3", "--engine", command, "--results", results]
    status, summary = _run(capsys, base + ["--positions", "2"])
    assert status == 0
    assert (summary["positions"], summary["agreed"], summary["agreement"]) == (2, 2, 1.0)
    assert summary["engine_name"] == "Oracle 1"
    commands = log.read_text().splitlines()
    first_genmove = commands.index(next(c for c in commands if c.startswith("genmove")))
    picked = agreement.pick_move(next(nd.read_games([path])), 3, 20)
    assert commands[:3] == ["name", "version", "boardsize 19"]
    assert commands[3:5] == ["clear_board", "komi 6.5"]     # the games' KM
    assert first_genmove == 5 + picked
    assert commands[first_genmove] == ("genmove b" if picked % 2 == 0 else "genmove w")
    assert sum(c.startswith("genmove") for c in commands) == 2

    status, summary = _run(capsys, base + ["--positions", "5"])
    assert status == 0
    assert (summary["positions"], summary["agreed"]) == (3, 3)
    commands = log.read_text().splitlines()
    assert sum(c.startswith("genmove") for c in commands) == 3   # only c.sgf was new
    assert [json.loads(line)["game"] for line in open(results)] == ["a.sgf", "b.sgf", "c.sgf"]
    assert summary["skipped"] == {"short": 1}
    assert sum(s["positions"] for s in summary["by_stage"].values()) == 3
    low, high = summary["interval"]
    assert 0 < low < 1 == high

    # The same results file with another seed, or another komi, belongs to another run.
    assert agreement.main(base[:3] + ["4"] + base[4:] + ["--positions", "3"]) == 2
    assert agreement.main(base + ["--positions", "3", "--komi", "7.5"]) == 2
    other = str(tmp_path / "komi.jsonl")
    status, summary = _run(capsys, base[:-1] + [other, "--positions", "1", "--komi", "7.5"])
    assert status == 0 and summary["komi"] == 7.5
    assert "komi 7.5" in log.read_text().splitlines()    # the runs before gave 6.5


def test_a_run_split_with_skip_joins_into_the_whole_run(archive, tmp_path, capsys):
    path, vertices = archive
    command, log = _oracle(tmp_path, vertices)
    base = ["--data", path, "--seed", "3", "--engine", command]
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    status, summary = _run(capsys, base + ["--results", str(first), "--positions", "2"])
    assert status == 0 and summary["positions"] == 2
    status, summary = _run(capsys, base + ["--results", str(second), "--skip", "2",
                                           "--positions", "5"])
    assert status == 0 and (summary["positions"], summary["skip"]) == (1, 2)
    # The short game is not usable, so the third usable game is c.sgf.
    assert [json.loads(line)["game"] for line in second.read_text().splitlines()] == ["c.sgf"]
    joined = tmp_path / "joined.jsonl"
    joined.write_text(first.read_text() + second.read_text())
    genmoves = sum(c.startswith("genmove") for c in log.read_text().splitlines())
    status, summary = _run(capsys, base + ["--results", str(joined), "--positions", "3"])
    assert status == 0 and (summary["positions"], summary["agreed"]) == (3, 3)
    assert sum(c.startswith("genmove") for c in log.read_text().splitlines()) == genmoves
    with pytest.raises(SystemExit):
        agreement.main(base + ["--skip", "-1", "--positions", "1"])


def test_analyze_keeps_the_root_and_rechooses_under_each_margin(archive, tmp_path, capsys):
    path, vertices = archive
    command, log = _oracle(tmp_path, vertices)
    results = tmp_path / "results.jsonl"
    base = ["--data", path, "--positions", "3", "--engine", command]
    status, summary = _run(capsys, base + ["--analyze", "--results", str(results),
                                           "--favourite-margins", "0.05", "-0.05"])
    assert status == 0
    assert (summary["positions"], summary["agreed"]) == (3, 0)
    # pass: 100 visits, win rate 0.5, prior 0.1; the game's move: 60 visits, 0.48, prior 0.6.
    assert summary["favourite_margins"] == {"0.05": {"positions": 3, "agreed": 0},
                                            "-0.05": {"positions": 3, "agreed": 3}}
    assert sum(c.startswith("lz-genmove_analyze") for c in log.read_text().splitlines()) == 3
    # The same searches rechosen again from the results file: no position is asked again.
    status, again = _run(capsys, base + ["--analyze", "--results", str(results),
                                         "--favourite-margins", "-0.05"])
    assert status == 0
    assert again["favourite_margins"] == {"-0.05": {"positions": 3, "agreed": 3}}
    assert sum(c.startswith("lz-genmove_analyze") for c in log.read_text().splitlines()) == 3
    first = json.loads(results.read_text().splitlines()[0])
    assert first["played"] == "pass"
    assert first["root"] == [["pass", 100, 0.5, 0.1], [first["expected"], 60, 0.48, 0.6]]
    with pytest.raises(SystemExit) as refused:
        agreement.main(base + ["--favourite-margins", "0"])
    assert refused.value.code == 2
    assert "--favourite-margins needs --analyze" in capsys.readouterr().err


def test_pass_and_resign_answers_are_misses(archive, tmp_path, capsys):
    path, vertices = archive
    command, _ = _oracle(tmp_path, vertices, always="resign")
    status, summary = _run(capsys, ["--data", path, "--positions", "3", "--engine", command])
    assert status == 0
    assert (summary["positions"], summary["agreed"], summary["resigns"]) == (3, 0, 3)
    assert summary["interval"][0] == 0.0


def test_darkgo_engine_end_to_end(archive, capsys):
    path, _ = archive
    argv = ["--data", path, "--positions", "10", "--seed", "1", "--", "--net", "none",
            "--rollouts", "50", "--threads", "1", "--seed", "1", "--set", "max_nodes=20000"]
    status, summary = _run(capsys, argv)
    assert status == 0
    assert summary["positions"] == 3
    assert 0 <= summary["agreed"] <= summary["positions"]
    assert set(summary["by_stage"]) == {"0-49", "50-99", "100-149", "150-199", "200+"}
    assert summary["by_stage"]["0-49"]["positions"] == 3
    assert summary["seconds_per_move"] > 0 and summary["seconds_per_move_median"] > 0
    assert "--resign-threshold 0" in summary["engine"]
    assert summary["engine"].endswith("--set max_nodes=20000")
    assert summary["engine_name"].startswith("darkgo")
    assert summary["data"] == [path] and summary["seed"] == 1


def test_darkgo_analyze_records_the_root_its_move_was_chosen_from(archive, tmp_path, capsys):
    path, _ = archive
    # On a cold compile cache a first genmove gets a move without search, which has no root:
    # fill the cache first (the suite's later tests load what this compiles).
    subprocess.run([sys.executable, agreement.GTP_MAIN, "--warm-up", "--net", "none"],
                   check=True, capture_output=True, timeout=1200)
    results = tmp_path / "results.jsonl"
    argv = ["--data", path, "--positions", "3", "--seed", "1", "--analyze", "--results",
            str(results), "--", "--net", "none", "--rollouts", "50", "--threads", "1", "--seed",
            "1", "--set", "max_nodes=20000"]
    status, summary = _run(capsys, argv)
    assert status == 0 and summary["positions"] == 3
    for line in results.read_text().splitlines():
        result = json.loads(line)
        visits = [visits for _, visits, _, _ in result["root"]]
        assert visits and visits == sorted(visits, reverse=True)
        assert agreement.rechosen(result["root"], 0.05) == result["played"]
