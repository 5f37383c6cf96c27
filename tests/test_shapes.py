"""The move-shape model: its features, its symmetry, its file, its training and its use as the
search's prior without the network."""
import json
import pathlib
import random
import subprocess
import sys

import numpy as np
import pytest

from asciiboard import game_from_diagram
from engine import board as bd
from engine import shapes as sh
from engine.game import Game
from engine.ladder import new_ladder_scratch
from engine.search_config import SearchConfig
from engine.tree import P_EXPAND_VISITS, candidate_moves
from engine.player import Player, PlayerConfig
from nets import train_shapes as ts
from test_data_train import sgf_text


def features(game, point, color):
    b = game.board
    out = np.empty(sh.MAX_FEATURES, np.int32)
    n = sh.fixed_features(b, point, color, out, np.empty(b.libs.shape[1], np.uint64),
                          new_ladder_scratch(b.stones.shape[0]))
    return set(out[:n].tolist())


CAPTURE = """
    . . . . . . .
    . . . . . . .
    . . . X . . .
    . . X O . . .
    . . . X . . .
    . . . . . . .
    . . . . . . .
"""


def test_capture_and_escape_features():
    game = game_from_diagram(CAPTURE)
    take = game.point(4, 3)                     # E4, White's last liberty
    assert sh.F_CAPTURE_ONE in features(game, take, bd.BLACK)
    escape = features(game, take, bd.WHITE)
    assert sh.F_ESCAPE in escape and sh.F_CAPTURE_ONE not in escape
    far = features(game, game.point(0, 0), bd.BLACK)
    assert not far & {sh.F_CAPTURE_ONE, sh.F_ESCAPE, sh.F_ESCAPE_FAILS, sh.F_ATARI}
    assert sh.F_LINE + 1 in far                 # first line, no stone within distance 2


SELFATARI = """
    . . . . .
    O O O . .
    X X O . .
    . X O . .
    . O . . .
"""


def test_self_atari_and_liberty_features():
    game = game_from_diagram(SELFATARI)
    fill = features(game, game.point(0, 1), bd.BLACK)    # A2: three stones, one liberty
    assert {sh.F_BAD_SELFATARI, sh.F_LIBERTIES} <= fill
    open_point = features(game, game.point(4, 0), bd.BLACK)
    assert sh.F_BAD_SELFATARI not in open_point and sh.F_LIBERTIES not in open_point


def test_distance_features_follow_the_last_moves():
    game = Game(19)
    game.play(bd.BLACK, game.point(3, 3))
    game.play(bd.WHITE, game.point(15, 15))
    near = features(game, game.point(15, 14), bd.BLACK)     # next to the last move
    assert sh.F_DISTANCE + 0 in near                        # gridcular distance 2
    assert sh.F_DISTANCE2 + sh.DISTANCE_BUCKETS - 1 in near  # far from the second-last


def random_game(size, moves, seed):
    rng = random.Random(seed)
    game = Game(size)
    for _ in range(moves):
        color = game.to_play
        legal = game.legal_moves(color)
        game.play(color, rng.choice(legal) if legal else bd.PASS)
    return game


TRANSFORMS = [lambda x, y, n: (x, y), lambda x, y, n: (n - 1 - x, y),
              lambda x, y, n: (x, n - 1 - y), lambda x, y, n: (n - 1 - x, n - 1 - y),
              lambda x, y, n: (y, x), lambda x, y, n: (n - 1 - y, x),
              lambda x, y, n: (y, n - 1 - x), lambda x, y, n: (n - 1 - y, n - 1 - x)]


def transformed(game, transform):
    out = Game(game.size)
    for p in game.on_board_points():
        color = game.color_at(p)
        if color != bd.EMPTY:
            out.place_setup(color, out.point(*transform(*game.xy(p), game.size)))
    return out


def neighbourhood(game, point, color):
    states = np.empty(len(sh.POINTS), np.int8)
    states_3x3 = np.empty(8, np.int8)
    sh.read_states(game.board, point, color, sh.DX, sh.DY, states, states_3x3)
    return states, states_3x3


def identity_hashes(game, point, color, zobrist):
    states, states_3x3 = neighbourhood(game, point, color)
    out = np.empty(sh.N_HASHES, np.uint64)
    sh.pattern_hashes(states, states_3x3, np.arange(len(sh.POINTS)), *zobrist, sh.RING_ENDS,
                      out)
    return out


def stored_form(game, point, color):
    """Return (kinds, states) as the trainer stores the patterns around point."""
    states, states_3x3 = neighbourhood(game, point, color)
    rows = np.tile(states.astype(np.int64), (sh.N_HASHES, 1))
    rows[0] = 0
    rows[0, :8] = states_3x3
    return np.arange(sh.N_HASHES), rows


def test_every_turned_copy_of_a_pattern_hashes_to_a_stored_variant():
    game = random_game(13, 70, seed=3)
    zobrist = sh.new_zobrist(5)
    point = game.point(1, 2)                    # near a corner: the edge is in the pattern
    kinds, rows = stored_form(game, point, bd.BLACK)
    variants = sh.variant_hashes(kinds, rows, *zobrist)
    for transform in TRANSFORMS:
        copy = transformed(game, transform)
        turned = copy.point(*transform(*game.xy(point), game.size))
        hashes = identity_hashes(copy, turned, bd.BLACK, zobrist)
        for kind in range(sh.N_HASHES):
            assert hashes[kind] in variants[kind], (kind, transform)


def test_a_model_rates_turned_positions_alike():
    game = random_game(13, 60, seed=8)
    zobrist = sh.new_zobrist(9)
    rng = np.random.default_rng(1)
    kinds, rows = [], []
    for point in game.legal_moves(bd.BLACK)[::3]:
        k, r = stored_form(game, point, bd.BLACK)
        kinds.append(k)
        rows.append(r)
    kinds, rows = np.concatenate(kinds), np.concatenate(rows)
    model = sh.build_model(rng.normal(size=sh.N_FIXED), kinds, rows,
                           rng.normal(size=len(kinds)), *zobrist)
    rates = []
    for transform in TRANSFORMS:
        copy = transformed(game, transform)
        b = copy.board
        moves = np.empty(b.info[bd.NEMPTY] + 1, np.int32)
        n = candidate_moves(b, bd.BLACK, np.ones(b.stones.shape[0], np.bool_), moves)
        out = np.zeros(b.stones.shape[0], np.float32)
        sh.rate_moves(b, bd.BLACK, moves, n, model, out, np.empty(b.libs.shape[1], np.uint64),
                      new_ladder_scratch(b.stones.shape[0]))
        assert out[moves[:n]].sum() == pytest.approx(1.0, abs=1e-5)
        rates.append({transform(*copy.xy(int(p)), 13): float(out[p]) for p in moves[:n]}
                     if transform is TRANSFORMS[0] else
                     {_inverse(transform, *copy.xy(int(p)), 13): float(out[p])
                      for p in moves[:n]})
    for other in rates[1:]:
        assert other.keys() == rates[0].keys()
        assert max(abs(other[k] - rates[0][k]) for k in other) < 1e-5
    assert max(rates[0].values()) > 2 * min(rates[0].values())   # the weights mattered


def test_pattern_score_reads_rings_as_the_full_hashes_would():
    """pattern_score reads the board a ring at a time and stops at the first radius the
    model lacks: the sum of the weights of the full read's hashes, up to that radius."""
    game = random_game(13, 80, seed=12)
    zobrist = sh.new_zobrist(13)
    rng = np.random.default_rng(4)
    kinds, rows = [], []
    for point in game.legal_moves(bd.WHITE)[::2]:
        k, r = stored_form(game, point, bd.WHITE)
        keep = int(rng.integers(1, sh.N_HASHES + 1))     # patterns up to a random radius
        kinds.append(k[:keep])
        rows.append(r[:keep])
    kinds, rows = np.concatenate(kinds), np.concatenate(rows)
    weights = rng.normal(size=len(kinds))
    model = sh.build_model(np.zeros(sh.N_FIXED), kinds, rows, weights, *zobrist)
    table = dict(zip(model.keys.tolist(), model.values.tolist()))
    depths = set()
    for point in game.legal_moves(bd.WHITE):
        expected, depth = 0.0, 0
        for kind, h in enumerate(identity_hashes(game, point, bd.WHITE, zobrist).tolist()):
            if h not in table:
                if kind > 0:
                    break
                continue
            expected += table[h]
            depth = kind
        depths.add(depth)
        assert sh.pattern_score(game.board, point, bd.WHITE, model) == \
            pytest.approx(expected, abs=1e-9)
    assert len(depths) > 3                       # stops at many radii, the largest among them


def _inverse(transform, x, y, n):
    return next((a, b) for a in range(n) for b in range(n) if transform(a, b, n) == (x, y))


def test_model_file_round_trip_and_bad_files(tmp_path):
    game = random_game(9, 30, seed=2)
    kinds, rows = stored_form(game, game.legal_moves(bd.BLACK)[0], bd.BLACK)
    zobrist = sh.new_zobrist(4)
    fixed = np.linspace(-1, 1, sh.N_FIXED)
    weights = np.arange(len(kinds), dtype=np.float32)
    path = tmp_path / "m.npz"
    sh.save_model(path, fixed, kinds, rows, weights, *zobrist, json.dumps({"note": "test"}))
    model = sh.load_model(str(path))
    built = sh.build_model(fixed, kinds, rows, weights, *zobrist)
    assert np.array_equal(model.keys, built.keys) and np.array_equal(model.values, built.values)
    assert np.allclose(model.fixed, fixed)
    (tmp_path / "junk.npz").write_bytes(b"not a numpy file")
    with pytest.raises(ValueError, match="not a readable shape model"):
        sh.load_model(str(tmp_path / "junk.npz"))
    np.savez(tmp_path / "other.npz", format=np.array("something-else"), max_radius=np.array(10),
             fixed=fixed, kinds=kinds, states=rows, weights=weights, zobrist=zobrist[0],
             zobrist_3x3=zobrist[1], salts=zobrist[2])
    with pytest.raises(ValueError, match="not a shapes-1"):
        sh.load_model(str(tmp_path / "other.npz"))
    rows[1, 5] = 7                      # a colour pattern with a liberty state
    sh.save_model(tmp_path / "range.npz", fixed, kinds, rows, weights, *zobrist, "{}")
    with pytest.raises(ValueError, match="wrong shape or range"):
        sh.load_model(str(tmp_path / "range.npz"))
    with pytest.raises(ValueError, match="not a readable"):
        sh.load_model(str(tmp_path / "missing.npz"))


def test_damaged_model_files_give_a_clear_error(tmp_path):
    shipped = pathlib.Path(sh.DEFAULT_SHAPES).read_bytes()
    cut = tmp_path / "cut.npz"
    cut.write_bytes(shipped[:len(shipped) // 2])
    flipped = tmp_path / "flipped.npz"
    damaged = bytearray(shipped)
    damaged[len(damaged) // 3] ^= 0xFF
    flipped.write_bytes(bytes(damaged))
    for path in (cut, flipped):
        with pytest.raises(ValueError, match="not a readable shape model"):
            sh.load_model(str(path))
    with np.load(sh.DEFAULT_SHAPES) as data:
        fields = dict(data)
    for name, value in (("max_radius", np.array([10, 10])), ("fixed", np.array(["a"] * sh.N_FIXED)),
                        ("weights", np.full(fields["weights"].shape, np.nan, np.float32))):
        np.savez(tmp_path / f"{name}.npz", **{**fields, name: value})
        with pytest.raises(ValueError, match=f"{tmp_path / name}.npz: "):
            sh.load_model(str(tmp_path / f"{name}.npz"))


def contact_moves(size, moves, seed):
    """A game whose every move after the first touches the last one where it can (the
    shape a model should learn: distance 2 to the last move)."""
    rng = random.Random(seed)
    game = Game(size)
    out = []
    for _ in range(moves):
        color = game.to_play
        legal = game.legal_moves(color)
        if not legal:
            break
        last = game.board.info[bd.LAST_MOVE]
        w = game.board.info[bd.WIDTH]
        near = [p for p in legal if last >= 0 and abs(p - last) in (1, w)]
        p = rng.choice(near or legal)
        game.play(color, p)
        out.append((color, *game.xy(p)))
    return out


def test_training_learns_contact_play_and_writes_a_usable_model(tmp_path):
    for split in ("train", "test"):
        (tmp_path / split).mkdir()
        for i in range(12 if split == "train" else 3):
            seed = i if split == "train" else 100 + i
            (tmp_path / split / f"g{i}.sgf").write_text(sgf_text(contact_moves(9, 50, seed),
                                                                 size=9))
    out = tmp_path / "shapes.npz"
    result = subprocess.run(
        [sys.executable, "-m", "nets.train_shapes", "--data", str(tmp_path / "train"),
         "--val-data", str(tmp_path / "test"), "--out", str(out), "--size", "9", "--stride", "1",
         "--min-count", "2", "--epochs", "3", "--lr", "0.3"],
        capture_output=True, text=True, timeout=600, check=True)
    card = json.loads(result.stdout.strip().splitlines()[-1])
    assert card["test_top1"] > 0.15            # about 1 in 40 by chance on 9x9
    fixed = card["fixed_weights"]
    distances = fixed[sh.F_DISTANCE:sh.F_DISTANCE + sh.DISTANCE_BUCKETS]
    assert distances[0] == max(distances)
    model = sh.load_model(str(out))
    assert model.fixed[sh.F_DISTANCE] == pytest.approx(distances[0], abs=1e-3)
    retest = ts.test_model(str(out), ts.read_records([str(tmp_path / "test")], 10, 9), 1)
    assert retest["top1"] == card["test_top1"] and retest["positions"] == card["test_positions"]
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"junk")
    failed = subprocess.run([sys.executable, "-m", "nets.train_shapes", "--test-only", "--out",
                             str(junk), "--val-data", str(tmp_path / "test"), "--size", "9"],
                            capture_output=True, text=True, timeout=600)
    assert failed.returncode != 0 and "not a readable shape model" in failed.stderr


def test_training_rejects_bad_arguments(tmp_path):
    with pytest.raises(SystemExit):
        ts.parse_args(["--data", "x", "--val-data", "y", "--out", "z", "--stride", "0"])
    with pytest.raises(SystemExit):
        ts.parse_args(["--val-data", "y", "--out", "z"])
    assert ts.parse_args(["--val-data", "y", "--out", "z", "--test-only"]).test_only


def test_the_search_gives_the_model_s_moves_their_prior(tmp_path):
    """A model that loves the first line: without it the first move is in the middle, with a
    large shape prior it is on the edge."""
    zobrist = sh.new_zobrist(1)
    fixed = np.zeros(sh.N_FIXED)
    fixed[sh.F_LINE:sh.F_LINE + 2] = 8.0        # first line
    path = tmp_path / "edge.npz"
    sh.save_model(path, fixed, np.zeros(0, np.int64), np.zeros((0, len(sh.POINTS)), np.int64),
                  np.zeros(0), *zobrist, "{}")
    moves = {}
    for eqex in (0, 10_000):
        config = PlayerConfig(rollouts=300, search=SearchConfig(
            seed=1, shapes=str(path), shape_eqex=eqex, max_nodes=20_000, max_edges=400_000))
        game = Game(9)
        player = Player(config, 9)
        x, y = game.xy(player.genmove(game, bd.BLACK))
        moves[eqex] = min(x, y, 8 - x, 8 - y)
        player.search.close()
    assert moves[0] > 0 and moves[10_000] == 0


def test_a_bad_shapes_file_stops_the_engine_before_gtp(tmp_path, capsys):
    import gtp_main
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"junk")
    assert gtp_main.main(["--net", "none", "--set", f"shapes={junk}"]) == 2
    assert "not a readable shape model" in capsys.readouterr().err


def test_a_bad_shipped_shapes_file_stops_the_engine_that_finds_no_network(tmp_path, capsys,
                                                                          monkeypatch):
    import gtp_main
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"junk")
    monkeypatch.setattr(gtp_main, "DEFAULT_SHAPES", str(junk))
    monkeypatch.setattr(gtp_main, "load_evaluator", lambda args: None)
    assert gtp_main.main(["--net", "auto"]) == 2
    assert "not a readable shape model" in capsys.readouterr().err


def test_shape_keys_reach_the_search():
    import gtp_main
    parse = gtp_main.build_parser().parse_args
    default = gtp_main.player_config(parse(["--net", "none"])).search
    assert default.shapes == sh.DEFAULT_SHAPES and default.shape_eqex == SearchConfig.shape_eqex
    for setting in ("shapes=none", "shape_eqex=0"):
        assert gtp_main.player_config(parse(["--net", "none", "--set", setting])).search.shapes \
            == ""
    with pytest.raises(SystemExit):
        parse(["--set", "shape_eqex=-1"])


def test_the_expand_visits_key_reaches_the_search():
    import gtp_main
    parse = gtp_main.build_parser().parse_args
    assert gtp_main.player_config(parse(["--net", "none"])).search.expand_visits == \
        SearchConfig.expand_visits
    assert gtp_main.player_config(parse(["--set", "expand_visits=8"])).search.expand_visits == 8
    assert gtp_main.player_config(parse(["--set", "expand_visits=auto"])).search.expand_visits \
        == "auto"
    for bad in ("0", "-2", "x", "2.5"):
        with pytest.raises(SystemExit):
            parse(["--set", f"expand_visits={bad}"])


def test_expand_visits_auto_grows_with_the_board_and_a_number_overrides_it():
    config = SearchConfig(expand_visits="auto")
    by_size = {size: config.expand_visits_for(size) for size in (5, 9, 13, 19, 25)}
    assert by_size == {5: 3, 9: 3, 13: 4, 19: 8, 25: 8}
    assert config.as_array(7.5, size=19)[P_EXPAND_VISITS] == 8
    assert config.as_array(7.0, size=9)[P_EXPAND_VISITS] == 3
    assert config.as_array(7.5, net=True, size=19)[P_EXPAND_VISITS] == config.net_expand_visits
    fixed = SearchConfig(expand_visits=2)
    assert [fixed.expand_visits_for(size) for size in (9, 19)] == [2, 2]
