"""The capture and liberty-race reader behind the search's tactical priors: drawn fights where
the side to move must save a chain or may kill one, and settled ones where it need not."""
import random

import numpy as np
import pytest

from asciiboard import game_from_diagram
from engine import board as bd
from engine.ladder import caught_in_ladder
from engine.tactics import (MAX_CANDIDATES, MAX_LIBERTIES, MAX_PLIES, READ_BUDGET,
                            _attack_moves, _defence_moves, captured_after, new_tactics_scratch,
                            tactical_moves)
from test_ladder import random_position

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


# The slow reader ---------------------------------------------------------------------------

def reference_captured(sc, b, target, defender, attacker_to_move, ply, visited):
    """The same AND/OR reading as engine.tactics, written plainly: recursion over board
    copies, the candidates from the module's own generators. visited is a one-item list
    counting positions, as the reader's budget does."""
    if b.stones[target] != defender:
        return True
    libs = b.nlibs[b.chain[target]]
    if libs == 1:
        return attacker_to_move or caught_in_ladder(b, target, sc.ladder)
    if libs > MAX_LIBERTIES or ply >= MAX_PLIES or visited[0] >= READ_BUDGET:
        return False
    out = np.zeros(MAX_CANDIDATES, np.int32)
    generate = _attack_moves if attacker_to_move else _defence_moves
    moves = list(out[:generate(sc, b, b.chain[target], out)])
    for p in moves:
        child = bd.copy_board(b)
        if bd.play(child, int(p), 3 - defender if attacker_to_move else defender) != bd.OK:
            continue
        visited[0] += 1
        if reference_captured(sc, child, target, defender, not attacker_to_move, ply + 1,
                              visited) == attacker_to_move:
            return attacker_to_move
    return not attacker_to_move


@pytest.mark.parametrize("seed", range(4))
def test_the_reader_agrees_with_a_plain_recursive_one_on_random_positions(seed):
    rng = random.Random(seed)
    compared = 0
    read_out = set()        # (liberties, outcome) of the chains that needed reading
    for _ in range(12):
        game = random_position(rng, 9, rng.randrange(20, 70))
        b = game.board
        scratch = new_tactics_scratch(b)
        for p in game.on_board_points():
            if b.stones[p] == bd.EMPTY or b.chain[p] != p or b.nlibs[p] > MAX_LIBERTIES:
                continue
            for attacker_to_move in (True, False):
                expected = reference_captured(scratch, bd.copy_board(b), p, int(b.stones[p]),
                                              attacker_to_move, 0, [0])
                # The argument types tactical_moves passes: the compiled reader is reused.
                assert captured_after(scratch, b, np.int32(-1), 0, np.int32(p),
                                      attacker_to_move) == expected
                compared += 1
                if b.nlibs[p] > 1:
                    read_out.add((int(b.nlibs[p]), expected))
    assert compared > 100 and {(2, True), (2, False)} <= read_out
