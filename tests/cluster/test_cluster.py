"""The Dask engine: data on workers, classes and folds as tasks, real separate processes."""
import datetime
from dataclasses import replace
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import dlinear
from dlinear import ConvergenceWarning, DlinearError, Params, cross_validation, train
from dlinear.cluster import Dataset
from dlinear.data.libsvm_reader import read_libsvm, write_libsvm
from dlinear.datasets.rcv1_like import make_rcv1_like
from tests.support.clusters import local_cluster, start_cluster, stop_cluster, wait_for_workers

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def multiclass_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("cluster") / "five.train"
    write_libsvm(path, make_rcv1_like(4000, n_features=1500, n_classes=5, nnz_per_row=25,
                                      seed=21))
    return path


def assert_same_problem(a, b):
    for name in ("indptr", "indices", "data", "y"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert a.n_features == b.n_features


@pytest.mark.slow
@pytest.mark.cluster
def test_dataset_from_libsvm_reads_blocks_on_workers(client, multiclass_file):
    ds = Dataset.from_libsvm(multiclass_file, client, block_bytes=50_000)
    assert len(ds.parts) > 4
    local = read_libsvm(multiclass_file)
    assert (ds.n_samples, ds.n_features, ds.nnz) == (local.n_samples, local.n_features,
                                                     local.nnz)
    assert_same_problem(ds.to_problem(), local)
    # the parts were read where they live: on more than one worker
    holders = {w for ws in client.who_has(ds.parts).values() for w in ws}
    assert len(holders) == 2
    X = ds.X
    assert X.shape == (local.n_samples, local.n_features) and len(X.chunks[0]) == len(ds.parts)
    # computed by this client: the module's other cluster (client_without_stealing) may be
    # the default client by now, and this one's parts are not on its workers
    block = client.compute(X.blocks[1]).result()
    assert type(block).__name__ == "GCXS" and block.indices.dtype == np.int32
    np.testing.assert_array_equal(client.compute(X).result().todense(),
                                  local.to_scipy().toarray())
    np.testing.assert_array_equal(client.compute(ds.y).result(), local.y)


@pytest.mark.slow
@pytest.mark.cluster
def test_dataset_from_arrays(client):
    import dask.array as da
    import scipy.sparse as sp
    local = make_rcv1_like(600, n_features=300, n_classes=3, nnz_per_row=10, seed=2)
    X = local.to_scipy()
    assert_same_problem(Dataset.from_arrays(X, local.y, client).to_problem(), local)
    assert_same_problem(Dataset.from_arrays(X.toarray(), local.y, client).to_problem(), local)
    # a dask array chunked along columns too: rechunked so each block holds whole rows
    dX = da.from_array(X.toarray(), chunks=(150, 100)).map_blocks(sp.csr_matrix)
    dy = da.from_array(local.y, chunks=200)
    ds = Dataset.from_arrays(dX, dy, client)
    assert len(ds.parts) == 4
    assert_same_problem(ds.to_problem(), local)


@pytest.mark.cluster
@pytest.mark.parametrize("solver,bias", [(1, -1.0), (3, 1.0)])
def test_cluster_model_equals_local_model(client, multiclass_file, solver, bias):
    params = Params(solver_type=solver, bias=bias, eps=1e-3)
    local = train(read_libsvm(multiclass_file), params)
    ds = Dataset.from_libsvm(multiclass_file, client, block_bytes=100_000)
    on_cluster = train(ds, params)
    np.testing.assert_array_equal(on_cluster.w, local.w)
    np.testing.assert_array_equal(on_cluster.label, local.label)
    # a Problem plus a client is scattered to the workers and gives the same model
    np.testing.assert_array_equal(train(read_libsvm(multiclass_file), params, client=client).w,
                                  local.w)


@pytest.mark.cluster
def test_elastic_net_ratio_reaches_the_workers(client, multiclass_file):
    """-s 6 trains on a copy of the data per worker: its elastic-net ratio (--l1-ratio)
    travels with the parameters, and the model is the in-process one, bit for bit."""
    params = Params(solver_type=6, l1_ratio=0.25, bias=1.0, regularize_bias=False, eps=1e-3)
    local = train(read_libsvm(multiclass_file), params)
    on_cluster = train(Dataset.from_libsvm(multiclass_file, client), params)
    np.testing.assert_array_equal(on_cluster.w, local.w)
    l1 = train(read_libsvm(multiclass_file), Params(solver_type=6, bias=1.0,
                                                    regularize_bias=False, eps=1e-3))
    assert not np.array_equal(local.w, l1.w)


def _count_transposes_on_worker():
    """Wraps this worker's columns_of (the transposition of X) to count its calls."""
    import dlinear.solvers.task as task
    original = getattr(task, "_uncounted_columns_of", task.columns_of)
    task._uncounted_columns_of = original
    task.transposes = 0

    def counted(*args, **kwargs):
        task.transposes += 1
        return original(*args, **kwargs)
    task.columns_of = counted


def _transposes_on_worker():
    import dlinear.solvers.task as task
    return task.transposes


@pytest.fixture(scope="module")
def client_without_stealing():
    """A 2-worker cluster whose scheduler never moves a task to another worker, so each
    class task runs where the engine placed it (work stealing, on a loaded machine,
    moves some; a moved task transposes its copy again on the thief)."""
    import dask
    with dask.config.set({"distributed.scheduler.work-stealing": False}):
        with local_cluster(2) as (_, c):
            yield c


@pytest.mark.slow
@pytest.mark.cluster
@pytest.mark.parametrize("solver", [5, 6])
def test_cluster_transposes_each_data_copy_once(client_without_stealing, multiclass_file,
                                                solver):
    """-s 5/-s 6 one-vs-rest on the cluster: the class tasks on one worker share one
    transpose of its data copy (5 classes on 2 workers: 2 transposes, not 5), and the
    model is the in-process one."""
    import cloudpickle
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    client = client_without_stealing
    params = Params(solver_type=solver, bias=1.0, eps=1e-3)
    local = train(read_libsvm(multiclass_file), params)
    client.run(_count_transposes_on_worker)
    on_cluster = train(Dataset.from_libsvm(multiclass_file, client), params)
    counts = client.run(_transposes_on_worker)
    assert len(local.label) == 5
    assert sorted(counts.values()) == [1, 1]
    np.testing.assert_array_equal(on_cluster.w, local.w)


@pytest.mark.slow
@pytest.mark.cluster
def test_one_worker_gives_the_same_model(multiclass_file):
    params = Params(eps=1e-3)
    local = train(read_libsvm(multiclass_file), params)
    with local_cluster(1) as (_, c):
        model = train(Dataset.from_libsvm(multiclass_file, c), params)
    np.testing.assert_array_equal(model.w, local.w)


@pytest.mark.cluster
def test_cross_validation_folds_on_cluster(client, multiclass_file):
    params = Params(eps=1e-3)
    local = cross_validation(read_libsvm(multiclass_file), params, 4)
    np.testing.assert_array_equal(
        cross_validation(Dataset.from_libsvm(multiclass_file, client), params, 4), local)


@pytest.mark.cluster
def test_cap_reached_on_a_worker_warns_the_client(client, multiclass_file):
    """A whole-problem solver (here -s 13, which has no primal solver to switch to) runs
    on a worker, whose warnings the caller never sees: they are raised again on the
    client."""
    data = Dataset.from_libsvm(multiclass_file, client)
    lines = []
    with pytest.warns(ConvergenceWarning, match="reaching max number of iterations"):
        train(data, Params(solver_type=13, eps=1e-12, max_iter=2), log=lines.append)
    assert any(line.startswith("WARNING: reaching max") for line in lines)


def test_file_ranges_are_a_multiple_of_the_workers(tmp_path):
    """Each worker reads as many ranges (a Newton round waits for the slowest)."""
    from dlinear.cluster.dataset import _plan_ranges
    path = tmp_path / "big.svm"
    write_libsvm(path, make_rcv1_like(8000, n_features=2000, nnz_per_row=20, seed=4))
    size = path.stat().st_size
    assert size > (1 << 20)
    _, _, ranges = _plan_ranges(str(path), size // 7 + 1, 3)       # 7 blocks' worth
    assert len(ranges) == 9
    assert ranges[0][0] == 0 and ranges[-1][1] == size


@pytest.mark.cluster
def test_bad_file_is_reported_from_the_worker(client, tmp_path):
    bad = tmp_path / "bad.svm"
    bad.write_text("1 1:1\n" * 5 + "2 4:1 3:1\n")
    with pytest.raises(DlinearError, match=r"bad.svm: line 6: .*3.*4"):
        Dataset.from_libsvm(bad, client)


# ---------------------------------------------------------------- separate processes
def run_cli(*args):
    return subprocess.Popen([sys.executable, "-m", "dlinear", "train", *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def class_tasks_run(client):
    """Per worker name, how many one-vs-rest class tasks it has executed."""
    def count(dask_worker):
        return dask_worker.name, sum("fit_class" in str(entry[0])
                                     for entry in dask_worker.state.log
                                     if len(entry) > 2 and entry[2] == "executing")
    return dict(client.run(count).values())


@pytest.mark.slow
@pytest.mark.cluster
def test_train_with_scheduler_on_separate_processes(multiclass_file, tmp_path):
    address, procs = start_cluster(tmp_path)
    try:
        with distributed.Client(address, timeout=30) as c:
            wait_for_workers(c, 2)
            proc = run_cli("--scheduler", address, "-e", "0.001", multiclass_file,
                           tmp_path / "m.model")
            out, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, err
            # dlinear's own line on stderr; stdout is LIBLINEAR's train's output only
            assert f"using the Dask cluster at {address} (2 workers)" in err
            assert "dlinear" not in out and "optimization finished" in out
            ran = class_tasks_run(c)
        assert ran["w0"] >= 1 and ran["w1"] >= 1 and ran["w0"] + ran["w1"] >= 5, ran
        expected = train(read_libsvm(multiclass_file), Params(eps=1e-3))
        np.testing.assert_array_equal(dlinear.load_model(tmp_path / "m.model").w, expected.w)
        # the cluster is left running for the next job
        assert all(p.poll() is None for p in procs.values())
    finally:
        stop_cluster(procs)


@pytest.mark.slow
@pytest.mark.cluster
@pytest.mark.parametrize("solver", [1, 0])
def test_worker_killed_mid_training_still_gives_the_same_model(tmp_path, solver):
    """A class task's worker killed: the task moves, its copy rebuilt (-s 1: one task per
    class; -s 0: one task per group of classes, Newton's copy mode)."""
    data = tmp_path / "twelve.train"
    write_libsvm(data, make_rcv1_like(20000, n_features=4000, n_classes=12, nnz_per_row=40,
                                      seed=5))
    params = ["-s", str(solver), "-e", "0.0001"]
    expected = train(read_libsvm(data), Params(solver_type=solver, eps=1e-4))
    address, procs = start_cluster(tmp_path)
    try:
        with distributed.Client(address, timeout=30) as c:
            by_name = wait_for_workers(c, 2)
            proc = run_cli("--scheduler", address, *params, data, tmp_path / "m.model")
            victim = None
            deadline = time.time() + 120
            while victim is None and time.time() < deadline and proc.poll() is None:
                for worker, keys in c.processing().items():
                    if any("fit_class" in str(k) for k in keys):
                        victim = worker
                        break
                time.sleep(0.02)
            assert victim is not None and proc.poll() is None, "no class task seen running"
            name = next(n for n, a in by_name.items() if a == victim)
            os.killpg(procs[name].pid, signal.SIGKILL)
            out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        np.testing.assert_array_equal(dlinear.load_model(tmp_path / "m.model").w, expected.w)
    finally:
        stop_cluster(procs)


@pytest.mark.slow
@pytest.mark.cluster
@pytest.mark.parametrize("victim,n_classes,multinomial", [("root", 2, False),
                                                         ("leaf", 2, False),
                                                         ("root", 4, False),
                                                         ("leaf", 3, True)])
def test_worker_killed_mid_newton_still_reaches_the_optimum(tmp_path, monkeypatch, victim,
                                                           n_classes, multinomial):
    """The Newton actors of a dead worker are rebuilt on the others, their state replayed
    (for 4 classes: the k-column actors, every class's state; and the multinomial's)."""
    from dlinear.cluster import objective, tree
    from dlinear.solvers.primal_objective_values import primal_objective
    path = tmp_path / "binary.train"
    write_libsvm(path, make_rcv1_like(6000, n_features=2000, n_classes=n_classes,
                                      nnz_per_row=30, seed=8))
    # partition=True: map-reduced over the parts, though the data fits a worker's copy
    params = Params(solver_type=0, eps=1e-4, multinomial=multinomial, partition=True)
    expected = train(read_libsvm(path), replace(params, partition=None))
    address, procs = start_cluster(tmp_path, n_workers=3)
    try:
        with distributed.Client(address, timeout=30) as c:
            by_name = wait_for_workers(c, 3)
            dataset = Dataset.from_libsvm(path, c, block_bytes=64 << 10)
            real_round = tree.ActorTree.round
            killed, killed_tree = [], []

            def round_after_a_kill(self, method, *args, **kwargs):
                if self.n_calls == 8 and not killed:      # in the first Newton iterations
                    assert len(self.workers) == 3
                    worker = self.workers[0 if victim == "root" else -1]
                    name = next(n for n, a in by_name.items() if a == worker)
                    os.killpg(procs[name].pid, signal.SIGKILL)
                    procs[name].wait()
                    killed.append(worker)
                    killed_tree.append(self)
                return real_round(self, method, *args, **kwargs)

            monkeypatch.setattr(tree.ActorTree, "round", round_after_a_kill)
            model = train(dataset, params)
            assert killed and killed[0] not in c.nthreads()
        if multinomial:     # the same iterations: the replayed state is exact
            assert killed_tree[0].make is objective.multinomial_rows
            assert model.n_iter == expected.n_iter
            np.testing.assert_allclose(model.w, expected.w, atol=1e-8)
            return
        problem = read_libsvm(path)
        f, f_expected = primal_objective(problem, params, model), \
            primal_objective(problem, params, expected)
        assert abs(f - f_expected) <= 1e-8 * f_expected
        if n_classes > 2:
            assert killed_tree[0].make is objective.class_columns
    finally:
        stop_cluster(procs)


def make_certificates(directory):
    """A CA and one certificate for 127.0.0.1 signed by it (scheduler, workers, client)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
    import ipaddress

    def name(cn):
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])

    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (x509.CertificateBuilder().subject_name(name("dlinear test CA"))
          .issuer_name(name("dlinear test CA")).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now)
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder().subject_name(name("127.0.0.1")).issuer_name(ca.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]),
                critical=False)
            .sign(ca_key, hashes.SHA256()))
    paths = {n: directory / f"{n}.pem" for n in ("ca", "cert", "key")}
    paths["ca"].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths["cert"].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths["key"].write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                               serialization.PrivateFormat.PKCS8,
                                               serialization.NoEncryption()))
    return paths


@pytest.mark.slow
@pytest.mark.cluster
def test_tls_scheduler(multiclass_file, tmp_path):
    pytest.importorskip("cryptography")
    certs = make_certificates(tmp_path)
    tls = ["--tls-ca-file", certs["ca"], "--tls-cert", certs["cert"], "--tls-key", certs["key"]]
    address, procs = start_cluster(tmp_path, n_workers=1, tls_args=tls)
    try:
        assert address.startswith("tls://")
        proc = run_cli("--scheduler", address, *tls, "-q", multiclass_file, tmp_path / "m")
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        expected = train(read_libsvm(multiclass_file), Params())
        np.testing.assert_array_equal(dlinear.load_model(tmp_path / "m").w, expected.w)
        # without the certificates: a one-line error, no model
        proc = run_cli("--scheduler", address, "-q", multiclass_file, tmp_path / "m2")
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 1 and err.startswith("ERROR: ") and err.count("\n") == 1
        assert not (tmp_path / "m2").exists()
    finally:
        stop_cluster(procs)

