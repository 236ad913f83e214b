"""One rule turns C and the -wi class weights into each class's C (dlinear.params.class_C),
used by training, the -C search and the Crammer-Singer primal."""
import warnings
from dataclasses import replace

import numpy as np
import pytest

from dlinear import Params
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.in_process.model_selection import PathRequest, run_fold_path
from dlinear.params import class_C
from dlinear.planning.class_plan import weighted_class_C
from dlinear.in_process.train import cv_folds, train_in_process


def test_class_C_follows_liblinear():
    """Weights multiply C of the first matching class, in the order given; a label that
    matches no class is reported, not applied."""
    params = Params(C=0.5, class_weights=[(3, 2.0), (7, 10.0), (3, 0.3), (1, 4.0)])
    weighted, unknown = class_C(np.array([1, 3, 2]), params)
    np.testing.assert_array_equal(weighted, [0.5 * 4.0, (0.5 * 2.0) * 0.3, 0.5])
    assert unknown == [7]
    weighted, unknown = class_C(np.array([1, 3, 2]), params, C=8.0)
    np.testing.assert_array_equal(weighted, [8.0 * 4.0, (8.0 * 2.0) * 0.3, 8.0])
    with pytest.warns(UserWarning, match="class label 7 specified in weight is not found"):
        lines = []
        weighted_class_C(np.array([1, 3, 2]), params, lines.append)
    assert lines == ["WARNING: class label 7 specified in weight is not found"]


@pytest.mark.parametrize("solver", [1, 2])
def test_search_fold_model_is_the_trained_model(solver):
    """A -C fold at C trains exactly the model train() gives on the same rows at that C,
    class weights (two on one class) included."""
    problem = make_rcv1_like(300, n_features=150, n_classes=3, nnz_per_row=10, seed=11)
    weights = [(2, 3.0), (3, 0.7), (2, 1.3)]
    params = Params(solver_type=solver, class_weights=weights).resolved()
    perm, starts = cv_folds(problem.n_samples, 3, 1, lambda line: None)
    C = 0.5
    path = run_fold_path(problem, perm, starts[1], starts[2], params, [C], PathRequest(0, 1))
    kept = np.concatenate([perm[:starts[1]], perm[starts[2]:]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = train_in_process(problem.subset(kept), replace(params, C=C), n_threads=1)
    np.testing.assert_array_equal(path.w, model.w)
