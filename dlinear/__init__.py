"""dlinear: LIBLINEAR's solvers, options and model files, on one core or a Dask cluster."""
from .cli.startup import answer_ctrl_c_while_importing

answer_ctrl_c_while_importing()     # a command's Ctrl-C while NumPy, Numba, Dask load

from .threads import limit_library_threads  # noqa: E402

limit_library_threads()     # before NumPy and Numba size their thread pools

from .problem import Problem
from .errors import ConvergenceWarning, DlinearError
from .model import Model, load_model, save_model
from .params import Params
from .solver_table import SOLVERS
from .api import (cross_validation, decision_values, find_parameters, predict,
                  predict_probability, train)

__version__ = "0.1.0"

__all__ = [
    "Problem", "Params", "Model", "SOLVERS", "DlinearError", "ConvergenceWarning",
    "train", "cross_validation", "find_parameters", "predict", "predict_probability", "decision_values",
    "load_model", "save_model", "read_libsvm", "write_libsvm", "read_binary",
    "convert_libsvm", "__version__",
    "LinearSVC", "LogisticRegression", "LogisticRegressionCV", "LinearSVR", "OneClassSVM",
]

# scikit-learn-style estimators (dlinear.estimators), imported on first use: scikit-learn
# is needed only by them
_ESTIMATORS = ("LinearSVC", "LogisticRegression", "LogisticRegressionCV", "LinearSVR",
               "OneClassSVM")
_DATA = ("read_libsvm", "write_libsvm", "read_binary", "convert_libsvm")


def __getattr__(name):
    # the readers and writers (dlinear.data) load on first use
    if name in _DATA:
        from . import data
        return getattr(data, name)
    if name in _ESTIMATORS:
        from . import estimators
        return getattr(estimators, name)
    raise AttributeError(name)
