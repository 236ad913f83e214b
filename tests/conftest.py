"""Shared fixtures (generated data, a local Dask cluster per test process) and the mutation
check's --solver-eps-scale option. The functions the test files share are in
tests/support (imported as tests.support...), LIBLINEAR among them."""
import functools
import os
from dataclasses import replace
from pathlib import Path

import pytest

from dlinear.datasets.rcv1_like import make_rcv1_like_split
from dlinear.solver_table import SOLVERS, bind_fits
from dlinear.solvers import partitioned_crammer_singer, partitioned_dual_cd, partitioned_oneclass
from tests.support.clusters import local_cluster


def pytest_addoption(parser):
    parser.addoption(
        "--solver-eps-scale", type=float, default=None, metavar="FACTOR",
        help="mutation check (scripts/tools/mutation_check.py): every dlinear solver "
             "runs at FACTOR times the eps it is asked for; LIBLINEAR is "
             "untouched. The parity tests must then fail.")


CLUSTER_FOLDER = Path(__file__).resolve().parent / "cluster"

# What a Dask worker imports to run dlinear's tasks (its dataset parts, the map-reduced
# objectives, the partitioned dual CD's actors).
WORKER_MODULES = ["distributed", "numpy", "scipy.sparse", "numba", "sparse",
                  "dlinear.cluster.dataset", "dlinear.cluster.objective",
                  "dlinear.cluster.partitioned_cd", "dlinear.cluster.tree",
                  "dlinear.solvers.dual_cd", "dlinear.solvers.newton"]


def local_cluster_workers_forked_from_a_server():
    """The local clusters' worker processes are forked from a server process that has
    imported WORKER_MODULES (multiprocessing's forkserver, as distributed's own tests do),
    not spawned: a spawned worker imports them again, about 2 CPU seconds, and the suite
    starts some 45 workers. The clusters the tests start as `dask scheduler` / `dask
    worker` processes, and those the command line starts in a subprocess, are spawned as
    a user's are."""
    import dask
    from distributed.utils import get_mp_context
    dask.config.set({"distributed.worker.multiprocessing-method": "forkserver"})
    get_mp_context().set_forkserver_preload(WORKER_MODULES)


local_cluster_workers_forked_from_a_server()


def subprocesses_keep_their_bytecode():
    """With PYTHONDONTWRITEBYTECODE set (as in some containers) every Python process the
    suite starts (about 200: the command line, Dask's schedulers and workers) would compile
    dlinear's sources again, about 0.1 CPU s each: they write it (__pycache__) as Python
    does by default."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


subprocesses_keep_their_bytecode()


def pytest_collection_modifyitems(config, items):
    """The `cluster` marker is the folder: every test in tests/cluster has it (so
    `-m cluster` and `tests/cluster` select the same tests; tests/unit/test_markers.py
    checks that no test elsewhere is marked by hand)."""
    for item in items:
        if CLUSTER_FOLDER in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.cluster)
    if hasattr(config, "workerinput"):
        files_with_slow_tests_first(items)


def files_with_slow_tests_first(items):
    """Under pytest-xdist (the README's run: a file per process at a time, in collection
    order) the files with the most `slow` tests go first, then the files with the most
    tests, so that the run ends on short files: a process with two tests left is sent the
    next file, so two long files at the end run one after the other in one process while
    the other idles. Within a file the order stays."""
    slow, tests = {}, {}
    for item in items:
        slow[item.path] = slow.get(item.path, 0) + (item.get_closest_marker("slow") is not None)
        tests[item.path] = tests.get(item.path, 0) + 1
    items.sort(key=lambda item: (-slow[item.path], -tests[item.path]))


def pytest_configure(config):
    if getattr(config.option, "loadscopereorder", False):
        # xdist's own order (the files with the most tests first) would put the long
        # one-test files last; files_with_slow_tests_first orders them in the processes
        config.option.loadscopereorder = False
    factor = config.getoption("--solver-eps-scale")
    if factor:
        scale_solver_eps(factor)


def scale_solver_eps(factor):
    """Wraps dlinear's fit functions (SolverSpec.fit, bound by dlinear.solvers: the one way
    train, the CV and the -C search reach a solver in this process, and the partitioned
    dual CD's driver) so each gets eps x factor."""
    def scaled(fit, params_at):
        @functools.wraps(fit)
        def fit_with_scaled_eps(*args, **kwargs):
            args = list(args)
            args[params_at] = replace(args[params_at], eps=args[params_at].eps * factor)
            return fit(*args, **kwargs)
        return fit_with_scaled_eps

    # fit(task, params); all classes: fit(problem, class_of_row, weighted_C, params, seed)
    bind_fits({s.id: scaled(s.fit, 3 if s.all_classes else 1)
               for s in SOLVERS.values() if s.available})
    # the partitioned dual CD's rounds (in process or on workers, the driver runs here):
    # fit_partitioned_dual_cd(blocks, n_problems, w_size, params, ...)
    partitioned_dual_cd.fit_partitioned_dual_cd = scaled(
        partitioned_dual_cd.fit_partitioned_dual_cd, 3)
    partitioned_crammer_singer.fit_partitioned_crammer_singer = scaled(
        partitioned_crammer_singer.fit_partitioned_crammer_singer, 3)
    partitioned_oneclass.fit_partitioned_oneclass = scaled(
        partitioned_oneclass.fit_partitioned_oneclass, 2)


@pytest.fixture(scope="session")
def client():
    """A client of a 2-worker local cluster, one per test process, shared by every test that
    leaves its workers as they were (starting a cluster and loading the kernels in its
    workers is most of a short cluster test). A test that kills, scales or configures
    workers starts a cluster of its own (tests.support.clusters)."""
    with local_cluster(2) as (_, c):
        yield c


@pytest.fixture(scope="session")
def binary_split():
    return make_rcv1_like_split(3000, 1500, n_features=2000, nnz_per_row=30, seed=11)


@pytest.fixture(scope="session")
def multiclass_split():
    return make_rcv1_like_split(3000, 1500, n_features=2000, n_classes=4, nnz_per_row=30,
                                seed=12)
