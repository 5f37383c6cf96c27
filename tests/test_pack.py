"""The pack (nets.pack) and its batches (nets.replay, nets.pack_data): games read back as
nets.data reads them, rows equal to nets.data.SampleWriter's for the same positions and
symmetries, the same validation set, sources and splits kept apart, a stopped build resumed,
and training from a pack."""
import json
import os
import random

import numpy as np
import pytest
import torch

from engine import board as bd
from nets import data as nd
from nets import model as nm
from nets import pack as npk
from nets import pack_data as pdata
from nets import train as nt
from random_games import write_archive


@pytest.fixture(scope="module")
def archives(tmp_path_factory):
    root = tmp_path_factory.mktemp("archives")
    return [write_archive(root / "a.zip", 8, 0), write_archive(root / "b.zip", 6, 100)]


@pytest.fixture(scope="module")
def packed(archives, tmp_path_factory):
    """A pack of both archives with owner targets from 4 playouts (seed 1234, as
    validation_set's), and nets.data's Records of the same games with those targets."""
    out = str(tmp_path_factory.mktemp("pack") / "games.pack")
    npk.build(archives, out, runs=4, seed=1234, log=open(os.devnull, "w"))
    policy = nd.po.PolicyConfig().build()
    records = [r._replace(owner=nd.result_ownership(r, 4, policy, 1234))
               for r in nd.read_games(archives)]
    return out, records


def _record_key(r):
    return (r.name, r.size, r.points.tolist(), r.colors.tolist(), r.setup, r.winner, r.komi)


def test_a_pack_holds_the_games_as_nets_data_reads_them(archives, packed):
    path, records = packed
    pack = npk.load(path)
    assert len(pack) == len(records) == 11 + 9
    assert [_record_key(pack.record(g)) for g in range(len(pack))] == \
        [_record_key(r) for r in records]
    assert pack.sources == ["a.zip", "b.zip"] and pack.ownership_runs == 4
    assert pack.meta["stats"] == {"games": 20, "size": 2, "broken": 2, "illegal": 2}
    setup = pack.record(pack.names.index("setup0.sgf"))
    assert setup.setup == [(bd.BLACK, 4 * 21 + 4), (bd.BLACK, 16 * 21 + 16)]
    for g, r in enumerate(records):
        np.testing.assert_array_equal(pack.owner_target(g), r.owner)


def _sample_writer_rows(records, picks, heads, rank, edge, ladder=False):
    """Return SampleWriter's batch dict for (game, move, symmetry) picks of records."""
    writer = nd.SampleWriter(len(picks), 19, heads, rank, edge, ownership=True, value=True,
                             ladder=ladder)
    for row, (g, i, sym) in enumerate(picks):
        b = nd.new_game_board(records[g])
        nd._advance(b, records[g].points, records[g].colors, 0, i)
        writer.write(row, b, records[g], i, sym)
    return writer.batch()


def _assert_batches_equal(got, want):
    assert sorted(got) == sorted(want)
    for key in want:
        assert got[key].dtype == want[key].dtype, key
        np.testing.assert_array_equal(got[key], want[key], err_msg=key)


@pytest.mark.parametrize("rank, edge, heads, ladder", [(9, False, 3, False), (4, True, 1, False),
                                                      (9, False, 3, True), (9, True, 1, True)])
def test_replayed_rows_equal_sample_writer_rows(packed, rank, edge, heads, ladder):
    path, records = packed
    pack = npk.load(path)
    rng = random.Random(rank)
    picks = []
    for g, r in enumerate(records):
        moves = [i for i in range(len(r.points)) if r.points[i] != bd.PASS]
        picks += [(g, i, rng.randrange(8)) for i in rng.sample(moves, 12)]
        picks.append((g, moves[-1], rng.randrange(8)))   # the last move: heads past the end
    rng.shuffle(picks)
    want = _sample_writer_rows(records, picks, heads, rank, edge, ladder)
    got, = pdata.write_positions(pack, *zip(*picks), heads=heads, rank=rank, edge=edge,
                                 ownership=True, value=True, batch=len(picks), ladder=ladder)
    _assert_batches_equal(got, want)
    if ladder:
        # Both ladder planes are set somewhere, so the comparison covers them.
        assert got["x"].shape[1] == 27 + edge
        assert (got["x"][:, -2:].sum(axis=(0, 2, 3)) > 0).all()
    assert np.isnan(got["value"]).any() and np.isnan(got["owner"]).any()


def test_the_pool_replays_a_game_position_after_position(packed):
    # One slot and every position picked: the pool's rows are the game's positions in order,
    # then the next game's, as write_positions gives them.
    path, records = packed
    pack = npk.load(path)
    stream = pdata.pack_batches([path], batch=50, split="all", pool=1, sample_rate=1.0,
                                augment=False, ownership=True, value=True, ownership_runs=4,
                                seed=5)
    got = [next(stream) for _ in range(6)]
    order = np.random.default_rng(5).permutation(len(pack))
    picks = [(g, i) for g in order for i in range(pack.lengths[g])
             if pack.moves[pack.offsets[g] + i] != npk.PASS_CODE][:300]
    want = list(pdata.write_positions(pack, *zip(*picks), ownership=True, value=True, batch=50))
    for a, b in zip(got, want):
        _assert_batches_equal(a, b)


def test_pack_batches_mix_games_and_symmetries(packed):
    path, _ = packed
    stream = pdata.pack_batches([path], batch=64, pool=8, sample_rate=0.3, ownership=True,
                                value=True, ownership_runs=4, seed=1)
    for _ in range(4):
        b = next(stream)
        assert b["x"].shape == (64, 25, 19, 19) and b["targets"].shape == (64, 3)
        t = b["targets"][:, 0]
        assert (t >= 0).all() and b["mask"][np.arange(64), t].all()
        assert (b["x"][np.arange(64), 9].reshape(64, -1)[np.arange(64), t] == 1).all()
        assert set(np.unique(b["komi"])) == {-6.5, 6.5}


def test_the_validation_set_is_nets_data_s(archives, packed):
    path, _ = packed
    kwargs = dict(positions=300, heads=3, ownership=True, value=True, ownership_runs=4,
                  val_mod=3, batch=128, sample_rate=0.3)
    want = nd.validation_set(archives, **kwargs)
    got = pdata.pack_validation_set([path], **kwargs)
    assert [len(b["x"]) for b in got] == [len(b["x"]) for b in want]
    assert len(want) > 1
    for a, b in zip(got, want):
        _assert_batches_equal(a, b)


def test_sources_and_splits_stay_apart(packed):
    path, records = packed
    pack, games = pdata.select_games([path + "/b.zip"], "train", val_mod=3)
    names = [pack.names[g] for g in games]
    assert names == [r.name for r in records[11:] if nd.split_of(r.name, 3) == "train"]
    _, val = pdata.select_games([path + "/a.zip", path + "/b.zip"], "val", val_mod=3)
    assert not set(games) & set(val)
    with pytest.raises(npk.PackError, match="no source c.zip"):
        pdata.select_games([path + "/c.zip"], "train")
    with pytest.raises(npk.PackError, match="not both"):
        pdata.is_pack_input([path, "games.zip"])
    with pytest.raises(npk.PackError, match="give --ownership-runs 4"):
        next(pdata.pack_batches([path], ownership=True, ownership_runs=32))


def test_value_only_sources_teach_no_moves_and_come_as_often_as_asked(packed):
    path, _ = packed
    pack = npk.load(path)
    games = np.arange(len(pack))
    moves = np.full(len(pack), 3)
    plain = list(pdata.write_positions(pack, games, moves, value=True, ownership=True))
    only_b = list(pdata.write_positions(pack, games, moves, value=True, ownership=True,
                                        value_only=("b.zip",)))
    from_b = pack.source == pack.sources.index("b.zip")
    assert from_b.any() and (~from_b).any()
    for a, b in zip(plain, only_b):
        rows = from_b[:len(a["targets"])]
        assert (b["targets"][rows] == -1).all()
        np.testing.assert_array_equal(b["targets"][~rows], a["targets"][~rows])
        for key in ("x", "mask", "value", "komi", "owner"):
            np.testing.assert_array_equal(b[key], a[key])
    stream = pdata.pack_batches([path], batch=32, pool=4, sample_rate=0.3, value=True,
                                value_only=("a.zip", "b.zip"), value_only_repeat=2)
    batch = next(stream)
    assert (batch["targets"] == -1).all() and np.isin(batch["value"][np.isfinite(
        batch["value"])], (-1.0, 1.0)).all()
    taught = np.array([True, False, True, False])
    assert pdata.repeat_untaught(np.arange(4), taught, 3).tolist() == [0, 1, 2, 3, 1, 3, 1, 3]
    assert pdata.repeat_untaught(np.arange(4), taught, 1).tolist() == [0, 1, 2, 3]
    with pytest.raises(npk.PackError, match="no source c.zip"):
        next(pdata.pack_batches([path], value=True, value_only=("c.zip",)))
    with pytest.raises(ValueError, match="under 1"):
        next(pdata.pack_batches([path], value=True, value_only=("b.zip",),
                                value_only_repeat=0))


def test_a_pack_of_a_pack_keeps_its_targets(packed, tmp_path):
    path, _ = packed
    out = str(tmp_path / "val.pack")
    npk.build([path + "/b.zip"], out, runs=4, seed=1234, split="val", val_mod=3,
              log=open(os.devnull, "w"))
    whole, part = npk.load(path), npk.load(out)
    games = whole.select("b.zip", "val", val_mod=3)
    assert part.names == [whole.names[g] for g in games] and part.sources == ["b.zip"]
    np.testing.assert_array_equal(part.owner_sum, whole.owner_sum[games])
    np.testing.assert_array_equal(part.moves, np.concatenate(
        [whole.moves[whole.offsets[g]:whole.offsets[g + 1]] for g in games]))


def test_a_stopped_build_resumes_from_its_parts(archives, tmp_path, monkeypatch):
    monkeypatch.setattr(npk, "UNIT_GAMES", 4)
    out = str(tmp_path / "p.pack")

    def stop(*args):
        raise KeyboardInterrupt

    quiet = open(os.devnull, "w")
    with monkeypatch.context() as m:
        m.setattr(npk, "_assemble", stop)
        with pytest.raises(KeyboardInterrupt):
            npk.build(archives, out, runs=0, log=quiet)
    assert len(os.listdir(out + ".parts")) == len(npk.plan_units(archives)) > 2
    assert not os.path.exists(out)
    built = []
    monkeypatch.setattr(npk, "_build_unit", built.append)
    npk.build(archives, out, runs=0, log=quiet)
    assert built == [] and not os.path.exists(out + ".parts")
    pack = npk.load(out)
    assert len(pack) == 20 and pack.ownership_runs == 0
    assert set(np.unique(pack.owner_sum)) <= {-1, 0, 1} and (pack.owner_runs == 1).all()


def test_the_command_line_builds_a_pack_and_refuses_bad_input(archives, tmp_path, capsys):
    out = str(tmp_path / "x.pack")
    npk.main(["--data", archives[0], "--out", out, "--no-ownership", "--split", "train"])
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["games"] == len(npk.load(out)) and summary["ownership"] is None
    assert summary["bytes"] == os.path.getsize(out)
    with pytest.raises(SystemExit, match="ends in .pack"):
        npk.main(["--data", archives[0], "--out", str(tmp_path / "x.zip")])
    with pytest.raises(SystemExit, match="missing.zip"):
        npk.main(["--data", str(tmp_path / "missing.zip"), "--out", out])
    (tmp_path / "bad.pack").write_bytes(b"not a pack")
    with pytest.raises(npk.PackError, match="cannot read pack"):
        npk.load(str(tmp_path / "bad.pack"))


def test_training_reads_a_pack(packed, tmp_path):
    path, _ = packed
    run = str(tmp_path / "run")
    common = ["--data", path + "/a.zip", "--val-data", path + "/b.zip", "--config", "tiny",
              "--value", "--value-ownership", "--ownership-runs", "4", "--out",
              str(tmp_path / "t.pt"), "--run-dir", run, "--batch", "16", "--workers", "0",
              "--threads", "1", "--val-positions", "40", "--val-mod", "3", "--pool", "4",
              "--bf16", "off", "--warmup", "1", "--log-every", "1"]
    nt.main(common + ["--steps", "3"])
    ckpt = torch.load(os.path.join(run, "ckpt.pt"), weights_only=True)
    assert ckpt["step"] == 3 and ckpt["samples"] == 48
    lines = [json.loads(line) for line in open(os.path.join(run, "log.jsonl"))]
    assert any("val_owner_mse" in r for r in lines)
    with pytest.raises(SystemExit, match="give --ownership-runs 4"):
        nt.main([a if a != "4" else "8" for a in common] + ["--steps", "1"])


def test_training_takes_value_only_sources_from_a_pack(archives, packed, tmp_path):
    path, _ = packed
    run = str(tmp_path / "run")
    common = ["--config", "tiny", "--value", "--ownership-runs", "4", "--out",
              str(tmp_path / "t.pt"), "--run-dir", run,
              "--batch", "16", "--workers", "0", "--threads", "1", "--val-positions", "40",
              "--val-mod", "3", "--pool", "4", "--bf16", "off", "--warmup", "1"]
    nt.main(["--data", path, "--value-only", "b.zip", "--value-only-repeat", "3", *common,
             "--steps", "2"])
    last = [json.loads(line) for line in open(os.path.join(run, "log.jsonl"))][-1]
    # The value-only rows (no move target, point 0 read in its place) leave the NLL finite.
    assert last["val_positions"] > 0 and np.isfinite(last["val_nll"])
    assert "val_value_mse" in last
    model, meta = nm.load_model(str(tmp_path / "t.pt"))
    assert (meta["value_only"], meta["value_only_repeat"]) == (["b.zip"], 3)
    # Validation elsewhere: SGF games, or a pack path without the value-only source.
    for val_data in (archives[:1], [path + "/a.zip"]):
        nt.main(["--data", path, "--val-data", *val_data, "--value-only", "b.zip", *common,
                 "--steps", "1"])
    with pytest.raises(SystemExit, match="teach no moves"):
        nt.main(["--data", path, "--val-data", path + "/b.zip", "--value-only", "b.zip",
                 *common, "--steps", "1"])
    with pytest.raises(SystemExit, match="pack paths"):
        nt.main(["--data", *archives, "--value-only", "b.zip", *common, "--steps", "1"])
    with pytest.raises(SystemExit):
        nt.main(["--data", path, "--value-only", "b.zip", "--value-only-repeat", "0", *common])
    with pytest.raises(SystemExit, match="no source c.zip"):
        nt.main(["--data", path, "--value-only", "c.zip", *common, "--steps", "1"])
    with pytest.raises(SystemExit, match="no value head"):
        nt.main(["--data", path, "--value-only", "b.zip",
                 *[a if a != "tiny" else "cpu" for a in common if a != "--value"],
                 "--steps", "1"])


def test_a_pack_is_read_once_while_its_file_stays_as_it_was(archives, tmp_path):
    out = str(tmp_path / "once.pack")
    npk.build(archives[:1], out, runs=None, log=open(os.devnull, "w"))
    first = npk.load(out)
    assert npk.load(out) is first
    npk.build(archives, out, runs=None, log=open(os.devnull, "w"))
    assert npk.load(out) is not first and len(npk.load(out)) > len(first)
