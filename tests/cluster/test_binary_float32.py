"""A float32 binary dataset (`convert --float32`) on a Dask cluster: each worker reads its
parts with their stored types, and the model is the in-process one."""
import numpy as np
import pytest

from dlinear import Params, train
from dlinear.cluster import Dataset
from dlinear.data.binary_format import convert_libsvm, read_binary
from dlinear.data.libsvm_reader import read_libsvm, write_libsvm
from dlinear.datasets.rcv1_like import make_rcv1_like
from tests.support.problems import assert_same_problem, same_bits

distributed = pytest.importorskip("distributed")


@pytest.mark.cluster
def test_workers_read_float32_parts(client, tmp_path):
    text = tmp_path / "t.train"
    write_libsvm(text, make_rcv1_like(2000, n_features=900, n_classes=3, nnz_per_row=20,
                                      seed=5))
    convert_libsvm(text, tmp_path / "t.ds", part_text_bytes=40_000, dtype=np.float32)
    ds = Dataset.from_path(tmp_path / "t.ds", client)
    assert len(ds.parts) > 2
    parts = client.gather(ds.parts)
    assert all(p.data.dtype == np.float32 and p.indices.dtype == np.uint16 for p in parts)
    assert_same_problem(ds.to_problem(), read_libsvm(text, dtype=np.float32))
    params = Params(solver_type=1, partition=False)     # a copy per worker: bit for bit
    assert same_bits(train(ds, params).w, train(read_binary(tmp_path / "t.ds"), params,
                                                n_threads=1).w)
