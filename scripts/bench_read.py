"""Time read_libsvm of one package tree on one file, best of N, and report peak RSS.

    python scripts/bench_read.py CODE_ROOT FILE [N]

CODE_ROOT is the directory holding the `dlinear` package to time (e.g. this repository,
or an older commit unpacked with `git archive COMMIT dlinear | tar -x -C /tmp/old`), so
two versions of the reader can be timed alternately on the same file."""
import os
import resource
import sys
import tempfile
import time

root = os.path.abspath(sys.argv[1])
sys.path.insert(0, root)
from dlinear.data import read_libsvm  # noqa: E402

assert read_libsvm.__code__.co_filename.startswith(root), read_libsvm.__code__.co_filename
path = sys.argv[2]
repeat = int(sys.argv[3]) if len(sys.argv) > 3 else 3
with tempfile.NamedTemporaryFile("w", suffix=".svm") as warm:      # compile/load Numba first
    warm.write("1 1:0.5 3:1\n-1 2:0.25\n")
    warm.flush()
    read_libsvm(warm.name)
best = float("inf")
for _ in range(repeat):
    t = time.perf_counter()
    problem = read_libsvm(path)
    best = min(best, time.perf_counter() - t)
    del problem
mb = os.path.getsize(path) / 1e6
print(f"{root} {path}: best of {repeat} {best:.3f} s = {mb / best:.1f} MB/s; "
      f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10} MiB")
