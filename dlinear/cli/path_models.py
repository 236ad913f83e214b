"""dlinear-train -C --path-models DIR: after the search, the model on the whole training
set at every C of the search's grid, written as DIR/model.C=<C> (LIBLINEAR's -C writes no
model). The grid is the search's (start_C doubled up to its max_C; for -s 11 at the best
p); each C's fit starts from the model at the C before it."""
from __future__ import annotations

import os
from dataclasses import replace

from ..errors import DlinearError
from .exit import UsageError

OPTION = "--path-models"


def path_model_name(C: float) -> str:
    """The file name of the model at C: model.C=<C as %g> (the grid's C's are powers of 2
    times start_C, distinct at %g's 6 digits)."""
    return "model.C=%g" % C


def path_models_directory(value: str, argv) -> str:
    """The directory of --path-models, which needs -C."""
    if "-C" not in argv:
        raise UsageError(f"option {OPTION} needs -C (it writes the models of the search's C's)")
    return value


def write_path_models(data, params, opts, start_C, start_p, best_p) -> list:
    """With --path-models, trains and writes every C's model of the -C search's grid;
    returns the paths written."""
    # the training modules load only when training runs (the CLI checks options first)
    from ..api import train
    from ..data.libsvm_reader import Problem
    from ..in_process.model_selection import search_plan, train_path
    from ..model import save_model
    directory, n_threads = opts.get("path_models"), opts.get("threads")
    if not directory:
        return []
    if not isinstance(data, Problem):
        raise DlinearError(f"{OPTION} trains in this process: use it without --workers and "
                           "--scheduler")
    if params.spec.kind == "regression":
        params = replace(params, p=best_p)
        plan = [(p, Cs) for p, Cs in search_plan(data, params, start_C, start_p)
                if p == best_p]
    else:
        plan = search_plan(data, params, start_C, start_p)
    Cs = plan[0][1] if plan else []
    os.makedirs(directory, exist_ok=True)

    def fit(problem, at_C, init):
        return train(problem, at_C, n_threads=n_threads, init=init)

    paths = []
    for C, model in zip(sorted(Cs), train_path(data, params, Cs, fit)):
        path = os.path.join(directory, path_model_name(C))
        save_model(path, model)
        paths.append(path)
    return paths
