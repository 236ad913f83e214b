"""Benchmarks of the partitioned dual CD (BENCHMARKS.md, "Partitioned dual CD").

    python scripts/bench_partitioned.py rounds --rows 20000 --plot docs/partitioned_rounds.png
        rounds to relative duality gaps 1e-2/1e-3/1e-4 and to LIBLINEAR's default eps
        against K = 1..64 blocks, simulated in one process (rounds do not need cores),
        every combination rule, -s 1 and -s 3
    python scripts/bench_partitioned.py time --data FILE --solver 1 --workers 2 --parts 20 --gaps --newton
        seconds on an rcv1-shaped set: local dual CD (1 core), then partitioned on
        --workers workers (both rules) to LIBLINEAR's default eps and (--gaps) to the
        gaps, and (--newton) the distributed Newton -s 2 (same optimum as -s 1), each as
        a ratio to the local run of the same call
    python scripts/bench_partitioned.py kernel --rows 200000 --parts-per-block 1,10 --lock L
        seconds of 8 rounds of one in-process block made of 1 or 10 CSR parts
    (rounds: --solvers, --ks, --rules, --seed, --eps-only and --adaptive-target narrow or
    vary the table)
"""
import argparse
import contextlib
import os
import time
import warnings

import numpy as np

from dlinear import Params
from dlinear.datasets import make_rcv1_like

GAPS = (1e-2, 1e-3, 1e-4)


class Reached(Exception):
    pass


def gap_watcher(start, record, last_gap=GAPS[-1]):
    """on_round callback: records (round, seconds) the first time each gap is reached,
    and ends the run at the last one."""
    def on_round(r, c, primal, dual):
        gap = (primal + dual) / primal
        for g in GAPS:
            if gap <= g and g not in record:
                record[g] = (r, time.perf_counter() - start)
        if gap <= last_gap:
            raise Reached
    return on_round


RULES = ("adaptive", "cocoa", "linesearch")


def rounds_vs_k(args):
    """Rounds to each duality gap, and to LIBLINEAR's default eps (its projected-gradient
    stop, as dlinear-train runs), for K = 1..64 simulated blocks."""
    from dlinear.solvers import partitioned_dual_cd as P
    from dlinear.simulated import train_partitioned_in_process
    if args.adaptive_target is not None:
        P.ADAPTIVE_TARGET = args.adaptive_target
    problem = make_rcv1_like(args.rows, seed=args.seed)
    ks = args.ks
    rules = args.rules or RULES
    table = {}
    for solver in args.solvers:
        for rule in rules:
            for k in ks:
                record = {}
                params = Params(solver_type=solver, eps=1e-12, max_iter=args.max_rounds)
                try:
                    if not args.eps_only:
                        train_partitioned_in_process(
                            problem, params, k, rule=rule,
                            on_round=gap_watcher(time.perf_counter(), record))
                except (Reached, Warning):
                    pass
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model = train_partitioned_in_process(
                        problem, Params(solver_type=solver, max_iter=args.max_rounds), k,
                        rule=rule)
                to_eps = model.n_iter[0] if model.n_iter[0] < args.max_rounds else None
                table[solver, rule, k] = [record.get(g, (None,))[0] for g in GAPS] + [to_eps]
                print(solver, rule, k, table[solver, rule, k], flush=True)
    print("\nrounds to " + ("" if args.eps_only else "gap 1e-2 / 1e-3 / 1e-4 / ")
          + "LIBLINEAR's default eps")
    print("\n| solver | rule | " + " | ".join(f"K={k}" for k in ks) + " |")
    print("| --- | --- | " + " | ".join("---" for _ in ks) + " |")
    for solver in args.solvers:
        for rule in rules:
            cells = []
            for k in ks:
                shown = table[solver, rule, k][-1:] if args.eps_only else table[solver, rule, k]
                cells.append(" / ".join(str(r) if r is not None else f">{args.max_rounds}"
                                        for r in shown))
            print(f"| -s {solver} | {rule} | " + " | ".join(cells) + " |")
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, axes = plt.subplots(1, len(args.solvers), figsize=(11, 4.5), sharey=True,
                                 squeeze=False)
        axes = axes[0]
        targets = [f"gap {g:g}" for g in GAPS] + ["default eps"]
        colors = ("tab:blue", "tab:orange", "tab:green", "tab:red")
        for ax, solver in zip(axes, args.solvers):
            for rule, style in zip(rules, ("-", ":", "--")):
                for t, (target, color) in enumerate(zip(targets, colors)):
                    ys = [table[solver, rule, k][t] for k in ks]
                    ys = [y if y is not None else np.nan for y in ys]
                    ax.plot(ks, ys, style, color=color, marker="o", markersize=3,
                            label=f"{rule}, {target}")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("K (blocks)")
            ax.set_title(f"-s {solver}, {args.rows} rcv1-like rows")
        axes[0].set_ylabel("rounds")
        axes[1].legend(fontsize=6, ncol=2)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=100)


@contextlib.contextmanager
def timed_section(lock_path, pids=()):
    """The shared benchmark lock and nice -10 (this process and `pids`, the workers) for
    the timed runs only; loading data and starting workers happen before, at nice 15."""
    if lock_path is None:
        yield
        return
    import fcntl

    def renice(value):       # Linux nice is per thread: every thread of each process
        for pid in (os.getpid(), *pids):
            for tid in os.listdir(f"/proc/{pid}/task"):
                with contextlib.suppress(OSError):
                    os.setpriority(os.PRIO_PROCESS, int(tid), value)

    with open(lock_path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            renice(-10)
            print(f"(timed under {lock_path}; load {os.getloadavg()[0]:.2f})", flush=True)
            yield
        finally:
            print(f"(load {os.getloadavg()[0]:.2f} at the end)", flush=True)
            renice(15)
            fcntl.flock(handle, fcntl.LOCK_UN)


def load_problem(args):
    """The --data file (a pickled Problem when it ends in .pkl, for repeated runs), or
    make_rcv1_like(--rows)."""
    if args.data:
        if args.data.endswith(".pkl"):
            import pickle
            with open(args.data, "rb") as f:
                return pickle.load(f)
        from dlinear import read_libsvm
        return read_libsvm(args.data)
    return make_rcv1_like(args.rows, seed=1)


def timed_cluster_runs(args, data, solver, label, busy, report):
    import warnings

    from dlinear import train
    from dlinear.cluster import partitioned_cd as PC
    for rule in args.rules:
        params = Params(solver_type=solver, partition_rule=rule, max_iter=args.max_rounds)
        busy.clear()
        t = time.perf_counter()
        with warnings.catch_warnings(record=True):
            model = train(data, params, partition=True)
        seconds = time.perf_counter() - t
        report(f"-s {solver} partitioned, {args.workers} worker(s), {rule}, to eps "
               f"{params.resolved().eps:g}", seconds,
               f"{model.n_iter[0]} rounds; actors computing {busy[0]:.2f}s "
               f"(summed over {args.workers} workers)")
        if args.gaps:
            record = {}
            weighted_C = None if label is None else np.ones(2)
            t = time.perf_counter()
            try:
                PC.train_partitioned(data, Params(solver_type=solver, eps=1e-12,
                                                  max_iter=args.max_rounds).resolved(),
                                     label, weighted_C, rule, 1,
                                     on_round=gap_watcher(t, record))
            except Reached:
                pass
            for g in GAPS:
                if g in record:
                    report(f"  {rule}, {args.workers} worker(s), to gap {g:g}",
                           record[g][1], f"{record[g][0]} rounds")
                else:
                    print(f"  {rule}: gap {g:g} not reached in {args.max_rounds} rounds")
    if args.newton:
        t = time.perf_counter()
        model = train(data, Params(solver_type=2))
        report(f"-s 2 distributed Newton, {args.workers} worker(s)",
               time.perf_counter() - t, f"{model.n_iter[0]} iterations")


def timings(args):
    """One solver, one cluster size per call (so a call holds the bench lock briefly):
    the local single-core run first, then each rule partitioned to LIBLINEAR's default eps
    and, with --gaps, to the relative duality gaps; with --newton the distributed -s 2.
    Every figure is printed with its ratio to the local run of the same call."""
    import logging

    import distributed

    from dlinear import train
    from dlinear.cluster import Dataset
    from dlinear.cluster import partitioned_cd as PC
    problem = load_problem(args)
    solver = args.solver
    label = None if solver in (12, 13) else np.array([1, -1])
    rows = []

    def report(name, seconds, extra=""):
        ratio = seconds / rows[0][1] if rows else 1.0
        rows.append((name, seconds, ratio, extra))
        print(f"{name}: {seconds:.2f}s ({ratio:.2f}x local) {extra}", flush=True)

    busy = []
    close = PC.PartitionedBlocks.close

    def recording_close(self):     # the actors' compute seconds, before they go
        if self.actors:
            busy.append(self.stats()[2])
        close(self)

    PC.PartitionedBlocks.close = recording_close
    with distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                  processes=True, dashboard_address=None,
                                  silence_logs=logging.CRITICAL) as cluster, \
            distributed.Client(cluster) as client:
        client.wait_for_workers(args.workers)
        data = Dataset.from_arrays(problem, None, client,
                                   n_parts=args.parts or 2 * args.workers)
        train(data, Params(solver_type=solver, max_iter=2), partition=True)   # warm up
        train(problem, Params(solver_type=solver, max_iter=2), n_threads=1)
        pids = list(client.run(os.getpid).values())
        with timed_section(args.lock, pids):
            t = time.perf_counter()
            model = train(problem, Params(solver_type=solver), n_threads=1)
            report(f"-s {solver} local dual CD, 1 core", time.perf_counter() - t,
                   f"{model.n_iter[0]} iterations")
            timed_cluster_runs(args, data, solver, label, busy, report)
    print()
    for name, seconds, ratio, extra in rows:
        print(f"| {name} | {seconds:.2f} | {ratio:.2f} | {extra} |")


def kernel_time(args):
    """Seconds of 8 rounds of one in-process block (K = 1, -s 1, no stop) made of each
    --parts-per-block count of CSR parts, best of 3: the block kernel's cost per row
    visited, and what reaching several parts costs it (the rounds are the same)."""
    from dlinear.solvers import partitioned_dual_cd as P
    from dlinear.plan import block_seeds, targets
    problem = make_rcv1_like(args.rows, seed=args.seed)
    params = Params(solver_type=1, eps=1e-12, max_iter=8).resolved()
    Y, C = targets(problem.y, None, np.array([1, -1]), np.ones(2), params)

    def blocks(q):
        cuts = np.linspace(0, problem.n_samples, q + 1).astype(np.int64)
        parts = [problem.subset(np.arange(cuts[i], cuts[i + 1])) for i in range(q)]
        return P.SimulatedBlocks([P.BlockState(parts, Y, C, params.bias, problem.n_features,
                                               1, block_seeds(params.seed, 0, 1))])

    warm = Params(solver_type=1, eps=1e-12, max_iter=2).resolved()
    P.fit_partitioned_dual_cd(blocks(1), 1, problem.n_features + 1, warm)
    with timed_section(args.lock):
        for q in args.parts_per_block:
            best = np.inf
            for _ in range(3):
                b = blocks(q)
                t = time.perf_counter()
                result = P.fit_partitioned_dual_cd(b, 1, problem.n_features + 1, params)
                best = min(best, time.perf_counter() - t)
            print(f"{args.rows} rows, {q} part(s): {result[0].n_iter} rounds in {best:.3f}s "
                  "(best of 3)", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["rounds", "time", "kernel"])
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--max-rounds", type=int, default=1000)
    ap.add_argument("--data", help="LIBSVM file or pickled Problem (default: make_rcv1_like)")
    ap.add_argument("--solver", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--parts", type=int, help="parts of the Dataset (default 2 per worker; "
                                               "Dataset.from_libsvm makes ~20 of the 677k file)")
    ap.add_argument("--rules", type=lambda s: s.split(","),
                    help="default: all three for rounds, cocoa,linesearch for time")
    ap.add_argument("--solvers", type=lambda s: [int(x) for x in s.split(",")], default=[1, 3],
                    help="rounds: the solvers (default 1,3)")
    ap.add_argument("--ks", type=lambda s: [int(x) for x in s.split(",")],
                    default=[1, 2, 4, 8, 16, 32, 64], help="rounds: the K values")
    ap.add_argument("--seed", type=int, default=1, help="rounds: make_rcv1_like's seed")
    ap.add_argument("--eps-only", action="store_true",
                    help="rounds: only the rounds to LIBLINEAR's default eps")
    ap.add_argument("--adaptive-target", type=float,
                    help="rounds: the adaptive rule's ADAPTIVE_TARGET (default 1.2)")
    ap.add_argument("--gaps", action="store_true", help="also time to the duality gaps")
    ap.add_argument("--newton", action="store_true", help="also the distributed -s 2")
    ap.add_argument("--lock", help="hold this file's lock (and nice -10) for the timed runs "
                                   "only, e.g. /tmp/dlinear-bench.lock")
    ap.add_argument("--parts-per-block", type=lambda s: [int(x) for x in s.split(",")],
                    default=[1, 10], help="kernel: the part counts of the block")
    ap.add_argument("--plot")
    args = ap.parse_args()
    if args.what == "rounds":
        rounds_vs_k(args)
    elif args.what == "kernel":
        kernel_time(args)
    else:
        args.rules = args.rules or ["cocoa", "linesearch"]
        timings(args)


if __name__ == "__main__":
    main()
