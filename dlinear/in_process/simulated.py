"""The partitioned dual CD with its blocks simulated in this process, for tests and
rounds-vs-K studies (scripts/benchmarks/solvers.py, PartitionedRounds): the same rounds, steps and
model as that many workers would make (dlinear.cluster.partitioned_cd), without the cores. No
training path of the package calls it.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable, Optional

import numpy as np

from ..data.libsvm_reader import Problem
from ..model import Model
from ..planning.modes import check_partitioned
from ..params import Params, check_parameter
from ..planning.class_plan import (assemble_model, block_seeds, first_appearance, group_rows,
                                   plan_classes, problem_seed, subproblem, targets,
                                   warm_start_columns)
from ..solvers import fit_task
from ..solvers import partitioned_dual_cd as P
from ..solvers import partitioned_crammer_singer as PCS
from ..solvers import partitioned_oneclass as POC
from .spilled_block import SpilledBlockState
from .train import after_dual_cap


def train_partitioned_in_process(problem: Problem, params: Params, n_blocks: int,
                                 rule: Optional[str] = None, n_passes: Optional[int] = None,
                                 log: Optional[Callable[[str], None]] = None,
                                 on_round: Optional[Callable] = None,
                                 parts_per_block: int = 1,
                                 spill_to: Optional[tuple] = None) -> Model:
    """The partitioned dual CD (solvers.partitioned_dual_cd) with the rows split into
    `n_blocks` contiguous blocks held in this process. parts_per_block: each block made
    of that many contiguous CSR parts, as a worker holding several of a Dataset's parts
    has them. spill_to: (directory, budget in bytes): each block's rows kept on disk
    there instead (-s 1, -s 3: in_process.spilled_block), as a worker whose share exceeds
    its memory limit keeps them."""
    check_parameter(params)
    params = params.resolved()
    check_partitioned(params)
    emit = log or (lambda line: None)
    plan = plan_classes(params, lambda: first_appearance(problem.y), emit)
    label, weighted_C = plan
    k = plan.n_problems
    bounds = [i * problem.n_samples // n_blocks for i in range(n_blocks + 1)]
    if params.spec.all_classes:
        return _crammer_singer(problem, params, plan, bounds, parts_per_block, rule,
                               n_passes, emit, on_round)
    if params.spec.kind == "oneclass":
        return _oneclass(problem, params, bounds, parts_per_block, rule, n_passes, emit,
                         on_round)
    if params.init_sol is not None:
        params = replace(params, init_sol=warm_start_columns(params.init_sol,
                                                             problem.n_features, label,
                                                             params))
    blocks = []
    for b in range(n_blocks):
        cuts = np.linspace(bounds[b], bounds[b + 1], parts_per_block + 1).astype(np.int64)
        parts = [problem.subset(np.arange(cuts[q], cuts[q + 1]))
                 for q in range(parts_per_block)]
        rows = slice(bounds[b], bounds[b + 1])
        weights = None if problem.sample_weight is None else problem.sample_weight[rows]
        Y, C = targets(problem.y[rows], weights, label, weighted_C, params)
        seeds = block_seeds(params.seed, b, k)
        if spill_to is not None:
            blocks.append(SpilledBlockState(parts, Y, C, params.bias, problem.n_features,
                                            params.solver_type, seeds, *spill_to))
        else:
            blocks.append(P.BlockState(parts, Y, C, params.bias, problem.n_features,
                                       params.solver_type, seeds, params.p))
        if params.init_sol is not None:
            blocks[-1].start_from(params.init_sol)
    w_size = problem.n_features + (1 if params.bias >= 0 else 0)
    try:
        results = P.fit_partitioned_dual_cd(P.SimulatedBlocks(blocks), k, w_size, params,
                                            rule or params.partition_rule,
                                            n_passes or P.DEFAULT_LOCAL_PASSES, on_round)
    finally:
        for block in blocks:
            getattr(block, "close", lambda: None)()

    def primal_fitter(c):
        task = subproblem(problem, label, c, weighted_C, params)
        return lambda primal, w0: fit_task(replace(task, w0=w0), primal)

    results = [after_dual_cap(r, params, primal_fitter(c)) for c, r in enumerate(results)]
    return assemble_model(params, problem.n_features, label, results, emit)


def _row_blocks(problem: Problem, bounds, b: int, parts_per_block: int):
    cuts = np.linspace(bounds[b], bounds[b + 1], parts_per_block + 1).astype(np.int64)
    return [problem.subset(np.arange(cuts[q], cuts[q + 1])) for q in range(parts_per_block)]


def _crammer_singer(problem, params, plan, bounds, parts_per_block, rule, n_passes, emit,
                    on_round) -> Model:
    """-s 4 on the simulated blocks (solvers.partitioned_crammer_singer)."""
    label, weighted_C = plan
    class_of_row = group_rows(label, problem.y)
    C = np.asarray(weighted_C, dtype=np.float64)[class_of_row]
    if problem.sample_weight is not None:
        C = C * problem.sample_weight
    blocks = [PCS.CrammerSingerBlock(_row_blocks(problem, bounds, b, parts_per_block),
                                     class_of_row[bounds[b]:bounds[b + 1]],
                                     C[bounds[b]:bounds[b + 1]], len(label), params.bias,
                                     problem.n_features, problem_seed(params.seed, 0, b))
              for b in range(len(bounds) - 1)]
    w_size = problem.n_features + (1 if params.bias >= 0 else 0)
    result = PCS.fit_partitioned_crammer_singer(P.SimulatedBlocks(blocks), len(label),
                                                w_size, params,
                                                rule or params.partition_rule,
                                                n_passes or P.DEFAULT_LOCAL_PASSES, on_round)
    return assemble_model(params, problem.n_features, label, [result], emit)


def _oneclass(problem, params, bounds, parts_per_block, rule, n_passes, emit,
              on_round) -> Model:
    """-s 21 on the simulated blocks (solvers.partitioned_oneclass)."""
    U = (np.ones(problem.n_samples) if problem.sample_weight is None
         else np.asarray(problem.sample_weight, dtype=np.float64))
    blocks = [POC.OneClassBlock(_row_blocks(problem, bounds, b, parts_per_block),
                                U[bounds[b]:bounds[b + 1]], params.bias, problem.n_features, b)
              for b in range(len(bounds) - 1)]
    w_size = problem.n_features + (1 if params.bias >= 0 else 0)
    result = POC.fit_partitioned_oneclass(POC.SimulatedOneClassBlocks(blocks), w_size, params,
                                          rule or params.partition_rule,
                                          n_passes or P.DEFAULT_LOCAL_PASSES, on_round)
    return assemble_model(params, problem.n_features, None, [result], emit)
