"""A job sent with dlinear-submit --checkpoint DIR resumes from its checkpoint after the
worker running it is killed: the scheduler runs the job's task again on the other
worker, which finds the state in DIR (shared storage), and the model is the one of an
uninterrupted fit; the job's record tells the lost run (dlinear-status)."""
import os
import signal
import time

import numpy as np
import pytest

import dlinear
from dlinear import Params
from dlinear.cluster.jobs import attempts_story, read_attempts, submit
from dlinear.datasets.rcv1_like import make_rcv1_like
from tests.support.clusters import start_cluster, stop_cluster, wait_for_workers


@pytest.mark.slow
@pytest.mark.cluster
def test_job_resumes_from_its_checkpoint_after_a_lost_worker(tmp_path):
    distributed = pytest.importorskip("distributed")
    problem = make_rcv1_like(20000, n_features=5000, nnz_per_row=40, seed=7)
    data = tmp_path / "train.svm"
    dlinear.write_libsvm(data, problem)
    options = dict(solver_type=1, eps=1e-4, max_iter=3000)
    reference = dlinear.train(dlinear.read_libsvm(data), Params(**options))
    state_dir = tmp_path / "state"
    params = Params(checkpoint=str(state_dir), checkpoint_every=0.01, **options)
    address, procs = start_cluster(tmp_path, n_workers=2)
    try:
        with distributed.Client(address, timeout=60) as client:
            names = {addr: name for name, addr in wait_for_workers(client, 2).items()}
            submit(client, "resumed", params, str(data), str(tmp_path / "job.model"))
            state = state_dir / "problem-0.npz"
            deadline = time.monotonic() + 300
            while not state.exists() and time.monotonic() < deadline:
                time.sleep(0.01)
            assert state.exists(), "the job saved no checkpoint"
            running = [names[addr] for addr, keys in client.processing().items()
                       if "dlinear-job-resumed" in keys]
            if not running or (tmp_path / "job.model").exists():
                pytest.skip("the job ended before its worker could be killed")
            os.killpg(procs[running[0]].pid, signal.SIGKILL)
            deadline = time.monotonic() + 300
            while not (tmp_path / "job.model").exists() and time.monotonic() < deadline:
                time.sleep(0.1)
            # what dlinear-status tells of it: the first run lost with its worker
            starts = read_attempts(client, "resumed")
            assert len(starts) == 2, starts
            assert attempts_story(starts, starts[1] + 1.0).startswith(
                " (attempt 2: 1 lost with their worker after ")
    finally:
        stop_cluster(procs)
    model = dlinear.load_model(tmp_path / "job.model")
    np.testing.assert_allclose(model.w, reference.w, rtol=1e-9, atol=1e-12)
    assert not state.exists()
