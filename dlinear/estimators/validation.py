"""The estimators' parameter checks, declared as scikit-learn's `_parameter_constraints`.

Each class lists what each of its parameters may be; BaseEstimator._validate_params
checks them at the start of fit and raises scikit-learn's InvalidParameterError (a
ValueError) in scikit-learn's words, e.g. "The 'C' parameter of LinearSVC must be a float
in the range (0.0, inf). Got 0 instead.". Checks that depend on several parameters (the
solver a combination maps to) stay with the mapping.

Importing this module first (dlinear/estimators/__init__.py does) turns a missing or too
old scikit-learn into one ImportError that says how to install it.
"""
from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from ..solver_table import SOLVERS

# dlinear is not on a package index, so the hint names scikit-learn itself (or the extra
# of an editable install from a clone)
SKLEARN_HINT = ('dlinear\'s estimators need scikit-learn 1.6 or later: '
                'pip install "scikit-learn>=1.6" (or pip install -e ".[sklearn]" in a clone '
                'of dlinear)')
try:
    from sklearn.utils._param_validation import Interval, Options, StrOptions
    from sklearn.utils.validation import validate_data    # noqa: F401 (1.6 or later)
except ImportError as e:       # missing, or older than 1.6 (validate_data, __sklearn_tags__)
    raise ImportError(f"{SKLEARN_HINT} ({e})", name=e.name) from e

# a finite positive number (C, tol, intercept_scaling)
POSITIVE = Interval(Real, 0.0, np.inf, closed="neither")

# the LIBLINEAR -s numbers dlinear can train; whether one suits the estimator (its kind)
# is _LiblinearEstimator._explicit_solver's check
SOLVER_NUMBERS = Options(Integral, {s.id for s in SOLVERS.values() if s.available})

# what every estimator has
COMMON = {
    "tol": [POSITIVE, None],
    # None: 1 (or joblib's context), -1: one per core; 0 has no meaning
    "n_jobs": [Interval(Integral, 1, None, closed="left"),
               Interval(Integral, None, -1, closed="right"), None],
    "verbose": ["verbose"],
    "client": "no_validation",          # a distributed.Client, or None: the current one
}

# what the estimators with an intercept, a C and an iteration cap have
LINEAR = {
    **COMMON,
    "C": [POSITIVE],
    "dual": ["boolean", StrOptions({"auto"})],
    "fit_intercept": ["boolean"],
    "intercept_scaling": [POSITIVE],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "random_state": ["random_state"],
    "solver": [SOLVER_NUMBERS, None],
    "partition": ["boolean", None],
}

CLASS_WEIGHT = [dict, StrOptions({"balanced"}), None]
