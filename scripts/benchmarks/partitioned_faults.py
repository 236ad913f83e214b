"""Rounds the partitioned dual CD needs after losing a block: restart from alpha = 0 against
a checkpoint of alpha. It replays a fault inside the simulated blocks, which asv cannot
inject.

    python -m scripts.benchmarks.partitioned_faults --rows 6000 --eps 1e-5 0.1

K = 3 blocks (8 parts each, dealt in turn) simulated in one process, -s 1, CoCoA+. At a
fraction of the rounds an undisturbed run needs, block 3 is lost as a worker is on a
cluster: its parts go to the two survivors in turn, the survivors keep their dual
variables, the lost parts restart from 0 (or from the last checkpoint, taken every --every
rounds), w is recomputed from all dual variables, and the interrupted round is repeated.
"""
from __future__ import annotations

import argparse
import warnings

import numpy as np

from dlinear import ConvergenceWarning, Params
from dlinear.datasets.rcv1_like import make_rcv1_like

from . import harness


def losing_blocks(P):
    """The simulator of `P` (dlinear's partitioned dual CD module) with three blocks, the
    third lost at round `lost_at` (0: never). Built on call: the simulator is internal."""

    class LosingBlocks(P.SimulatedBlocks):
        def __init__(self, make_block, parts, lost_at, every):
            self.make_block = make_block
            super().__init__([make_block(parts[b::3], b) for b in range(3)])
            self.calls, self.lost_at, self.every = 0, lost_at, every
            self.restarted_w, self.checkpoint = None, None

        def round(self, W, classes, applied, sigma, n_passes, *options):
            self.calls += 1
            if self.every and self.n_blocks == 3 and (self.calls - 1) % self.every == 0:
                for b in self.blocks:           # the checkpoint: alpha with last round's step
                    b.apply(applied)
                applied = np.zeros_like(applied)
                self.checkpoint = self.blocks[2].alpha[0].copy()
            if self.calls == self.lost_at:
                for b in self.blocks[:2]:
                    b.apply(applied)
                lost = self.blocks[2]
                start = self.checkpoint if self.every else np.zeros(lost.n_rows)
                lost_parts = list(zip(lost.parts, np.split(start, lost.starts[1:-1])))
                survivors = []
                for b in range(2):
                    extra = lost_parts[b::2]
                    block = self.make_block(self.blocks[b].parts + [p for p, _ in extra], b)
                    block.alpha[0][:] = np.concatenate([self.blocks[b].alpha[0]]
                                                       + [a for _, a in extra])
                    survivors.append(block)
                self.blocks, self.n_blocks = survivors, 2
                self.restarted_w = self.w_of_alpha()
                W, applied = self.restarted_w[classes], np.zeros_like(applied)
            return super().round(W, classes, applied, sigma, n_passes, *options)

    return LosingBlocks


def main(argv=None):
    from dlinear.solvers import partitioned_dual_cd as P
    from dlinear.planning.class_plan import block_seeds, targets
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=6000)
    ap.add_argument("--eps", type=float, nargs="+", default=[1e-5, 0.1])
    ap.add_argument("--every", type=int, default=50)
    harness.add_output_arguments(ap)
    args = ap.parse_args(argv)
    report = harness.Report("partitioned_faults", args)
    LosingBlocks = losing_blocks(P)
    problem = make_rcv1_like(args.rows, n_features=2000, nnz_per_row=30, seed=8)
    bounds = np.linspace(0, problem.n_samples, 25).astype(int)
    parts = [problem.subset(np.arange(a, b)) for a, b in zip(bounds[:-1], bounds[1:])]
    report.note(f"{args.rows} rows, -s 1, cocoa, 3 blocks; rounds after losing block 3 "
                f"(restart from 0 / from a checkpoint every {args.every} rounds)")
    for eps in args.eps:
        params = Params(solver_type=1, eps=eps, max_iter=5000).resolved()
        label, weighted_C = harness.class_plan(problem, params)

        def make_block(block_parts, b, params=params, label=label, weighted_C=weighted_C):
            y = np.concatenate([p.y for p in block_parts])
            Y, C = targets(y, None, label, weighted_C, params)
            return P.BlockState(block_parts, Y, C, params.bias, problem.n_features, 1,
                                block_seeds(params.seed, b, 1))

        def rounds(lost_at, every, params=params, make_block=make_block):
            blocks = LosingBlocks(make_block, parts, lost_at, every)
            with warnings.catch_warnings():
                warnings.simplefilter("error", ConvergenceWarning)
                [result] = P.fit_partitioned_dual_cd(blocks, 1, problem.n_features, params)
            return result.n_iter

        whole = rounds(0, 0)
        for fraction in (0.5, 0.75):
            lost_at = int(fraction * whole)
            for every in (0, args.every):
                after = rounds(lost_at, every) - lost_at
                report.add(eps=eps, undisturbed_rounds=whole, lost_at=fraction,
                           restart="checkpoint" if every else "zero", rounds_after=after,
                           ratio=after / whole)
    report.finish(["eps", "undisturbed_rounds", "lost_at", "restart", "rounds_after",
                   "ratio"])


if __name__ == "__main__":
    main()
