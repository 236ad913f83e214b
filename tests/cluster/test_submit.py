"""dlinear-submit and dlinear-status (the installed console scripts) against a real
scheduler and two workers, each its own process (`dask scheduler`,
`dask worker --nthreads 1 --no-nanny`)."""
import os
import shutil
import subprocess
import sys

import pytest

import dlinear
from dlinear.cli.train_predict import parse_train_args
from dlinear.datasets.rcv1_like import make_rcv1_like
from tests.support.clusters import dask_processes


def _env():
    env = dict(os.environ)
    env.pop("DLINEAR_SCHEDULER", None)
    return env


@pytest.fixture(scope="module")
def cluster_dir(tmp_path_factory):
    """The directory of the scheduler's and workers' logs."""
    return tmp_path_factory.mktemp("cluster")


@pytest.fixture(scope="module")
def scheduler(cluster_dir):
    """Address of a scheduler with two single-threaded workers on 127.0.0.1."""
    with dask_processes(cluster_dir, 2) as address:
        yield address


def _command(name):
    """The console script installed next to this Python (pip install puts it there)."""
    path = shutil.which(name, path=os.path.dirname(sys.executable)) or shutil.which(name)
    assert path, f"{name} is not installed (pip install -e .)"
    return path


def _script(name, *args, timeout=90):
    return subprocess.run([_command(name), *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, env=_env())


@pytest.mark.slow
@pytest.mark.cluster
def test_submit_then_status(scheduler, tmp_path):
    good = tmp_path / "train.svm"
    dlinear.write_libsvm(good, make_rcv1_like(600, n_features=400, n_classes=3,
                                              nnz_per_row=20, seed=3))
    bad = tmp_path / "bad.svm"
    bad.write_text("1 1:0.5 3:1\n2 2:0.25\n3 4:x\n1 1:1\n")
    options = ["-s", "1", "-c", "0.5", "-B", "1"]
    # the reference model, trained and saved in this process (first: with a cold Numba
    # cache the workers then load the kernels compiled here instead of compiling them)
    params, _, _, _ = parse_train_args([*options, str(good), "m"])
    dlinear.save_model(tmp_path / "reference.model",
                       dlinear.train(dlinear.read_libsvm(good), params))

    r = _script("dlinear-submit", "--scheduler", scheduler, "--name", "good", *options,
                good, tmp_path / "good.model")
    assert r.returncode == 0, r.stderr
    assert "good" in r.stdout and r.stderr == ""
    r = _script("dlinear-submit", "--scheduler", scheduler, "--name", "bad", "-q", bad,
                tmp_path / "bad.model")
    assert r.returncode == 0 and r.stdout == "" and r.stderr == "", r.stderr

    r = _script("dlinear-status", "--scheduler", scheduler, "good", "--wait", 60)
    assert r.returncode == 0, (r.stdout, r.stderr)
    done = r.stdout.strip()
    assert done.startswith(f"done {tmp_path / 'good.model'} in ") and done.endswith(" s")
    assert float(done.split()[-2]) >= 0
    assert ((tmp_path / "good.model").read_bytes() ==
            (tmp_path / "reference.model").read_bytes())

    r = _script("dlinear-status", "--scheduler", scheduler, "bad", "--wait", 60)
    assert r.returncode == 1, (r.stdout, r.stderr)
    state = r.stdout.strip()
    assert state.startswith("failed ") and "\n" not in state
    assert str(bad) in state and "line 3" in state
    assert not (tmp_path / "bad.model").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "bad.svm", "good.model", "reference.model", "train.svm"]

    # the states stay on the scheduler after the jobs end; without --wait too
    r = _script("dlinear-status", "--scheduler", scheduler, "good")
    assert r.returncode == 0 and r.stdout.strip() == done


@pytest.mark.slow
@pytest.mark.cluster
def test_bad_options_fail_at_submit(scheduler, cluster_dir, tmp_path):
    data = tmp_path / "t.svm"
    data.write_text("1 1:1\n-1 2:1\n")
    for options in (["-s", "99"], ["-c", "x"], ["-v", "3"], ["--workers", "2"],
                    ["-e", "-1"], ["--bogus"]):
        r = _script("dlinear-submit", "--scheduler", scheduler, "--name", "opts", *options,
                    data, tmp_path / "m")
        assert r.returncode == 1, (options, r.stdout, r.stderr)
        assert r.stderr.startswith("ERROR: ") and r.stderr.count("\n") == 1, r.stderr
    r = _script("dlinear-submit", "--scheduler", scheduler, data, tmp_path / "m")   # no --name
    assert r.returncode == 1 and "--name" in r.stderr
    assert not (tmp_path / "m").exists()
    for _ in range(2):
        r = _script("dlinear-status", "--scheduler", scheduler, "opts")
        assert r.returncode == 3 and "no such job 'opts'" in r.stderr
        assert r.stderr.count("\n") == 1
    # an unknown name is no error of the scheduler's: nothing in its log (a Variable's
    # lookup logged a 30-line TimeoutError traceback each time)
    log = (cluster_dir / "scheduler.log").read_text()
    assert "ERROR" not in log and "Traceback" not in log, log


def test_versions():
    for name in ("dlinear-submit", "dlinear-status"):
        r = _script(name, "--version")
        assert r.returncode == 0 and r.stderr == ""
        assert r.stdout == f"{name} (dlinear) {dlinear.__version__}\n"


def test_attempts_story_tells_the_lost_runs_and_the_whole_time():
    from dlinear.cluster.jobs import attempts_story
    assert attempts_story([100.0], 130.0) == ""
    assert attempts_story([100.0, 104.25], 112.5) == (
        " (attempt 2: 1 lost with their worker after 4.2 s; 12.500 s since the first started)")


def test_status_tells_a_rerun_job_and_names_the_jobs_for_an_unknown_one(client, capsys):
    """After a lost worker Dask runs a job's task again: dlinear-status says which attempt
    runs and since when the job runs, not only the re-run's time. A mistyped name is "no
    such job", with the names the scheduler knows, not told to submit again."""
    import time

    from dlinear.cli.jobs import status_main
    from dlinear.cluster.jobs import (job_key, job_names, record_attempt, record_state,
                                      task_state)
    address = client.scheduler.address
    from tests.support.clusters import held_until_released, release
    # its task, live
    future = client.submit(held_until_released, "rerun", 30, key=job_key("rerun"), pure=False)
    try:
        client.publish_dataset([], name=job_key("rerun") + "/attempts", override=True)
        record_attempt(client, "rerun")         # the first run, lost with its worker
        time.sleep(0.2)
        record_attempt(client, "rerun")         # Dask's re-run
        record_state(client, "rerun", "running")
        assert job_names(client) == ["rerun"]
        while task_state(client, job_key("rerun")) is None:     # the scheduler has it
            time.sleep(0.05)
        assert status_main(["rerun", "--scheduler", address]) == 2
        out = capsys.readouterr().out
        assert out.startswith("running (attempt 2: 1 lost with their worker after "), out
        assert out.rstrip().endswith(" s since the first started)")

        assert status_main(["renu", "--scheduler", address]) == 3
        assert capsys.readouterr().err == (f"ERROR: no such job 'renu' on the scheduler at "
                                           f"{address}; its jobs: rerun\n")
    finally:
        client.cancel(future)
        release(client, "rerun")
        client.unpublish_dataset(job_key("rerun"))
        client.unpublish_dataset(job_key("rerun") + "/attempts")
    assert status_main(["renu", "--scheduler", address]) == 3
    assert "which knows no jobs (a restarted scheduler has forgotten its jobs: submit it " \
        "again)" in capsys.readouterr().err
