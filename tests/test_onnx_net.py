"""The network on ONNX Runtime answers as the torch module does, and the backend is chosen and
refused as nets.model.resolve_backend says."""
import threading

import numpy as np
import pytest
import torch

import gtp_main
from engine.game import Game
from nets import model as nm
from nets import onnx_net


def tiny(**overrides):
    torch.manual_seed(0)
    return nm.PolicyNet(nm.make_config("tiny", **overrides)).eval()


def position(size, moves):
    game = Game(size)
    for vertex in moves:
        game.play(game.to_play, game.parse_vertex(vertex))
    return game.board


BOARDS = {9: [position(9, ["E5", "C3", "G7"]), position(9, [])],
          19: [position(19, ["D4", "Q16", "C3", "R17", "D3"]), position(19, ["K10"])]}


@pytest.mark.parametrize("size", [9, 19])
@pytest.mark.parametrize("symmetries", [1, 8])
@pytest.mark.parametrize("overrides", [{}, {"ownership": False, "value_ownership": True},
                                       {"ownership": False}, {"value": False}])
def test_onnx_runtime_answers_as_torch(size, symmetries, overrides):
    model = tiny(**overrides)
    on_torch = nm.Policy(model=model, device="cpu", bf16="off", symmetries=symmetries)
    on_onnx = nm.Policy(model=model, device="cpu", bf16="off", symmetries=symmetries,
                        backend="onnx")
    assert (on_torch.backend, on_onnx.backend) == ("torch", "onnx")
    assert on_onnx.has_value == on_torch.has_value
    boards = BOARDS[size]
    for value in (True, False):
        expected = on_torch.evaluate(boards, ownership=True, komi=7.5, value=value)
        got = on_onnx.evaluate(boards, ownership=True, komi=7.5, value=value)
        for want, have in zip(expected, got):
            if want is None:
                assert have is None
            else:
                assert have.dtype == np.float32 and have.shape == want.shape
                np.testing.assert_allclose(have, want, rtol=1e-4, atol=1e-5)
    priors, values = on_onnx.point_evaluate(boards, komi=7.5)
    np.testing.assert_allclose(priors.sum(1), 1, rtol=1e-5)
    assert priors[0, boards[0].stones != 0].max() == 0
    assert (values is None) == (not on_onnx.has_value)


def test_the_onnx_net_skips_the_value_head_when_not_asked():
    net = onnx_net.OnnxNet(tiny(ownership=False, value_ownership=True))
    x = torch.zeros(2, net.net.trunk[0].in_channels, 9, 9)
    logp, own, value = net(x, value=False)
    assert logp.shape == (2, 1, 81) and own is None and value is None
    logp, own, value = net(x, komi=torch.tensor([7.5, -7.5]))
    assert own.shape == (2, 81) and value.shape == (2,) and value[0] != value[1]


def test_the_backend_is_chosen_by_the_device_and_bf16():
    cpu, cuda = torch.device("cpu"), torch.device("cuda")
    assert nm.resolve_backend("auto", cpu, False) == "onnx"
    assert nm.resolve_backend("auto", cpu, True) == "torch"
    assert nm.resolve_backend("auto", cuda, False) == "torch"
    assert nm.resolve_backend("torch", cpu, False) == "torch"
    assert nm.resolve_backend("onnx", cpu, True) == "onnx"
    with pytest.raises(ValueError, match="CPU"):
        nm.resolve_backend("onnx", cuda, False)
    with pytest.raises(ValueError, match="unknown network backend"):
        nm.resolve_backend("tensorrt", cpu, False)


def test_auto_falls_back_to_torch_without_onnx_runtime(monkeypatch):
    monkeypatch.setattr(onnx_net, "available", lambda: False)
    assert nm.resolve_backend("auto", torch.device("cpu"), False) == "torch"
    with pytest.raises(ValueError, match="pip install onnxruntime onnx"):
        nm.resolve_backend("onnx", torch.device("cpu"), False)


def test_onnx_turns_bf16_off_and_refuses_float64():
    policy = nm.Policy(model=tiny(), device="cpu", bf16="on", backend="onnx")
    assert not policy.bf16
    with pytest.raises(ValueError, match="torch backend"):
        policy.use_float64()


def test_the_engine_flag_picks_the_backend():
    parser = gtp_main.build_parser()
    assert parser.parse_args([]).net_backend == "auto"
    onnx = gtp_main.load_evaluator(parser.parse_args(["--device", "cpu", "--net-backend",
                                                      "onnx"]))
    on_torch = gtp_main.load_evaluator(parser.parse_args(["--device", "cpu", "--net-backend",
                                                          "torch"]))
    assert (onnx.backend, on_torch.backend) == ("onnx", "torch")
    for board in ([position(19, ["D4", "Q16"])], [position(13, ["D4", "K10", "C3"])]):
        for got, want in zip(onnx.point_evaluate(board, komi=7.5),
                             on_torch.point_evaluate(board, komi=7.5)):
            np.testing.assert_allclose(got, want, atol=1e-5)
    with pytest.raises(SystemExit):
        parser.parse_args(["--net-backend", "tensorrt"])


def test_threads_asking_at_once_share_one_export(monkeypatch):
    exports = []
    real = onnx_net.export
    monkeypatch.setattr(onnx_net, "export", lambda net, value: exports.append(value) or
                        real(net, value))
    net = onnx_net.OnnxNet(tiny())
    x = torch.zeros(1, net.net.trunk[0].in_channels, 9, 9)
    answers = []
    threads = [threading.Thread(target=lambda: answers.append(net(x)[2])) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert exports == [True] and len(answers) == 4
    assert all(torch.equal(answer, answers[0]) for answer in answers)


def test_the_policy_only_network_answers_alike_over_eight_symmetries():
    parse = gtp_main.build_parser().parse_args
    flags = ["--device", "cpu", "--policy-only"]
    onnx = gtp_main.load_evaluator(parse(flags + ["--net-backend", "onnx"]))
    on_torch = gtp_main.load_evaluator(parse(flags + ["--net-backend", "torch"]))
    assert onnx.symmetries == on_torch.symmetries == 8
    board = [position(19, ["D4", "Q16", "C17"])]
    np.testing.assert_allclose(onnx.point_priors(board), on_torch.point_priors(board),
                               atol=1e-5)


def test_a_network_onnx_runtime_cannot_run_is_run_by_torch_with_a_warning(monkeypatch,
                                                                            caplog):
    def broken(net, value):
        raise RuntimeError("no exporter here")

    monkeypatch.setattr(onnx_net, "export", broken)
    policy = nm.Policy(model=tiny(), device="cpu", bf16="off", backend="onnx")
    on_torch = nm.Policy(model=tiny(), device="cpu", bf16="off")
    with caplog.at_level("WARNING", logger="nets.onnx_net"):
        for _ in range(3):
            got = policy.point_evaluate(BOARDS[9], komi=7.5)
    want = on_torch.point_evaluate(BOARDS[9], komi=7.5)
    np.testing.assert_allclose(got[0], want[0], atol=1e-6)
    np.testing.assert_allclose(got[1], want[1], atol=1e-6)
    assert [r.getMessage() for r in caplog.records] == [
        "ONNX Runtime cannot run this network (RuntimeError: no exporter here); torch runs it"]


def test_a_float64_replica_stays_float64():
    policy = nm.Policy(model=tiny(), device="cpu", bf16="off")
    policy.use_float64()
    twin = policy.replica("cpu")
    assert twin.dtype == torch.float64
    assert twin.point_evaluate(BOARDS[9], komi=7.5)[1].dtype == np.float32
