"""Prediction as LIBLINEAR's predict_values / predict / predict_probability."""
from __future__ import annotations

import numpy as np

from .data.libsvm_reader import Problem
from .errors import DlinearError
from .kernels.sparse_ops import decision_values as _decision_values_kernel
from .model import Model


def decision_values(model: Model, problem: Problem) -> np.ndarray:
    """(l, nr_w) decision values; one-class models have rho subtracted."""
    W = np.ascontiguousarray(model.w, dtype=np.float64).reshape(model.w_size, model.nr_w)
    dec = _decision_values_kernel(problem.indptr, problem.indices, problem.data, W,
                                  model.nr_feature, float(model.bias))
    if model.is_oneclass:
        dec[:, 0] -= model.rho
    return dec


def labels_from_decision_values(model: Model, dec: np.ndarray) -> np.ndarray:
    if model.is_regression:
        return dec[:, 0].copy()
    if model.is_oneclass:
        return np.where(dec[:, 0] > 0, 1.0, -1.0)
    label = model.label.astype(np.float64)
    if model.nr_class == 2 and model.nr_w == 1:
        return np.where(dec[:, 0] > 0, label[0], label[1])
    return label[np.argmax(dec, axis=1)]   # argmax: first maximum, as LIBLINEAR


def predict(model: Model, problem: Problem) -> np.ndarray:
    return labels_from_decision_values(model, decision_values(model, problem))


def probabilities(scores: np.ndarray, multinomial: bool = False) -> np.ndarray:
    """Class probabilities of (n, k) decision values, LIBLINEAR's formulas: the softmax of
    a multinomial model's class scores, else the sigmoid of each one-vs-rest score,
    normalised. One column is a binary model's: the score of the second class (as
    scikit-learn's decision_function), giving [1 - p, p]. scipy's expit computes LIBLINEAR's
    1 / (1 + exp(-x)) with the C library's exp, the same bits as LIBLINEAR's predict."""
    from scipy.special import expit     # here: scipy.special takes 0.15 s to import
    if scores.shape[1] == 1:
        p = expit(scores[:, 0])
        return np.column_stack([1.0 - p, p])
    if multinomial:
        e = np.exp(scores - scores.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    p = expit(scores)
    return p / p.sum(axis=1, keepdims=True)


def probabilities_from_decision_values(model: Model, dec: np.ndarray) -> np.ndarray:
    """(l, nr_class) probabilities in the order of model.label."""
    if not model.is_probability:
        raise DlinearError("probability output is only supported for logistic regression")
    if model.nr_class == 1:         # one class trained as all-positive: it is certain
        return np.ones_like(dec)
    proba = probabilities(dec, model.multinomial)
    if dec.shape[1] == 1:           # LIBLINEAR's one column scores label[0]
        return np.ascontiguousarray(proba[:, ::-1])
    return proba


def predict_probability(model: Model, problem: Problem) -> np.ndarray:
    """(l, nr_class) probabilities in the order of model.label."""
    return probabilities_from_decision_values(model, decision_values(model, problem))


def block_as_problem(block) -> Problem:
    """A block of rows to predict (numpy, scipy.sparse, pydata sparse or pandas) as a
    Problem without labels."""
    if hasattr(block, "to_scipy_sparse"):       # pydata sparse (GCXS, COO)
        block = block.to_scipy_sparse()
    elif hasattr(block, "to_numpy"):            # pandas
        block = block.to_numpy(dtype=np.float64)
    block = block if hasattr(block, "tocsr") else np.atleast_2d(np.asarray(block))
    return Problem.from_arrays(block, np.zeros(block.shape[0]))


PREDICTIONS = {"labels": predict, "decision_values": decision_values,
               "probabilities": predict_probability}


def predict_block(block, model: Model, what: str) -> np.ndarray:
    """predict, decision_values or predict_probability (`what`: a key of PREDICTIONS) of
    one block of rows: what a dask array's blocks are mapped with."""
    return PREDICTIONS[what](model, block_as_problem(block))


def evaluate(y_true: np.ndarray, y_pred: np.ndarray):
    """(accuracy %, mean squared error, squared correlation coefficient), as LIBLINEAR."""
    y_true = np.asarray(y_true, dtype=np.float64)
    y_pred = np.asarray(y_pred, dtype=np.float64)
    l = len(y_true)
    if l == 0:
        return 0.0, 0.0, float("nan")
    acc = 100.0 * float(np.mean(y_true == y_pred))
    mse = float(np.mean((y_true - y_pred) ** 2))
    sv, sy = y_pred.sum(), y_true.sum()
    svv, syy, svy = (y_pred * y_pred).sum(), (y_true * y_true).sum(), (y_pred * y_true).sum()
    denom = (l * svv - sv * sv) * (l * syy - sy * sy)
    scc = float((l * svy - sv * sy) ** 2 / denom) if denom != 0 else float("nan")
    return acc, mse, scc
