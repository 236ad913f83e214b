"""-s 6 at the default eps: how many Newton iterations LIBLINEAR takes, and how far above
the optimum it stops, over the seeds of its C library's rand() (its only randomness: the
order of the coordinate descent), against dlinear's over --seed.

    python -m scripts.benchmarks.seed_spread_s6 [--file F] [--seeds 80]

Both solvers stop by the same rule (newGLMNET's: the outer sum of violations under
eps' times the first iteration's, with the same outer and inner shrinking), so a run
that stops an iteration earlier or later than the other's is one draw of the random
order: the two distributions over seeds are what to compare, not one run of each.

Without --file the set is built from this machine's apt package lists (Debian's
Packages index: a row per binary package, the words of its Description, log-tf
weights, rows of unit norm; +1 for the library sections libs, libdevel and oldlibs).
"""
from __future__ import annotations

import argparse
import collections
import glob
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

from dlinear import Params, train
from dlinear.data.libsvm_reader import read_libsvm

from . import harness

LIBRARY_SECTIONS = ("libs", "libdevel", "oldlibs")


def debian_descriptions_file(path: str) -> str:
    """Writes the package-description set (see the module docstring) to path."""
    lists = sorted(glob.glob("/var/lib/apt/lists/*_main_binary-*_Packages*"))
    if not lists:
        raise SystemExit("no apt Packages lists under /var/lib/apt/lists: give --file")
    text = ""
    for name in lists:
        reader = "lz4cat" if name.endswith(".lz4") else "cat"
        text += subprocess.run([reader, name], capture_output=True, text=True).stdout
    docs, labels = [], []
    for block in text.split("\n\n"):
        section = re.search(r"^Section: (.*)$", block, re.M)
        description = re.search(r"^Description: (.*(?:\n .*)*)", block, re.M)
        if section and description:
            docs.append(re.findall(r"[a-z][a-z0-9]+", description.group(1).lower()))
            labels.append(1 if section.group(1).split("/")[-1] in LIBRARY_SECTIONS else -1)
    document_frequency = collections.Counter(w for d in docs for w in set(d))
    vocabulary = {w: j + 1 for j, w in enumerate(
        sorted(w for w, c in document_frequency.items() if c >= 2))}
    with open(path, "w") as f:
        for words, label in zip(docs, labels):
            counts = collections.Counter(vocabulary[w] for w in words if w in vocabulary)
            if not counts:
                continue
            values = {j: 1.0 + np.log(c) for j, c in counts.items()}
            norm = np.sqrt(sum(v * v for v in values.values()))
            f.write(f"{label:+d} " + " ".join(f"{j}:{v / norm:.6g}"
                                              for j, v in sorted(values.items())) + "\n")
    return path


def liblinear_run(lib_problem, param, seed: int):
    """(Newton iterations, model) of LIBLINEAR after srand(seed)."""
    from liblinear import liblinearutil
    sys.stdout.flush()
    saved = os.dup(1)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 1)
        try:
            harness.seed_liblinear(seed)
            model = liblinearutil.train(lib_problem, param)
        finally:
            os.dup2(saved, 1)
            os.close(saved)
        tmp.seek(0)
        out = tmp.read().decode()
    n_iter = int(re.findall(r"optimization finished, #iter = (\d+)", out)[-1])
    return n_iter, harness.liblinear_model_to_dlinear(model)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--file", help="a LIBSVM file (default: the Debian description set)")
    parser.add_argument("--seeds", type=int, default=80)
    harness.add_output_arguments(parser)
    args = parser.parse_args(argv)
    report = harness.Report("seed_spread_s6", args)
    path = args.file or debian_descriptions_file(
        os.path.join(tempfile.gettempdir(), "dlinear-debian-descriptions.svm"))
    problem = read_libsvm(path)
    params = Params(solver_type=6).resolved()
    objective = harness.objective_of(problem, params)
    f_star = objective(train(problem, Params(solver_type=6, eps=1e-6), n_threads=1))
    report.note(f"{path}: {problem.n_samples} rows, {problem.n_features} features, "
                f"{problem.nnz} nonzeros; f* (eps 1e-6) = {f_star:.6f}")
    from liblinear import liblinear
    lib_problem = harness.liblinear_problem(problem)
    param = liblinear.parameter(f"-s 6 -e {params.eps!r} {harness.liblinear_options(params)}")
    runs = {"LIBLINEAR (srand)": [], "dlinear (--seed)": []}
    for seed in range(1, args.seeds + 1):
        n_iter, model = liblinear_run(lib_problem, param, seed)
        runs["LIBLINEAR (srand)"].append((n_iter, objective(model)))
        model = train(problem, Params(solver_type=6, seed=seed), n_threads=1)
        runs["dlinear (--seed)"].append((int(model.n_iter[0]), objective(model)))
    for name, results in runs.items():
        iterations = collections.Counter(n for n, _ in results)
        above = np.array([f for _, f in results]) - f_star
        report.add(solver=name, seeds=args.seeds,
                   newton_iterations=" ".join(f"{k}:{v}" for k, v in sorted(iterations.items())),
                   f_minus_fstar_median=float(np.median(above)),
                   f_minus_fstar_min=float(above.min()), f_minus_fstar_max=float(above.max()))
    report.finish(["solver", "seeds", "newton_iterations", "f_minus_fstar_median",
                   "f_minus_fstar_min", "f_minus_fstar_max"])


if __name__ == "__main__":
    main()
