"""dlinear: LIBLINEAR's solvers, options and model files, on one core or a Dask cluster."""
from .cli.startup import answer_ctrl_c_while_importing

answer_ctrl_c_while_importing()     # a command's Ctrl-C while NumPy, Numba, Dask load

from .threads import limit_library_threads  # noqa: E402

limit_library_threads()     # before NumPy and Numba size their thread pools

import sys as _sys  # noqa: E402
from types import ModuleType as _ModuleType  # noqa: E402

from .errors import ConvergenceWarning, DlinearError  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "Problem", "Params", "Model", "SOLVERS", "DlinearError", "ConvergenceWarning",
    "train", "cross_validation", "find_parameters", "predict", "predict_probability", "decision_values",
    "load_model", "save_model", "read_libsvm", "write_libsvm", "read_binary",
    "convert_libsvm", "__version__",
    "LinearSVC", "LogisticRegression", "LogisticRegressionCV", "LinearSVR", "OneClassSVM",
]

# The public names load on first use (PEP 562), so that `import dlinear` and a command's
# checks before its work (the output path, the options) do not wait for Numba, SciPy and
# Dask; the estimators also need scikit-learn.
_HOME = {
    "Problem": "problem", "Params": "params", "SOLVERS": "solver_table",
    "Model": "model", "load_model": "model", "save_model": "model",
    **dict.fromkeys(("train", "cross_validation", "find_parameters", "predict",
                     "predict_probability", "decision_values"), "api"),
    **dict.fromkeys(("read_libsvm", "write_libsvm", "read_binary", "convert_libsvm"), "data"),
    **dict.fromkeys(("LinearSVC", "LogisticRegression", "LogisticRegressionCV", "LinearSVR",
                     "OneClassSVM"), "estimators"),
}


def __getattr__(name):
    import importlib
    if name in _HOME:
        value = getattr(importlib.import_module(f".{_HOME[name]}", __name__), name)
        globals()[name] = value
        return value
    try:        # a subpackage or module not imported yet (dlinear.cluster, ...)
        return importlib.import_module(f".{name}", __name__)
    except ModuleNotFoundError as e:
        if e.name != f"{__name__}.{name}":
            raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


def __dir__():
    return sorted(set(globals()) | set(__all__))


class _Package(_ModuleType):
    """dlinear.predict is the function (dlinear.api.predict), as a user calls it, also
    once the module of that name (dlinear/predict.py) is imported: the import system's
    binding of a submodule to its package's attribute is left out for that one name."""

    def __setattr__(self, name, value):
        if name in _HOME and isinstance(value, _ModuleType):
            return
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package
