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


def test_a_lease_trains_from_a_pack_and_writes_its_results(tmp_path, monkeypatch):
    archives = [write_archive(tmp_path / "a.zip", 6, 0),
                write_archive(tmp_path / "b.zip", 3, 100),
                write_archive(tmp_path / "m_c.zip", 3, 200)]
    # m_c.zip stands for a match record: a file of that name in the records folder.
    records = tmp_path / "records"
    records.mkdir()
    (records / "m_c.zip").write_bytes(b"")
    monkeypatch.setattr(lease, "MATCH_RECORDS", str(records))
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
    packed = str(tmp_path / "scratch" / "owners.pack")
    assert summary["train_argv"][:3] == ["--data", packed + "/a.zip", packed + "/m_c.zip"]
    assert summary["train_argv"][-4:] == ["--value-only", "m_c.zip", "--value-only-repeat",
                                          "10"]
    assert summary["last_validation"]["step"] == 3
    assert summary["last_validation"]["val_owner_mse"] >= 0
    assert (out / "run" / "ckpt.pt").exists()
    model, meta = nm.load_model(str(out / "tiny.pt"))
    assert model.config["value_ownership"] and meta["train_data"] == ["a.zip", "m_c.zip"]
    with pytest.raises(SystemExit, match="held out"):
        lease.main(common + ["--sources", "b.zip"])
    with pytest.raises(SystemExit, match="b.zip not among the sources trained on"):
        lease.main(common + ["--value-only", "b.zip"])


def test_the_match_record_that_judges_the_value_head_is_held_out_by_default():
    held_out = lease.parse_args([]).holdout
    assert "tygem9d-2011.zip" in held_out
    records = [s for s in held_out if s != "tygem9d-2011.zip"]
    assert records and all(os.path.isfile(os.path.join(lease.MATCH_RECORDS, s)) for s in records)
