"""dlinear's solvers against LIBLINEAR 2.50 (liblinear-official) on the same in-memory data.

One thread each, Numba warmed up first, LIBLINEAR's problem built before its clock starts:
both times are solver time. Ratios are dlinear / LIBLINEAR (< 1: dlinear faster), measured
in the same process and run.
"""
from __future__ import annotations

import numpy as np

from dlinear import Params, train
from dlinear.solver_table import SOLVERS, solver_ids

from . import harness, shapes

def shape_of(solver: int) -> str:
    """The data set of a solver's row: regression targets, several classes for a solver of
    all classes at once (Crammer-Singer), else the binary rcv1-like set."""
    spec = SOLVERS[solver]
    if spec.kind == "regression":
        return "rcv1_regression"
    return "multiclass" if spec.all_classes else "rcv1"


class LiblinearPeer:
    """Each solver at its default eps: train time and objective against LIBLINEAR's."""
    params = solver_ids()
    param_names = ["solver"]
    number = 1
    repeat = 3
    timeout = 300

    def setup(self, solver):
        self.problem, self.test = shapes.split(shape_of(solver))
        self.params = Params(solver_type=solver).resolved()
        harness.warm_up(self.problem, [self.params])
        self.lib_problem = harness.liblinear_problem(self.problem)
        self.options = (f"-s {solver} -e {self.params.eps!r} "
                        f"{harness.liblinear_options(self.params)} -q")
        from liblinear import liblinear
        self.lib_param = liblinear.parameter(self.options)

    def _liblinear(self):
        from liblinear import liblinearutil
        return liblinearutil.train(self.lib_problem, self.lib_param)

    def time_dlinear(self, solver):
        train(self.problem, self.params, n_threads=1)

    def time_liblinear(self, solver):
        self._liblinear()

    def track_time_ratio_to_liblinear(self, solver):
        ours = theirs = np.inf
        for _ in range(3):        # interleaved, best of each
            ours = min(ours, harness.timed(
                lambda: train(self.problem, self.params, n_threads=1)).wall)
            theirs = min(theirs, harness.timed(self._liblinear).wall)
        return ours / theirs
    track_time_ratio_to_liblinear.unit = "dlinear / LIBLINEAR"

    def track_objective_gap_to_liblinear(self, solver):
        ours = train(self.problem, self.params, n_threads=1)
        theirs = harness.liblinear_model_to_dlinear(self._liblinear())
        objective = harness.objective_of(self.problem, self.params)
        return harness.relative_gap(objective(ours), objective(theirs))
    track_objective_gap_to_liblinear.unit = "(f - f LIBLINEAR) / f LIBLINEAR"

    def peer_row(self, solver, repeat: int) -> dict:
        """CPU seconds of both train calls (interleaved, best of `repeat`), their ratio
        and the objective gap: one row of the table `python -m scripts.benchmarks.solvers`
        prints."""
        ours = theirs = np.inf
        for _ in range(repeat):
            ours = min(ours, harness.timed(
                lambda: train(self.problem, self.params, n_threads=1)).cpu)
            theirs = min(theirs, harness.timed(self._liblinear).cpu)
        return dict(solver=solver, shape=shape_of(solver), size=shapes.size(),
                    dlinear_cpu_s=ours, liblinear_cpu_s=theirs, ratio=ours / theirs,
                    objective_gap=self.track_objective_gap_to_liblinear(solver))


# (label, dlinear Params keywords, LIBLINEAR's counterpart -s, formulation)
CD_RUNS = {
    "-s 1": (dict(solver_type=1), 1, "l2svc"),
    "-s 1 --cd-block 2": (dict(solver_type=1, cd_block=2), 1, "l2svc"),
    "-s 1 --online": (dict(solver_type=1, online=True), 1, "l2svc"),
    "-s 3": (dict(solver_type=3), 3, "l1svc"),
    "-s 3 --cd-block 2": (dict(solver_type=3, cd_block=2), 3, "l1svc"),
    "-s 3 --online": (dict(solver_type=3, online=True), 3, "l1svc"),
    "-s 2 --primal-cd": (dict(solver_type=2, primal_cd=True), 2, "l2svc"),
    "-s 2 --primal-cd --online": (dict(solver_type=2, primal_cd=True, online=True), 2, "l2svc"),
    "-s 7": (dict(solver_type=7), 7, "lr"),
    "-s 12": (dict(solver_type=12), 12, "l2svr"),
    "-s 13": (dict(solver_type=13), 13, "l1svr"),
}
# the formulation's primal solver, whose objective the gap is measured on
FORMULATION_SOLVER = {"l2svc": 2, "l1svc": 3, "lr": 0, "l2svr": 11, "l1svr": 13}
# untimed dlinear runs joining f* where LIBLINEAR has only a dual solver capped at 300 epochs
DLINEAR_REFERENCE = {"l1svc": dict(solver_type=3, eps=1e-6, max_iter=3000),
                     "l1svr": dict(solver_type=13, eps=1e-6, max_iter=3000)}
PASS_LADDER = [2.0 ** k for k in range(-2, 9)]          # 1/4 .. 256 passes
GAP = 0.01


def _cd_time_to_gap(label: str, shape: str) -> dict:
    """Seconds of dlinear and of LIBLINEAR to a 1% relative objective gap: runs from scratch
    at eps = 1, 1/2, 1/4, ... (online: update budgets of 1/4, 1/2, 1, ... passes), the first
    run within the gap timed."""
    kw, lib_solver, form = CD_RUNS[label]
    problem = shapes.load(shape + ("_regression" if form.endswith("svr") else ""))
    params0 = Params(solver_type=FORMULATION_SOLVER[form])
    objective = harness.objective_of(problem, params0)
    f_star = harness.f_star(problem, params0.resolved())
    if form in DLINEAR_REFERENCE:
        _, model, _ = harness.dlinear_fit(problem, Params(**DLINEAR_REFERENCE[form]))
        f_star = min(f_star, objective(model))
    harness.warm_up(problem, [Params(eps=0.1, **kw)])
    lib_problem = harness.liblinear_problem(problem)
    lib = harness.seconds_to_gap(
        lambda e: harness.liblinear_fit(lib_problem, f"-s {lib_solver} -e {e:g}"),
        harness.EPS_LADDER, objective, f_star, GAP)
    if kw.get("online"):
        n_var = problem.n_samples if kw["solver_type"] != 2 else problem.n_features
        ours = harness.seconds_to_gap(
            lambda u: harness.dlinear_fit(problem, Params(eps=1e-9, max_updates=u, **kw)),
            [max(1, int(p * n_var)) for p in PASS_LADDER], objective, f_star, GAP)
    else:
        ours = harness.seconds_to_gap(lambda e: harness.dlinear_fit(problem, Params(eps=e, **kw)),
                                   harness.EPS_LADDER, objective, f_star, GAP)
    nan = float("nan")
    return {"dlinear": ours[0] if ours[0] is not None else nan,
            "liblinear": lib[0] if lib[0] is not None else nan}


class CDTimeToGap:
    """Coordinate-descent solvers: seconds to a 1% relative primal-objective gap to f* (the
    best of LIBLINEAR at a tight eps and, for the L1 losses, a long dlinear run), dlinear
    and LIBLINEAR swept alike; NaN where a sweep ends at its iteration cap."""
    params = [list(CD_RUNS), ["rcv1", "few"]]
    param_names = ["solver", "shape"]
    timeout = 1200

    def setup_cache(self):
        return {(label, shape): _cd_time_to_gap(label, shape)
                for label in CD_RUNS for shape in ("rcv1", "few")}

    def track_dlinear_seconds(self, results, label, shape):
        return results[label, shape]["dlinear"]
    track_dlinear_seconds.unit = "seconds"

    def track_ratio_to_liblinear(self, results, label, shape):
        r = results[label, shape]
        return r["dlinear"] / r["liblinear"]
    track_ratio_to_liblinear.unit = "dlinear / LIBLINEAR"


class NewtonDrivers:
    """-s 0 / -s 2: dlinear's line-search Newton and TRON against LIBLINEAR's Newton, rows
    as generated (labels mixed) or stable-sorted by label, as LIBLINEAR's train() groups
    them."""
    params = [[0, 2], ["linesearch", "tron"], ["interleaved", "sorted"]]
    param_names = ["solver", "driver", "rows"]
    number = 1
    repeat = 3
    timeout = 300

    def setup(self, solver, driver, rows):
        problem = shapes.load("rcv1")
        if rows == "sorted":
            problem = problem.subset(np.argsort(problem.y, kind="stable"))
        self.problem = problem
        self.params = Params(solver_type=solver, eps=0.01, newton=driver)
        harness.warm_up(problem, [self.params])
        self.lib_problem = harness.liblinear_problem(problem)

    def time_fit(self, solver, driver, rows):
        train(self.problem, self.params, n_threads=1)

    def track_iterations(self, solver, driver, rows):
        return int(train(self.problem, self.params, n_threads=1).n_iter[0])
    track_iterations.unit = "Newton iterations"

    def track_cpu_ratio_to_liblinear(self, solver, driver, rows):
        ours = theirs = np.inf
        for _ in range(3):
            ours = min(ours, harness.timed(
                lambda: train(self.problem, self.params, n_threads=1)).cpu)
            theirs = min(theirs, harness.timed(lambda: harness.liblinear_fit(
                self.lib_problem, f"-s {solver} -e 0.01 -q")).cpu)
        return ours / theirs
    track_cpu_ratio_to_liblinear.unit = "dlinear / LIBLINEAR (CPU time)"


class DualCDBlock:
    """One-variable against two-variable block dual CD (--cd-block 2; Chiu, Lin & Lin), at
    eps 0.1."""
    params = [[1, 3], [1, 2], ["rcv1", "few"]]
    param_names = ["solver", "cd_block", "shape"]
    number = 1
    repeat = 3

    def setup(self, solver, cd_block, shape):
        self.problem = shapes.load(shape)
        self.params = Params(solver_type=solver, cd_block=cd_block, eps=0.1, max_iter=1000)
        harness.warm_up(self.problem, [self.params])

    def time_fit(self, solver, cd_block, shape):
        train(self.problem, self.params, n_threads=1)

    def track_outer_iterations(self, solver, cd_block, shape):
        return int(train(self.problem, self.params, n_threads=1).n_iter[0])
    track_outer_iterations.unit = "outer iterations"


class TrueBias:
    """-s 1 / -s 3 with a true, unregularized bias (-B 1 -R: two-variable CD under
    y^T alpha = 0) against the embedded bias (-B 1), at eps 0.001."""
    params = [[1, 3], ["true", "embedded"], ["rcv1", "few"]]
    param_names = ["solver", "bias", "shape"]
    number = 1
    repeat = 3

    def setup(self, solver, bias, shape):
        self.problem = shapes.load(shape)
        self.params = Params(solver_type=solver, eps=0.001, bias=1.0, max_iter=100000,
                             regularize_bias=bias == "embedded")
        harness.warm_up(self.problem, [self.params])

    def time_fit(self, solver, bias, shape):
        train(self.problem, self.params, n_threads=1)

    def track_outer_iterations(self, solver, bias, shape):
        return int(train(self.problem, self.params, n_threads=1).n_iter[0])
    track_outer_iterations.unit = "outer iterations"


class _Reached(Exception):
    pass


class PartitionedRounds:
    """Rounds of the partitioned dual CD against K blocks, simulated in one process (rounds
    need no cores): to LIBLINEAR's default eps (its projected-gradient stop) and to a
    relative duality gap of 1e-3, per combination rule."""
    params = [[1, 3], ["adaptive", "cocoa", "linesearch"], [1, 8, 64]]
    param_names = ["solver", "rule", "blocks"]
    timeout = 600
    MAX_ROUNDS = 1000

    def setup(self, solver, rule, blocks):
        self.problem = shapes.load("rcv1")

    def track_rounds_to_default_eps(self, solver, rule, blocks):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = harness.train_partitioned_simulated(
                self.problem, Params(solver_type=solver, max_iter=self.MAX_ROUNDS), blocks,
                rule=rule)
        rounds = int(model.n_iter[0])
        return rounds if rounds < self.MAX_ROUNDS else float("nan")
    track_rounds_to_default_eps.unit = "rounds"

    def track_rounds_to_gap_1e_3(self, solver, rule, blocks):
        reached = []

        def on_round(r, c, primal, dual):
            if (primal + dual) / primal <= 1e-3:
                reached.append(r)
                raise _Reached

        try:
            harness.train_partitioned_simulated(
                self.problem, Params(solver_type=solver, eps=1e-12, max_iter=self.MAX_ROUNDS),
                blocks, rule=rule, on_round=on_round)
        except (_Reached, Warning):
            pass
        return reached[0] if reached else float("nan")
    track_rounds_to_gap_1e_3.unit = "rounds"


class PartitionedBlockParts:
    """8 rounds of the partitioned dual CD (-s 1, K = 1, no stop) on one in-process block
    made of 1 or 10 CSR parts: the block kernel's cost per row visited, and what reaching
    several parts costs it (the rounds are the same)."""
    params = [[1, 10]]
    param_names = ["parts"]
    number = 1
    repeat = 3

    def setup(self, parts):
        self.problem = shapes.load("rcv1")
        self.params = Params(solver_type=1, eps=1e-12, max_iter=8)
        self._fit(parts, Params(solver_type=1, eps=1e-12, max_iter=2))

    def _fit(self, parts, params):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return harness.train_partitioned_simulated(self.problem, params, 1,
                                                       parts_per_block=parts)

    def time_eight_rounds(self, parts):
        self._fit(parts, self.params)


def main(argv=None):
    """python -m scripts.benchmarks.solvers [--repeat 3] [--lock FILE] [SOLVER ...]: the table of
    every solver against liblinear-official (LiblinearPeer), CPU time of the train call,
    one thread each; DLINEAR_BENCH_SIZE=full for the 200k-row shapes."""
    import argparse
    ap = argparse.ArgumentParser(description=main.__doc__.splitlines()[0])
    ap.add_argument("solvers", nargs="*", type=int, default=LiblinearPeer.params)
    ap.add_argument("--repeat", type=int, default=3)
    harness.add_output_arguments(ap)
    args = ap.parse_args(argv)
    report = harness.Report("solvers-liblinear-peer", args)
    for solver in args.solvers:
        peer = LiblinearPeer()
        peer.setup(solver)
        with harness.benchmark_lock(args.lock):
            report.add(**peer.peer_row(solver, args.repeat))
    report.finish(["solver", "shape", "size", "dlinear_cpu_s", "liblinear_cpu_s", "ratio",
                   "objective_gap"])


if __name__ == "__main__":
    main()
