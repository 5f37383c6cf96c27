"""Rules of Go, one test per rule, with cases read from tests/rules/*.txt (format: rules/README.txt).

Each assertion line of a data file is one parametrized case; it replays the diagram and the
`play` steps above it on a fresh Game, then checks the assertion through engine.game and
engine.board together.
"""
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from asciiboard import board_rows, diagram, game_from_diagram, is_diagram_line, parse_diagram
from engine import board as bd
from engine.game import IllegalMove, Rules, color_from_text

RULES_DIR = Path(__file__).parent / "rules"
ASSERTIONS = {"legal", "illegal", "captures", "repeat", "libs", "owner", "score"}
REASONS = {"occupied": "occupied point", "suicide": "suicide", "ko": "ko",
           "superko": "positional superko"}
OWNERS = {"X": bd.BLACK, "O": bd.WHITE, ".": bd.EMPTY}


@dataclass(frozen=True)
class Case:
    """One assertion of a rules file, with the board and the steps that come before it."""
    where: str
    title: str
    board: str
    steps: tuple
    assertion: str

    def __str__(self):
        return f"{self.where} {self.title}: {self.assertion}"


def load_cases(name):
    """Return the Cases of tests/rules/<name>.txt; ValueError on a line it cannot read."""
    path = RULES_DIR / f"{name}.txt"
    cases, title, board, steps, seen = [], None, [], [], 0
    lines = path.read_text().splitlines() + ["% end"]
    for number, raw in enumerate(lines, 1):
        line = raw.split("#", 1)[0].rstrip()
        where = f"{path.name}:{number}"
        if not line.strip():
            continue
        if line.startswith("%"):
            if title is not None and len(cases) == seen:
                raise ValueError(f"{where}: case {title!r} has no assertion")
            title, board, steps, seen = line[1:].strip(), [], [], len(cases)
            continue
        if title is None:
            raise ValueError(f"{where}: text before the first % title")
        word = line.split()[0]
        if word == "play":
            steps.append(line)
        elif word in ASSERTIONS:
            cases.append(Case(where, title, "\n".join(board), tuple(steps), line))
        elif not steps and len(cases) == seen and is_diagram_line(line):
            board.append(line)
        else:
            raise ValueError(f"{where}: cannot read {raw!r}")
    if not cases:
        raise ValueError(f"{path} holds no cases")
    return cases


def cases_of(name):
    """Parametrize a test over the cases of one rules file."""
    return pytest.mark.parametrize("case", load_cases(name), ids=str)


def replay(case):
    """Return the Game of a case: its diagram with its play steps applied."""
    game = game_from_diagram(case.board)
    for step in case.steps:
        words = step.split()[1:]
        if len(words) % 2:
            raise ValueError(f"{case.where}: play needs colour and vertex pairs: {step!r}")
        for color, vertex in zip(words[::2], words[1::2]):
            game.play(color_from_text(color), game.parse_vertex(vertex))
    return game


def state(game):
    """Return everything a refused move must leave unchanged."""
    return ([a.copy() for a in game.board[:-1]], list(game.moves), list(game._hashes),
            game.to_play)


def same_state(a, b):
    """Return True if two state() results are identical."""
    return (all(np.array_equal(x, y) for x, y in zip(a[0], b[0])) and a[1:] == b[1:])


def stone_count(game, color):
    """Return how many stones of color are on the board."""
    return int(np.count_nonzero(game.board.stones == color))


def run(case):
    """Replay a case and check its assertion."""
    game = replay(case)
    words = case.assertion.split()
    kind, args = words[0], words[1:]
    where = f"{case}\n{diagram(game)}"
    if kind in ("legal", "illegal", "captures", "repeat"):
        color, p = color_from_text(args[0]), game.parse_vertex(args[1])
    if kind == "legal":
        assert bd.is_legal(game.board, p, color), where
        assert game.is_legal(p, color), where
        assert game.play(color, p) is False, where
    elif kind == "illegal":
        reason = REASONS[args[2]]
        before = state(game)
        with pytest.raises(IllegalMove) as refused:
            game.play(color, p)
        assert str(refused.value) == reason, where
        assert same_state(before, state(game)), f"refused move changed the game\n{where}"
        assert not game.is_legal(p, color), where
        assert p not in game.legal_moves(color), where
        assert bool(bd.is_legal(game.board, p, color)) == (args[2] == "superko"), where
    elif kind == "captures":
        count = int(args[2])
        opponent = 3 - color
        slot = bd.CAPTURED_BY_BLACK if color == bd.BLACK else bd.CAPTURED_BY_WHITE
        stones, prisoners = stone_count(game, opponent), int(game.board.info[slot])
        assert game.play(color, p) is False, where
        assert stone_count(game, opponent) == stones - count, f"{where}\nafter:\n{diagram(game)}"
        assert int(game.board.info[slot]) == prisoners + count, where
    elif kind == "repeat":
        assert bd.is_legal(game.board, p, color), where
        assert game.repeats_position(p, color), where
        assert not game.is_legal(p, color) and game.is_legal(p, color, superko=False), where
        before = state(game)
        with pytest.raises(IllegalMove, match="positional superko"):
            game.play(color, p)
        assert same_state(before, state(game)), where
        assert game.play(color, p, superko=False) is True, where
    elif kind == "libs":
        p = game.parse_vertex(args[0])
        assert game.color_at(p) in (bd.BLACK, bd.WHITE), f"no stone at {args[0]}\n{where}"
        head = game.board.chain[p]
        out = np.empty(game.board.stones.shape[0], np.int64)
        assert int(game.board.nlibs[head]) == int(args[1]), where
        assert bd.chain_liberties(game.board, head, out) == int(args[1]), where
    elif kind == "owner":
        owner = np.empty(game.board.stones.shape[0], np.int8)
        bd.area_owner(game.board, owner)
        assert owner[game.parse_vertex(args[0])] == OWNERS[args[1]], where
    elif kind == "score":
        komi, result = float(args[0]), args[1]
        expected = 0.0 if result == "0" else float(result[2:]) * (1 if result[0] == "B" else -1)
        assert bd.area_score(game.board, komi) == expected, where
        game.rules = Rules(komi=komi)
        assert game.tromp_taylor_score() == expected, where


@cases_of("capture")
def test_capture(case):
    run(case)


@cases_of("suicide")
def test_suicide(case):
    run(case)


@cases_of("suicide_that_captures")
def test_suicide_that_captures_is_legal(case):
    run(case)


@cases_of("snapback")
def test_snapback(case):
    run(case)


@cases_of("ko")
def test_simple_ko(case):
    run(case)


@cases_of("superko")
def test_positional_superko(case):
    run(case)


@cases_of("seki")
def test_seki_scoring(case):
    run(case)


@cases_of("liberties")
def test_edge_and_corner_liberties(case):
    run(case)


@cases_of("scoring")
def test_tromp_taylor_scoring(case):
    run(case)


def test_every_rules_file_has_a_test():
    used = {"capture", "suicide", "suicide_that_captures", "snapback", "ko", "superko", "seki",
            "liberties", "scoring"}
    assert {p.stem for p in RULES_DIR.glob("*.txt")} - {"README"} == used


TRIPLE_KO = """
   A B C D E F G
 7 . X O . . . .
 6 X O . . . . .
 5 . . . . . . .
 4 . . . . . . .
 3 . . . . . . .
 2 O X . . . X O
 1 . O X . X O .
"""


def test_triple_ko_cycle_is_positional_superko():
    game = game_from_diagram(TRIPLE_KO)
    start = board_rows(game), int(game.board.info[bd.HASH])
    cycle = [("b", "A1"), ("w", "A7"), ("b", "G1"), ("w", "B1"), ("b", "B7")]
    for color, vertex in cycle:
        assert game.play(color_from_text(color), game.parse_vertex(vertex)) is False
    retake = game.parse_vertex("F1")
    assert bd.is_legal(game.board, retake, bd.WHITE)  # simple ko alone cannot see the cycle
    assert int(bd.hash_after(game.board, retake, bd.WHITE)) == start[1]
    with pytest.raises(IllegalMove) as refused:
        game.play(bd.WHITE, retake)
    assert str(refused.value) == "positional superko"
    assert len(game.moves) == 5
    assert game.play(bd.WHITE, retake, superko=False) is True
    assert (board_rows(game), int(game.board.info[bd.HASH])) == start


def test_diagram_coordinates_are_gtp():
    game = game_from_diagram("""
       A B C D E
     5 X . . . O
     4 . . . . .
     3 . . . . .
     2 . . . . .
     1 O . . . X
    """)
    assert game.color_at(game.parse_vertex("A5")) == bd.BLACK
    assert game.color_at(game.parse_vertex("E5")) == bd.WHITE
    assert game.color_at(game.parse_vertex("A1")) == bd.WHITE
    assert game.color_at(game.parse_vertex("E1")) == bd.BLACK
    assert game.to_play == bd.BLACK and not game.moves
    assert parse_diagram("XO\n.X") == [[bd.EMPTY, bd.BLACK], [bd.BLACK, bd.WHITE]]


@pytest.mark.parametrize("text", [
    "X O\n. X .",                      # not square
    "2 X O\n2 . X",                    # wrong row number
    "  A C\n2 X O\n1 . X",             # wrong column header
    "X O X\nO . O\nX O X",             # chains without liberties: O stones are captured
    "X",                               # below the smallest board
])
def test_diagram_rejects_bad_boards(text):
    with pytest.raises(ValueError):
        game_from_diagram(text)
