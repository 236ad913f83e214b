"""float32 data on a cluster: the workers read their parts as float32."""
import os

import numpy as np

from dlinear import Params, train
from dlinear.data.libsvm_reader import read_libsvm
from dlinear.solvers.primal_objective_values import primal_objective

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "rcv1_small.train")
PARITY = 1e-6      # relative objective difference to the float64 model


def test_cluster_workers_read_float32(client):
    from dlinear.cluster import Dataset
    data = Dataset.from_libsvm(EXAMPLE, client, block_bytes=100_000, dtype=np.float32)
    assert len(data.parts) > 1
    joined = data.to_problem()
    local = read_libsvm(EXAMPLE, dtype=np.float32)
    assert joined.data.dtype == np.float32
    np.testing.assert_array_equal(joined.data, local.data)
    np.testing.assert_array_equal(joined.indices, local.indices)
    params = Params(solver_type=0)
    p64 = read_libsvm(EXAMPLE)
    f32 = primal_objective(p64, params, train(data, params))
    f64 = primal_objective(p64, params, train(p64, params))
    assert abs(f32 - f64) <= PARITY * abs(f64)
