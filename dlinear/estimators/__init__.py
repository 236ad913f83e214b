"""scikit-learn estimators over dlinear's solvers: LinearSVC, LogisticRegression,
LogisticRegressionCV, LinearSVR and OneClassSVM (scikit-learn 1.6 or later).

Their ``loss``, ``penalty`` and ``dual`` choose a LIBLINEAR ``-s`` number from the solver
table as scikit-learn's do (``solver_for``; ``est.solver_type_`` tells which one ran), the
other parameters and defaults are LIBLINEAR's options, and ``coef_``, ``intercept_`` and
``classes_`` follow scikit-learn's conventions (``classes_`` sorted; for two classes one row,
positive for ``classes_[1]``).

numpy and scipy.sparse inputs train in this process, one-vs-rest classes on ``n_jobs``
threads, or on the Dask cluster of ``client=`` when one is given; Dask arrays and
DataFrames train on the cluster of ``client=`` (default: the current
``distributed.Client``) where their blocks are, and predict lazily. ``sample_weight`` scales
each instance's C (LIBLINEAR's ``-W``). ``save_liblinear`` and ``load_liblinear`` write and
read LIBLINEAR model files. The guide's page "scikit-learn estimators" shows them at work.
"""
# Each class only names its parameters, their constraints (validation.py) and how they
# choose a solver (mapping.py); one base class (base.py) does the work.
# validation first: without scikit-learn 1.6+ it raises the ImportError that says how to
# install it, before any other module of the package imports scikit-learn
from .validation import SKLEARN_HINT
from .base import ConvergenceWarning, linear_attributes
from .logistic import LogisticRegression
from .logistic_cv import LogisticRegressionCV
from .mapping import SKLEARN_SOLVERS, solver_for
from .svm import LinearSVC, LinearSVR, OneClassSVM

__all__ = ["LinearSVC", "LogisticRegression", "LogisticRegressionCV", "LinearSVR", "OneClassSVM", "ConvergenceWarning",
           "SKLEARN_SOLVERS", "SKLEARN_HINT", "linear_attributes", "solver_for"]
