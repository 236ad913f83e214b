"""One function decides the threads (dlinear.threads.available_cores): the CPU affinity,
capped by a container's cgroup CPU quota (v1 and v2), rounded up, at least 1."""
import os
import subprocess
import sys
import textwrap

import pytest

from dlinear import threads
from dlinear.threads import available_cores, cgroup_cpu_limit


def fake_system(tmp_path, version, quotas, path="/docker/abc"):
    """A /proc/self (cgroup, mountinfo) and a cgroup file system under tmp_path: the
    process in cgroup `path`, quotas {relative directory: (quota, period)} ("max" or -1
    for none)."""
    proc, mount = tmp_path / "proc", tmp_path / "sys" / "fs" / "cgroup" / "cpu,cpuacct"
    (proc / "self").mkdir(parents=True)
    if version == 2:
        (proc / "self" / "cgroup").write_text(f"0::{path}\n")
        mountinfo = f"41 31 0:38 / {mount} rw,relatime - cgroup2 cgroup2 rw\n"
    else:
        (proc / "self" / "cgroup").write_text(
            f"4:memory:{path}\n2:cpu,cpuacct:{path}\n0::/\n")
        mountinfo = (f"33 31 0:30 / {tmp_path}/memory rw - cgroup cgroup rw,memory\n"
                     f"32 31 0:29 / {mount} rw,relatime - cgroup cgroup rw,cpu,cpuacct\n")
    (proc / "self" / "mountinfo").write_text(
        "22 1 0:21 / /proc rw - proc proc rw\n" + mountinfo)
    for directory, (quota, period) in quotas.items():
        d = mount / directory
        d.mkdir(parents=True, exist_ok=True)
        if version == 2:
            (d / "cpu.max").write_text(f"{quota} {period}\n")
        else:
            (d / "cpu.cfs_quota_us").write_text(f"{quota}\n")
            (d / "cpu.cfs_period_us").write_text(f"{period}\n")
    return str(proc)


NO_QUOTA = {1: -1, 2: "max"}


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("quotas, cores", [
    ({"docker/abc": (100000, 100000)}, 1),
    ({"docker/abc": (150000, 100000)}, 2),          # 1.5 cores: rounded up
    ({"docker/abc": (50000, 100000)}, 1),           # half a core: at least 1
    ({"docker/abc": (400000, 100000), "docker": (200000, 100000)}, 2),  # a parent's is lower
    ({"docker/abc": (None, 100000)}, None),          # no quota
    ({}, None),                                      # no cpu files
])
def test_the_quota_is_read_from_the_process_cgroup(tmp_path, version, quotas, cores):
    quotas = {d: (NO_QUOTA[version] if q is None else q, p) for d, (q, p) in quotas.items()}
    proc = fake_system(tmp_path, version, quotas)
    assert cgroup_cpu_limit(proc) == cores


def test_available_cores_is_the_affinity_capped_by_the_quota(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    assert available_cores(fake_system(tmp_path / "a", 2, {"docker/abc": (250000, 100000)})) == 3
    assert available_cores(fake_system(tmp_path / "b", 1, {"docker/abc": (900000, 100000)})) == 4
    assert available_cores(str(tmp_path / "no-proc")) == 4
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {2}, raising=False)
    assert available_cores(fake_system(tmp_path / "c", 2, {"docker/abc": (250000, 100000)})) == 1


def test_library_pools_follow_unless_the_user_says(monkeypatch):
    monkeypatch.setattr(threads, "available_cores", lambda: 3)
    environ = {}
    threads.limit_library_threads(environ)
    assert environ == {"OPENBLAS_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "3"}
    environ = {"OPENBLAS_NUM_THREADS": "8", "NUMBA_NUM_THREADS": "2"}
    threads.limit_library_threads(environ)
    assert environ == {"OPENBLAS_NUM_THREADS": "8", "NUMBA_NUM_THREADS": "2"}


@pytest.mark.parametrize("setting, expected", [(None, "1"), ("2", "2")])
def test_a_command_runs_one_blas_thread_unless_the_user_says(setting, expected):
    """Where the library reads it: a process that imports dlinear first, as its commands
    do, sees OPENBLAS_NUM_THREADS at 1, or at the user's own value."""
    env = {k: v for k, v in os.environ.items() if k != threads.BLAS_THREAD_VARIABLE}
    if setting is not None:
        env[threads.BLAS_THREAD_VARIABLE] = setting
    script = "import dlinear, os; print(os.environ['OPENBLAS_NUM_THREADS'])"
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [expected]


def _cpu_v1_mount():
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                fields = line.split()
                after = fields[fields.index("-") + 1:]
                if after[0] == "cgroup" and "cpu" in after[2].split(","):
                    return fields[4]
    except (OSError, ValueError, IndexError):
        pass
    return None


# dlinear imported first, as its commands do: NumPy's OpenBLAS sizes its pool on import
THREADS_AFTER_TRAINING = textwrap.dedent("""
    import dlinear
    from dlinear.datasets.rcv1_like import make_rcv1_like
    from dlinear.threads import available_cores
    problem = make_rcv1_like(3000, n_features=300, nnz_per_row=10, seed=1)
    dlinear.train(problem, dlinear.Params(solver_type=2))
    with open("/proc/self/status") as f:
        count = next(int(l.split()[1]) for l in f if l.startswith("Threads:"))
    print(available_cores(), count)
""")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0
                    or _cpu_v1_mount() is None,
                    reason="needs root and the cgroup v1 cpu controller mounted")
def test_under_a_one_core_quota_no_more_threads_than_pinned_to_one_core():
    """A real cgroup with a quota of one core: the process counts one core and runs no
    more threads than when its affinity is one core."""
    group = os.path.join(_cpu_v1_mount(), f"dlinear-test-{os.getpid()}")
    os.mkdir(group)
    try:
        with open(os.path.join(group, "cpu.cfs_period_us"), "w") as f:
            f.write("100000")
        with open(os.path.join(group, "cpu.cfs_quota_us"), "w") as f:
            f.write("100000")
        env = {k: v for k, v in os.environ.items()
               if k not in (*threads.LIBRARY_THREAD_VARIABLES, threads.BLAS_THREAD_VARIABLE)}

        def run(enter):
            out = subprocess.run([sys.executable, "-c", THREADS_AFTER_TRAINING], env=env,
                                 capture_output=True, text=True, timeout=300,
                                 preexec_fn=enter)
            assert out.returncode == 0, out.stderr
            return [int(v) for v in out.stdout.split()]

        def join_group():
            with open(os.path.join(group, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))

        quota_cores, quota_threads = run(join_group)
        pinned_cores, pinned_threads = run(lambda: os.sched_setaffinity(0, {0}))
        free_cores, _ = run(None)
    finally:
        os.rmdir(group)
    assert (quota_cores, pinned_cores) == (1, 1)
    assert free_cores == len(os.sched_getaffinity(0))
    assert quota_threads <= pinned_threads
