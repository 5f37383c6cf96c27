"""Growing a network wider (nets.model.widened, Net2WiderNet) and deeper (nets.model.deepened,
Net2DeeperNet), and the weights file that nets.grow writes: the grown network computes what the
original did."""
import random

import numpy as np
import pytest
import torch

from engine.game import Game
from nets import DEFAULT_WEIGHTS
from nets import features as feat
from nets import grow as ng
from nets import model as nm
from test_model import _with_random_batch_norms, tiny


def _net(**overrides):
    """Return a tiny net in eval mode whose batch-norms are far from the identity."""
    return _with_random_batch_norms(tiny(**overrides))


def _grown(config, state):
    """Return the net of a grown config and state_dict, in eval mode."""
    model = nm.PolicyNet(config)
    model.load_state_dict(state, strict=True)
    return model.eval()


def _assert_same_outputs(model, other, x, mask, komi):
    """Assert that two nets give the same log-probabilities, ownership and value."""
    with torch.no_grad():
        expected, got = model(x, mask, komi), other(x, mask, komi)
    for a, b in zip(expected, got):
        assert (a is None) == (b is None)
        if a is not None:
            torch.testing.assert_close(b, a, rtol=1e-5, atol=1e-5)


def _random_inputs(count=3, size=9):
    """Return (binary input planes, legal masks, komi) of count random positions."""
    generator = torch.Generator().manual_seed(2)
    x = torch.rand(count, feat.num_planes(False), size, size, generator=generator).round()
    mask = torch.rand(count, size * size, generator=generator) > 0.3
    return x, mask, torch.tensor([-7.5, 0.0, 6.5][:count])


@pytest.mark.parametrize("depth", [2, 3, 4, 7])
def test_deepening_a_one_layer_net_adds_every_layer_asked_for(depth):
    model = _net(depth=1)
    config, state = nm.deepened(model.config, model.state_dict(), depth)
    _assert_same_outputs(model, _grown(config, state), *_random_inputs())


HEADS = {  # every kind of layer that reads the trunk or the value tower
    "ownership conv, value tower of 1": dict(ownership=True, value_convs=1),
    "value ownership, value tower of 2": dict(ownership=False, value_convs=2,
                                              value_ownership=True),
    "value head without a tower": dict(ownership=True, value_convs=0, value_ownership=True),
    "move heads only": dict(ownership=False, value=False),
}


@pytest.mark.parametrize("split", nm.SPLITS)
@pytest.mark.parametrize("symmetric", [False, True])
@pytest.mark.parametrize("heads", HEADS)
def test_widened_net_computes_the_same_function(heads, symmetric, split):
    model = _net(depth=2, first_width=6, symmetric=symmetric, **HEADS[heads])
    config, state = nm.widened(model.config, model.state_dict(), 13, seed=3, split=split)
    wider = _grown(config, state)
    assert config["width"] == config["first_width"] == 13 and model.config["width"] == 8
    assert wider.trunk[0].weight.shape[0] == 13 and wider.policy.weight.shape[1] == 13
    _assert_same_outputs(model, wider, *_random_inputs())


def test_widening_copies_channels_and_random_shares_differ_from_even_ones():
    model = _net(depth=1)
    _, even = nm.widened(model.config, model.state_dict(), 12, seed=5)
    _, again = nm.widened(model.config, model.state_dict(), 12, seed=5)
    _, shared = nm.widened(model.config, model.state_dict(), 12, seed=5, split="random")
    assert all(torch.equal(even[k], again[k]) for k in even)
    first = even["trunk.0.weight"]
    assert all(any(torch.equal(first[new], first[old]) for old in range(8))
               for new in range(8, 12))
    assert torch.equal(shared["trunk.0.weight"], first)
    assert not torch.equal(shared["trunk.3.weight"], even["trunk.3.weight"])


def test_widening_then_deepening_and_the_reverse_compute_the_same_function():
    model = _net(depth=1, first_width=8, value_convs=2, value_ownership=True, ownership=False)
    config, state = nm.widened(model.config, model.state_dict(), 12, split="random")
    config, state = nm.deepened(config, state, 4)
    _assert_same_outputs(model, _grown(config, state), *_random_inputs())
    config, state = nm.deepened(model.config, model.state_dict(), 3)
    config, state = nm.widened(config, state, 16)
    assert config["depth"] == 3 and config["width"] == 16
    _assert_same_outputs(model, _grown(config, state), *_random_inputs())


def test_widening_refuses_a_narrower_width_and_an_unknown_split():
    model = _net(first_width=10)
    with pytest.raises(ValueError, match="cannot narrow"):
        nm.widened(model.config, model.state_dict(), 9)
    with pytest.raises(ValueError, match="unknown split"):
        nm.widened(model.config, model.state_dict(), 12, split="uneven")
    config, state = nm.widened(model.config, model.state_dict(), 10)
    assert config["width"] == 10 and state["trunk.3.weight"].shape == (10, 10, 3, 3)


def _engine_boards(count, seed=0):
    """Return 19x19 boards of random legal games at 10..150 moves."""
    rng = random.Random(seed)
    boards = []
    for _ in range(count):
        game = Game(19)
        for _ in range(rng.randrange(10, 150)):
            game.play(game.to_play, rng.choice(game.legal_moves(game.to_play, superko=False)),
                      superko=False)
        boards.append(game.board)
    return boards


def test_the_shipped_network_grown_computes_the_same_on_engine_boards():
    payload = nm.read_weights(DEFAULT_WEIGHTS)
    shipped = _grown(payload["config"], nm.without_subnormals(payload["state_dict"]))
    config, state = nm.widened(shipped.config, shipped.state_dict(), 96, split="random")
    config, state = nm.deepened(config, state, 8)
    grown = _grown(config, state)
    boards = _engine_boards(6)
    x = torch.from_numpy(feat.extract(boards, rank=9, edge=False))
    mask = torch.from_numpy(feat.legal_masks(boards))
    komi = torch.full((6,), 7.5)
    with torch.no_grad():
        (logp, own, value), (grown_logp, grown_own, grown_value) = \
            shipped(x, mask, komi), grown(x, mask, komi)
    legal = mask.bool()
    torch.testing.assert_close(grown_logp[:, 0][legal], logp[:, 0][legal], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(grown_logp[:, 1:], logp[:, 1:], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(grown_own, own, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(grown_value, value, rtol=1e-5, atol=1e-5)


def test_grow_writes_the_grown_network_with_its_growth_in_meta(tmp_path):
    path = str(tmp_path / "10x96.pt")
    ng.main(["--init", DEFAULT_WEIGHTS, "--depth", "8", "--width", "96", "--out", path])
    grown, meta = nm.load_model(path)
    shipped, shipped_meta = nm.load_model(DEFAULT_WEIGHTS)
    assert grown.config == {**shipped.config, "depth": 8, "width": 96, "first_width": 96}
    assert meta["samples"] == shipped_meta["samples"]
    assert meta["growth"] == [{"from": {"depth": 6, "first_width": 64, "width": 64},
                               "to": {"depth": 8, "first_width": 96, "width": 96},
                               "seed": 0, "split": "random", "date": meta["growth"][0]["date"]}]
    boards = _engine_boards(4)
    priors, values = nm.Policy(path, bf16="off", device="cpu").evaluate(boards, value=True)
    shipped_priors, shipped_values = nm.Policy(DEFAULT_WEIGHTS, bf16="off", device="cpu") \
        .evaluate(boards, value=True)
    np.testing.assert_allclose(priors, shipped_priors, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(values, shipped_values, rtol=1e-5, atol=1e-5)


def test_grow_refuses_bad_requests_and_writes_nothing(tmp_path):
    out = tmp_path / "out.pt"
    with pytest.raises(SystemExit, match="cannot narrow"):
        ng.main(["--init", DEFAULT_WEIGHTS, "--width", "32", "--out", str(out)])
    with pytest.raises(SystemExit, match="cannot deepen"):
        ng.main(["--init", DEFAULT_WEIGHTS, "--depth", "4", "--out", str(out)])
    with pytest.raises(SystemExit, match="no such weights file"):
        ng.main(["--init", str(tmp_path / "missing.pt"), "--width", "96", "--out", str(out)])
    with pytest.raises(SystemExit):
        ng.parse_args(["--init", DEFAULT_WEIGHTS, "--out", str(out)])
    assert not out.exists()


def test_growing_twice_keeps_both_records(tmp_path):
    model = _net(depth=1, ownership=False)
    first = str(tmp_path / "first.pt")
    nm.save_model(model, first, {"samples": 7})
    second, third = str(tmp_path / "second.pt"), str(tmp_path / "third.pt")
    ng.main(["--init", first, "--width", "12", "--out", second])
    ng.main(["--init", second, "--depth", "3", "--out", third, "--split", "even"])
    meta = nm.read_weights(third)["meta"]
    assert meta["samples"] == 7 and len(meta["growth"]) == 2
    assert meta["growth"][1]["from"]["depth"] == 1 and meta["growth"][1]["to"]["depth"] == 3
    _assert_same_outputs(model, nm.load_model(third)[0], *_random_inputs())
