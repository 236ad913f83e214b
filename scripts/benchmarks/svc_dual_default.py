"""LinearSVC's `dual` default: dlinear's dual=True (LIBLINEAR's CLI default, -s 1) and
dual="auto" (the estimators' default, scikit-learn's rule) against scikit-learn's
LinearSVC(dual="auto"), fit CPU seconds (best of --repeat) and the ratio to scikit-learn,
on dense make_classification data of three shapes.

    python -m scripts.benchmarks.svc_dual_default [--repeat 3] [--lock /work/bench.lock]
"""
from __future__ import annotations

import argparse
import warnings

from sklearn.datasets import make_classification
from sklearn.svm import LinearSVC as SklearnLinearSVC

from dlinear.estimators import LinearSVC

from . import harness

SHAPES = ((80_000, 50), (5_000, 50), (2_000, 5_000))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--lock", default=None, help="a benchmark lock file to hold")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    for n, d in SHAPES:
        X, y = make_classification(n, d, random_state=0)
        LinearSVC(dual=True).fit(X[:500], y[:500])       # compiled before it is timed
        LinearSVC(dual=False).fit(X[:500], y[:500])
        with harness.benchmark_lock(args.lock):
            cpu = {name: harness.best_of(lambda e=est: e.fit(X, y), args.repeat).cpu
                   for name, est in (("dual=True", LinearSVC(dual=True)),
                                     ("dual='auto'", LinearSVC(dual="auto")),
                                     ("scikit-learn", SklearnLinearSVC(dual="auto")))}
        peer = cpu["scikit-learn"]
        print(f"{n} x {d}: " + "; ".join(f"{name} {s:.2f} s ({s / peer:.2f}x)"
                                         for name, s in cpu.items()), flush=True)


if __name__ == "__main__":
    main()
