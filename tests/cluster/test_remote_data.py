"""Training files in an object store: fsspec URLs against a real S3 API on loopback
(moto's server, started here on a free port of 127.0.0.1), read with s3fs.

The cluster tests give the S3 endpoint and keys to the worker processes only (fsspec's
FSSPEC_S3_* variables, as a Kubernetes Secret would); this process has none, so a
read on the client would fail: the workers read their byte ranges themselves."""
import gzip
import socket
import subprocess
import sys

import numpy as np
import pytest

import dlinear
from dlinear.cluster import Dataset
from dlinear.data.libsvm_reader import line_aligned_ranges, read_libsvm
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.errors import DlinearError
from dlinear.params import Params
from tests.support.cli import run_in_process
from tests.support.clusters import dask_processes
from tests.support.problems import assert_same_problem, chunk_test_text, concatenate


moto_server = pytest.importorskip("moto.server")
s3fs = pytest.importorskip("s3fs")

BUCKET = "dlinear-test"
KEY, SECRET = "testing-key", "testing-secret"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    """(storage options, s3fs filesystem) of a moto S3 server with an empty bucket."""
    port = free_port()
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    options = {"endpoint_url": f"http://127.0.0.1:{port}", "key": KEY, "secret": SECRET,
               "client_kwargs": {"region_name": "us-east-1"}}
    try:
        import boto3
        boto3.client("s3", endpoint_url=options["endpoint_url"], aws_access_key_id=KEY,
                     aws_secret_access_key=SECRET, region_name="us-east-1"
                     ).create_bucket(Bucket=BUCKET)
        fs = s3fs.S3FileSystem(**options)
        yield options, fs
    finally:
        server.stop()


def upload(fs, tmp_path, name, data: bytes) -> tuple[str, str]:
    """(local path, s3:// URL) of the same bytes."""
    local = tmp_path / name
    local.write_bytes(data)
    fs.put_file(str(local), f"{BUCKET}/{name}")
    return str(local), f"s3://{BUCKET}/{name}"


def test_read_from_s3_equals_local_file(s3, tmp_path):
    options, fs = s3
    local, url = upload(fs, tmp_path, "mixed.svm", chunk_test_text().encode())
    expected = read_libsvm(local)
    for chunk_bytes in (64, 1 << 20):
        assert_same_problem(read_libsvm(url, storage_options=options, chunk_bytes=chunk_bytes),
                            expected)
    ranges = line_aligned_ranges(url, 3, storage_options=options)
    assert ranges == line_aligned_ranges(local, 3)
    parts = [read_libsvm(url, start=s, end=e, first_line=f, allow_empty=True,
                         storage_options=options, chunk_bytes=100) for s, e, f in ranges]
    assert_same_problem(concatenate(parts), expected)


def test_s3_errors_name_the_url_and_line(s3, tmp_path):
    options, fs = s3
    lines = chunk_test_text().split("\n")
    lines[249] = "1 7:1 3:1"
    _, url = upload(fs, tmp_path, "bad.svm", ("\n".join(lines) + "\n").encode())
    with pytest.raises(DlinearError) as info:
        read_libsvm(url, storage_options=options, chunk_bytes=128)
    assert str(info.value) == (f"{url}: line 250: feature index 3 is not larger than the "
                               "previous index 7")
    missing = f"s3://{BUCKET}/no-such.svm"
    with pytest.raises(DlinearError, match=f"^can't open input file {missing}"):
        read_libsvm(missing, storage_options=options)


def test_compressed_file_is_read_whole_and_not_by_range(s3, tmp_path):
    options, fs = s3
    text = chunk_test_text().encode()
    local, url = upload(fs, tmp_path, "mixed.svm.gz", gzip.compress(text))
    expected = read_libsvm(write_plain(tmp_path, text))
    assert_same_problem(read_libsvm(url, storage_options=options, chunk_bytes=256), expected)
    assert_same_problem(read_libsvm(local, chunk_bytes=256), expected)     # local .gz too
    assert line_aligned_ranges(url, 4, storage_options=options) == [(0, None, 1)]
    with pytest.raises(DlinearError, match="compressed file can only be read whole"):
        read_libsvm(url, start=0, end=100, storage_options=options)


def write_plain(tmp_path, data: bytes) -> str:
    path = tmp_path / "plain.svm"
    path.write_bytes(data)
    return str(path)


@pytest.fixture(scope="module")
def s3_workers(s3, tmp_path_factory):
    """A scheduler and two worker processes that know the S3 endpoint and keys (from
    FSSPEC_S3_* variables); this process does not."""
    options, _ = s3
    env = {"FSSPEC_S3_ENDPOINT_URL": options["endpoint_url"], "FSSPEC_S3_KEY": KEY,
           "FSSPEC_S3_SECRET": SECRET, "AWS_DEFAULT_REGION": "us-east-1"}
    with dask_processes(tmp_path_factory.mktemp("s3cluster"), 2, env) as address:
        yield address


@pytest.mark.slow
@pytest.mark.cluster
def test_workers_read_s3_byte_ranges_and_train_the_same_model(s3, s3_workers, tmp_path):
    from distributed import Client

    options, fs = s3
    problem = make_rcv1_like(1500, n_features=300, n_classes=3, nnz_per_row=15, seed=5)
    data = tmp_path / "train.svm"
    dlinear.write_libsvm(data, problem)
    _, url = upload(fs, tmp_path, "train.svm", data.read_bytes())
    params = Params(solver_type=1, eps=1e-3)
    expected = dlinear.train(read_libsvm(data), params)
    with Client(s3_workers, timeout="30s") as client:
        dataset = Dataset.from_libsvm(url, client, block_bytes=8 << 10)
        assert len(dataset.parts) >= 4                 # byte ranges, read on the workers
        assert dataset.n_samples == problem.n_samples
        model = dlinear.train(dataset, params)
    np.testing.assert_array_equal(model.w, expected.w)


def run_train(*args):
    return subprocess.run([sys.executable, "-m", "dlinear", "train", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


@pytest.mark.slow
@pytest.mark.cluster
def test_cli_trains_from_s3_in_process_and_on_a_cluster(s3, s3_workers, tmp_path, capsys):
    """dlinear-train in this process where it reads the data itself; in a process of its
    own, which has no credentials, where the workers read it."""
    options, fs = s3
    data = tmp_path / "cli.svm"
    dlinear.write_libsvm(data, make_rcv1_like(800, n_features=200, nnz_per_row=12, seed=8))
    _, url = upload(fs, tmp_path, "cli.svm", data.read_bytes())
    r = run_in_process(capsys, "train", "-q", data, tmp_path / "local.model")
    assert r.returncode == 0, r.stderr
    reference = (tmp_path / "local.model").read_bytes()

    storage = ["--storage-option", f"endpoint_url={options['endpoint_url']}",
               "--storage-option", f"key={KEY}", "--storage-option", f"secret={SECRET}",
               "--storage-option", '{"region_name": "us-east-1"}'.join(
                   ["client_kwargs=", ""])]
    r = run_in_process(capsys, "train", "-q", "--workers", "0", *storage, url,
                       tmp_path / "s3.model")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "s3.model").read_bytes() == reference

    # the workers have the endpoint and keys; the CLI process has none
    r = run_train("-q", "--scheduler", s3_workers, url, tmp_path / "cluster.model")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "cluster.model").read_bytes() == reference

    r = run_in_process(capsys, "train", "-q", "--workers", "0", *storage,
                       f"s3://{BUCKET}/missing.svm", tmp_path / "x.model")
    assert r.returncode == 1 and r.stderr.startswith(
        f"ERROR: can't open input file s3://{BUCKET}/missing.svm"), r.stderr
    assert r.stderr.count("\n") == 1 and not (tmp_path / "x.model").exists()
