"""PolicyNet shapes and masking, symmetric weight tying, weight files and the Policy evaluator."""
import os

import numpy as np
import pytest
import torch

from engine.game import Game, vertex_to_xy
from nets import DEFAULT_WEIGHTS
from nets import features as feat
from nets import model as nm


def tiny(**overrides):
    torch.manual_seed(0)
    return nm.PolicyNet(nm.make_config("tiny", **overrides)).eval()


def test_forward_shapes_and_heads():
    model = tiny(heads=3, ownership=True)
    x = torch.rand(4, 25, 19, 19)
    logp, own, _ = model(x)
    assert logp.shape == (4, 3, 361) and own.shape == (4, 361)
    torch.testing.assert_close(logp.exp().sum(-1), torch.ones(4, 3))
    assert own.abs().max() <= 1


def test_fully_convolutional_on_other_sizes():
    logp, own, value = tiny(ownership=False)(torch.rand(2, 25, 9, 9))
    assert logp.shape == (2, 3, 81) and own is None


def test_illegal_points_get_probability_zero():
    model = tiny()
    mask = torch.rand(3, 361) > 0.5
    logp, _, _ = model(torch.rand(3, 25, 19, 19), mask)
    p = logp[:, 0].exp()
    assert torch.all(p[~mask] == 0)
    torch.testing.assert_close(p.sum(-1), torch.ones(3))
    assert torch.isfinite(logp[:, 1:]).all()  # later heads are not masked


def test_named_configs():
    assert nm.make_config("darkforest")["width"] == 384
    assert nm.make_config("darkforest")["depth"] == 10
    with pytest.raises(KeyError):
        nm.make_config("nope")
    with pytest.raises(KeyError):
        nm.make_config("cpu", colour=3)


def test_symmetric_tying_makes_the_net_equivariant():
    model = tiny(symmetric=True, depth=2)
    x = torch.rand(1, 25, 9, 9)
    logp, _, _ = model(x)
    for k in range(8):
        xk = torch.from_numpy(feat.transform_planes(x.numpy(), k).copy())
        logpk, _, _ = model(xk)
        expected = feat.transform_planes(logp[0, 0].reshape(9, 9).detach().numpy(), k)
        np.testing.assert_allclose(logpk[0, 0].reshape(9, 9).detach().numpy(), expected,
                                   rtol=1e-4, atol=1e-5)


def _with_random_batch_norms(model):
    """Give every batch-norm statistics and an affine map far from the identity, some of the
    scales negative, so a deepening that ignored any of them would change the outputs."""
    generator = torch.Generator().manual_seed(1)
    for layer in model.modules():
        if isinstance(layer, torch.nn.BatchNorm2d):
            n = layer.num_features
            layer.running_mean.copy_(torch.rand(n, generator=generator) * 2)
            layer.running_var.copy_(torch.rand(n, generator=generator) * 3 + 0.1)
            sign = torch.where(torch.rand(n, generator=generator) < 0.3, -1.0, 1.0)
            layer.weight.data.copy_(sign * (torch.rand(n, generator=generator) + 0.2))
            layer.bias.data.copy_(torch.randn(n, generator=generator))
    return model


@pytest.mark.parametrize("symmetric", [False, True])
def test_deepened_net_computes_the_same_function(symmetric):
    model = _with_random_batch_norms(tiny(depth=2, ownership=True, symmetric=symmetric))
    config, state = nm.deepened(model.config, model.state_dict(), 5)
    deeper = nm.PolicyNet(config)
    deeper.load_state_dict(state, strict=True)
    deeper.eval()
    assert config["depth"] == 5 and model.config["depth"] == 2
    assert sum(p.numel() for p in deeper.parameters()) > sum(p.numel() for p in model.parameters())
    x = torch.rand(3, 25, 9, 9).round()
    mask = torch.rand(3, 81) > 0.3
    with torch.no_grad():
        (logp, own, _), (deep_logp, deep_own, _) = model(x, mask), deeper(x, mask)
    torch.testing.assert_close(deep_logp, logp, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(deep_own, own, rtol=1e-4, atol=1e-4)
    same_config, same_state = nm.deepened(model.config, model.state_dict(), 2)
    assert same_config == model.config and same_state.keys() == model.state_dict().keys()


def test_deepening_refuses_shallower_nets_and_a_wider_first_layer():
    model = tiny(depth=2)
    with pytest.raises(ValueError, match="cannot deepen"):
        nm.deepened(model.config, model.state_dict(), 1)
    wide_first = tiny(first_width=16)
    with pytest.raises(ValueError, match="first_width"):
        nm.deepened(wide_first.config, wide_first.state_dict(), 3)


def test_save_load_roundtrip(tmp_path):
    model = tiny()
    path = str(tmp_path / "w.pt")
    nm.save_model(model, path, {"step": 7})
    loaded, meta = nm.load_model(path)
    assert meta == {"step": 7} and loaded.config == model.config
    x = torch.rand(2, 25, 19, 19)
    torch.testing.assert_close(loaded(x)[0], model(x)[0])
    payload = torch.load(path, weights_only=True)
    assert set(payload) >= {"config", "features", "state_dict", "meta"}


def test_subnormal_numbers_in_a_file_load_as_zero(tmp_path):
    # Written and compared as bit patterns: with flush-to-zero on (a Policy sets it), float
    # arithmetic, conversions and comparisons would read them as 0.
    subnormal = torch.tensor([0x00011D10, 0x80209A2E - 2**32], dtype=torch.int32)   # +, -
    model = tiny()
    state = model.state_dict()
    conv = next(k for k, v in state.items() if k.endswith("weight") and v.dim() == 4)
    weights = state[conv].view(-1)
    weights[:2].view(torch.int32).copy_(subnormal)
    normal = weights[2:].view(torch.int32).clone()
    path = nm.save_model(model, str(tmp_path / "w.pt"))
    saved = torch.load(path, weights_only=True)["state_dict"][conv].view(-1)
    assert torch.equal(saved[:2].view(torch.int32), subnormal)
    loaded, _ = nm.load_model(path)
    bits = loaded.state_dict()[conv].view(-1).view(torch.int32)
    assert torch.equal(bits[:2], torch.zeros(2, dtype=torch.int32))
    assert torch.equal(bits[2:], normal)


def test_a_policy_flushes_subnormal_results_to_zero():
    torch.set_flush_denormal(False)
    nm.Policy(model=tiny(), device="cpu")
    assert float(torch.tensor([1e-39]) * 1.0) == 0.0


def test_load_refuses_mismatched_config(tmp_path):
    path = str(tmp_path / "w.pt")
    nm.save_model(tiny(), path)
    payload = torch.load(path, weights_only=True)
    payload["config"]["width"] = 16
    torch.save(payload, path)
    with pytest.raises(nm.WeightsError, match="do not match config"):
        nm.load_model(path)


def test_load_refuses_other_features(tmp_path):
    path = str(tmp_path / "w.pt")
    nm.save_model(tiny(), path)
    payload = torch.load(path, weights_only=True)
    payload["features"]["version"] = 99
    torch.save(payload, path)
    with pytest.raises(nm.WeightsError, match="features"):
        nm.load_model(path)


def test_load_refuses_truncated_file(tmp_path):
    path = tmp_path / "w.pt"
    nm.save_model(tiny(), str(path))
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(nm.WeightsError, match="truncated or corrupt"):
        nm.load_model(str(path))


def test_load_refuses_corrupt_and_missing_files(tmp_path):
    path = tmp_path / "w.pt"
    path.write_bytes(np.random.default_rng(0).bytes(5000))
    with pytest.raises(nm.WeightsError, match="truncated or corrupt"):
        nm.load_model(str(path))
    torch.save({"state_dict": {}}, str(path))
    with pytest.raises(nm.WeightsError, match="not a weights file"):
        nm.load_model(str(path))
    with pytest.raises(nm.WeightsError, match="no such"):
        nm.load_model(str(tmp_path / "missing.pt"))


class _RunsCodeWhenLoaded:
    """Pickles as a call to os.system: what a weights file from a stranger may hold."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def test_load_refuses_a_weights_file_that_runs_code_and_runs_none(tmp_path):
    marker = tmp_path / "ran"
    path = tmp_path / "w.pt"
    payload = {"config": dict(nm.CONFIGS["cpu"]), "features": {}, "state_dict": {},
               "meta": _RunsCodeWhenLoaded(marker)}
    torch.save(payload, str(path))
    with pytest.raises(nm.WeightsError, match="truncated or corrupt"):
        nm.load_model(str(path))
    assert not marker.exists()


def test_policy_priors_on_engine_boards():
    game = Game(19)
    for v in ("D4", "Q16", "D16"):
        game.play(game.to_play, game.parse_vertex(v))
    other = Game(19)
    policy = nm.Policy(model=tiny(), device="cpu")
    priors, own = policy.evaluate([game.board, other.board], ownership=True)
    assert priors.shape == (2, 361) and priors.dtype == np.float32 and own.shape == (2, 361)
    np.testing.assert_allclose(priors.sum(1), 1, rtol=1e-5)
    for v in ("D4", "Q16", "D16"):
        x, y = vertex_to_xy(v, 19)
        assert priors[0, y * 19 + x] == 0
    by_point = policy.point_priors([game.board])
    assert by_point.shape == (1, 21 * 21)
    assert by_point[0, game.parse_vertex("D4")] == 0
    np.testing.assert_allclose(by_point[0, feat.index_to_point(np.arange(361), 19)], priors[0],
                               rtol=1e-5)


def test_default_weights_path_and_devices():
    assert DEFAULT_WEIGHTS.endswith("cpu_value.pt")
    assert nm.resolve_device("cpu").type == "cpu"
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA"):
            nm.resolve_device("cuda")



def test_a_replica_evaluates_as_its_original_with_a_network_of_its_own():
    policy = nm.Policy(model=tiny(), device="cpu", bf16="off", symmetries=8)
    twin = policy.replica("cpu")
    assert twin.model is not policy.model
    assert (twin.device, twin.bf16, twin.symmetries) == (policy.device, False, 8)
    game = Game(9)
    game.play(game.to_play, game.parse_vertex("C3"))
    boards = [game.board]
    first, second = policy.point_evaluate(boards, value=True), twin.point_evaluate(boards,
                                                                                   value=True)
    np.testing.assert_allclose(first[0], second[0], rtol=1e-6)
    np.testing.assert_allclose(first[1], second[1], rtol=1e-6)


def test_symmetry_averaged_priors_turn_with_the_board():
    # The same game played in a rotated/reflected frame: averaging over the 8 symmetries makes
    # the policy exactly equivariant, which a single untied evaluation is not.
    rng = np.random.default_rng(4)
    policy = nm.Policy(model=tiny(), device="cpu", bf16="off", symmetries=8)
    plain = nm.Policy(model=policy.model, device="cpu", bf16="off")
    n = 9
    for k in (1, 4, 6):
        game, turned = Game(n), Game(n)
        for _ in range(12):
            x, y = rng.integers(0, n, 2)
            tx, ty = feat.transform_xy(int(x), int(y), k, n)
            if game.is_legal(game.point(x, y), game.to_play):
                game.play(game.to_play, game.point(x, y))
                turned.play(turned.to_play, turned.point(tx, ty))
        priors, own = policy.evaluate([game.board], ownership=True)
        turned_priors, turned_own = policy.evaluate([turned.board], ownership=True)
        np.testing.assert_allclose(priors.sum(), 1, rtol=1e-5)
        moved = feat.transform_planes(priors.reshape(n, n), k).reshape(-1)
        np.testing.assert_allclose(moved, turned_priors[0], atol=1e-6)
        np.testing.assert_allclose(feat.transform_planes(own.reshape(n, n), k).reshape(-1),
                                   turned_own[0], atol=1e-6)
        # In one batch each position gets its own averaged policy back, in order.
        both = policy.evaluate([game.board, turned.board])
        np.testing.assert_allclose(both, np.concatenate([priors, turned_priors]), atol=1e-6)
        occupied = [i for i in range(n * n) if game.color_at(game.point(i % n, i // n))]
        assert occupied and not priors[0, occupied].any()
        single = plain.evaluate([game.board])
        single_turned = plain.evaluate([turned.board])
        assert not np.allclose(feat.transform_planes(single.reshape(n, n), k).reshape(-1),
                               single_turned[0], atol=1e-6)


def test_symmetries_must_be_one_or_eight():
    with pytest.raises(ValueError, match="1 or 8"):
        nm.Policy(model=tiny(), device="cpu", symmetries=4)


def test_value_head_sees_the_komi_and_the_side_to_move():
    model = tiny()
    x = torch.rand(3, 25, 19, 19)
    _, _, value = model(x, komi=torch.tensor([-7.5, 0.0, 7.5]))
    assert value.shape == (3,) and value.abs().max() <= 1
    _, _, same = model(x, komi=torch.tensor([-7.5, 0.0, 7.5]))
    torch.testing.assert_close(value, same)
    _, _, other = model(x, komi=torch.tensor([7.5, 0.0, -7.5]))
    assert not torch.allclose(value[[0, 2]], other[[0, 2]])
    assert nm.komi_for([1, 2], 7.5).tolist() == [-7.5, 7.5]   # black gives, white gets
    assert tiny(value=False)(x)[2] is None


def test_policy_values_for_the_side_to_move():
    game = Game(9)
    game.play(game.to_play, game.parse_vertex("E5"))
    policy = nm.Policy(model=tiny(), device="cpu", bf16="off")
    priors, values = policy.point_evaluate([game.board, Game(9).board], komi=7.5)
    assert priors.shape == (2, 121) and values.shape == (2,)
    _, _, expected = policy.model(    # white to move: white gets the komi
        torch.from_numpy(feat.extract([game.board])), komi=torch.tensor([7.5]))
    np.testing.assert_allclose(values[0], expected[0].item(), rtol=1e-5)
    eight = nm.Policy(model=policy.model, device="cpu", bf16="off", symmetries=8)
    assert eight.point_evaluate([game.board], komi=7.5)[1].shape == (1,)
    no_value = nm.Policy(model=tiny(value=False), device="cpu")
    assert no_value.point_evaluate([game.board])[1] is None and not no_value.has_value
    # Skipping the value head leaves the priors as they were.
    skipped, none = policy.point_evaluate([game.board, Game(9).board], komi=7.5, value=False)
    assert none is None
    np.testing.assert_array_equal(skipped, priors)


@pytest.mark.parametrize("symmetries", [1, 8])
def test_a_float64_policy_computes_in_float64_and_answers_in_float32(symmetries):
    game = Game(9)
    game.play(game.to_play, game.parse_vertex("E5"))
    boards = [game.board, Game(9).board]
    single = nm.Policy(model=tiny(), device="cpu", bf16="off", symmetries=symmetries)
    single_priors, single_values = single.point_evaluate(boards, komi=7.5)
    double = nm.Policy(model=tiny(), device="cpu", bf16="on", symmetries=symmetries)
    double.use_float64()
    priors, values = double.point_evaluate(boards, komi=7.5)
    assert not double.bf16 and priors.dtype == values.dtype == np.float32
    np.testing.assert_allclose(priors, single_priors, rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(values, single_values, rtol=1e-4, atol=1e-6)
    # The heads keep float64: only evaluate's answer is rounded to float32.
    x = torch.from_numpy(feat.extract(boards)).double()
    mask = torch.from_numpy(feat.legal_masks(boards, [2, 1]))
    logp, _, value = nm.symmetric_forward(double.model, x, mask, symmetries,
                                          torch.tensor([7.5, -7.5]))
    assert logp.dtype == value.dtype == torch.float64


def counted_value_head(model):
    """Return a list that gains an item each time model's value head runs."""
    calls = []
    head = model.value.forward
    model.value.forward = lambda *a: calls.append(1) or head(*a)
    return calls


def test_the_value_head_runs_only_when_asked():
    model = tiny()
    calls = counted_value_head(model)
    x = torch.from_numpy(feat.extract([Game(9).board]))
    assert model(x, value=False)[2] is None and calls == []
    assert model(x)[2].shape == (1,) and calls == [1]
    policy = nm.Policy(model=model, device="cpu", bf16="off", symmetries=8)
    policy.point_evaluate([Game(9).board], value=False)
    policy.point_priors([Game(9).board])
    policy.evaluate([Game(9).board], ownership=True)   # the trunk's ownership head
    assert calls == [1]
    policy.point_evaluate([Game(9).board])
    assert calls == [1, 1]


def test_the_ownership_of_the_value_head_runs_the_head():
    model = tiny(ownership=False, value_ownership=True)
    calls = counted_value_head(model)
    policy = nm.Policy(model=model, device="cpu", bf16="off")
    _, own = policy.evaluate([Game(9).board], ownership=True)
    assert own.shape == (1, 81) and calls == [1]


def test_weights_written_before_the_value_head_still_load(tmp_path):
    path = str(tmp_path / "old.pt")
    nm.save_model(tiny(value=False), path)
    payload = torch.load(path, weights_only=True)
    del payload["config"]["value"]
    torch.save(payload, path)
    model, _ = nm.load_model(path)
    assert model.config["value"] is False and model.value is None


def test_a_value_head_with_ownership_reads_its_own_ownership():
    model = tiny(ownership=False, value_ownership=True)
    x = torch.rand(2, 25, 9, 9)
    logp, own, value = model(x, komi=torch.tensor([-7.5, 7.5]))
    assert own.shape == (2, 81) and own.abs().max() <= 1 and value.shape == (2,)
    with torch.no_grad():       # a different ownership changes the value through its sum
        model.value.ownership.bias += 1.0
    assert not torch.allclose(model(x, komi=torch.tensor([-7.5, 7.5]))[2], value)


def test_a_value_head_gains_ownership_computing_the_same_value(tmp_path):
    old = tiny(ownership=False)
    x = torch.rand(3, 25, 9, 9)
    komi = torch.tensor([-7.5, 0.0, 7.5])
    config, state = nm.with_value_ownership(old.config, old.state_dict())
    grown = nm.PolicyNet(config).eval()
    missing, unexpected = grown.load_state_dict(state, strict=False)
    assert sorted(missing) == ["value.ownership.bias", "value.ownership.weight"]
    assert not unexpected
    torch.testing.assert_close(grown(x, komi=komi)[2], old(x, komi=komi)[2])
    assert grown(x, komi=komi)[1].shape == (3, 81)
    with pytest.raises(ValueError, match="value head"):
        nm.with_value_ownership(config, grown.state_dict())
    with pytest.raises(ValueError, match="value head"):
        nm.with_value_ownership(tiny(value=False).config, {})
    path = str(tmp_path / "grown.pt")
    nm.save_model(grown, path)
    assert nm.load_model(path)[0].config["value_ownership"] is True


def test_a_net_gains_the_ladder_planes_computing_what_it_did(tmp_path):
    old = tiny()
    x = torch.rand(3, 27, 9, 9)
    komi = torch.tensor([-7.5, 0.0, 7.5])
    config, state = nm.with_ladder_planes(old.config, old.state_dict())
    grown = nm.PolicyNet(config).eval()
    grown.load_state_dict(state, strict=True)
    for a, b in zip(grown(x, komi=komi), old(x[:, :25], komi=komi)):
        torch.testing.assert_close(a, b)
    with torch.no_grad():       # the new planes' weights reach the output once trained
        grown.trunk[0].weight[:, 25:] += 0.5
    assert not torch.allclose(grown(x, komi=komi)[0], old(x[:, :25], komi=komi)[0])
    with pytest.raises(ValueError, match="already"):
        nm.with_ladder_planes(config, state)
    path = str(tmp_path / "ladder.pt")
    nm.save_model(grown, path)
    assert nm.read_weights(path)["features"]["ladder"] is True
    policy = nm.Policy(path, device="cpu", bf16="off")
    assert policy.ladder and policy.evaluate([Game(9).board]).shape == (1, 81)


def test_weights_written_before_the_ladder_planes_still_load(tmp_path):
    path = str(tmp_path / "old.pt")
    nm.save_model(tiny(), path)
    payload = torch.load(path, weights_only=True)
    del payload["config"]["ladder"]
    torch.save(payload, path)
    model, _ = nm.load_model(path)
    assert model.config["ladder"] is False and model.trunk[0].weight.shape[1] == 25
