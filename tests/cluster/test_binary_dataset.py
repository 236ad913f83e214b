"""Binary datasets on a Dask cluster: each worker maps its own parts; the models are those
of the same rows read from LIBSVM text."""
import math
import os

import numpy as np
import pytest

from dlinear import Params, train
from dlinear.data.binary_format import convert_libsvm, read_header
from dlinear.cluster import Dataset
from dlinear.data.libsvm_reader import read_libsvm, write_libsvm
from dlinear.datasets.rcv1_like import make_rcv1_like
from tests.support.problems import assert_same_problem, same_bits

distributed = pytest.importorskip("distributed")

N_PARTS = 6


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """(text file, its binary dataset, block bytes): both split into the same N_PARTS
    byte ranges, so the cluster's text parts and the binary parts hold the same rows."""
    d = tmp_path_factory.mktemp("binary_cluster")
    text = d / "four.train"
    write_libsvm(text, make_rcv1_like(3000, n_features=1200, n_classes=4, nnz_per_row=25,
                                      seed=31))
    block = math.ceil(os.path.getsize(text) / N_PARTS)
    convert_libsvm(text, d / "four.ds", part_text_bytes=block)
    return text, d / "four.ds", block


@pytest.mark.cluster
def test_each_worker_reads_its_own_parts(client, files):
    text, ds_path, _ = files
    ds = Dataset.from_binary(ds_path, client)
    header = read_header(ds_path)
    assert len(ds.parts) == len(header.parts) == N_PARTS
    assert (ds.n_samples, ds.n_features, ds.nnz) == (header.rows, header.n_features,
                                                     header.nnz)
    assert_same_problem(ds.to_problem(), read_libsvm(text))
    holders = {w for ws in client.who_has(ds.parts).values() for w in ws}
    assert len(holders) == 2
    assert list(ds.class_labels_by_first_appearance()) == header.labels


@pytest.mark.slow
@pytest.mark.cluster
@pytest.mark.parametrize("params", [Params(solver_type=0, partition=True),
                                    Params(solver_type=2, partition=True),
                                    Params(solver_type=1, partition=False)])
def test_the_model_is_that_of_the_text_file(client, files, params):
    text, ds_path, block = files
    from_text = Dataset.from_libsvm(text, client, block_bytes=block)
    from_binary = Dataset.from_path(ds_path, client)
    assert len(from_text.parts) == len(from_binary.parts)
    expected = train(from_text, params)
    got = train(from_binary, params).w
    if params.partition:
        # map-reduced: each worker sums its own parts, so which worker holds which part
        # (where the cluster placed them, which earlier tests influence) orders the sums:
        # the same model to the last rounding
        np.testing.assert_allclose(got, expected.w, rtol=1e-12, atol=1e-15)
    else:                         # a copy per worker: the in-process model, bit for bit
        assert same_bits(got, expected.w)
        assert same_bits(train(read_libsvm(text), params, n_threads=1).w, expected.w)


@pytest.mark.slow
@pytest.mark.cluster
def test_cli_on_two_workers(files, tmp_path, client, capsys):
    """dlinear-train in this process on the session's 2 workers (--scheduler)."""
    from tests.support.cli import run_in_process
    text, ds_path, _ = files
    models = {}
    for source in (text, ds_path):
        model = tmp_path / f"{source.name}.model"
        r = run_in_process(capsys, "train", "-s", "0", "--scheduler",
                           client.scheduler.address, source, model)
        assert r.returncode == 0, r.stderr
        models[source] = model.read_bytes()
    assert models[text] == models[ds_path]
