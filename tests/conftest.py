"""Shared fixtures: generated data, and LIBLINEAR (liblinear-official 2.50) as the reference."""
import numpy as np
import pytest

from dlinear.datasets import make_rcv1_like_split
from dlinear.solvers.objectives import liblinear_model_to_dlinear


def liblinear_train(problem, options: str):
    """Trains liblinear-official on the same rows; returns it as a dlinear Model too."""
    from liblinear import liblinearutil
    lib = liblinearutil.train(problem.y, problem.to_scipy(), options + " -q")
    return lib, liblinear_model_to_dlinear(lib)


def liblinear_decision_values(lib_model, problem):
    from liblinear import liblinearutil
    labels, _, values = liblinearutil.predict(problem.y, problem.to_scipy(), lib_model, "-q")
    return np.asarray(labels), np.asarray(values)


@pytest.fixture(scope="session")
def binary_split():
    return make_rcv1_like_split(3000, 1500, n_features=2000, nnz_per_row=30, seed=11)


@pytest.fixture(scope="session")
def multiclass_split():
    return make_rcv1_like_split(3000, 1500, n_features=2000, n_classes=4, nnz_per_row=30,
                                seed=12)
