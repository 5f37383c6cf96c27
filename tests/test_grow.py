"""Growing a network wider (nets.model.widened, Net2WiderNet) and deeper (nets.model.deepened,
Net2DeeperNet): the grown network computes what the original did."""
import random

import pytest
import torch

from engine.game import Game
from nets import DEFAULT_WEIGHTS
from nets import features as feat
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
