"""nets.lease's dry run on the CPU: a tiny pack without owner targets (computed by the lease),
a tiny network, a few steps; the results land in the output folder and held-out sources stay
out."""
import json
import os

import pytest

from nets import model as nm
from nets import pack as npk
from nets import lease
from random_games import write_archive


def test_a_lease_trains_from_a_pack_and_writes_its_results(tmp_path):
    archives = [write_archive(tmp_path / "a.zip", 6, 0),
                write_archive(tmp_path / "b.zip", 3, 100)]
    pack = str(tmp_path / "small.pack")
    npk.build(archives, pack, runs=None, log=open(os.devnull, "w"))
    init = str(tmp_path / "tiny.pt")
    nm.save_model(nm.PolicyNet(nm.make_config("tiny", value=True, value_ownership=True)), init)
    out = tmp_path / "out"
    common = ["--pack", pack, "--holdout", "b.zip", "--init", init, "--out", str(out),
              "--steps", "3", "--device", "cpu", "--bf16", "off", "--workers", "0",
              "--threads", "1", "--batch", "16", "--warmup", "1", "--val-positions", "40",
              "--ownership-runs", "2", "--scratch", str(tmp_path / "scratch"), "--seconds",
              "600", "--val-mod", "3"]
    lease.main(common)
    summary = json.loads((out / "lease.json").read_text())
    assert summary["train_argv"][:2] == ["--data", str(tmp_path / "scratch" / "owners.pack")
                                         + "/a.zip"]
    assert summary["last_validation"]["step"] == 3
    assert summary["last_validation"]["val_owner_mse"] >= 0
    assert (out / "run" / "ckpt.pt").exists()
    model, meta = nm.load_model(str(out / "tiny.pt"))
    assert model.config["value_ownership"] and meta["train_data"] == ["a.zip"]
    with pytest.raises(SystemExit, match="held out"):
        lease.main(common + ["--sources", "b.zip"])
