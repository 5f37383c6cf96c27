"""Growing a network deeper (nets.model.deepened, Net2DeeperNet): the grown network computes
what the original did."""
import pytest
import torch

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
