"""Measures the tests share: accuracy of a model, relative differences, agreement of
sparsity patterns, and the warm- and cold-started -C paths of one fold."""
from dataclasses import replace

import numpy as np

from dlinear import predict


def accuracy(model, problem):
    """Percent of the problem's rows the model labels right."""
    return 100.0 * np.mean(predict(model, problem) == problem.y)


def rel_diff(a, b):
    """|a - b| relative to b."""
    return abs(a - b) / abs(b)


def jaccard(a, b):
    """Jaccard index of the non-zero patterns of two weight arrays (1 if both are all 0)."""
    nz_a, nz_b = a != 0, b != 0
    union = np.count_nonzero(nz_a | nz_b)
    return 1.0 if union == 0 else np.count_nonzero(nz_a & nz_b) / union


def warm_and_cold_fold_paths(data, params, monkeypatch, held=600):
    """The -C path of one fold (the first `held` rows of a fixed permutation held out)
    for a dual solver, each C warm-started from the previous C's alpha, and the same path
    with every C started cold: (Cs, warm, cold, perm). The cold start stays patched in
    for the rest of the test."""
    import dlinear.in_process.model_selection as ms
    Cs = ms.c_grid(ms.calc_start_C(data, params), 64.0)
    perm = np.random.default_rng(0).permutation(data.n_samples)
    warm = ms.run_fold_path(data, perm, 0, held, params, Cs, ms.PathRequest(0, 0))
    # every C from zero: the fits are given neither the previous C's alpha nor its w
    train_one = ms.train_one
    monkeypatch.setattr(ms, "train_one", lambda task, at_C: train_one(
        replace(task, w0=None, alpha0=None), at_C))
    cold = ms.run_fold_path(data, perm, 0, held, params, Cs, ms.PathRequest(0, 0))
    return Cs, warm, cold, perm
