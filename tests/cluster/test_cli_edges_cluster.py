"""The command line on a cluster: Ctrl-C during a cluster run, and cross-validation's per-fold
log (in process: tests/cli/test_cli_edges.py)."""
import os
import signal
import subprocess
import sys
import time
import pytest
import dlinear
from dlinear.datasets.rcv1_like import make_rcv1_like


@pytest.mark.slow
def test_ctrl_c_during_a_cluster_run_is_one_line(tmp_path):
    """SIGINT to the whole process group, as a terminal's Ctrl-C: the worker processes
    ignore it, dlinear-train closes the cluster and says so in one line, exit 130; no
    bokeh hint either."""
    train = tmp_path / "t"
    dlinear.write_libsvm(train, make_rcv1_like(3000, n_features=500, nnz_per_row=20,
                                               seed=5))
    log = tmp_path / "stderr"
    # stderr to a file, not a pipe: the workers inherit it, and a pipe read would wait for
    # them too; every wait below is bounded, so a hang fails the test
    with open(log, "w") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "dlinear", "train", "-s", "1", "-e", "1e-12", "--max-iter",
             "1000000", "--workers", "2", "--partition", str(train), str(tmp_path / "m")],
            stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 120
        while "dlinear: -s 1 partitioned" not in log.read_text():
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        time.sleep(1.0)        # into the rounds
        os.killpg(process.pid, signal.SIGINT)
        assert process.wait(timeout=60) == 130
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)     # the workers too, if any is left
        except ProcessLookupError:
            pass
        process.wait()
    lines = log.read_text().splitlines()
    assert lines[0] == "dlinear: started a local Dask cluster of 2 worker processes"
    assert lines[-1] == "dlinear: interrupted" and len(lines) == 3, lines
    assert not (tmp_path / "m").exists()


@pytest.mark.slow
def test_cross_validation_on_a_cluster_logs_each_fold(client):
    problem = make_rcv1_like(300, n_features=50, nnz_per_row=8, seed=2)
    here, there = [], []
    params = dlinear.Params(solver_type=1)
    local = dlinear.cross_validation(problem, params, 3, log=here.append)
    remote = dlinear.cross_validation(problem, params, 3, log=there.append, client=client)
    assert (local == remote).all()
    assert sum(line.startswith("optimization finished") for line in there) == 3
    assert there == here


def test_a_client_that_gave_up_on_its_scheduler_ends_in_one_line(client):
    """A --scheduler command's client closes itself when its scheduler is gone longer than
    the connect timeout; the calls after that fail in Dask's words (a RuntimeError that
    its connection pool is closed, seen in dlinear-status --wait across a scheduler
    restart): the command says in one line that it lost the scheduler."""
    from dlinear.cluster import cluster_client
    from dlinear.cluster.session import worker_addresses
    from dlinear.errors import DlinearError
    address = client.scheduler.address
    with pytest.raises(DlinearError, match=r"^lost the Dask scheduler at .*: it did not "
                                           r"come back within 5 s$"):
        with cluster_client(address, connect_timeout=5) as own:
            assert worker_addresses(own)
            own.close()                     # as it closes itself once it gives up
            worker_addresses(own)
