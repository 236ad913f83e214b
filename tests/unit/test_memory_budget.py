"""The memory budget: sizes, the cgroup limit (fake trees; a real v1 group when root),
dlinear-train --memory and its stderr line, and dlinear.train(memory=)."""
import os
import re
import subprocess
import sys
import uuid

import numpy as np
import pytest

import dlinear
from dlinear.cli.train_predict import train_main
from dlinear.errors import DlinearError
from dlinear.planning.memory_budget import (PROCESS_MARGIN, UNLIMITED, Budget,
                                            available_ram, cgroup_limit, check_fits,
                                            fit_bytes, memory_budget, parse_size,
                                            process_bytes)

MiB, GiB = 1 << 20, 1 << 30
OWN = 100 * MiB     # the resident memory of the fake trees' process


@pytest.mark.parametrize("text, expected", [
    ("800M", 800 * MiB), ("2G", 2 * GiB), ("1.5GB", 3 * GiB // 2), ("512MiB", 512 * MiB),
    ("4096", 4096), ("3k", 3072), ("1t", 1 << 40), (" 2 G ", 2 * GiB), (1000, 1000)])
def test_sizes(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "M", "2X", "-1G", "0", "1.5.2G", "2 GB B", "nan"])
def test_bad_sizes_name_the_option(text):
    with pytest.raises(DlinearError, match=r"^option --memory needs a size"):
        parse_size(text)


def _fake_tree(root, cgroup_lines, mount_lines, files):
    (root / "proc" / "self").mkdir(parents=True)
    (root / "proc" / "self" / "cgroup").write_text("".join(l + "\n" for l in cgroup_lines))
    (root / "proc" / "self" / "mountinfo").write_text("".join(l + "\n" for l in mount_lines))
    (root / "proc" / "meminfo").write_text("MemTotal: 16000000 kB\n"
                                           "MemAvailable: 8388608 kB\n")
    # the process's size and resident memory in pages: OWN bytes resident
    (root / "proc" / "self" / "statm").write_text(
        f"90000 {OWN // os.sysconf('SC_PAGE_SIZE')} 5000 700 0 60000 0\n")
    for path, text in files.items():
        f = root / path.lstrip("/")
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text + "\n")


V1_MOUNTS = ["31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755",
             "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu",
             "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime shared:9 - cgroup cgroup "
             "rw,memory"]
V1_GROUPS = ["4:memory:/jobs/job7", "1:cpu:/", "0::/"]


def test_v1_limit_is_the_smallest_on_the_way_up(tmp_path):
    """The group's own limit is none (v1's 2**63 - 4096); its parent's 3 GiB holds."""
    _fake_tree(tmp_path, V1_GROUPS, V1_MOUNTS, {
        "/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712",
        "/sys/fs/cgroup/memory/jobs/memory.limit_in_bytes": str(3 * GiB),
        "/sys/fs/cgroup/memory/jobs/job7/memory.limit_in_bytes": "9223372036854771712",
        # the group's usage (page cache included) is not subtracted: the process's is
        "/sys/fs/cgroup/memory/jobs/job7/memory.usage_in_bytes": str(GiB)})
    limit = cgroup_limit(str(tmp_path))
    assert limit.bytes == 3 * GiB
    assert limit.file == "/sys/fs/cgroup/memory/jobs/memory.limit_in_bytes"
    assert process_bytes(str(tmp_path)) == OWN
    budget = memory_budget(root=str(tmp_path))   # 8 GiB available: the limit is smaller
    assert budget == Budget(3 * GiB - OWN - PROCESS_MARGIN, "the cgroup limit "
                            "/sys/fs/cgroup/memory/jobs/memory.limit_in_bytes less 164 MiB "
                            "for this process itself")


def test_v1_in_a_container_sees_its_group_as_the_mount_root(tmp_path):
    """Docker mounts the container's own group at /sys/fs/cgroup/memory (mountinfo's
    root field /docker/abc), and /proc/self/cgroup still names /docker/abc."""
    mounts = ["35 31 0:32 /docker/abc /sys/fs/cgroup/memory ro,nosuid - cgroup cgroup "
              "rw,memory"]
    _fake_tree(tmp_path, ["9:memory:/docker/abc"], mounts, {
        "/sys/fs/cgroup/memory/memory.limit_in_bytes": str(512 * MiB)})
    assert cgroup_limit(str(tmp_path)).bytes == 512 * MiB
    assert memory_budget(root=str(tmp_path)).bytes == 512 * MiB - OWN - PROCESS_MARGIN


def test_v2_memory_max(tmp_path):
    mounts = ["41 31 0:38 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate"]
    _fake_tree(tmp_path, ["0::/user.slice/session-1.scope"], mounts, {
        "/sys/fs/cgroup/user.slice/memory.max": str(2 * GiB),
        "/sys/fs/cgroup/user.slice/session-1.scope/memory.max": "max"})
    assert cgroup_limit(str(tmp_path)).bytes == 2 * GiB
    # a limit that leaves more than the available RAM: the RAM is the budget
    (tmp_path / "sys/fs/cgroup/user.slice/memory.max").write_text(
        str(8 * GiB + OWN + PROCESS_MARGIN + 1))
    assert memory_budget(root=str(tmp_path)) == Budget(8 * GiB, "the available RAM")
    # one that leaves less, even if by a byte: what it leaves
    (tmp_path / "sys/fs/cgroup/user.slice/memory.max").write_text(
        str(8 * GiB + OWN + PROCESS_MARGIN - 1))
    assert memory_budget(root=str(tmp_path)).bytes == 8 * GiB - 1
    # a limit the process already fills leaves nothing (every fit is refused, in one line)
    (tmp_path / "sys/fs/cgroup/user.slice/memory.max").write_text(str(OWN))
    assert memory_budget(root=str(tmp_path)).bytes == 0


def test_no_limit_anywhere(tmp_path):
    _fake_tree(tmp_path, V1_GROUPS, V1_MOUNTS, {
        "/sys/fs/cgroup/memory/jobs/job7/memory.limit_in_bytes": "9223372036854771712"})
    assert cgroup_limit(str(tmp_path)) is None
    assert available_ram(str(tmp_path)) == 8 * GiB
    assert cgroup_limit(str(tmp_path / "nothing")) is None
    assert memory_budget(root=str(tmp_path / "nothing")).bytes == UNLIMITED
    assert memory_budget("1.5G", root=str(tmp_path)) == Budget(3 * GiB // 2, "--memory")


def test_the_fit_estimate_and_its_refusal():
    # float64, int32: 12 bytes a nonzero, 16 a row (+ 8 with weights), + the state
    assert fit_bytes(10, 100, 5, problems_at_once=0) == 12 * 100 + 16 * 10 + 8
    assert fit_bytes(10, 100, 5, 4, 2, weights=True, problems_at_once=0) == 600 + 240 + 8
    assert fit_bytes(10, 100, 5, problems_at_once=2) > fit_bytes(10, 100, 5)
    check_fits(100, Budget(100, "--memory"), "f")
    with pytest.raises(DlinearError, match=r"^f: training in memory needs about 101 B, .*--memory"):
        check_fits(101, Budget(100, "--memory"), "f")
    check_fits(150, Budget(100, "x"), "f", held=50)


@pytest.fixture
def data_file(tmp_path):
    rng = np.random.default_rng(0)
    lines = [f"{1 if rng.random() < 0.5 else -1} "
             + " ".join(f"{j}:{rng.random():.3f}" for j in sorted(rng.choice(
                 np.arange(1, 200), 20, replace=False)))
             for _ in range(2000)]
    path = tmp_path / "d.train"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_cli_memory_too_small_is_one_line_before_reading(data_file, tmp_path, capsys):
    model = tmp_path / "m"
    assert train_main(["--memory", "100K", str(data_file), str(model)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and not model.exists()
    assert err.startswith(f"ERROR: {data_file}: training in memory needs about ")
    assert "over the memory budget 100 KiB (--memory)" in err
    assert "a budget of at least" in err
    # the default -s 1 has an out-of-core method: the line says what would run it
    assert err.rstrip().endswith("a binary dataset (python -m dlinear convert) trains out "
                                 "of core with this solver")


def test_cli_bad_memory_size_is_a_usage_line(data_file, tmp_path, capsys):
    assert train_main(["--memory", "lots", str(data_file), str(tmp_path / "m")]) == 1
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and err.startswith("ERROR: option --memory needs a size")
    assert err.endswith("(run with -h for the options)\n")
    assert train_main(["--memory"]) == 1
    assert "option --memory needs a value" in capsys.readouterr().err


def test_cli_says_the_budget(data_file, tmp_path, capsys):
    assert train_main(["--memory", "1.5G", str(data_file), str(tmp_path / "m")]) == 0
    err = capsys.readouterr().err
    assert err.startswith("dlinear: training in this process")
    assert err.splitlines()[0].endswith("; memory budget 1.5 GiB (--memory)")
    assert train_main([str(data_file), str(tmp_path / "m")]) == 0
    assert re.search(r"; memory budget [0-9.]+ [KMGT]iB \((the available RAM|the cgroup "
                     r"limit /.*/memory\.(limit_in_bytes|max) less [0-9.]+ MiB for this "
                     r"process itself)\)$",
                     capsys.readouterr().err.splitlines()[0])


def test_python_memory(data_file):
    problem = dlinear.read_libsvm(data_file)
    with pytest.raises(DlinearError, match=r"over the memory budget 10 KiB \(memory=\)"):
        dlinear.train(problem, dlinear.Params(), memory="10K")
    with pytest.raises(DlinearError, match="memory= needs a size"):
        dlinear.train(problem, dlinear.Params(), memory="ten")
    fitted = dlinear.train(problem, dlinear.Params(), memory=10 * MiB)
    np.testing.assert_array_equal(fitted.w, dlinear.train(problem, dlinear.Params()).w)


def _own_memory_group():
    """This process's v1 memory cgroup directory, if root can make a child group in it."""
    if os.geteuid() != 0 or not os.path.isdir("/sys/fs/cgroup/memory"):
        return None
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, controllers, group = line.rstrip("\n").split(":", 2)
            if "memory" in controllers.split(","):
                path = os.path.join("/sys/fs/cgroup/memory", group.lstrip("/"))
                return path if os.access(path, os.W_OK) else None
    return None


@pytest.mark.skipif(_own_memory_group() is None,
                    reason="needs root and the cgroup v1 memory controller")
def test_in_a_real_cgroup(data_file, tmp_path):
    """dlinear-train in a child of this process's memory group, limited to 600 MiB: its
    stderr line names that limit as the budget."""
    group = os.path.join(_own_memory_group(), f"dlinear-test-{uuid.uuid4().hex[:8]}")
    os.mkdir(group)
    try:
        with open(os.path.join(group, "memory.limit_in_bytes"), "w") as f:
            f.write(str(600 * MiB))

        def enter_group():
            with open(os.path.join(group, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))
        r = subprocess.run([sys.executable, "-m", "dlinear", "train", str(data_file),
                            str(tmp_path / "m")], capture_output=True, text=True,
                           timeout=300, preexec_fn=enter_group)
    finally:
        os.rmdir(group)
    assert r.returncode == 0, r.stderr
    line = r.stderr.splitlines()[0]
    match = re.search(r"; memory budget ([0-9.]+) MiB \(the cgroup limit (.*) less ([0-9.]+) "
                      r"MiB for this process itself\)$", line)
    assert match and match.group(2) == f"{group}/memory.limit_in_bytes", line
    # what the limit leaves: 600 MiB less the interpreter's resident memory and the margin
    budget, own = float(match.group(1)), float(match.group(3))
    assert abs(budget + own - 600) <= 1 and PROCESS_MARGIN / MiB + 20 < own < 400, line


def test_a_binary_datasets_header_sizes_the_fit_by_its_stored_types(data_file, tmp_path,
                                                                     capsys):
    """The same rows need about half the memory as a float32 dataset (4-byte values,
    2-byte indices): a budget between the two trains one and refuses the other."""
    from dlinear.data.binary_format import convert_libsvm, read_header
    convert_libsvm(data_file, tmp_path / "d64.ds")
    convert_libsvm(data_file, tmp_path / "d32.ds", dtype=np.float32)
    h = read_header(tmp_path / "d64.ds")
    at_once = 1
    need64 = fit_bytes(h.rows, h.nnz, h.occurring_columns, 8, 4, problems_at_once=at_once)
    need32 = fit_bytes(h.rows, h.nnz, h.occurring_columns, 4, 2, problems_at_once=at_once)
    assert need32 < 0.7 * need64
    budget = str((need32 + need64) // 2)
    # -s 5: a solver with no out-of-core method, so data over the budget is refused
    assert train_main(["-s", "5", "--memory", budget, str(tmp_path / "d32.ds"),
                       str(tmp_path / "m")]) == 0
    assert train_main(["-s", "5", "--memory", budget, str(tmp_path / "d64.ds"),
                       str(tmp_path / "m")]) == 1
    err = capsys.readouterr().err.splitlines()[-1]
    assert err.startswith(f"ERROR: {tmp_path / 'd64.ds'}: training in memory needs about ")
