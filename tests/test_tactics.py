"""The capture and liberty-race reader behind the search's tactical priors: drawn fights where
the side to move must save a chain or may kill one, and settled ones where it need not."""
import numpy as np

from asciiboard import game_from_diagram
from engine import board as bd
from engine.tactics import new_tactics_scratch, tactical_moves

# A capturing race in the lower-left corner, two liberties each: White's chain A3-C3, C2, C1
# has B1 and D1, Black's A2-B2 has A1 and B1. Black wins by D1 (B1 fills its own liberty:
# White then takes A1 first); White wins by B1 (Black can no longer play A1).
RACE = """
    . . . . . . .
    . . . . . . .
    . . . . . . .
    X X X X . . .
    O O O X . . .
    X X O X . . .
    . . O . . . .
    """

# Black D4 has two liberties, D3 and E4: White's atari at D3 starts a ladder to the edge,
# the atari at E4 does not.
LADDER = """
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . O O . . . .
    . . O . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    """


def moves_for(game):
    """Return the reader's moves for the side to move, as GTP vertices."""
    scratch = new_tactics_scratch(game.board)
    out = np.zeros(16, np.int32)
    n = tactical_moves(game.board, game.to_play, scratch, out)
    return sorted(game.vertex(int(p)) for p in out[:n])


def race(last_color, last_vertex, without):
    """The race with the stone at `without` taken out of the diagram and played as the last
    move by last_color."""
    rows = [line.split() for line in RACE.strip().splitlines()]
    x = "ABCDEFG".index(without[0])
    rows[7 - int(without[1:])][x] = "."
    game = game_from_diagram("\n".join(" ".join(r) for r in rows))
    game.play(last_color, game.parse_vertex(last_vertex))
    return game


def test_the_side_to_move_wins_the_race_by_taking_the_outside_liberty():
    assert moves_for(race(bd.WHITE, "C1", "C1")) == ["D1"]


def test_the_other_side_wins_it_by_the_shared_liberty_or_a_throw_in():
    assert moves_for(race(bd.BLACK, "D2", "D2")) == ["A1", "B1"]


def test_the_atari_that_starts_a_working_ladder_kills():
    game = game_from_diagram(LADDER)
    game.play(bd.BLACK, game.parse_vertex("D4"))
    assert "D3" in moves_for(game)
    assert "E4" not in moves_for(game)


def test_the_threatened_chain_is_saved_by_a_move_that_escapes_the_ladder():
    game = game_from_diagram(LADDER)
    game.play(bd.BLACK, game.parse_vertex("D4"))
    game.play(bd.WHITE, game.parse_vertex("J9"))
    game.play(bd.BLACK, game.parse_vertex("H9"))
    game.play(bd.WHITE, game.parse_vertex("G7"))
    assert moves_for(game) == []                 # the last move touches no short chain
    game = game_from_diagram(LADDER.replace(". . . O O . . . .", ". . . O . . . . ."))
    game.play(bd.BLACK, game.parse_vertex("D4"))
    game.play(bd.WHITE, game.parse_vertex("E5"))
    saving = moves_for(game)
    assert saving and set(saving) <= {"D3", "E4"}


def test_a_chain_dead_whoever_moves_gets_no_move():
    game = game_from_diagram("""
        . . . . .
        . . . . .
        O O O . .
        X X O . .
        . X O . .
        """)
    game.play(bd.WHITE, game.parse_vertex("D1"))
    assert moves_for(game) == []
