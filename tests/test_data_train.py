"""SGF reading from directories and archives, the sample stream, the split, and a training smoke
test with checkpoint and resume."""
import io
import json
import os
import random
import subprocess
import sys
import tarfile
import zipfile

import numpy as np
import pytest
import torch

from engine import board as bd
from engine.game import Game
from nets import data as nd
from nets import model as nm
from nets import repack as nr
from nets import train as nt

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def random_moves(size, moves, seed):
    """Return [(color, x, y) or (color, None, None)] of a random legal game with a pass in it."""
    rng = random.Random(seed)
    game = Game(size)
    out = []
    for i in range(moves):
        color = game.to_play
        if i == 20:
            game.play(color, bd.PASS)
            out.append((color, None, None))
            continue
        p = rng.choice(game.legal_moves(color))
        game.play(color, p)
        out.append((color, *game.xy(p)))
    return out


def sgf_text(moves, size=19):
    """Return an SGF game; SGF rows count from the top."""
    body = "".join(f";{'B' if c == bd.BLACK else 'W'}[" +
                   ("" if x is None else chr(97 + x) + chr(97 + size - 1 - y)) + "]"
                   for c, x, y in moves)
    return f"(;FF[4]GM[1]SZ[{size}]KM[6.5]{body})"


GOOD = [sgf_text(random_moves(19, 60, seed)) for seed in range(6)]
NINE = sgf_text(random_moves(9, 30, 99), size=9)
BROKEN = "(;FF[4]GM[1]SZ[19];B[dd];W[pp"
ILLEGAL = "(;FF[4]GM[1]SZ[19];B[dd];W[dd])"  # second stone on an occupied point


def write_corpus(root):
    """Write 6 good games (2 as a two-game collection), a 9x9 game, a broken and an illegal one."""
    os.makedirs(root, exist_ok=True)
    files = {f"g{i}.sgf": GOOD[i] for i in range(4)}
    files["pair.sgf"] = GOOD[4] + "\n" + GOOD[5]
    files["nine.sgf"] = NINE
    files["broken.sgf"] = BROKEN
    files["illegal.sgf"] = ILLEGAL
    for name, text in files.items():
        with open(os.path.join(root, name), "w") as f:
            f.write(text)
    return files


@pytest.fixture
def corpus(tmp_path):
    files = write_corpus(str(tmp_path / "dir"))
    with zipfile.ZipFile(tmp_path / "games.zip", "w") as z:
        for name, text in files.items():
            z.writestr(f"sub/{name}", text)
    with tarfile.open(tmp_path / "games.tar.gz", "w:gz") as t:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"sub/{name}")
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return tmp_path


@pytest.mark.parametrize("source", ["dir", "games.zip", "games.tar.gz"])
def test_reader_counts_skipped_games(corpus, source):
    stats = nd.Stats()
    records = list(nd.read_games([str(corpus / source)], stats=stats))
    assert len(records) == 6
    assert stats == {"games": 6, "size": 1, "broken": 1, "illegal": 1}
    assert sorted(r.name for r in records) == ["g0.sgf", "g1.sgf", "g2.sgf", "g3.sgf",
                                               "pair.sgf#0", "pair.sgf#1"]


def test_reader_maps_sgf_points_to_engine_points(corpus):
    record = next(r for r in nd.read_games([str(corpus / "dir")]) if r.name == "g0.sgf")
    moves = random_moves(19, 60, 0)
    game = Game(19)
    for (c, x, y), p, color in zip(moves, record.points, record.colors):
        assert color == c
        assert p == (bd.PASS if x is None else game.point(x, y))


def test_reader_survives_a_corrupt_archive(tmp_path):
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    stats = nd.Stats()
    assert list(nd.read_games([str(bad)], stats=stats)) == []
    assert stats["broken"] == 1


def _record_key(r):
    return (r.name, r.size, r.points.tolist(), r.colors.tolist(), r.setup, r.owner.tolist(),
            r.winner, r.komi)


def test_repacked_games_read_as_the_originals(corpus, tmp_path):
    # A game with a result, komi, setup stones, player names and a comment, beside the corpus.
    extra = ("(;FF[4]GM[1]SZ[19]KM[0.5]HA[2]AB[dd][pp]PB[someone]PW[other]DT[2011-01-01]"
             "RE[W+3.5]C[a comment];W[qd]C[move comment];B[dp];W[];B[pd])")
    with zipfile.ZipFile(corpus / "games.zip", "a") as z:
        z.writestr("sub/extra.sgf", extra)
    counts = nr.repack([str(corpus / "games.zip")], str(tmp_path / "packed"))
    assert counts == {"files": 8, "unparsed": 1}  # broken.sgf does not parse
    folder = tmp_path / "packed" / "games"
    before, after = nd.Stats(), nd.Stats()
    original = sorted(map(_record_key, nd.read_games([str(corpus / "games.zip")], stats=before)))
    packed = sorted(map(_record_key, nd.read_games([str(folder)], stats=after)))
    assert packed == original and len(packed) == 7
    assert before["broken"] == 1 and dict(after) == {k: v for k, v in before.items()
                                                     if k != "broken"}
    text = (folder / "extra.sgf").read_bytes()
    assert b"PB[" not in text and b"C[" not in text and b"DT[" not in text
    assert b"RE[W+3.5]" in text and b"KM[0.5]" in text and b"AB[dd][pp]" in text
    assert len(text) < len(extra)
    with pytest.raises(SystemExit, match="no such input"):
        nr.main(["--out", str(tmp_path / "other"), str(tmp_path / "missing.zip")])


def test_all_positions_targets_are_the_next_moves(corpus):
    records = [r for r in nd.read_games([str(corpus / "dir")]) if r.name == "g1.sgf"]
    batches = list(nd.all_positions(records, batch=16))
    targets = np.concatenate([b["targets"] for b in batches])
    masks = np.concatenate([b["mask"] for b in batches])
    assert len(targets) == 59  # 60 moves, one of them a pass
    moves = [m for m in random_moves(19, 60, 1)]
    idx = [-1 if x is None else y * 19 + x for _, x, y in moves]
    assert list(targets[:, 0]) == [i for i in idx if i >= 0]
    assert masks[np.arange(len(targets)), targets[:, 0]].all()
    # Head 2 is the reply; the reply after move 19 is the pass at 20: no target.
    assert targets[19, 1] == -1 and targets[18, 2] == -1
    assert targets[0, 1] == idx[1] and targets[0, 2] == idx[2]


def test_sample_stream_shapes_legality_and_augmentation(corpus):
    gen = nd.sample_batches([str(corpus / "games.zip")], batch=32, pool=4, sample_rate=0.5,
                            ownership=True, seed=3)
    for _ in range(5):
        b = next(gen)
        assert b["x"].shape == (32, 25, 19, 19) and b["x"].dtype == np.float32
        assert b["targets"].shape == (32, 3) and (b["targets"][:, 0] >= 0).all()
        assert b["mask"][np.arange(32), b["targets"][:, 0]].all()
        assert b["owner"].shape == (32, 361) and set(np.unique(b["owner"])) <= {-1, 0, 1}
        # The target point is empty in the input planes (plane 9 = empty).
        t = b["targets"][:, 0]
        assert (b["x"][np.arange(32), 9].reshape(32, -1)[np.arange(32), t] == 1).all()


def test_validation_games_never_reach_training(corpus):
    names = {r.name for r in nd.read_games([str(corpus / "dir")])}
    val = {n for n in names if nd.split_of(n, val_mod=3) == "val"}
    assert val and val != names
    stream = nd.game_stream([str(corpus / "dir")], "train", random.Random(0), val_mod=3)
    seen = {next(stream).name for _ in range(40)}
    assert seen == names - val
    vset = nd.validation_set([str(corpus / "dir")], positions=50, sample_rate=1.0, val_mod=3)
    assert sum(len(b["x"]) for b in vset) == 50


def test_training_smoke_checkpoint_and_resume(corpus, tmp_path):
    out = str(tmp_path / "w" / "tiny.pt")
    run = str(tmp_path / "run")
    common = ["--data", str(corpus / "games.tar.gz"), "--config", "tiny", "--out", out,
              "--run-dir", run, "--batch", "16", "--workers", "0", "--threads", "1",
              "--val-positions", "64", "--ckpt-minutes", "0", "--val-minutes", "0",
              "--log-every", "2", "--warmup", "2", "--bf16", "off", "--pool", "4",
              "--val-mod", "3"]
    nt.main(common + ["--steps", "4"])
    ckpt = torch.load(os.path.join(run, "ckpt.pt"), weights_only=True)
    assert ckpt["step"] == 4 and ckpt["samples"] == 64
    model, meta = nm.load_model(out)
    assert meta["step"] >= 1 and 0 <= meta["val_top1"] <= 1
    nt.main(common + ["--steps", "6", "--resume"])
    ckpt = torch.load(os.path.join(run, "ckpt.pt"), weights_only=True)
    assert ckpt["step"] == 6 and ckpt["samples"] == 96
    lines = [json.loads(line) for line in open(os.path.join(run, "log.jsonl"))]
    assert any("val_top1" in r for r in lines) and any("loss" in r for r in lines)
    assert max(r["step"] for r in lines) == 6


def test_two_ranks_under_torchrun_train_in_step(corpus, tmp_path):
    """DistributedDataParallel on the CPU (gloo): two ranks started by torchrun share each step's
    gradients, so they end with the same parameters, and the checkpoint counts both ranks'
    samples."""
    out = str(tmp_path / "w" / "tiny.pt")
    run = tmp_path / "run"
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone",
               "--nproc_per_node", "2", "-m", "nets.train",
               "--data", str(corpus / "games.zip"), "--config", "tiny", "--out", out,
               "--run-dir", str(run), "--batch", "16", "--workers", "0", "--threads", "1",
               "--val-positions", "64", "--ckpt-minutes", "0", "--val-minutes", "0",
               "--log-every", "1", "--warmup", "1", "--bf16", "off", "--pool", "4",
               "--val-mod", "3", "--device", "cpu", "--steps", "3"]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    ckpt = torch.load(run / "ckpt.pt", weights_only=True)
    assert ckpt["step"] == 3 and ckpt["samples"] == 3 * 16 * 2
    records = [json.loads(line) for line in open(run / "log.jsonl")]
    assert {"step": 3, "ranks_in_step": True} in records


def test_one_tar_archive_for_two_readers_is_a_clear_error(corpus):
    """A tar archive cannot be split between readers: with two of them one would get nothing."""
    games = nd.game_stream([str(corpus / "games.tar.gz")], "train", random.Random(1),
                           shard=(1, 2))
    with pytest.raises(ValueError, match="tar archive is read whole"):
        next(games)


def test_a_time_budget_runs_the_schedule_over_time_and_stops(corpus, tmp_path):
    args = nt.parse_args(["--data", "x", "--out", "o.pt", "--steps", "1000", "--minutes", "2",
                          "--warmup", "1", "--lr", "1.0"])
    assert nt.progress_of(args, 10, 60.0) == 0.5
    assert nt.progress_of(args, 900, 60.0) == 0.9
    assert nt.lr_at(args, 10, 1.0, 60.0) == pytest.approx(0.01 + 0.99 * 0.5)
    assert nt.lr_at(args, 10, 1.0, 500.0) == pytest.approx(0.01)
    run = str(tmp_path / "run")
    nt.main(_quick_training_args(corpus) + ["--config", "tiny", "--out", str(tmp_path / "t.pt"),
                                            "--run-dir", run, "--steps", "100000",
                                            "--minutes", "0.002"])
    ckpt = torch.load(os.path.join(run, "ckpt.pt"), weights_only=True)
    assert 1 <= ckpt["step"] < 100000 and ckpt["wall"] >= 0.12


def _quick_training_args(corpus):
    """Return nets.train flags for a few-step run on the test corpus, without --config."""
    return ["--data", str(corpus / "games.tar.gz"), "--batch", "16", "--workers", "0",
            "--threads", "1", "--val-positions", "64", "--ckpt-minutes", "0",
            "--val-minutes", "0", "--log-every", "2", "--warmup", "2", "--bf16", "off",
            "--pool", "4", "--val-mod", "3"]


def _trained_tiny_base(corpus, tmp_path):
    """Return (the path of a tiny network trained 2 steps on the test corpus, the quick
    training flags), the start of the --init tests."""
    base = str(tmp_path / "base.pt")
    common = _quick_training_args(corpus)
    nt.main(common + ["--config", "tiny", "--out", base, "--run-dir", str(tmp_path / "base"),
                      "--steps", "2"])
    return base, common


def test_training_from_init_weights_starts_from_that_network(corpus, tmp_path):
    base = str(tmp_path / "base.pt")
    common = _quick_training_args(corpus)
    nt.main(common + ["--config", "tiny", "--width", "8", "--out", base,
                      "--run-dir", str(tmp_path / "base"), "--steps", "2"])
    tuned = str(tmp_path / "tuned.pt")
    # The config comes from the init file: --config cpu here would otherwise build another net.
    nt.main(common + ["--config", "cpu", "--init", base, "--out", tuned,
                      "--run-dir", str(tmp_path / "tuned"), "--steps", "2", "--lr", "0"])
    base_model, _ = nm.load_model(base)
    tuned_model, meta = nm.load_model(tuned)
    assert tuned_model.config == base_model.config
    for (name, a), b in zip(base_model.state_dict().items(), tuned_model.state_dict().values()):
        if "running" not in name and "num_batches" not in name:
            assert torch.equal(a, b), name
    assert meta["init"] == "base.pt"
    ckpt = torch.load(str(tmp_path / "tuned" / "ckpt.pt"), weights_only=True)
    base_samples = nm.read_weights(base)["meta"]["samples"]
    assert ckpt["samples"] == base_samples + 32 and ckpt["init"] == "base.pt"
    with pytest.raises(SystemExit, match="exclude"):
        nt.main(common + ["--init", base, "--resume", "--out", tuned,
                          "--run-dir", str(tmp_path / "tuned"), "--steps", "4"])
    with pytest.raises(SystemExit, match="--init"):
        nt.main(common + ["--init", str(tmp_path / "missing.pt"), "--out", tuned,
                          "--run-dir", str(tmp_path / "other"), "--steps", "2"])


def test_training_from_init_weights_can_deepen_the_network(corpus, tmp_path):
    base, common = _trained_tiny_base(corpus, tmp_path)
    deep = str(tmp_path / "deep.pt")
    nt.main(common + ["--init", base, "--depth", "3", "--out", deep,
                      "--run-dir", str(tmp_path / "deep"), "--steps", "2", "--lr", "0"])
    base_model, _ = nm.load_model(base)
    deep_model, meta = nm.load_model(deep)
    assert base_model.config["depth"] == 1 and deep_model.config["depth"] == 3
    assert meta["init"] == "base.pt"
    with pytest.raises(SystemExit, match="only --depth, --width"):
        nt.main(common + ["--init", base, "--heads", "2", "--out", deep,
                          "--run-dir", str(tmp_path / "heads"), "--steps", "2"])
    with pytest.raises(SystemExit, match="cannot deepen"):
        nt.main(common + ["--init", deep, "--depth", "2", "--out", base,
                          "--run-dir", str(tmp_path / "shallow"), "--steps", "2"])


def test_training_from_init_weights_can_add_the_ladder_planes(corpus, tmp_path):
    base, common = _trained_tiny_base(corpus, tmp_path)
    grown = str(tmp_path / "ladder.pt")
    nt.main(common + ["--init", base, "--ladder", "--out", grown,
                      "--run-dir", str(tmp_path / "ladder"), "--steps", "2", "--lr", "0"])
    base_model, _ = nm.load_model(base)
    ladder_model, meta = nm.load_model(grown)
    assert ladder_model.config["ladder"] and not base_model.config["ladder"]
    first = ladder_model.trunk[0].weight
    assert first.shape[1] == 27 and not first[:, 25:].any()
    torch.testing.assert_close(first[:, :25], base_model.trunk[0].weight)
    assert meta["init"] == "base.pt"


def test_ladder_only_training_moves_the_ladder_weights_alone(corpus, tmp_path):
    base, common = _trained_tiny_base(corpus, tmp_path)
    grown = str(tmp_path / "ladder.pt")
    nt.main(common + ["--init", base, "--ladder", "--ladder-only", "--out", grown,
                      "--run-dir", str(tmp_path / "ladder"), "--steps", "3", "--lr", "0.5",
                      "--warmup", "0"])
    before = nm.read_weights(base)["state_dict"]
    after = nm.read_weights(grown)["state_dict"]
    for name, tensor in after.items():
        if name == "trunk.0.weight":
            torch.testing.assert_close(tensor[:, :25], before[name], rtol=0, atol=0)
            assert tensor[:, 25:].any()
        else:
            torch.testing.assert_close(tensor, before[name], rtol=0, atol=0, msg=name)
    with pytest.raises(SystemExit, match="--ladder-only"):
        nt.main(common + ["--init", base, "--ladder-only", "--out", grown,
                          "--run-dir", str(tmp_path / "no_ladder"), "--steps", "1"])


def test_training_from_init_weights_can_widen_the_network_and_its_copies_part(corpus, tmp_path):
    base, common = _trained_tiny_base(corpus, tmp_path)
    wide = str(tmp_path / "wide.pt")
    nt.main(common + ["--init", base, "--width", "12", "--depth", "2", "--out", wide,
                      "--run-dir", str(tmp_path / "wide"), "--steps", "2", "--lr", "0.1",
                      "--warmup", "0", "--weight-decay", "0"])
    wide_model, meta = nm.load_model(wide)
    assert (wide_model.config["first_width"], wide_model.config["width"]) == (12, 12)
    assert wide_model.config["depth"] == 2 and meta["init"] == "base.pt"
    # Each new channel started as a copy of an old one (train seeds widened with --seed, 0);
    # one that trained (a channel dead on the data gets no gradient) is now a channel of its
    # own: under even shares it would have stayed a copy but for rounding.
    payload = nm.read_weights(base)
    _, start = nm.widened(payload["config"], payload["state_dict"], 12, seed=0, split="random")
    started, trained = start["trunk.0.weight"], wide_model.trunk[0].weight.detach()
    moved = [new for new in range(8, 12) if not torch.equal(trained[new], started[new])]
    assert moved
    for new in moved:
        source = next(old for old in range(8) if torch.equal(started[new], started[old]))
        apart = (trained[new] - trained[source]).abs().max()
        assert apart > 0.1 * (trained[new] - started[new]).abs().max()
    with pytest.raises(SystemExit, match="cannot narrow"):
        nt.main(common + ["--init", base, "--width", "4", "--out", str(tmp_path / "narrow.pt"),
                          "--run-dir", str(tmp_path / "narrow"), "--steps", "2"])


@pytest.mark.parametrize("result, winner", [
    ("B+R", bd.BLACK), ("W+3.5", bd.WHITE), ("B+Resign", bd.BLACK), ("w+r", bd.WHITE),
    ("B+", bd.BLACK), ("B+T", 0), ("W+Time", 0), ("W+F", 0), ("B+Forfeit", 0), ("0", 0),
    ("Draw", 0), ("Void", 0), ("?", 0), ("", 0), (None, 0), ("B+x", 0)])
def test_winner_of_a_result(result, winner):
    assert nd.winner_of(result) == winner


def test_value_targets_are_the_winner_seen_from_the_side_to_move():
    won_by_white = GOOD[0].replace("KM[6.5]", "KM[6.5]RE[W+R]")
    record, = nd.parse_sgf_bytes("w.sgf", won_by_white.encode())
    assert record.winner == bd.WHITE and record.komi == 6.5
    writer = nd.SampleWriter(3, value=True)
    b = nd.new_game_board(record)
    writer.write(0, b, record, 0, 0)        # black to move
    bd.play(b, record.points[0], record.colors[0])
    writer.write(1, b, record, 1, 3)        # white to move
    on_time, = nd.parse_sgf_bytes("t.sgf", GOOD[0].replace("KM[6.5]", "KM[6.5]RE[W+T]").encode())
    writer.write(2, nd.new_game_board(on_time), on_time, 0, 0)
    batch = writer.batch()
    assert batch["value"][:2].tolist() == [-1.0, 1.0] and np.isnan(batch["value"][2])
    assert batch["komi"].tolist() == [-6.5, 6.5, -6.5]


def _two_walls(result):
    """Return a 9x9 record: a black wall on column D, a white one on column F, column E open,
    komi 0, the given RE (or none)."""
    moves = "".join(f";B[d{r}];W[f{r}]" for r in "abcdefghi")
    re = f"RE[{result}]" if result else ""
    record, = nd.parse_sgf_bytes("walls.sgf", f"(;FF[4]GM[1]SZ[9]KM[0]{re}{moves})".encode(),
                                 size=9)
    return record


def test_ownership_targets_come_from_playouts_that_the_winner_won():
    policy = nd.po.PolicyConfig().build()
    # 128 runs, of which the winner's are kept: with 32, about 11 kept runs made the
    # loser's side mean a draw of a handful of games.
    black = nd.result_ownership(_two_walls("B+R"), 128, policy).reshape(9, 9)
    white = nd.result_ownership(_two_walls("W+R"), 128, policy).reshape(9, 9)
    assert black.dtype == np.float32 and black.min() >= -1 and black.max() <= 1
    for owner in (black, white):   # each wall's side is mostly its own
        assert owner[:, :4].mean() > 0.5 and owner[:, 5:].mean() < -0.5
    # Komi 0: every kept run's margin favours the winner, and so does their mean.
    assert black.sum() > 0 > white.sum()


def test_ownership_targets_are_missing_without_a_winner():
    policy = nd.po.PolicyConfig().build()
    assert np.isnan(nd.result_ownership(_two_walls(None), 8, policy)).all()
    assert np.isnan(nd.result_ownership(_two_walls("B+T"), 8, policy)).all()


def test_training_a_value_head_with_ownership_from_playouts(tmp_path):
    common, base, valued = _value_training(tmp_path)
    nt.main(common + ["--init", base, "--value", "--out", valued, "--run-dir",
                      str(tmp_path / "v"), "--steps", "2"])
    grown = str(tmp_path / "grown.pt")
    nt.main(common + ["--init", valued, "--value", "--value-ownership", "--freeze-trunk",
                      "--ownership-runs", "4", "--optimizer", "adam", "--lr", "0.01", "--out",
                      grown, "--run-dir", str(tmp_path / "g"), "--steps", "3"])
    before, _ = nm.load_model(valued)
    after, meta = nm.load_model(grown)
    assert after.config["value_ownership"] is True and meta["val_owner_mse"] >= 0
    for name, tensor in before.state_dict().items():
        if not name.startswith("value."):
            assert torch.equal(tensor, after.state_dict()[name]), name
    assert not torch.equal(before.state_dict()["value.conv.weight"],
                           after.state_dict()["value.conv.weight"])
    with pytest.raises(SystemExit, match="--value-ownership"):
        nt.main(common + ["--init", base, "--value-ownership", "--out", grown,
                          "--run-dir", str(tmp_path / "bad"), "--steps", "1"])


def _value_training(tmp_path):
    """Write 4 games with results and a tiny net without a value head; return (quick training
    flags on those games, the net's path, an output path)."""
    root = tmp_path / "results"
    root.mkdir()
    for i, text in enumerate(GOOD[:4]):
        (root / f"r{i}.sgf").write_text(text.replace("KM[6.5]", f"KM[6.5]RE[{'BW'[i % 2]}+R]"))
    base = str(tmp_path / "base.pt")
    nm.save_model(nm.PolicyNet(nm.make_config("tiny", value=False)), base)
    flags = ["--data", str(root), "--batch", "16", "--workers", "0", "--threads", "1",
             "--val-positions", "64", "--ckpt-minutes", "0", "--val-minutes", "0",
             "--log-every", "2", "--warmup", "2", "--bf16", "off", "--pool", "4",
             "--val-mod", "3"]
    return flags, base, str(tmp_path / "valued.pt")


def test_training_adds_a_value_head_to_a_net_without_one(tmp_path):
    common, base, valued = _value_training(tmp_path)
    nt.main(common + ["--init", base, "--value", "--out", valued,
                      "--run-dir", str(tmp_path / "run"), "--steps", "2"])
    model, meta = nm.load_model(valued)
    assert model.config["value"] is True and model.value is not None
    assert 0 <= meta["val_value_acc"] <= 1 and meta["val_value_mse"] >= 0
    assert meta["val_loss"] == pytest.approx(meta["val_nll"] + meta["val_value_mse"])


def test_a_value_head_trained_on_a_frozen_trunk_leaves_the_policy_as_it_was(tmp_path):
    common, base, valued = _value_training(tmp_path)
    common += ["--lr", "0.01"]
    nt.main(common + ["--init", base, "--value", "--value-convs", "2", "--freeze-trunk",
                      "--optimizer", "adam", "--out", valued, "--run-dir", str(tmp_path / "run"),
                      "--steps", "3"])
    before, _ = nm.load_model(base)
    after, _ = nm.load_model(valued)
    assert after.config["value_convs"] == 2 and len(after.value.tower) == 6
    for name, tensor in before.state_dict().items():
        assert torch.equal(tensor, after.state_dict()[name]), name
    fresh = nm.PolicyNet(after.config).state_dict()
    assert any(not torch.equal(fresh[k], v) for k, v in after.state_dict().items()
               if k.startswith("value."))
    with pytest.raises(SystemExit, match="--freeze-trunk"):
        nt.main(common + ["--config", "tiny", "--freeze-trunk", "--out", valued,
                          "--run-dir", str(tmp_path / "bad"), "--steps", "1"])


def test_accuracy_benchmark_scores_a_weights_file(corpus, tmp_path, capsys):
    from benchmarks.knowledge import accuracy
    weights = str(tmp_path / "tiny.pt")
    nt.main(_quick_training_args(corpus) + ["--config", "tiny", "--out", weights,
                                            "--run-dir", str(tmp_path / "run"), "--steps", "2"])
    capsys.readouterr()
    for symmetries in ("1", "8"):
        accuracy.main(["--data", str(corpus / "games.tar.gz"), "--weights", weights,
                       "--threads", "1", "--symmetries", symmetries])
        result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert result["positions"] > 0 and 0 <= result["top1"] <= result["top5"] <= 1
        assert result["nll"] > 0
        assert result["capture_positions"] + result["escape_positions"] > 0
        assert {"capture_top1", "escape_prior", "escape_played"} <= set(result)


def test_ladder_counts_of_the_accuracy_benchmark():
    from benchmarks.knowledge.accuracy import ladder_counts
    probs = torch.tensor([[0.7, 0.2, 0.1, 0.0], [0.1, 0.1, 0.2, 0.6], [0.25] * 4])
    planes = torch.zeros(3, 3, 4)
    planes[0, 1, 0] = 1         # position 0: the net's first choice is a futile escape
    planes[1, 1, 1] = planes[1, 1, 2] = 1   # position 1: two of them, the player took one
    planes[2, 0, 3] = 1         # position 2: a ladder capture the player did not choose
    counts = ladder_counts(probs.log(), torch.tensor([1, 2, 0]), planes)
    assert counts["escape"][:2] == [2, 1] and counts["escape"][3] == 1
    assert abs(counts["escape"][2] - (0.7 + 0.3)) < 1e-6
    assert counts["capture"][:2] == [1, 0] and counts["capture"][3] == 0
    assert abs(counts["capture"][2] - 0.25) < 1e-6
    assert counts["chased"] == [0, 0, 0.0, 0]


def test_a_row_without_a_move_target_counts_for_nothing_where_point_0_is_illegal():
    # Value-only rows (the engine's own games) have target -1 on every head, which reads
    # point 0's log-probability: -inf where point 0 is taken; the NLL must stay finite.
    model = nm.PolicyNet(nm.make_config("tiny"))
    n2 = 19 * 19
    mask = torch.ones(2, n2, dtype=torch.bool)
    mask[:, 0] = False
    batch = {"x": torch.zeros(2, nm.feat.num_planes(False), 19, 19), "mask": mask,
             "targets": torch.tensor([[-1, -1, -1], [40, 41, -1]])}
    total, nll, logp1, _, _ = nt.losses(model, batch, torch.device("cpu"), False, 0.0, 0.0)
    assert torch.isinf(logp1[0, 0]) and torch.isfinite(total) and torch.isfinite(nll)
    total.backward()
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)
    hits1, hits5, summed, positions = nt.accuracy_counts(logp1.detach(), batch["targets"][:, 0])
    assert positions == 1 and np.isfinite(summed)
    assert summed == pytest.approx(-float(logp1[1, 40].detach()))
