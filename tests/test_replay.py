"""Fixed-seed games replay move for move as recorded in tests/data/replay_c051a8c.json
(tests/replay_games.py plays them and says when and how they were recorded): the same flags
give the same moves across refactors of the search and its configuration (issues 77 and 78)."""
import json

import pytest

import replay_games

with open(replay_games.FIXTURE, encoding="utf-8") as f:
    RECORDED = json.load(f)


def test_the_fixture_holds_every_game_and_no_other():
    assert set(RECORDED["games"]) == set(replay_games.GAMES)


@pytest.mark.parametrize("name", sorted(replay_games.GAMES))
def test_a_fixed_seed_game_replays_the_recorded_moves(name):
    flags, max_moves = replay_games.GAMES[name]
    recorded = RECORDED["games"][name]
    assert recorded["max_moves"] == max_moves
    assert replay_games.play(replay_games.COMMON + flags, max_moves) == recorded["moves"].split()
