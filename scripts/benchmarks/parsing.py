"""Reading LIBSVM text: dlinear.read_libsvm against scikit-learn's load_svmlight_file on
shapes.parse_file(). Two versions of the reader: `asv continuous OLD NEW -b parsing`, or
`python -m scripts.benchmarks.whole_process read CODE_ROOT FILE` for a package tree outside asv."""
from __future__ import annotations

import os

from dlinear.data.libsvm_reader import read_libsvm

from . import harness, shapes


class ReadLibsvm:
    number = 1
    repeat = 3
    timeout = 600

    def setup(self):
        self.path = shapes.parse_file()
        self.megabytes = os.path.getsize(self.path) / 1e6
        read_libsvm(self.path)               # Numba compiled or loaded, file in the page cache

    def _sklearn(self):
        from sklearn.datasets import load_svmlight_file
        return load_svmlight_file(self.path, zero_based=False)

    def time_read_libsvm(self):
        read_libsvm(self.path)

    def time_sklearn_load_svmlight_file(self):
        self._sklearn()

    def peakmem_read_libsvm(self):
        read_libsvm(self.path)

    def track_megabytes_per_second(self):
        return self.megabytes / harness.best_of(lambda: read_libsvm(self.path), 3).wall
    track_megabytes_per_second.unit = "MB/s"

    def track_sklearn_time_over_dlinear(self):
        ours = harness.best_of(lambda: read_libsvm(self.path), 3).wall
        return harness.best_of(self._sklearn, 3).wall / ours
    track_sklearn_time_over_dlinear.unit = "load_svmlight_file / read_libsvm"
