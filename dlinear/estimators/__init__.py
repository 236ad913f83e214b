"""scikit-learn-style estimators over dlinear's solvers: LinearSVC, LogisticRegression,
LinearSVR and OneClassSVM.

Each class only names its parameters, their constraints (validation.py) and how they
choose a solver (mapping.py); one base class (base.py) does the work. As in scikit-learn,
`__init__` stores the arguments and `fit` validates them, maps them to a LIBLINEAR `-s`
number through the solver table (SolverSpec.loss, penalty and dual), trains with
dlinear.train and exposes the model as `coef_` and `intercept_` in scikit-learn's
conventions (`classes_` sorted; for two classes one row whose positive side is
`classes_[1]`).

numpy and scipy.sparse inputs train in this process, one-vs-rest classes on n_jobs
threads (None: 1, as in scikit-learn, so GridSearchCV(n_jobs>1) is not oversubscribed),
or on the Dask cluster of `client=` when one is given. Dask arrays and DataFrames train
on the cluster of `client=` (default: the current distributed.Client), their partitions
made into parts where they are (dlinear.cluster.Dataset.from_arrays), and are predicted
lazily with map_blocks (dask_helpers.py). verbose=1 prints LIBLINEAR's progress lines to
stderr. save_liblinear / load_liblinear write and read LIBLINEAR model files with the
classes as given to fit.

`sample_weight` scales each instance's C (LIBLINEAR's `-W` extension). Rows of weight 0
add nothing to the objective and are left out before training (numpy/scipy inputs).
"""
# validation first: without scikit-learn 1.6+ it raises the ImportError that says how to
# install it, before any other module of the package imports scikit-learn
from .validation import SKLEARN_HINT
from .base import ConvergenceWarning, linear_attributes
from .logistic import LogisticRegression
from .mapping import SKLEARN_SOLVERS, solver_for
from .svm import LinearSVC, LinearSVR, OneClassSVM

__all__ = ["LinearSVC", "LogisticRegression", "LinearSVR", "OneClassSVM", "ConvergenceWarning",
           "SKLEARN_SOLVERS", "SKLEARN_HINT", "linear_attributes", "solver_for"]
