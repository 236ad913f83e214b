"""Dask collections in and out (as xgboost.dask / lightgbm.dask users pass them), matrices
straight into dlinear.train, the parts' sizes as Dask counts them, and what reaches the
client."""
import contextlib

import numpy as np
import pytest

from dask.sizeof import sizeof

import dlinear
from dlinear import DlinearError, Params
from dlinear.datasets.rcv1_like import make_rcv1_like

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")


@pytest.fixture(scope="module")
def data():
    problem = make_rcv1_like(3000, n_features=400, n_classes=3, nnz_per_row=20, seed=31)
    return problem, problem.to_scipy()


@contextlib.contextmanager
def to_client(monkeypatch):
    """Records every result the client receives through Client.gather and Future.result
    while the block runs."""
    received = []
    gather, result = distributed.Client.gather, distributed.Future.result

    def counting_gather(self, futures, *args, **kwargs):
        out = gather(self, futures, *args, **kwargs)
        received.append(out)
        return out

    def counting_result(self, *args, **kwargs):
        out = result(self, *args, **kwargs)
        received.append(out)
        return out

    monkeypatch.setattr(distributed.Client, "gather", counting_gather)
    monkeypatch.setattr(distributed.Future, "result", counting_result)
    yield received
    monkeypatch.undo()


@pytest.mark.cluster
def test_sizeof_counts_a_part_and_the_workers_see_it(client, data):
    from dask.sizeof import sizeof
    from dlinear.cluster import Dataset
    problem, _ = data
    arrays = sum(a.nbytes for a in (problem.indptr, problem.indices, problem.data, problem.y))
    assert arrays <= sizeof(problem) < arrays + 1000
    ds = Dataset.from_arrays(problem, None, client, n_parts=2)
    # the scheduler's bookkeeping (memory limits, spilling, dashboard) has the parts' bytes
    held = client.run_on_scheduler(
        lambda dask_scheduler, keys: sum(dask_scheduler.tasks[k].nbytes for k in keys),
        keys=[p.key for p in ds.parts])
    assert held >= arrays


def test_train_takes_scipy_and_numpy_with_labels(data):
    problem, X = data
    reference = dlinear.train(problem, Params(solver_type=1))
    for matrix in (X, X.toarray()):
        model = dlinear.train(matrix, Params(solver_type=1), y=problem.y)
        np.testing.assert_array_equal(model.w, reference.w)
    with pytest.raises(DlinearError, match="needs its labels"):
        dlinear.train(X, Params(solver_type=1))
    with pytest.raises(DlinearError, match="holds its own labels"):
        dlinear.train(problem, Params(solver_type=1), y=problem.y)


@pytest.mark.cluster
@pytest.mark.parametrize("solver", [1, 0])
def test_every_input_kind_with_a_client_gives_the_local_model(client, data, solver):
    from dlinear.cluster import Dataset
    problem, X = data
    reference = dlinear.train(problem, Params(solver_type=solver))
    inputs = [
        dict(data=problem),
        dict(data=X, y=problem.y),
        dict(data=X.toarray(), y=problem.y),
        dict(data=Dataset.from_arrays(problem, None, client)),
        dict(data=da.from_array(X.toarray(), chunks=(700, -1)),
             y=da.from_array(problem.y, chunks=700)),
    ]
    for kwargs in inputs:
        model = dlinear.train(kwargs.pop("data"), Params(solver_type=solver), client=client,
                              **kwargs)
        np.testing.assert_allclose(model.w, reference.w, rtol=0, atol=1e-12)


@pytest.mark.cluster
def test_dask_dataframe_stays_on_the_workers(client, data, monkeypatch):
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    problem, X = data
    columns = [f"f{j}" for j in range(X.shape[1])]
    frame = pd.DataFrame(X.toarray(), columns=columns)
    frame["label"] = problem.y
    ddf = dd.from_pandas(frame, npartitions=6).persist()
    distributed.wait(ddf)
    whole = X.toarray().nbytes
    reference = dlinear.train(problem, Params(solver_type=1))
    with to_client(monkeypatch) as received:
        model = dlinear.train(ddf[columns], Params(solver_type=1), y=ddf["label"])
    np.testing.assert_allclose(model.w, reference.w, rtol=0, atol=1e-12)
    # the client got summaries and the weights, never the partitions (nor the data whole)
    assert sum(map(sizeof, received)) < whole / 20

    from dlinear.cluster import Dataset
    ds = Dataset.from_arrays(ddf[columns], ddf["label"], client)
    assert len(ds.parts) == 6 and ds.n_samples == problem.n_samples
    holders = client.who_has(ds.parts)
    assert all(holders[p.key] for p in ds.parts)      # each part lives on a worker
    with pytest.raises(DlinearError, match="partitions"):
        Dataset.from_arrays(ddf[columns], ddf["label"].repartition(npartitions=3), client)
    frame["name"] = "x"
    with pytest.raises(DlinearError, match="non-numeric"):
        Dataset.from_arrays(dd.from_pandas(frame, npartitions=2), ddf["label"], client)


@pytest.mark.cluster
@pytest.mark.parametrize("kind", ["numpy", "list", "pandas"])
def test_dask_dataframe_with_in_memory_labels_and_weights(client, data, kind):
    """y and sample_weight in memory are split as the DataFrame's partitions (their
    lengths computed once), as train's docstring allows."""
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    problem, X = data
    ddf = dd.from_pandas(pd.DataFrame(X.toarray()), npartitions=4)
    weights = np.linspace(0.5, 1.5, problem.n_samples)
    as_kind = {"numpy": np.asarray, "list": list, "pandas": pd.Series}[kind]
    model = dlinear.train(ddf, Params(solver_type=1), y=as_kind(problem.y),
                          sample_weight=as_kind(weights))
    reference = dlinear.train(X, Params(solver_type=1), y=problem.y, sample_weight=weights)
    np.testing.assert_allclose(model.w, reference.w, rtol=0, atol=1e-12)
    with pytest.raises(DlinearError, match="rows but y has"):
        dlinear.train(ddf, Params(solver_type=1), y=problem.y[:-1])


@pytest.mark.slow
@pytest.mark.cluster
def test_predict_is_lazy_on_collections(client, data):
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    from dlinear.cluster import Dataset
    problem, X = data
    model = dlinear.train(problem, Params(solver_type=0))
    labels = dlinear.predict(model, problem)
    values = dlinear.decision_values(model, problem)
    proba = dlinear.predict_probability(model, problem)
    np.testing.assert_array_equal(dlinear.predict(model, X), labels)
    dense = da.from_array(X.toarray(), chunks=(1000, 100))
    ddf = dd.from_pandas(pd.DataFrame(X.toarray()), npartitions=3)
    for rows in (Dataset.from_arrays(problem, None, client), dense, ddf):
        lazy = dlinear.predict(model, rows)
        assert isinstance(lazy, da.Array)
        np.testing.assert_array_equal(lazy.compute(), labels)
        np.testing.assert_allclose(dlinear.decision_values(model, rows).compute(), values,
                                   rtol=1e-12)
        np.testing.assert_allclose(dlinear.predict_probability(model, rows).compute(), proba,
                                   rtol=1e-12)
    svm = dlinear.train(problem, Params(solver_type=1))
    with pytest.raises(DlinearError, match="only supported for logistic"):
        dlinear.predict_probability(svm, dense)


@pytest.mark.cluster
def test_dual_variables_stay_on_the_workers(client, monkeypatch):
    # 20000 rows x 4 classes of duals would be 640 kB; w is 4 x 101 floats
    problem = make_rcv1_like(20000, n_features=100, n_classes=4, nnz_per_row=10, seed=5)
    reference = dlinear.train(problem, Params(solver_type=1))
    with to_client(monkeypatch) as received:
        model = dlinear.train(problem, Params(solver_type=1), client=client)
    np.testing.assert_array_equal(model.w, reference.w)
    assert sum(map(sizeof, received)) < problem.n_samples * 8


@pytest.mark.slow
@pytest.mark.cluster
def test_search_keeps_the_duals_on_the_workers(client, monkeypatch):
    from dlinear.in_process.model_selection import PathResult
    problem = make_rcv1_like(2000, n_features=100, nnz_per_row=10, seed=6)
    params = Params(solver_type=1)
    reference = dlinear.find_parameters(problem, params, 3, n_threads=1)
    with to_client(monkeypatch) as received:
        found = dlinear.find_parameters(problem, params, 3, client=client)
    assert found == reference         # the continuations were warm-started as here
    paths = [r for r in received if isinstance(r, PathResult)]
    assert len(paths) >= 3 and all(r.alpha is None and r.w is not None for r in paths)
