"""The command line's checks of its inputs before training: the -W weight file and the
model's size against the memory left. Errors name the file and line (or instance)."""
from __future__ import annotations

import numpy as np

from ..errors import DataError, DlinearError
from ..model import nr_w_of


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
