"""Memory under pressure (issue #25 part 5): a map-reduced fit whose parts exceed the
workers' memory limit succeeds by Dask's spilling (Dask sees the parts' real sizes:
Problem.__sizeof__), with the model it has without a limit; a partitioned fit whose
blocks stay in memory (-s 7 here; -s 1 and -s 3 keep them on the workers' disks:
test_spilled_partitioned_cd.py) fails at once in one line, naming the limit, the size it
needs and the solvers that train such data."""
import logging

import dask
import numpy as np
import pytest

import dlinear
from dlinear import Params
from dlinear.cluster import Dataset
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.errors import DlinearError

from tests.support.clusters import SMALL_WORKER_LIMIT as LIMIT, SPILL_ONLY


@pytest.fixture(scope="module")
def data_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("pressure") / "train.svm"
    dlinear.write_libsvm(path, make_rcv1_like(12000, n_features=3000, nnz_per_row=40,
                                              seed=7))
    return path


@pytest.fixture(scope="module")
def client():
    """A client of 2 worker processes with LIMIT bytes each, spilling by SPILL_ONLY."""
    from distributed import Client, LocalCluster
    with dask.config.set(SPILL_ONLY), \
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit=LIMIT,
                         dashboard_address=":0", silence_logs=logging.CRITICAL) as cluster, \
            Client(cluster) as client:
        yield client


def _fit(path, params, client):
    """(model, parts' bytes as Dask counts them, keys spilled to disk per worker)."""
    dataset = Dataset.from_libsvm(path, client, block_bytes=1 << 20)
    counted = client.nbytes(summary=False)
    part_bytes = [counted[p.key] for p in dataset.parts]
    model = dlinear.train(dataset, params, client=client)
    spilled = client.run(lambda dask_worker: len(getattr(dask_worker.data, "slow", ())))
    return model, part_bytes, spilled


@pytest.mark.slow
@pytest.mark.cluster
def test_map_reduced_newton_spills_parts_over_the_memory_limit(data_file, client):
    params = Params(solver_type=2, partition=True)
    model, part_bytes, spilled = _fit(data_file, params, client)
    # Dask counts each part as its arrays (not the ~50 bytes of sys.getsizeof's default)
    whole = dlinear.read_libsvm(data_file)
    arrays = whole.indptr.nbytes + whole.indices.nbytes + whole.data.nbytes + whole.y.nbytes
    assert sum(part_bytes) >= arrays - 8 * len(part_bytes)
    assert sum(part_bytes) > 2 * LIMIT          # the parts exceed both workers' limits
    # (at least one worker holds half the parts, far over its 0.5 MiB target; where the
    # scheduler puts the parts is its own business)
    assert sum(spilled.values()) > 0, spilled
    # the model of the same fit in process, to the rounding of the sums over the parts
    # (whose order follows where the parts are)
    reference = dlinear.train(whole, Params(solver_type=2))
    np.testing.assert_allclose(model.w, reference.w, rtol=1e-7, atol=1e-10)


@pytest.mark.slow
@pytest.mark.cluster
def test_partitioned_dual_cd_over_the_memory_limit_names_both(data_file, client):
    with pytest.raises(DlinearError, match=r"partitioned -s 7 .* needs about [0-9.]+ MiB on "
                                           r"each worker .* memory limit is 2\.0 MiB; .*"
                                           r"-s 1 or 3, whose workers keep their share on "
                                           r"their local disks") as caught:
        _fit(data_file, Params(solver_type=7, partition=True), client)
    assert "\n" not in str(caught.value)
