"""Class and instance weights on a cluster: the CLI's weight file on the workers and a
cluster Dataset's weights (in process: tests/parity/test_weights.py)."""
import warnings
import numpy as np
import pytest
from dlinear import ConvergenceWarning, Params, load_model, train
from tests.parity.test_weights import data, files, weighted  # noqa: F401
from tests.support.cli import run_in_process


@pytest.mark.slow
def test_cli_weight_file_on_the_workers(files, data, client, capsys):
    """--scheduler: the weights are split by the parts' rows and attached on the workers
    (dlinear-train in this process, on the session's cluster)."""
    model_file = files / "cluster.model"
    r = run_in_process(capsys, "train", "--scheduler", client.scheduler.address, "-s", 1,
                       "-B", 1, "-W", files / "w.txt", files / "multi.train", model_file)
    assert r.returncode == 0, r.stderr
    assert "dlinear: using the Dask cluster at" in r.stderr        # said on stderr
    assert "dlinear" not in r.stdout
    expected = train(weighted(data["multi"], data["weights"]), Params(solver_type=1, bias=1))
    np.testing.assert_array_equal(load_model(model_file).w, expected.w)


@pytest.mark.slow
def test_weights_on_a_cluster_dataset(files, data, client):
    """Dataset.from_libsvm read on the workers with weights attached per part: Newton's
    map-reduce (-s 0) and a CD solver's per-worker copy (-s 3) see the weights."""
    from dlinear.cluster import Dataset
    from dlinear.cluster.dataset import with_sample_weight
    dataset = Dataset.from_libsvm(files / "multi.train", client, block_bytes=4096)
    assert len(dataset.parts) > 2
    dataset = with_sample_weight(dataset, data["weights"])
    np.testing.assert_array_equal(dataset.to_problem().sample_weight, data["weights"])
    for solver in (0, 3):
        params = Params(solver_type=solver, bias=1, eps=1e-6 if solver == 0 else 0.1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            remote = train(dataset, params)
            local = train(weighted(data["multi"], data["weights"]), params)
        np.testing.assert_allclose(remote.w, local.w, rtol=1e-6, atol=1e-9)
