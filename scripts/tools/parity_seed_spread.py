"""The spread of the default-eps stopping point of the local dual solvers over seeds,
against liblinear-official at its default eps and against f* (BENCHMARKS.md,
"Partitioned dual CD", parity at the default eps): how close "the same rule" can put two
runs of the *same serial algorithm* that differ only in their random permutations. The
data are those of the partitioned dual CD's parity tests (binary_split's training half,
the regression set).

    python -m scripts.tools.parity_seed_spread
"""
import warnings

import numpy as np

from scripts.benchmarks.harness import f_star, liblinear_train
from dlinear import Params, train
from dlinear.datasets.rcv1_like import make_rcv1_like, make_rcv1_like_split
from dlinear.solver_table import SOLVERS, solver_ids
from dlinear.solvers.primal_objective_values import primal_objective


def main():
    warnings.simplefilter("ignore")
    binary = make_rcv1_like_split(3000, 1500, n_features=2000, nnz_per_row=30, seed=11)[0]
    regression = make_rcv1_like(3000, n_features=1500, nnz_per_row=25, seed=33)
    regression.y = regression.to_scipy() @ np.random.default_rng(0).normal(size=1500)
    for solver in solver_ids(lambda spec: spec.dual_cd):
        problem = regression if SOLVERS[solver].kind == "regression" else binary
        params = Params(solver_type=solver).resolved()
        theirs = primal_objective(problem, params, liblinear_train(problem, f"-s {solver}"))
        best = f_star(problem, params)
        ours = [primal_objective(problem, params,
                                 train(problem, Params(solver_type=solver, seed=seed),
                                       n_threads=1))
                for seed in range(1, 11)]
        above = [(f - best) / best for f in ours]
        against = [(f - theirs) / theirs for f in ours]
        print(f"-s {solver}: LIBLINEAR {(theirs - best) / best:.2e} above f*; dlinear local, "
              f"seeds 1-10: {min(above):.2e}..{max(above):.2e} above f*, against LIBLINEAR "
              f"{min(against):+.2e}..{max(against):+.2e}", flush=True)


if __name__ == "__main__":
    main()
