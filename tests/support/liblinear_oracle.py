"""LIBLINEAR 2.50 (liblinear-official, through its ctypes binding) as the reference of the
parity tests and the benchmarks: train it on a dlinear Problem, read its log, turn its
model into a dlinear Model, and compute f*, the optimum's primal objective, from a run at a
tight tolerance.

Test-side only: the package never imports this. The model conversion and the seeding are
the benchmarks' LIBLINEAR peer's (scripts/benchmarks/harness.py), written once there.
"""
from __future__ import annotations

import numpy as np

from scripts.benchmarks.harness import (liblinear_model_to_dlinear, liblinear_options,  # tests use all
                                        seed_liblinear, tight_run)
from dlinear.solvers import SOLVERS
from dlinear.solvers.primal_objective_values import primal_objective


def liblinear_train_logged(problem, options: str):
    """Trains liblinear-official on the problem's rows with its log on: (its ctypes model,
    the model as a dlinear Model, its log lines without trailing blanks). The log is
    LIBLINEAR's own (its print function set through the binding's print_func), so Newton
    iteration and CG counts can be compared line by line."""
    from liblinear import liblinear, liblinearutil
    chunks = []
    callback = liblinear.PRINT_STRING_FUN(lambda s: chunks.append(s.decode()))
    param = liblinear.parameter(options)
    param.print_func = callback
    seed_liblinear()
    lib = liblinearutil.train(liblinearutil.problem(problem.y, problem.to_scipy()), param)
    lines = [line.rstrip() for line in "".join(chunks).splitlines()]
    return lib, liblinear_model_to_dlinear(lib), lines


def liblinear_train(problem, options: str):
    """Trains liblinear-official on the same rows (rand() seeded); returns it as a dlinear
    Model too."""
    from liblinear import liblinearutil
    seed_liblinear()
    lib = liblinearutil.train(problem.y, problem.to_scipy(), options + " -q")
    return lib, liblinear_model_to_dlinear(lib)


def liblinear_decision_values(lib_model, problem):
    from liblinear import liblinearutil
    labels, _, values = liblinearutil.predict(problem.y, problem.to_scipy(), lib_model, "-q")
    return np.asarray(labels), np.asarray(values)


_F_STAR: dict = {}


def f_star(problem, params) -> float:
    """f*: the primal objective (of `params`' formulation) at LIBLINEAR's optimum of the
    same problem, from its run at a tight eps (harness.tight_run). Where that run stops at
    LIBLINEAR's iteration cap (its dual CD solvers stop after 300 epochs, and the L1-loss ones can end
    far from the optimum there), the eps is loosened 10x at a time until a run converges.
    Cached per problem and problem parameters."""
    solver, eps = tight_run(params.solver_type)
    key = (id(problem), solver, eps, liblinear_options(params))
    if key not in _F_STAR:
        while True:
            _, model, log = liblinear_train_logged(
                problem, f"{solver} -e {eps!r} {liblinear_options(params)}")
            if "WARNING: reaching max number of iterations" not in log or eps >= 1e-3:
                break
            eps *= 10
        _F_STAR[key] = (problem, primal_objective(problem, params, model))
    return _F_STAR[key][1]


def assert_near_optimum(f: float, f_opt: float, tol: float):
    """Asserts |f - f*| / |f*| <= tol. With DLINEAR_GAP_LOG=<file> in the environment each
    call appends "<test id> <gap> <tol>" to that file: how tolerances are measured (run the
    tests at the asked eps and at 10x it, scripts/tools/mutation_check.py, and set each tolerance
    between the two)."""
    import os
    rel = abs(f - f_opt) / abs(f_opt)
    record = os.environ.get("DLINEAR_GAP_LOG")
    if record:
        test = os.environ.get("PYTEST_CURRENT_TEST", "?").split(" ")[0]
        with open(record, "a") as out:
            out.write(f"{test} {rel:.3e} {tol:.1e}\n")
    assert rel <= tol, f"relative gap {rel:.3e} to the optimum > {tol:g} ({f!r} vs {f_opt!r})"
