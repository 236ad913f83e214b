"""`train -C` (LIBLINEAR 2.50's warm-started search over C, with -v folds): dlinear in
this process (folds on 2 threads) and on 2 local Dask workers against liblinear-official."""
from __future__ import annotations

import numpy as np

from dlinear import Params, find_parameters

from . import harness, shapes

FOLDS = 5


class FindParameters:
    params = [[0, 2], ["in process", "2 workers"]]
    param_names = ["solver", "where"]
    number = 1
    repeat = 2
    timeout = 900

    def setup(self, solver, where):
        self.problem = shapes.load("rcv1")
        self.params = Params(solver_type=solver)
        warm = self.problem.subset(np.arange(300))
        find_parameters(warm, self.params, 3, n_threads=2)
        self.client = None
        if where == "2 workers":
            harness.skip_without_cluster()
            from dlinear.cluster import Dataset
            self.cluster, self.client = harness.local_cluster(2)
            self.client.run(find_parameters, warm, self.params, 3, n_threads=1)
            self.data = Dataset.from_arrays(self.problem, None, self.client)

    def teardown(self, solver, where):
        if self.client is not None:
            self.client.close()
            self.cluster.close()

    def _search(self):
        if self.client is None:
            return find_parameters(self.problem, self.params, FOLDS, n_threads=2)
        return find_parameters(self.data, self.params, FOLDS)

    def _liblinear(self, solver):
        from liblinear import liblinearutil
        lib_problem = harness.liblinear_problem(self.problem)
        param = liblinearutil.parameter(f"-C -s {solver} -v {FOLDS} -q")
        return liblinearutil.train(lib_problem, param)

    def time_search(self, solver, where):
        self._search()

    def track_ratio_to_liblinear(self, solver, where):
        ours = harness.best_of(self._search, 2).wall
        return ours / harness.best_of(lambda: self._liblinear(solver), 2).wall
    track_ratio_to_liblinear.unit = "dlinear / LIBLINEAR"

    def track_best_log2_C_difference(self, solver, where):
        best_C = self._search()[0]
        return float(np.log2(best_C) - np.log2(self._liblinear(solver)[0]))
    track_best_log2_C_difference.unit = "log2 C, dlinear - LIBLINEAR"
