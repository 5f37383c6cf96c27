"""--threads auto|N: the CPUs this process may use (affinity, cgroup quota), their split between
search threads and the network's threads (by where the network runs), and the flag's parsing."""
import logging
import os
from types import SimpleNamespace

import pytest

import gtp_main


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def no_cgroup(tmp_path):
    """(root, membership) of a process in a cgroup without a CPU quota."""
    write(tmp_path / "self-cgroup", "0::/\n")
    return str(tmp_path / "fs"), str(tmp_path / "self-cgroup")


def test_usable_cpus_are_those_of_the_affinity_mask_not_the_machine(monkeypatch, no_cgroup):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 3, 5}, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    assert gtp_main.usable_cpus(*no_cgroup) == 3


def test_usable_cpus_fall_back_to_the_cpu_count_without_affinity(monkeypatch, no_cgroup):
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    assert gtp_main.usable_cpus(*no_cgroup) == 4
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert gtp_main.usable_cpus(*no_cgroup) == 1


@pytest.mark.parametrize("cpu_max, cpus", [("max 100000", 8), ("200000 100000", 2),
                                           ("150000 100000", 2), ("50000 100000", 1),
                                           ("1600000 100000", 8), ("garbage", 8)])
def test_a_cgroup_v2_quota_caps_the_usable_cpus_rounded_up(monkeypatch, tmp_path, cpu_max,
                                                           cpus):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)), raising=False)
    write(tmp_path / "self-cgroup", "0::/box/job\n")
    write(tmp_path / "fs" / "box" / "job" / "cpu.max", cpu_max)
    assert gtp_main.usable_cpus(str(tmp_path / "fs"), str(tmp_path / "self-cgroup")) == cpus


def test_the_smallest_quota_up_the_cgroup_tree_counts(tmp_path):
    write(tmp_path / "self-cgroup", "0::/box/job\n")
    write(tmp_path / "fs" / "box" / "cpu.max", "300000 100000")
    write(tmp_path / "fs" / "box" / "job" / "cpu.max", "max 100000")
    write(tmp_path / "fs" / "cpu.max", "400000 100000")
    assert gtp_main.cgroup_cpu_quota(str(tmp_path / "fs"), str(tmp_path / "self-cgroup")) == 3


def test_a_container_sees_its_own_cgroup_as_the_root(tmp_path):
    # Without a cgroup namespace the path names the host's cgroup, which the container's
    # /sys/fs/cgroup shows as its root.
    write(tmp_path / "self-cgroup", "0::/system.slice/docker-1234.scope\n")
    write(tmp_path / "fs" / "cpu.max", "250000 100000")
    assert gtp_main.cgroup_cpu_quota(str(tmp_path / "fs"), str(tmp_path / "self-cgroup")) == 2.5


@pytest.mark.parametrize("quota, cpus", [("-1", None), ("100000", 1.0), ("350000", 3.5)])
def test_a_cgroup_v1_cfs_quota_counts_too(tmp_path, quota, cpus):
    write(tmp_path / "self-cgroup", "12:memory:/x\n4:cpu,cpuacct:/x\n1:name=systemd:/x\n")
    write(tmp_path / "fs" / "cpu,cpuacct" / "x" / "cpu.cfs_quota_us", quota + "\n")
    write(tmp_path / "fs" / "cpu,cpuacct" / "x" / "cpu.cfs_period_us", "100000\n")
    assert gtp_main.cgroup_cpu_quota(str(tmp_path / "fs"), str(tmp_path / "self-cgroup")) == cpus


def test_no_readable_cgroup_means_no_quota(tmp_path):
    assert gtp_main.cgroup_cpu_quota(str(tmp_path), str(tmp_path / "missing")) is None
    write(tmp_path / "self-cgroup", "0::/../../elsewhere\n")
    write(tmp_path / "cpu.max", "100000 0")
    assert gtp_main.cgroup_cpu_quota(str(tmp_path), str(tmp_path / "self-cgroup")) is None


@pytest.mark.parametrize("threads, cpus, policy_only, network, split", [
    ("auto", 2, False, False, (2, 1)),   # no network: both cores search
    ("auto", 8, False, False, (8, 1)),
    ("auto", 2, False, True, (1, 1)),    # with it: half search, the server has the rest
    ("auto", 8, False, True, (4, 4)),
    ("auto", 1, False, True, (1, 1)),
    (1, 2, False, True, (1, 1)),
    (1, 8, False, True, (1, 7)),         # as before: the network gets what the search leaves
    (2, 8, False, True, (2, 6)),
    (4, 2, False, True, (4, 1)),         # more threads than CPUs, as asked
    ("auto", 8, True, True, (8, 8)),     # policy only: no search, every CPU to the network
    (1, 8, True, True, (1, 8)),
])
def test_auto_splits_the_usable_cpus_between_search_and_network(threads, cpus, policy_only,
                                                                 network, split):
    assert gtp_main.split_threads(threads, cpus, policy_only, network) == split


@pytest.mark.parametrize("threads, cpus, split", [
    ("auto", 2, (2, 1)),     # the server waits on the GPU: every CPU searches
    ("auto", 16, (16, 1)),
    (4, 16, (4, 1)),
])
def test_with_the_network_on_a_gpu_auto_gives_the_search_every_cpu(threads, cpus, split):
    assert gtp_main.split_threads(threads, cpus, network=True, gpu=True) == split
    assert gtp_main.split_threads(threads, cpus, policy_only=True, network=True,
                                  gpu=True)[1] == cpus


@pytest.mark.parametrize("flags, gpu", [
    (["--device", "cuda"], True), (["--device", "cpu"], False),
    (["--device", "cuda", "--net", "none"], False), ([], False),
])
def test_the_plan_knows_where_the_network_runs(monkeypatch, flags, gpu):
    import torch
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(gtp_main, "usable_cpus", lambda: 8)
    args = gtp_main.build_parser().parse_args(flags)
    assert gtp_main.network_on_gpu(args) == gpu
    assert gtp_main.thread_plan(args) == ((8, 1, 8) if gpu else (8, 1, 8) if "none" in flags
                                          else (4, 4, 8))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert gtp_main.network_on_gpu(gtp_main.build_parser().parse_args([]))


def test_the_default_is_auto_and_the_search_gets_the_usable_cpus(monkeypatch):
    monkeypatch.setattr(gtp_main, "usable_cpus", lambda: 3)
    args = gtp_main.build_parser().parse_args(["--net", "none", "--seed", "1"])
    assert args.threads == "auto"
    assert gtp_main.player_config(args).search.threads == 3
    one = gtp_main.build_parser().parse_args(["--threads", "1", "--net", "none", "--seed", "1"])
    assert gtp_main.player_config(one).search.threads == 1


@pytest.mark.parametrize("text", ["0", "-1", "x", "1.5", "", "AUTO"])
def test_threads_must_be_auto_or_a_positive_integer(text, capsys):
    with pytest.raises(SystemExit) as exit_:
        gtp_main.build_parser().parse_args(["--threads", text])
    assert exit_.value.code == 2
    assert "argument --threads: must be 'auto' or an integer >= 1" in capsys.readouterr().err


@pytest.mark.parametrize("text, value", [("auto", "auto"), ("1", 1), ("12", 12)])
def test_threads_takes_auto_or_a_positive_integer(text, value):
    assert gtp_main.build_parser().parse_args(["--threads", text]).threads == value


def test_the_choice_is_logged_with_its_reason(monkeypatch, caplog):
    monkeypatch.setattr(gtp_main, "usable_cpus", lambda: 2)
    parse = gtp_main.build_parser().parse_args
    with caplog.at_level(logging.INFO, logger="gtp_main"):
        gtp_main.log_thread_plan(parse([]), evaluator=SimpleNamespace(backend="onnx"))
        gtp_main.log_thread_plan(parse(["--net", "none"]), evaluator=None)
        gtp_main.log_thread_plan(parse(["--threads", "1", "--seed", "3"]),
                                 evaluator=SimpleNamespace(backend="torch"))
        gtp_main.log_thread_plan(parse(["--threads", "2", "--seed", "3"]), evaluator=None)
    assert caplog.messages == [
        "search threads 1, network threads 1 on onnx (auto: 2 usable CPUs)",
        "search threads 2 (auto: 2 usable CPUs)",
        "search threads 1, network threads 1 on torch (--threads 1; 2 usable CPUs)",
        "search threads 2 (--threads 2; 2 usable CPUs)",
        "--seed with 2 search threads: moves depend on thread timing; --threads 1 repeats them",
    ]
