"""liblinear-multicore as a peer, run by the Python of its own environment (its module
name, `liblinear`, is also liblinear-official's): scripts/benchmarks/parallel_dual_cd.py starts

    <venv with liblinear-multicore>/bin/python scripts/benchmarks/liblinear_multicore_run.py \\
        DATA.npz REPEAT "OPTIONS" ...

DATA.npz holds the CSR arrays (indptr, indices, data, y, n_features). For each options string it
prints one JSON line {"options", "wall", "cpu"}: the best of REPEAT train calls. Imports
only numpy, scipy and liblinear.
"""
import json
import sys
import time

import numpy as np
import scipy.sparse as sp
from liblinear.liblinearutil import problem, train


def main(argv):
    arrays = np.load(argv[0])
    repeat = int(argv[1])
    X = sp.csr_matrix((arrays["data"], arrays["indices"], arrays["indptr"]),
                      shape=(len(arrays["indptr"]) - 1, int(arrays["n_features"])))
    prob = problem(arrays["y"], X)
    for options in argv[2:]:
        walls, cpus = [], []
        for _ in range(repeat):
            wall, cpu = time.perf_counter(), time.process_time()
            train(prob, options + " -q")
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
        print(json.dumps({"options": options, "wall": min(walls), "cpu": min(cpus)}),
              flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
