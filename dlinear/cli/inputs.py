"""The command line's checks of its inputs before training: the -W weight file, the
data's shape (for the backend's cost model) and its fit against the memory budget, and
the model's size against the memory left. Errors name the file and line (or instance)."""
from __future__ import annotations

import numpy as np

from ..data.binary_format import is_binary_dataset, read_header
from ..data.input_files import is_url
from ..data.text_sample import sample_libsvm
from ..errors import DataError, DlinearError
from ..in_process.out_of_core import OUT_OF_CORE_SOLVERS, out_of_core_solver
from ..model import nr_w_of
from ..planning.cost_model import BINARY_S_PER_NONZERO, columns_growth_of_parts, columns_seen
from ..planning.memory_budget import check_fits, fit_bytes, memory_budget
from ..planning.modes import Data
from ..problem import index_dtype
from ..threads import available_cores


# peak memory of a run per weight of the model: measured 60-80 bytes (-s 1, 2, 4 on an
# index of 2e7), mostly save_model's text, which is built in memory before it is written
BYTES_PER_WEIGHT = 96


def available_memory() -> int:
    """Bytes of memory this process could still get (psutil: a dependency of distributed)."""
    import psutil
    return int(psutil.virtual_memory().available)


def check_model_size(n_features: int, nr_class: int, params, problem=None) -> None:
    """Refuses, in one line and before training, a model too large for the memory left
    (BYTES_PER_WEIGHT a weight): a feature index near 2**31 makes a model of that many weights, as in
    LIBLINEAR (which reads indices as int and would try to allocate them). `problem`
    (in process) lets the message name the instance holding the largest index."""
    n_weights = (n_features + (params.bias >= 0)) * nr_w_of(params.solver_type, max(nr_class, 1))
    needed, available = BYTES_PER_WEIGHT * n_weights, available_memory()
    if needed <= available:
        return
    where = ""
    if problem is not None and problem.nnz:
        k = int(np.argmax(problem.indices))
        instance = int(np.searchsorted(problem.indptr, k, side="right"))
        where = f"feature index {int(problem.indices[k]) + 1} of instance {instance} makes "
    raise DataError(f"{where}a model of {n_weights} weights, which needs about "
                    f"{needed / 2**30:.1f} GiB to train and save; {available / 2**30:.1f} GiB "
                    "of memory is available")


def read_weight_file(path) -> np.ndarray:
    """-W: one non-negative instance weight per line (LIBLINEAR's weights extension).
    Errors name the file and line."""
    try:
        with open(path, "rb") as f:
            lines = f.read().decode("utf-8", "replace").splitlines()
    except OSError:
        raise DlinearError(f"can't open weight file {path}") from None
    weights = np.empty(len(lines))
    for n, line in enumerate(lines, start=1):
        text = line.strip()
        try:
            value = float(text)
        except ValueError:
            raise DlinearError(f"{path}: line {n}: {text[:40]!r} is not a number "
                               "(expected one weight per line)") from None
        if not np.isfinite(value):
            raise DlinearError(f"{path}: line {n}: weight {text!r} is not finite")
        if value < 0:
            raise DlinearError(f"{path}: line {n}: weight {text} is negative")
        weights[n - 1] = value
    return weights


def check_weight_count(weights: np.ndarray, n_samples: int, path, train_file) -> np.ndarray:
    if len(weights) < n_samples:
        raise DlinearError(f"{path}: line {len(weights) + 1}: missing weight: {train_file} has "
                           f"{n_samples} instances but {path} has {len(weights)} lines")
    if len(weights) > n_samples:
        raise DlinearError(f"{path}: line {n_samples + 1}: more weights than the {n_samples} "
                           f"instances of {train_file}")
    return weights


def memory_plan(data: Data, params, opts, train_file):
    """(the memory budget: --memory, or the machine's and cgroup's; whether the fit trains
    out of core). Data whose fit in this process the budget cannot hold (estimated from
    the data's shape, when known) trains out of core where it can (a local binary dataset,
    a solver with an out-of-core method, one training), else is refused in one line."""
    budget = memory_budget(opts["memory"])
    if data.n_samples is None or data.nnz is None:
        return budget, False
    float32 = np.dtype(opts["dtype"]) == np.float32
    index_bytes = np.dtype(index_dtype(data.n_features or 0, opts["dtype"])).itemsize
    at_once = 1
    if params.spec.kind == "classification" and data.n_problems is not None:
        at_once = max(1, min(data.problems(), opts["threads"] or available_cores()))
    columns = data.occurring_columns or data.n_features or 0
    need = fit_bytes(data.n_samples, data.nnz, columns, data.value_bytes or
                     (4 if float32 else 8), data.index_bytes or index_bytes,
                     weights=opts["weight_file"] is not None, problems_at_once=at_once)
    if need <= budget.bytes:
        return budget, False
    if not out_of_core_solver(params):
        check_fits(need, budget, train_file, hint=(
            f"; {OUT_OF_CORE_SOLVERS} train a binary dataset out of core"))
    binary = is_binary_dataset(train_file, opts["storage_options"] or None)
    if binary and not is_url(train_file) and not (opts["find_C"] or opts["nr_fold"]
                                                  or opts["weight_file"]
                                                  or params.init_sol is not None):
        return budget, True
    check_fits(need, budget, train_file, hint=(
        "; a binary dataset (python -m dlinear convert) trains out of core with this "
        "solver" if not binary else
        "; out of core trains one model with no -W, -v, -C or -i"))


def input_shape(train_file, storage_options=None) -> Data:
    """The training data's shape for the cost model: a binary dataset's header, or the
    first SAMPLE_BYTES of LIBSVM text parsed and scaled to the file (its rows, nonzeros,
    largest column, classes and parse time); what cannot be read stays unknown (the
    reader reports it)."""
    from ..planning.class_plan import n_binary_problems
    try:
        if is_binary_dataset(train_file, storage_options):
            h = read_header(train_file, storage_options)
            classes = len(h.labels) if h.labels is not None else 2
            return Data(h.rows, h.nnz, n_problems=n_binary_problems(classes),
                        n_features=h.n_features, occurring_columns=h.occurring_columns,
                        columns_growth=columns_growth_of_parts(
                            [p.columns[1] - p.columns[0] for p in h.parts],
                            h.occurring_columns),
                        read_s=h.nnz * BINARY_S_PER_NONZERO,
                        value_bytes=h.dtype("data").itemsize,
                        index_bytes=h.dtype("indices").itemsize)
        sample = sample_libsvm(train_file, storage_options)
    except DlinearError:
        return Data()
    if sample is None:
        return Data()
    p, scale = sample.problem, sample.scale
    classes = len(np.unique(p.y)) if np.array_equal(p.y, np.round(p.y)) else 2
    rows, nnz = int(p.n_samples * scale), int(p.nnz * scale)
    # the columns that occur, from how their count grows over the sample's rows
    counted = [max(1, p.n_samples // 2), p.n_samples]
    occurring, growth = columns_seen(
        tuple(counted), tuple(len(np.unique(p.indices[:p.indptr[r]])) for r in counted),
        rows, p.n_features, nnz)
    return Data(rows, nnz, file_bytes=sample.file_bytes,
                n_problems=n_binary_problems(min(classes, 1000)), n_features=p.n_features,
                occurring_columns=occurring, columns_growth=growth,
                read_s=sample.seconds * scale, estimated=True)
