"""Fits on local Dask clusters of 1 and 2 single-threaded worker processes. Every benchmark
here starts a cluster in its setup: `DLINEAR_BENCH_CLUSTER=0` skips them all (or
`asv run -b '^(?!cluster)'`).

The data are made a Dataset on the workers in setup, not timed. A copy-mode fit makes each
worker's copy of the data at its first fit; asv's timed repeats reuse them, and
`track_first_fit_seconds` gives the first fit alone. Each `...Stats` class measures its
tracks in one cluster session (asv's setup_cache), not one per track.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from dlinear import Params, train

from . import harness, shapes


class _OnCluster:
    """time_fit of one fit per parameter combination, on a cluster started in setup."""
    n_workers = 2
    number = 1
    repeat = 2
    timeout = 600
    shape = "rcv1"

    def setup(self, *args):
        harness.skip_without_cluster()
        self.session = Session(self.shape, self.workers_of(*args))
        self.params = self.params_of(*args)
        self.session.warm_up(self.params)

    def teardown(self, *args):
        self.session.close()

    def workers_of(self, *args):
        return self.n_workers

    def time_fit(self, *args):
        self.session.fit(self.params)


class Session:
    """A local cluster holding a shape as a Dataset, its workers and this process warm."""

    def __init__(self, shape, n_workers):
        from dlinear.cluster import Dataset
        self.problem = shapes.load(shape)
        self.cluster, self.client = harness.local_cluster(n_workers)
        self.data = Dataset.from_arrays(self.problem, None, self.client)

    def warm_up(self, params):
        """Numba warm-up of the workers and of this process, a fit in each process."""
        here = replace(params, partition=None)
        warm = self.problem.subset(np.arange(min(300, self.problem.n_samples)))
        self.client.run(train, warm, here)
        harness.warm_up(self.problem, [here])

    def fit(self, params):
        return train(self.data, params)

    def stats(self, params) -> dict:
        """A fit's seconds (the first, then the best of two), rounds and megabytes per
        round (NaN when the fit records none: a copy-mode fit has no rounds), and its time
        over the same fit in this process, one thread."""
        first = harness.timed(lambda: self.fit(params))
        stats = harness.fit_stats(first.value)
        rounds = stats.get("rounds") or math.nan
        moved = stats.get("bytes_to_workers", math.nan) + stats.get("bytes_from_workers",
                                                                    math.nan)
        best = harness.best_of(lambda: self.fit(params), 2).wall
        here = Params(solver_type=params.solver_type)
        local = harness.best_of(lambda: train(self.problem, here, n_threads=1), 2).wall
        return {"first_fit_s": first.wall, "best_s": best, "rounds": rounds,
                "mb_per_round": moved / rounds / 1e6, "ratio_to_in_process": best / local,
                "n_iter": int(first.value.n_iter[0])}

    def close(self):
        self.client.close()
        self.cluster.close()


def _cluster_stats(shape, combos):
    """{combo: Session.stats} for (n_workers, Params) of each combo, one cluster per worker
    count; {} when clusters are off."""
    if not harness.cluster_enabled():
        return {}
    out = {}
    for n_workers in sorted({w for w, _ in combos.values()}):
        session = Session(shape, n_workers)
        try:
            for key, (w, params) in combos.items():
                if w == n_workers:
                    session.warm_up(params)
                    out[key] = session.stats(params)
        finally:
            session.close()
    return out


def _track(name, unit):
    def track(self, stats, *args):
        return stats[args][name]
    track.unit = unit
    track.__name__ = f"track_{name}"
    return track


ONE_VS_REST_FITS = {"-s 1": Params(solver_type=1),
                    "-s 0 map-reduced": Params(solver_type=0, partition=True)}


class OneVsRest(_OnCluster):
    """One-vs-rest on the multiclass shape, 1 and 2 workers: -s 1 (copies of the data on
    the workers, classes as tasks) and -s 0 (k-column Newton map-reduced over the parts)."""
    params = [[1, 2], list(ONE_VS_REST_FITS)]
    param_names = ["workers", "fit"]
    shape = "multiclass"

    def workers_of(self, workers, fit):
        return workers

    def params_of(self, workers, fit):
        return ONE_VS_REST_FITS[fit]


class OneVsRestStats:
    """OneVsRest's first fit (copies made), rounds, megabytes per round (client to root
    and back) and ratio to the same fit in this process, one cluster per worker count."""
    params = OneVsRest.params
    param_names = OneVsRest.param_names
    timeout = 1200

    def setup(self, stats, *args):
        harness.skip_without_cluster()

    def setup_cache(self):
        return _cluster_stats("multiclass", {(w, f): (w, p) for w in (1, 2)
                                             for f, p in ONE_VS_REST_FITS.items()})

    track_first_fit_seconds = _track("first_fit_s", "seconds")
    track_rounds = _track("rounds", "rounds")
    track_megabytes_per_round = _track("mb_per_round", "MB")
    track_ratio_to_in_process = _track("ratio_to_in_process", "cluster / in process")


class NewtonMapReduced(_OnCluster):
    """Binary -s 0 / -s 2 map-reduced over 2 workers' parts."""
    params = [[0, 2]]
    param_names = ["solver"]

    def params_of(self, solver):
        return Params(solver_type=solver, partition=True)


class NewtonMapReducedStats:
    """NewtonMapReduced's time over the same fit in this process and over LIBLINEAR's."""
    params = NewtonMapReduced.params
    param_names = NewtonMapReduced.param_names
    timeout = 900

    def setup(self, stats, *args):
        harness.skip_without_cluster()

    def setup_cache(self):
        stats = _cluster_stats("rcv1", {(s,): (2, Params(solver_type=s, partition=True))
                                        for s in (0, 2)})
        if stats:
            lib_problem = harness.liblinear_problem(shapes.load("rcv1"))
            for (s,), row in stats.items():
                lib = harness.best_of(
                    lambda: harness.liblinear_fit(lib_problem, f"-s {s} -q"), 2).wall
                row["ratio_to_liblinear"] = row["best_s"] / lib
        return stats

    track_ratio_to_in_process = _track("ratio_to_in_process", "2 workers / in process")
    track_ratio_to_liblinear = _track("ratio_to_liblinear", "2 workers / LIBLINEAR")


PARTITIONED_RULES = ("adaptive", "linesearch")


class PartitionedDualCD(_OnCluster):
    """-s 1 partitioned dual CD on 2 workers (each keeps the dual variables of its rows),
    the adaptive and the line-search rule, to LIBLINEAR's default eps (CoCoA+ needs many
    more rounds: solvers.PartitionedRounds counts them without a cluster)."""
    params = [list(PARTITIONED_RULES)]
    param_names = ["rule"]

    def params_of(self, rule):
        return Params(solver_type=1, partition_rule=rule, partition=True, max_iter=1000)


class PartitionedDualCDStats:
    """PartitionedDualCD's rounds and time over the local dual CD's."""
    params = PartitionedDualCD.params
    param_names = PartitionedDualCD.param_names
    timeout = 900

    def setup(self, stats, *args):
        harness.skip_without_cluster()

    def setup_cache(self):
        return _cluster_stats("rcv1", {(r,): (2, Params(solver_type=1, partition_rule=r,
                                                        partition=True, max_iter=1000))
                                       for r in PARTITIONED_RULES})

    track_rounds = _track("n_iter", "rounds")
    track_ratio_to_local_dual_cd = _track("ratio_to_in_process", "2 workers / local")
