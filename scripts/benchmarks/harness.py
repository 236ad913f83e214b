"""The one timing and peer harness of the benchmarks (asv suite and runnable modules).

- Clocks: `timed` (wall and process CPU seconds of one call), `best_of`, `seconds_to_gap`
  (the first of a ladder of tolerances whose model is within a relative objective gap).
- Peers: LIBLINEAR 2.50 (liblinear-official, through its ctypes binding) trained on a
  dlinear Problem, its model as a dlinear Model, and f* from its run at a tight eps.
- dlinear internals a benchmark reads (fit statistics of the cluster backend, the
  simulated partitioned fit): each read once, here, so a refactor adapts one line.
- Local Dask clusters for the cluster benchmarks, which `DLINEAR_BENCH_CLUSTER=0` skips.
- Results of the runnable modules: a `Report` written as JSON, printed as a short table.
"""
from __future__ import annotations

import contextlib
import datetime
import json
import os
import platform
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from dlinear import ConvergenceWarning, Params, train
from dlinear.model import Model, nr_w_of
from dlinear.solvers import SOLVERS
from dlinear.solvers.primal_objective_values import primal_objective
from dlinear.threads import available_cores

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# ---------------------------------------------------------------------------- clocks

@dataclass
class Timing:
    """Seconds of a call: wall clock and this process's CPU time (the steadier figure on
    a shared machine: other processes' work does not count), and what it returned."""
    wall: float
    cpu: float
    value: Any = None


def timed(fn: Callable[[], Any]) -> Timing:
    wall, cpu = time.perf_counter(), time.process_time()
    value = fn()
    return Timing(time.perf_counter() - wall, time.process_time() - cpu, value)


def best_of(fn: Callable[[], Any], repeat: int) -> Timing:
    """The smallest wall and the smallest CPU time of `repeat` calls (the value of the
    last call)."""
    runs = [timed(fn) for _ in range(max(repeat, 1))]
    return Timing(min(r.wall for r in runs), min(r.cpu for r in runs), runs[-1].value)


def best_of_rounds(fns: dict, repeat: int) -> dict:
    """{name: best_of Timing} of the calls in `fns` run in turn, `repeat` rounds: on a
    shared machine each call of a round sees about the same load, so ratios between them
    are steadier than those of back-to-back repeats of one call."""
    runs = {name: [] for name in fns}
    for _ in range(max(repeat, 1)):
        for name, fn in fns.items():
            runs[name].append(timed(fn))
    return {name: Timing(min(r.wall for r in rs), min(r.cpu for r in rs), rs[-1].value)
            for name, rs in runs.items()}


def relative_gap(f: float, f_ref: float) -> float:
    return (f - f_ref) / abs(f_ref)


def seconds_to_gap(run: Callable, knobs, objective: Callable, f_star: float, gap: float,
                repeat: int = 1):
    """Runs `run(knob)` -> (seconds, model, capped) for each knob in order (loosest first)
    until one's model is within `gap` of f*: (seconds, knob, objective) of that one (best
    of `repeat` timings), else (None, "cap" or None, best objective seen). The sweep stops
    at the first run ending at the solver's iteration cap: tighter knobs repeat it."""
    best_f = np.inf
    for knob in knobs:
        seconds, model, capped = run(knob)
        f = objective(model)
        best_f = min(best_f, f)
        if relative_gap(f, f_star) <= gap:
            for _ in range(repeat - 1):
                seconds = min(seconds, run(knob)[0])
            return seconds, knob, f
        if capped:
            return None, "cap", best_f
    return None, None, best_f


EPS_LADDER = [2.0 ** -k for k in range(0, 21)]          # 1 .. ~1e-6, loosest first


# ---------------------------------------------------------------------------- dlinear

def dlinear_fit(problem, params: Params, n_threads: int = 1):
    """(seconds, model, stopped at its iteration cap?) of `dlinear.train`, warnings off."""
    lines = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        t = timed(lambda: train(problem, params, log=lines.append, n_threads=n_threads))
    capped = any(line.startswith("WARNING: reaching max number of iterations")
                 for line in lines)
    return t.wall, t.value, capped


def objective_of(problem, params: Params) -> Callable[[Model], float]:
    """The primal objective of `params`' formulation on `problem`, of a model."""
    return lambda model: primal_objective(problem, params, model)


def warm_up(problem, params_list, n_threads: int = 1) -> None:
    """Compiles (or loads from Numba's cache) the kernels `params_list` use, on the first
    rows of `problem`, so that no timing counts it."""
    tiny = problem.subset(np.arange(min(300, problem.n_samples)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for params in params_list:
            train(tiny, params, n_threads=n_threads)


# --------------------------------------------------------- dlinear internals, read once

def fit_stats(model: Model) -> dict:
    """Statistics of a cluster fit (mode, rounds, bytes to and from the workers,
    workers), or {} where the fit records none."""
    return dict(model.fit_stats or {})


def train_partitioned_simulated(problem, params: Params, n_blocks: int, **options):
    """The partitioned dual CD with `n_blocks` blocks simulated in this process."""
    from dlinear.in_process.simulated import train_partitioned_in_process
    return train_partitioned_in_process(problem, params, n_blocks, **options)


def class_plan(problem, params: Params):
    """(labels in LIBLINEAR's order, per-class C) of a classification problem."""
    from dlinear.planning.class_plan import first_appearance, order_labels, weighted_class_C
    label = order_labels(first_appearance(problem.y))
    return label, weighted_class_C(label, params.resolved(), lambda line: None)


def fit_class_group(problem, label, ks, weighted_C, params: Params) -> list:
    """The one-vs-rest fits of classes `ks` in this process, as a copy-mode cluster task
    runs them (k-column Newton where the in-process rule picks it)."""
    from dlinear.in_process.train import fit_class_group as fit
    return fit(problem, label, ks, weighted_C, params.resolved())


def binary_loss_term(problem, solver: int):
    """The loss term of Newton's objective (`at`, `grad_precond`, `hv`) of binary -s
    `solver` on `problem` (label 1 positive), C = 1, no bias."""
    from dlinear.solvers.primal_objectives import LOSS_CODE, LossTerm
    y = np.where(problem.y == 1, 1.0, -1.0)
    return LossTerm(problem, y, np.ones(problem.n_samples), -1.0,
                    LOSS_CODE[SOLVERS[solver].loss])


# ----------------------------------------------------------------- LIBLINEAR as the peer

def liblinear_model_to_dlinear(lib_model) -> Model:
    """A liblinear-official (ctypes) model as a dlinear Model, for comparisons."""
    solver_type = int(lib_model.param.solver_type)
    nr_class = int(lib_model.nr_class)
    nr_feature = int(lib_model.nr_feature)
    bias = float(lib_model.bias)
    w_size = nr_feature + (1 if bias >= 0 else 0)
    nr_w = nr_w_of(solver_type, nr_class)
    w = np.array(lib_model.w[: w_size * nr_w], dtype=np.float64).reshape(w_size, nr_w)
    label = None
    if SOLVERS[solver_type].kind == "classification":
        label = np.array(lib_model.get_labels(), dtype=np.int64)
    return Model(solver_type, nr_class, label, nr_feature, bias, w, rho=float(lib_model.rho))


def seed_liblinear(seed: int = 1) -> None:
    """srand(seed): LIBLINEAR draws its permutations from the C library's rand(), which its
    binding never reseeds, so its answer at a finite eps depends on what ran before."""
    import ctypes
    import ctypes.util
    name = ctypes.util.find_library("c")
    if name is not None:
        ctypes.CDLL(name).srand(seed)


def liblinear_problem(problem, bias: float = -1.0):
    """The problem as LIBLINEAR's ctypes structure: built once, outside any timing."""
    from liblinear import liblinear
    return liblinear.problem(problem.y, problem.to_scipy(), bias=bias)


def liblinear_fit(lib_problem, options: str):
    """(seconds, model as a dlinear Model, stopped at its iteration cap?) of
    `liblinearutil.train` on a prebuilt problem. LIBLINEAR prints to fd 1 (flushing every
    line): that goes to a temporary file, read for its cap warning."""
    from liblinear import liblinear, liblinearutil
    param = liblinear.parameter(options)
    sys.stdout.flush()
    saved = os.dup(1)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 1)
        try:
            seed_liblinear()
            t = timed(lambda: liblinearutil.train(lib_problem, param))
        finally:
            os.dup2(saved, 1)
            os.close(saved)
        tmp.seek(0)
        capped = b"reaching max number of iterations" in tmp.read()
    return t.wall, liblinear_model_to_dlinear(t.value), capped


def liblinear_train(problem, options: str) -> Model:
    """LIBLINEAR on the problem's rows (rand() seeded, quiet), as a dlinear Model."""
    _, model, _ = liblinear_fit(liblinear_problem(problem), options + " -q")
    return model


def liblinear_options(params: Params) -> str:
    """LIBLINEAR's options for the problem `params` describes (-s and -e excluded)."""
    kind = SOLVERS[params.solver_type].kind
    options = f"-c {params.C!r}"
    if kind == "oneclass":
        return options + f" -n {params.nu!r}"
    options += f" -B {params.bias!r}"
    if not params.regularize_bias:
        options += " -R"
    if kind == "regression":
        options += f" -p {params.p!r}"
    return options + "".join(f" -w{label:g} {weight!r}" for label, weight in params.class_weights)


# LIBLINEAR's run at a tight eps giving f* for each -s: the primal Newton solver of the same
# problem where there is one (-s 1 -> 2, 7 -> 0, 12 -> 11), else the solver itself
def tight_run(solver_type: int) -> tuple[str, float]:
    """LIBLINEAR's run that gives f* for -s solver_type: ("-s N", eps). The primal Newton
    solver where one solves the same problem (the registry's fallback: -s 1 -> 2, 7 -> 0,
    12 -> 11) at eps 1e-10, else the solver itself at 1e-9."""
    spec = SOLVERS[solver_type]
    fallback = spec.fallback if spec.fallback is not None and SOLVERS[spec.fallback].newton else None
    reference = SOLVERS[fallback if fallback is not None else solver_type]
    return f"-s {reference.id}", 1e-10 if reference.newton else 1e-9


def f_star(problem, params: Params) -> float:
    """The primal objective (of `params`' formulation) at LIBLINEAR's optimum of the same
    problem, from its run at the tight eps (tight_run), loosened 10x at a time while that run stops
    at LIBLINEAR's iteration cap (its dual CD solvers stop after 300 epochs)."""
    solver, eps = tight_run(params.solver_type)
    lib_problem = liblinear_problem(problem)
    while True:
        _, model, capped = liblinear_fit(lib_problem,
                                         f"{solver} -e {eps!r} {liblinear_options(params)}")
        if not capped or eps >= 1e-3:
            return primal_objective(problem, params, model)
        eps *= 10


# ---------------------------------------------------------------------- local clusters

def cluster_enabled() -> bool:
    """False when DLINEAR_BENCH_CLUSTER=0: the benchmarks that start Dask clusters skip."""
    return os.environ.get("DLINEAR_BENCH_CLUSTER", "1") != "0"


def skip_without_cluster() -> None:
    """In an asv setup: skips the benchmark (asv's NotImplementedError) when clusters are
    off."""
    if not cluster_enabled():
        raise NotImplementedError("DLINEAR_BENCH_CLUSTER=0")


def local_cluster(n_workers: int):
    """(cluster, client): a LocalCluster of `n_workers` single-threaded worker processes,
    quiet and without a dashboard, configured as dlinear-train's. Close the client, then
    the cluster."""
    import logging

    import distributed
    import dask

    from dlinear.cluster.session import LOCAL_CLUSTER_CONFIG
    logging.getLogger("distributed").setLevel(logging.ERROR)
    with dask.config.set(LOCAL_CLUSTER_CONFIG):     # as dlinear-train's local cluster
        cluster = distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1,
                                           processes=True, dashboard_address=":0",
                                           silence_logs=logging.CRITICAL)
    client = distributed.Client(cluster)
    client.wait_for_workers(n_workers)
    return cluster, client


@contextlib.contextmanager
def benchmark_lock(path: str | None, pids=()):
    """Holds the file lock `path` (shared by whoever benchmarks on this machine) and runs
    this process and `pids` (e.g. the Dask workers) at nice -10, for the timed runs only;
    nothing without a path."""
    if path is None:
        yield
        return
    import fcntl

    def renice(value):       # Linux nice is per thread: every thread of each process
        for pid in (os.getpid(), *pids):
            for tid in os.listdir(f"/proc/{pid}/task"):
                with contextlib.suppress(OSError):
                    os.setpriority(os.PRIO_PROCESS, int(tid), value)
            # with sched_autogroup, a thread's nice only ranks it within its session's
            # group; the groups share the cores by their own nice
            with contextlib.suppress(OSError), open(f"/proc/{pid}/autogroup", "w") as g:
                g.write(str(min(value, 0)))

    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            renice(-10)
            yield
        finally:
            renice(15)
            fcntl.flock(handle, fcntl.LOCK_UN)


# ---------------------------------------------------------------- runnable modules' output

def add_output_arguments(parser) -> None:
    parser.add_argument("--json", default=None,
                        help="where the results go (default: "
                             "bench-data/results/<module>-<UTC time>.json)")
    parser.add_argument("--lock", default=None,
                        help="hold this file's lock (and nice -10) for the timed runs, e.g. "
                             "/tmp/dlinear-bench.lock")


def machine() -> dict:
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = float("nan")
    return {"machine": platform.machine(), "processor": platform.processor(),
            "cpus": available_cores(), "python": platform.python_version(),
            "numpy": np.__version__, "load": load}


class Report:
    """The rows a runnable benchmark measured: `add` prints each as it comes (one line of
    `key=value`), `finish` prints the table of `columns` and writes everything as JSON:
    {"benchmark", "argv", "started", "machine", "notes", "rows"}."""

    def __init__(self, name: str, args) -> None:
        self.name = name
        self.path = getattr(args, "json", None)
        self.data = {"benchmark": name, "argv": sys.argv[1:],
                     "started": datetime.datetime.now(datetime.timezone.utc).isoformat(),
                     "machine": machine(), "notes": [], "rows": []}

    def note(self, text: str) -> None:
        self.data["notes"].append(text)
        print(f"# {text}", flush=True)

    def add(self, **row) -> dict:
        self.data["rows"].append(row)
        print("  ".join(f"{k}={_short(v)}" for k, v in row.items()), flush=True)
        return row

    @property
    def rows(self) -> list:
        return self.data["rows"]

    def finish(self, columns) -> str:
        self.data["machine"]["load_at_end"] = machine()["load"]
        print()
        print("| " + " | ".join(columns) + " |")
        print("|" + "---|" * len(columns))
        for row in self.rows:
            print("| " + " | ".join(_short(row.get(c, "")) for c in columns) + " |")
        path = self.path
        if path is None:
            stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%S")
            path = os.path.join(REPO, "bench-data", "results", f"{self.name}-{stamp}.json")
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w") as out:
            json.dump(self.data, out, indent=1, default=_jsonable)
        print(f"\nresults: {path}")
        return path


def _short(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _jsonable(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)
