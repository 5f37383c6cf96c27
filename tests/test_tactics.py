"""The tactical reader (engine.tactics): cases from tests/tactics/*.txt (format: the file's
head), the reader's own invariants on random positions, and what the search does with it."""
import random
from pathlib import Path

import numpy as np
import pytest

from asciiboard import game_from_diagram, is_diagram_line
from engine import board as bd
from engine import tactics as tc
from engine.ladder import caught_in_ladder, new_ladder_scratch
from engine.search import Search
from engine.search_config import SearchConfig
from test_ladder import random_position
from test_search import favouring, tiny_evaluator

TACTICS_DIR = Path(__file__).parent / "tactics"
COLORS = {"X": bd.BLACK, "O": bd.WHITE}
KINDS = {"capture", "save", "urgent"}


def load_cases():
    """Return (where, title, diagram, assertion) for every assertion line of the data files."""
    cases = []
    for path in sorted(TACTICS_DIR.glob("*.txt")):
        title, rows = None, []
        for number, raw in enumerate(path.read_text().splitlines(), 1):
            line = raw.split("#")[0].rstrip()
            if line.startswith("%"):
                title, rows = line[1:].strip(), []
            elif title is None or not line.strip():
                continue
            elif line.split()[0] not in KINDS and is_diagram_line(line):
                rows.append(line)
            else:
                cases.append((f"{path.name}:{number}", title, "\n".join(rows), line.split()))
    return cases


def urgent_moves(game, color):
    """Return the set of vertices tactical_moves names for color."""
    b = game.board
    urgent = np.empty(64, np.int32)
    stakes = np.empty(64, np.int32)
    n = tc.tactical_moves(b, color, tc.new_tactics_scratch(b.stones.shape[0]), -1,
                          tc.NODE_BUDGET, urgent, stakes)
    return {game.vertex(int(p)) for p in urgent[:n]}


def reading(game, vertex, attacker_moves):
    b = game.board
    sc = tc.new_tactics_scratch(b.stones.shape[0])
    tc.load(sc, b)
    return tc.read(sc, game.parse_vertex(vertex), b.info[bd.WIDTH], attacker_moves, -1,
                   tc.NODE_BUDGET)


@pytest.mark.parametrize("where,title,board,assertion", load_cases(),
                         ids=[case[0] for case in load_cases()])
def test_reading_case(where, title, board, assertion):
    game = game_from_diagram(board)
    kind, args = assertion[0], assertion[1:]
    if kind in ("capture", "save"):
        vertex, expected = args
        result = reading(game, vertex, kind == "capture")
        assert result == {"works": tc.WORKS, "fails": tc.FAILS}[expected], title
    elif kind == "urgent":
        expected = set() if args[1:] == ["-"] else set(args[1:])
        assert urgent_moves(game, COLORS[args[0]]) == expected, title
    else:
        raise ValueError(f"{where}: unknown assertion {kind}")


def test_the_data_files_have_cases_of_every_kind():
    kinds = {assertion[0] for _, _, _, assertion in load_cases()}
    assert kinds == KINDS


@pytest.mark.parametrize("seed", range(4))
def test_readings_leave_the_position_and_agree_with_the_ladder_reader(seed):
    # On random positions: every reading puts back the stones it played; a chain in atari
    # that the ladder reader sees caught cannot be saved (the tactical reader tries the
    # ladder's moves and more); a chain with SAFE_LIBS liberties is never captured; every
    # urgent move is legal.
    rng = random.Random(seed)
    compared = 0
    for _ in range(15):
        game = random_position(rng, 9, rng.randrange(20, 70))
        b = game.board
        w = b.info[bd.WIDTH]
        sc = tc.new_tactics_scratch(b.stones.shape[0])
        ladder = new_ladder_scratch(b.stones.shape[0])
        tc.load(sc, b)
        heads = {int(b.chain[p]) for p in game.on_board_points() if b.stones[p] != bd.EMPTY}
        for head in sorted(heads):
            for attacker_moves in (True, False):
                result = tc.read(sc, head, w, attacker_moves, -1, tc.NODE_BUDGET)
                assert (sc.stones == b.stones).all()
                if b.nlibs[head] >= tc.SAFE_LIBS and attacker_moves:
                    assert result == tc.FAILS
            if b.nlibs[head] == 1 and caught_in_ladder(b, head, ladder):
                assert tc.read(sc, head, w, False, -1, tc.NODE_BUDGET) != tc.WORKS
                compared += 1
        for color in (bd.BLACK, bd.WHITE):
            for vertex in urgent_moves(game, color):
                assert bd.is_legal(b, game.parse_vertex(vertex), color)
    assert compared > 0


# White D4 is in atari; it escapes by taking Black C4 (itself in atari) at C5 or by
# extending at D3 (tests/tactics/reading.txt has the case).
CAPTURE_TO_ESCAPE = """
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . X . . . . .
    . . . X . . . . .
    . O X O X . . . .
    . . O . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    """


def test_the_search_gives_a_saving_move_the_tactical_prior():
    # The network gives White's saving moves almost nothing (0.99 on H8). With
    # tactical_prior 0.4 they get at least a quarter of it (one stone at stake) before the
    # priors are normalised; without, they keep the network's crumbs.
    game = game_from_diagram(CAPTURE_TO_ESCAPE)
    game.play(bd.BLACK, bd.PASS)
    moves = [game.parse_vertex(v) for v in ("C5", "D3")]
    for prior in (0.0, 0.4):
        config = SearchConfig(seed=3, threads=1, early_stop=False, tactical_prior=prior)
        search = Search(config, 9, evaluator=favouring(tiny_evaluator(),
                                                       game.parse_vertex("H8")))
        try:
            result = search.run(game, 50)
        finally:
            search.close()
        priors = {c.point: c.prior for c in result.children}
        for move in moves:
            if prior:
                assert priors[move] > 0.05
            else:
                assert priors.get(move, 0.0) < 0.01
