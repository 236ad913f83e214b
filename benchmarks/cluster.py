"""Fits on local Dask clusters of 1 and 2 single-threaded worker processes (was
scripts/bench_cluster.py, bench_newton_cluster.py, the cluster half of bench_multiclass.py
and bench_partitioned.py's `time`). Every benchmark here starts a cluster in its setup:
`DLINEAR_BENCH_CLUSTER=0` skips them all (or `asv run -b '^(?!cluster)'`).

The data are made a Dataset on the workers in setup, not timed. A copy-mode fit makes each
worker's copy of the data at its first fit; asv's timed repeats reuse them, and
`track_first_fit_seconds` gives the first fit alone.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from dlinear import Params, train

from . import harness, shapes


class _OnCluster:
    n_workers = 2
    number = 1
    repeat = 2
    timeout = 600
    shape = "rcv1"

    def setup(self, *args):
        harness.skip_without_cluster()
        from dlinear.cluster import Dataset
        self.problem = shapes.load(self.shape)
        self.cluster, self.client = harness.local_cluster(self.workers_of(*args))
        self.data = Dataset.from_arrays(self.problem, None, self.client)
        self.params = self.params_of(*args)
        warm = self.problem.subset(np.arange(min(300, self.problem.n_samples)))
        # Numba warm-up of the workers and of this process, a fit in each process
        here = replace(self.params, partition=None)
        self.client.run(train, warm, here)
        harness.warm_up(self.problem, [here])

    def teardown(self, *args):
        self.client.close()
        self.cluster.close()

    def workers_of(self, *args):
        return self.n_workers

    def _fit(self):
        return train(self.data, self.params)

    def _round_stats(self):
        """(rounds, bytes per round client -> root and back) of a fit, NaN when the fit
        records none (a copy-mode fit has no rounds)."""
        self._fit()
        stats = harness.fit_stats()
        rounds = stats.get("rounds")
        if not rounds:
            return math.nan, math.nan
        return rounds, (stats["bytes_to_workers"] + stats["bytes_from_workers"]) / rounds


class OneVsRest(_OnCluster):
    """-s 1 one-vs-rest (copies of the data on the workers, classes as tasks) and -s 0
    (default choice, and k-column Newton map-reduced over the parts) on the multiclass
    shape, 1 and 2 workers; the ratio is to the same fit in this process, one thread."""
    params = [[1, 2], ["-s 1", "-s 0", "-s 0 map-reduced"]]
    param_names = ["workers", "fit"]
    shape = "multiclass"

    def workers_of(self, workers, fit):
        return workers

    def params_of(self, workers, fit):
        return Params(solver_type=int(fit.split()[1]), partition=True if "map" in fit else None)

    def time_fit(self, workers, fit):
        self._fit()

    def track_first_fit_seconds(self, workers, fit):
        return harness.timed(self._fit).wall
    track_first_fit_seconds.unit = "seconds"

    def track_ratio_to_in_process(self, workers, fit):
        here = Params(solver_type=self.params.solver_type)
        local = harness.best_of(lambda: train(self.problem, here, n_threads=1), 2).wall
        return harness.best_of(self._fit, 2).wall / local
    track_ratio_to_in_process.unit = "cluster / in process"

    def track_rounds(self, workers, fit):
        return self._round_stats()[0]
    track_rounds.unit = "rounds"

    def track_megabytes_per_round(self, workers, fit):
        return self._round_stats()[1] / 1e6
    track_megabytes_per_round.unit = "MB"


class NewtonMapReduced(_OnCluster):
    """Binary -s 0 / -s 2 map-reduced over 2 workers' parts against the same fit in this
    process and LIBLINEAR."""
    params = [[0, 2]]
    param_names = ["solver"]

    def params_of(self, solver):
        return Params(solver_type=solver, partition=True)

    def time_fit(self, solver):
        self._fit()

    def track_ratio_to_in_process(self, solver):
        here = Params(solver_type=solver)
        local = harness.best_of(lambda: train(self.problem, here, n_threads=1), 2).wall
        return harness.best_of(self._fit, 2).wall / local
    track_ratio_to_in_process.unit = "2 workers / in process"

    def track_ratio_to_liblinear(self, solver):
        lib_problem = harness.liblinear_problem(self.problem)
        theirs = harness.best_of(
            lambda: harness.liblinear_fit(lib_problem, f"-s {solver} -q"), 2).wall
        return harness.best_of(self._fit, 2).wall / theirs
    track_ratio_to_liblinear.unit = "2 workers / LIBLINEAR"

    def track_rounds(self, solver):
        return self._round_stats()[0]
    track_rounds.unit = "rounds"

    def track_megabytes_per_round(self, solver):
        return self._round_stats()[1] / 1e6
    track_megabytes_per_round.unit = "MB"


class PartitionedDualCD(_OnCluster):
    """-s 1 partitioned dual CD on 2 workers (each keeps the dual variables of its rows),
    the adaptive and the line-search rule, to LIBLINEAR's default eps (CoCoA+ needs many
    more rounds: solvers.PartitionedRounds counts them without a cluster)."""
    params = [[1], ["adaptive", "linesearch"]]
    param_names = ["solver", "rule"]

    def params_of(self, solver, rule):
        return Params(solver_type=solver, partition_rule=rule, partition=True, max_iter=1000)

    def time_fit(self, solver, rule):
        self._fit()

    def track_rounds(self, solver, rule):
        return int(self._fit().n_iter[0])
    track_rounds.unit = "rounds"

    def track_ratio_to_local_dual_cd(self, solver, rule):
        here = Params(solver_type=solver)
        local = harness.best_of(lambda: train(self.problem, here, n_threads=1), 2).wall
        return harness.timed(self._fit).wall / local
    track_ratio_to_local_dual_cd.unit = "2 workers / local"
