"""Hashes of the models every solver and solver variant trains on small synthetic sets.

Run before and after a refactor; the two outputs must be identical (models bit for bit):

    python scripts/tools/model_hashes.py > /tmp/before.txt
    ... change the code ...
    python scripts/tools/model_hashes.py | diff /tmp/before.txt -

Each line is `case  sha256(w, rho, labels, #iterations)`; the -C search lines hash the
chosen (C, p, score) and the per-C log lines, cross-validation lines the predictions.
Log lines of training are not hashed (a refactor may reword a warning).
"""
from __future__ import annotations

import hashlib
import sys
import warnings
from dataclasses import replace

import numpy as np

from dlinear import Params, cross_validation, find_parameters, train
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.solver_table import SOLVERS, solver_ids


def _digest(*parts) -> str:
    h = hashlib.sha256()
    for p in parts:
        if p is None:
            h.update(b"None")
        elif isinstance(p, np.ndarray):
            h.update(str(p.dtype).encode() + str(p.shape).encode())
            h.update(np.ascontiguousarray(p).tobytes())
        else:
            h.update(repr(p).encode())
    return h.hexdigest()[:16]


def model_digest(model) -> str:
    return _digest(model.w, float(model.rho), model.label, tuple(model.n_iter),
                   model.nr_class, model.nr_feature, float(model.bias))


def data_sets():
    binary = make_rcv1_like(300, n_features=200, nnz_per_row=12, seed=3)
    multi = make_rcv1_like(300, n_features=200, n_classes=3, nnz_per_row=12, seed=4)
    rng = np.random.default_rng(5)
    targets = binary.to_scipy() @ rng.standard_normal(binary.n_features) \
        + 0.1 * rng.standard_normal(binary.n_samples)
    regression = replace(binary, y=np.asarray(targets, dtype=np.float64))
    weighted = replace(binary, sample_weight=rng.uniform(0.2, 3.0, binary.n_samples))
    return binary, multi, regression, weighted


def training_cases(binary, multi, regression, weighted):
    cases = []
    for s in solver_ids(lambda spec: spec.kind == "classification"):
        cases.append((f"-s {s} binary", binary, Params(solver_type=s, bias=1.0)))
        cases.append((f"-s {s} 3 classes -w2 3", multi,
                      Params(solver_type=s, class_weights=[(2, 3.0)])))
        cases.append((f"-s {s} instance weights", weighted, Params(solver_type=s, C=2.0)))
    for s in solver_ids(lambda spec: spec.kind == "regression"):
        cases.append((f"-s {s} regression", regression, Params(solver_type=s, p=0.05, bias=1.0)))
    for s in solver_ids(lambda spec: spec.kind == "oneclass"):
        cases.append((f"-s {s}", binary, Params(solver_type=s, nu=0.3)))
        cases.append((f"-s {s} weights", weighted, Params(solver_type=s, nu=0.2)))
    for ratio in (0.0, 0.5):                          # -s 6's elastic net (--l1-ratio)
        cases.append((f"-s 6 --l1-ratio {ratio} -B 1 -R", binary,
                      Params(solver_type=6, l1_ratio=ratio, bias=1.0, regularize_bias=False)))
        cases.append((f"-s 6 --l1-ratio {ratio} 3 classes", multi,
                      Params(solver_type=6, l1_ratio=ratio)))
    for s in solver_ids(lambda spec: spec.regularize_bias_optional and not spec.dual):
        data = regression if SOLVERS[s].kind == "regression" else binary
        cases.append((f"-s {s} -B 1 -R", data, Params(solver_type=s, bias=1.0,
                                                      regularize_bias=False)))
    cases += [
        ("-s 0 tron", multi, Params(solver_type=0, newton="tron")),
        ("-s 2 tron", binary, Params(solver_type=2, newton="tron", bias=1.0)),
        ("-s 11 tron", regression, Params(solver_type=11, newton="tron")),
        ("-s 2 primal-cd", binary, Params(solver_type=2, primal_cd=True)),
        ("-s 2 primal-cd online", binary, Params(solver_type=2, primal_cd=True, online=True)),
        ("-s 2 primal-cd --max-iter 3", binary, Params(solver_type=2, primal_cd=True,
                                                       max_iter=3)),
        ("-s 1 cd-block 2", multi, Params(solver_type=1, cd_block=2)),
        ("-s 3 cd-block 2", binary, Params(solver_type=3, cd_block=2, bias=1.0)),
        ("-s 1 online", binary, Params(solver_type=1, online=True)),
        ("-s 3 online --max-updates 500", binary, Params(solver_type=3, online=True,
                                                         max_updates=500)),
        ("-s 1 --max-iter 2 (switch to -s 2)", multi, Params(solver_type=1, max_iter=2)),
        ("-s 3 --max-iter 2", binary, Params(solver_type=3, max_iter=2)),
        ("-s 7 --max-iter 2 (switch to -s 0)", binary, Params(solver_type=7, max_iter=2)),
        ("-s 12 --max-iter 2 (switch to -s 11)", regression,
         Params(solver_type=12, max_iter=2)),
        ("-s 13 --max-iter 2", regression, Params(solver_type=13, max_iter=2)),
        ("-s 5 -e 1e-9", binary, Params(solver_type=5, eps=1e-9)),
        ("-s 6 -e 1e-9", binary, Params(solver_type=6, eps=1e-9)),
        ("-s 4 -e 1e-6", multi, Params(solver_type=4, eps=1e-6)),
        ("-s 21 -e 1e-9", binary, Params(solver_type=21, eps=1e-9)),
    ]
    w0 = np.linspace(-0.5, 0.5, binary.n_features + 1)
    cases.append(("-s 0 init_sol", binary, Params(solver_type=0, bias=1.0, init_sol=w0)))
    cases.append(("-s 2 init_sol", binary, Params(solver_type=2, bias=1.0, init_sol=w0)))
    return cases


def main() -> int:
    warnings.simplefilter("ignore")
    binary, multi, regression, weighted = data_sets()
    out = []
    for name, data, params in training_cases(binary, multi, regression, weighted):
        out.append(f"{name:40s} {model_digest(train(data, params, n_threads=1))}")
    for s in solver_ids(lambda spec: spec.search and spec.kind == "classification"):
        lines = []
        best = find_parameters(binary, Params(solver_type=s), 3, log=lines.append, n_threads=1)
        out.append(f"{'-C -s %d' % s:40s} {_digest(best, lines)}")
    for s, data, weights in ((2, binary, [(1, 2.0)]), (1, multi, [(2, 3.0), (3, 0.5)])):
        lines = []
        best = find_parameters(data, Params(solver_type=s, class_weights=weights), 3,
                               log=lines.append, n_threads=1)
        out.append(f"{'-C -s %d %s' % (s, weights):40s} {_digest(best, lines)}")
    for s in solver_ids(lambda spec: spec.search and spec.kind == "regression"):
        lines = []
        best = find_parameters(regression, Params(solver_type=s), 3, start_p=0.6,
                               log=lines.append, n_threads=1)
        out.append(f"{'-C -s %d' % s:40s} {_digest(best, lines)}")
    for s in (1, 6, 12):
        data = regression if s == 12 else multi
        out.append(f"{'-v 3 -s %d' % s:40s} "
                   f"{_digest(cross_validation(data, Params(solver_type=s), 3, n_threads=1))}")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
