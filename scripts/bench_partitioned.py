"""Benchmarks of the partitioned dual CD (BENCHMARKS.md, "Partitioned dual CD").

    python scripts/bench_partitioned.py rounds --rows 20000 --plot docs/partitioned_rounds.png
        rounds to relative duality gaps 1e-2/1e-3/1e-4 against K = 1..64 blocks, simulated
        in one process (rounds do not need cores), both combination rules, -s 1 and -s 3
    python scripts/bench_partitioned.py time --rows 200000 --repeat 2
        seconds on an rcv1-shaped set: local dual CD (1 core), partitioned on 1 and 2
        workers (both rules) to LIBLINEAR's default eps and to the gaps, and the
        distributed Newton -s 2 (same optimum as -s 1) on 2 workers
"""
import argparse
import time

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


def rounds_vs_k(args):
    from dlinear.train import train_partitioned_in_process
    problem = make_rcv1_like(args.rows, seed=1)
    ks = [1, 2, 4, 8, 16, 32, 64]
    table = {}
    for solver in (1, 3):
        for rule in ("cocoa", "linesearch"):
            for k in ks:
                record = {}
                params = Params(solver_type=solver, eps=1e-12, max_iter=args.max_rounds)
                try:
                    train_partitioned_in_process(problem, params, k, rule=rule,
                                                 on_round=gap_watcher(time.perf_counter(),
                                                                      record))
                except Reached:
                    pass
                except Warning:
                    pass
                table[solver, rule, k] = [record.get(g, (None,))[0] for g in GAPS]
                print(solver, rule, k, table[solver, rule, k], flush=True)
    print("\n| solver | rule | " + " | ".join(f"K={k}" for k in ks) + " |")
    print("| --- | --- | " + " | ".join("---" for _ in ks) + " |")
    for solver in (1, 3):
        for rule in ("cocoa", "linesearch"):
            cells = []
            for k in ks:
                cells.append(" / ".join(str(r) if r is not None else f">{args.max_rounds}"
                                        for r in table[solver, rule, k]))
            print(f"| -s {solver} | {rule} | " + " | ".join(cells) + " |")
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
        for ax, solver in zip(axes, (1, 3)):
            for rule, style in (("cocoa", "-"), ("linesearch", "--")):
                for g, color in zip(GAPS, ("tab:blue", "tab:orange", "tab:green")):
                    ys = [table[solver, rule, k][GAPS.index(g)] for k in ks]
                    ys = [y if y is not None else np.nan for y in ys]
                    ax.plot(ks, ys, style, color=color, marker="o",
                            label=f"{rule}, gap {g:g}")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("K (blocks)")
            ax.set_title(f"-s {solver}, {args.rows} rcv1-like rows")
        axes[0].set_ylabel("rounds to relative duality gap")
        axes[1].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=100)


def timings(args):
    import logging
    import warnings

    import distributed

    from dlinear import train
    from dlinear.cluster import Dataset
    from dlinear.cluster.partitioned_cd import train_partitioned
    problem = make_rcv1_like(args.rows, seed=1)
    label = np.array([1, -1])
    results = {}

    def best(name, seconds, extra=""):
        old = results.get(name)
        if old is None or seconds < old[0]:
            results[name] = (seconds, extra)
        print(name, f"{seconds:.2f}s", extra, flush=True)

    for _ in range(args.repeat):
        for solver in args.solvers:
            t = time.perf_counter()
            model = train(problem, Params(solver_type=solver), n_threads=1)
            best(f"-s {solver} local 1 core", time.perf_counter() - t,
                 f"iters {model.n_iter}")
        for n_workers in (1, 2):
            with distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1,
                                          processes=True, dashboard_address=None,
                                          silence_logs=logging.CRITICAL) as cluster, \
                    distributed.Client(cluster) as client:
                data = Dataset.from_arrays(problem, None, client, n_parts=2 * n_workers)
                client.wait_for_workers(n_workers)
                train(data, Params(solver_type=1, max_iter=2), partition=True)  # warm up
                for solver in args.solvers:
                    for rule in ("cocoa", "linesearch"):
                        params = Params(solver_type=solver, partition_rule=rule,
                                        max_iter=args.max_rounds)
                        t = time.perf_counter()
                        with warnings.catch_warnings(record=True):
                            model = train(data, params, partition=True)
                        best(f"-s {solver} partitioned {n_workers} worker(s) {rule}, eps 0.1",
                             time.perf_counter() - t, f"rounds {model.n_iter}")
                        record = {}
                        t = time.perf_counter()
                        try:
                            train_partitioned(data, Params(solver_type=solver, eps=1e-12,
                                                           max_iter=args.max_rounds).resolved(),
                                              label, np.ones(2), rule, 1,
                                              on_round=gap_watcher(t, record))
                        except Reached:
                            pass
                        best(f"-s {solver} partitioned {n_workers} worker(s) {rule}, gaps",
                             record.get(1e-3, (0, np.inf))[1],
                             "  ".join(f"gap {g:g}: {record[g][0]} rounds "
                                       f"{record[g][1]:.2f}s" for g in GAPS if g in record))
                if n_workers == 2:
                    t = time.perf_counter()
                    model = train(data, Params(solver_type=2))
                    best("-s 2 distributed Newton 2 workers", time.perf_counter() - t,
                         f"iters {model.n_iter}")
    print()
    for name, (seconds, extra) in results.items():
        print(f"| {name} | {seconds:.2f} | {extra} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["rounds", "time"])
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--max-rounds", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--solvers", type=lambda s: [int(x) for x in s.split(",")], default=[1])
    ap.add_argument("--plot")
    args = ap.parse_args()
    rounds_vs_k(args) if args.what == "rounds" else timings(args)


if __name__ == "__main__":
    main()
