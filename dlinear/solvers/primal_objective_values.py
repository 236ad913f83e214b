"""The primal objective value f(w) of a trained model under LIBLINEAR's formulation of its
solver: how good a model is on the data, whichever program trained it.

For a one-vs-rest model the value is the sum of the k binary problems' objectives, so two
models of the same data and parameters (dlinear's or LIBLINEAR's) compare directly.
"""
from __future__ import annotations

import numpy as np

from ..data.libsvm_reader import Problem
from ..errors import DlinearError
from ..model import Model
from ..params import Params, class_C


def _loss(name: str, margin_or_residual: np.ndarray, p: float) -> np.ndarray:
    """The loss SolverSpec.loss names, of each margin (classification) or residual."""
    m = margin_or_residual
    if name == "logistic_regression":
        return np.logaddexp(0.0, -m)
    if name == "squared_hinge":
        return np.maximum(0.0, 1.0 - m) ** 2
    if name == "hinge":
        return np.maximum(0.0, 1.0 - m)
    if name == "squared_epsilon_insensitive":
        return np.maximum(0.0, np.abs(m) - p) ** 2
    if name == "epsilon_insensitive":
        return np.maximum(0.0, np.abs(m) - p)
    raise DlinearError(f"no primal objective for the loss {name} here")


def primal_objective(problem: Problem, params: Params, model: Model) -> float:
    """f(w) = R(w) + sum_i C_i loss_i(w) for `model` on `problem` with the C of `params`
    (class weights and instance weights included; for -s 6 with params.l1_ratio rho,
    R(w) = rho ||w||_1 + (1 - rho)/2 ||w||^2), summed over one-vs-rest columns; for
    -s 4 the Crammer-Singer primal, for -s 21 the one-class primal at the model's rho."""
    spec = model.spec
    if spec.loss == "crammer_singer":
        from .crammer_singer import crammer_singer_primal
        return crammer_singer_primal(problem, model, params)
    if spec.loss == "oneclass":
        from .oneclass import oneclass_objectives
        return oneclass_objectives(problem, model, params.nu)[1]
    X = problem.to_scipy()
    if model.bias >= 0:
        import scipy.sparse as sp   # here: a run that needs no objective never imports it
        X = sp.hstack([X, np.full((problem.n_samples, 1), model.bias)], format="csr")
    W = model.w.reshape(model.w_size, model.nr_w)
    sw = problem.sample_weight if problem.sample_weight is not None else 1.0
    unreg = model.w_size - 1 if (model.bias >= 0 and not params.regularize_bias) else None
    l1_ratio = params.l1_ratio if spec.elastic_net else None

    def value(w, target, C):
        z = X @ w
        r = z - target if model.is_regression else target * z
        ww = w[:unreg] if unreg is not None else w
        if spec.penalty == "l2":
            penalty = 0.5 * ww @ ww
        elif l1_ratio is None:
            penalty = np.abs(ww).sum()
        else:                        # -s 6's elastic net
            penalty = l1_ratio * np.abs(ww).sum() + 0.5 * (1.0 - l1_ratio) * (ww @ ww)
        return float(penalty + (C * sw * _loss(spec.loss, r, params.p)).sum())

    if model.is_regression:
        return value(W[:, 0], problem.y, params.C)
    weighted = class_C(model.label, params)[0]
    if model.nr_w == 1:
        ysign = np.where(problem.y == model.label[0], 1.0, -1.0)
        Cn = weighted[1] if model.nr_class == 2 else params.C
        return value(W[:, 0], ysign, np.where(ysign > 0, weighted[0], Cn))
    total = 0.0
    for k, lab in enumerate(model.label):
        ysign = np.where(problem.y == lab, 1.0, -1.0)
        total += value(W[:, k], ysign, np.where(ysign > 0, weighted[k], params.C))
    return total

