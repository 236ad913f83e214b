"""The package's layers: imports (module and function level) only go down this list, and
no two modules import each other, directly or round a cycle.

A module may import modules of its own layer (without a cycle) and of any layer below.
Every module of the package must be in exactly one layer, so a new module has to be placed.
"""
from __future__ import annotations

import ast
import inspect
import os
from fnmatch import fnmatchcase

import pytest

import dlinear
import dlinear.solvers  # noqa: F401  (binds the fit functions to the registry)
from dlinear.solver_table import SOLVERS

PACKAGE_DIR = os.path.dirname(os.path.abspath(dlinear.__file__))

# top to bottom
LAYERS = [
    ("user surfaces (choose the backend)",
     ["dlinear", "dlinear.__main__", "dlinear.cli", "dlinear.cli.*", "dlinear.estimators",
      "dlinear.estimators.*", "dlinear.api", "dlinear.onnx"]),
    ("Dask cluster backend",
     ["dlinear.cluster", "dlinear.cluster.*"]),
    ("in-process training, cross-validation and -C search; the simulated partitioned CD",
     ["dlinear.in_process", "dlinear.in_process.*"]),
    ("the mode chooser: how and where a fit runs",
     ["dlinear.planning", "dlinear.planning.modes", "dlinear.planning.cost_model",
      "dlinear.planning.memory_budget", "dlinear.planning.formulation"]),
    ("the class plan: labels, per-class C, targets, seeds, model assembly",
     ["dlinear.planning.class_plan"]),
    ("solvers: fit functions, Newton drivers, objectives",
     ["dlinear.solvers", "dlinear.solvers.*"]),
    ("problems, data in and out, synthetic data, models, parameters and prediction",
     ["dlinear.data", "dlinear.data.libsvm_reader", "dlinear.data.input_files",
      "dlinear.data.libsvm_writer", "dlinear.data.columns", "dlinear.data.binary_format",
      "dlinear.data.text_sample", "dlinear.datasets", "dlinear.datasets.*", "dlinear.problem",
      "dlinear.model", "dlinear.params", "dlinear.predict"]),
    ("Numba kernels on raw arrays",
     ["dlinear.kernels", "dlinear.kernels.*"]),
    ("foundation: the solver registry, errors, atomic files, progress bars, thread pools",
     ["dlinear.solver_table", "dlinear.errors", "dlinear.data.fileio", "dlinear.progress",
      "dlinear.threads"]),
]

# the layers' folders show the architecture: the rest of the package is in subpackages
MAX_TOP_LEVEL_MODULES = 12


# only the cluster backend talks to a Dask scheduler
DISTRIBUTED_ALLOWED = ["dlinear.cluster", "dlinear.cluster.*"]

# Only the registry names solvers by number; everywhere else code asks a SolverSpec
# (params.spec, model.spec) what it needs. The CLI's option parsing needs no exception:
# it checks `-s` against the registry (solver_type in SOLVERS) and sets -C's default -s.
SOLVER_NUMBERS_ALLOWED = ["dlinear.solver_table"]


def package_modules(package_dir: str) -> dict:
    """{dotted module name: file path}; a package is named by its __init__.py."""
    parent = os.path.dirname(package_dir)
    mods = {}
    for d, _, files in os.walk(package_dir):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(d, f)
                name = os.path.relpath(path, parent)[:-3].replace(os.sep, ".")
                mods[name[: -len(".__init__")] if name.endswith(".__init__") else name] = path
    return mods


def _absolute(module: str, is_package: bool, level: int, name) -> str:
    if level == 0:
        return name
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def imports_of(package_dir: str):
    """({module: {modules of the package it imports}}, {module: {outside top-level names}}),
    imports anywhere in the file (inside functions too)."""
    mods = package_modules(package_dir)
    pkg = os.path.basename(package_dir)
    inside = {m: set() for m in mods}
    outside = {m: set() for m in mods}
    for m, path in mods.items():
        is_package = path.endswith("__init__.py")
        with open(path) as f:
            tree = ast.parse(f.read(), path)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(m, is_package, node.level, node.module)
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            else:
                continue
            for t in targets:
                if t.split(".")[0] != pkg:
                    outside[m].add(t)
                    continue
                while t and t not in mods:
                    t = t.rpartition(".")[0]
                if t and t != m:
                    inside[m].add(t)
    return inside, outside


def layer_of(module: str, layers) -> int:
    hits = [i for i, (_, patterns) in enumerate(layers)
            if any(fnmatchcase(module, p) for p in patterns)]
    assert len(hits) == 1, f"{module} is in {len(hits)} layers; place it in exactly one"
    return hits[0]


def upward_imports(edges: dict, layers) -> list:
    out = []
    for m, targets in sorted(edges.items()):
        for t in sorted(targets):
            if layer_of(t, layers) < layer_of(m, layers):
                out.append(f"{m} ({layers[layer_of(m, layers)][0]}) imports {t} "
                           f"({layers[layer_of(t, layers)][0]})")
    return out


def cycles(edges: dict) -> list:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_every_module_has_exactly_one_layer():
    for m in package_modules(PACKAGE_DIR):
        layer_of(m, LAYERS)


def test_the_package_top_level_holds_at_most_a_dozen_modules():
    top = sorted(f for f in os.listdir(PACKAGE_DIR) if f.endswith(".py"))
    assert len(top) <= MAX_TOP_LEVEL_MODULES, top


def test_no_import_cycles():
    edges, _ = imports_of(PACKAGE_DIR)
    assert cycles(edges) == []


def test_imports_only_go_down_the_layers():
    edges, _ = imports_of(PACKAGE_DIR)
    assert upward_imports(edges, LAYERS) == []


def test_only_the_cluster_backend_imports_distributed():
    _, outside = imports_of(PACKAGE_DIR)
    offenders = [f"{m} imports {t}" for m, targets in sorted(outside.items())
                 for t in sorted(targets) if t.split(".")[0] == "distributed"
                 and not any(fnmatchcase(m, p) for p in DISTRIBUTED_ALLOWED)]
    assert offenders == []


# A module a reader takes in at once. The exception would be a Numba kernel that mirrors
# one of LIBLINEAR's functions whole; none is that long today.
MAX_MODULE_LINES = 600
LONG_KERNELS_MIRRORING_LIBLINEAR: set = set()


def long_modules(package_dir: str, max_lines: int, allowed=frozenset()) -> list:
    out = []
    for m, path in sorted(package_modules(package_dir).items()):
        with open(path) as f:
            n = sum(1 for _ in f)
        if n > max_lines and m not in allowed:
            out.append(f"{m}: {n} lines")
    return out


def test_no_module_is_over_600_lines():
    assert long_modules(PACKAGE_DIR, MAX_MODULE_LINES, LONG_KERNELS_MIRRORING_LIBLINEAR) == []


def test_the_length_check_catches_a_long_module(tmp_path):
    pkg = tmp_path / "toy"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "long.py").write_text("x = 1\n" * 601)
    (pkg / "short.py").write_text("x = 1\n" * 600)
    assert long_modules(str(pkg), MAX_MODULE_LINES) == ["toy.long: 601 lines"]


# the solvers make no threads: k-column Newton's drivers advance in lockstep on one thread,
# and the passes split over threads go through dlinear.threads
THREAD_MODULES = ("threading", "_thread", "concurrent")
NO_THREADS = ["dlinear.solvers", "dlinear.solvers.*"]


def threaded_modules(package_dir: str, patterns) -> list:
    _, outside = imports_of(package_dir)
    return [f"{m} imports {t}" for m, targets in sorted(outside.items())
            for t in sorted(targets) if t.split(".")[0] in THREAD_MODULES
            and any(fnmatchcase(m, p) for p in patterns)]


def test_the_solvers_import_no_threading():
    assert threaded_modules(PACKAGE_DIR, NO_THREADS) == []


def test_the_threading_check_catches_an_import(tmp_path):
    pkg = tmp_path / "toy"
    (pkg / "solvers").mkdir(parents=True)
    (pkg / "__init__.py").write_text("import threading\n")
    (pkg / "solvers" / "__init__.py").write_text("")
    (pkg / "solvers" / "a.py").write_text("def f():\n    import threading\n")
    (pkg / "solvers" / "b.py").write_text("from concurrent.futures import ThreadPoolExecutor\n")
    assert threaded_modules(str(pkg), ["toy.solvers", "toy.solvers.*"]) == [
        "toy.solvers.a imports threading", "toy.solvers.b imports concurrent.futures",
        "toy.solvers.b imports concurrent.futures.ThreadPoolExecutor"]


def test_checks_catch_a_cycle_and_an_upward_import(tmp_path):
    """The checks above on a made-up package that breaks both rules, at function level."""
    pkg = tmp_path / "toy"
    (pkg / "low").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "high.py").write_text("from .low import a\n")
    (pkg / "low" / "__init__.py").write_text("")
    (pkg / "low" / "a.py").write_text("def f():\n    from ..high import g\n")
    (pkg / "low" / "b.py").write_text("def f():\n    from . import c\n")
    (pkg / "low" / "c.py").write_text("from .b import f\n")
    layers = [("top", ["toy", "toy.high"]), ("bottom", ["toy.low", "toy.low.*"])]
    edges, _ = imports_of(str(pkg))
    assert cycles(edges) == [["toy.high", "toy.low.a"], ["toy.low.b", "toy.low.c"]]
    assert upward_imports(edges, layers) == ["toy.low.a (bottom) imports toy.high (top)"]


def _is_solver_number(node) -> bool:
    """x.solver_type, solver_type, or a spec's id (spec.id, params.spec.id)."""
    if isinstance(node, ast.Name):
        return node.id == "solver_type"
    if isinstance(node, ast.Attribute):
        if node.attr == "solver_type":
            return True
        base = node.value
        base_name = base.id if isinstance(base, ast.Name) else getattr(base, "attr", "")
        return node.attr == "id" and "spec" in base_name.lower()
    return False


def _is_registry(node) -> bool:
    return (isinstance(node, ast.Name) and node.id == "SOLVERS") or \
        (isinstance(node, ast.Attribute) and node.attr == "SOLVERS")


def _names(target) -> list:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for t in target.elts for n in _names(t)]
    return []


def _int_literals(node) -> bool:
    if isinstance(node, ast.Dict):
        items = node.keys
    elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        items = node.elts
    else:
        return False
    return bool(items) and all(isinstance(k, ast.Constant) and type(k.value) is int
                               for k in items)


def _keyed_by_solvers(node) -> bool:
    """A dict literal keyed by three or more solver numbers ({0: ..., 2: ..., 11: ...})."""
    keys = node.keys if isinstance(node, ast.Dict) else []
    return len(keys) >= 3 and _int_literals(node) and {k.value for k in keys} <= set(SOLVERS)


def solver_number_uses(source: str, filename: str) -> list:
    """Where `source` decides by a solver's number instead of asking its SolverSpec: a
    comparison of a solver number (except membership of the registry, SOLVERS), a table
    looked up by a solver number (except SOLVERS), a solver number kept under another
    name (sid = params.solver_type), or a table of solver numbers (named after solvers,
    PARTITIONED_SOLVERS = (1, 3, 7), or keyed by them, {0: ..., 2: ..., 11: ...})."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        where = (getattr(node, "lineno", 0), filename)
        if isinstance(node, ast.Compare):
            operands = [node.left] + node.comparators
            if any(_is_solver_number(o) for o in operands) and not all(
                    _is_solver_number(o) or _is_registry(o) for o in operands):
                found.append((where, ": compares a solver number"))
        elif isinstance(node, ast.Subscript):
            table = _names(node.value)
            if (_is_solver_number(node.slice) and not _is_registry(node.value)) or (
                    isinstance(node.slice, ast.Constant) and table
                    and "solver" in table[0].lower() and table[0] != "SOLVERS"):
                found.append((where, ": a table keyed by solver number"))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [n for t in targets for n in _names(t)]
            if names and _is_solver_number(node.value):
                found.append((where, f": keeps a solver number as {', '.join(names)}"))
            if (any("solver" in n.lower() for n in names) and _int_literals(node.value)) \
                    or _keyed_by_solvers(node.value):
                found.append((where, f": a table of solver numbers, {', '.join(names)}"))
    return [f"{name}:{line}{what}" for (line, name), what in sorted(found)]


def test_only_the_registry_names_solvers_by_number():
    offenders = []
    for m, path in sorted(package_modules(PACKAGE_DIR).items()):
        if any(fnmatchcase(m, p) for p in SOLVER_NUMBERS_ALLOWED):
            continue
        with open(path) as f:
            offenders += solver_number_uses(f.read(), os.path.relpath(path, PACKAGE_DIR))
    assert offenders == []


def test_solver_number_check_catches_each_form():
    source = """
if params.solver_type in (1, 3): pass
if model.solver_type == 4: pass
if 21 != solver_type: pass
if spec.id in (0, 2): pass
loss = LOSS_OF_SOLVER[params.solver_type]
sid = params.solver_type
PARTITIONED_SOLVERS = (1, 3, 7, 12, 13)
FIT_OF_SOLVER = {0: fit_newton}
_FORMULATION = {0: "lr", 2: "l2svc", 11: "l2svr"}
by_columns = loss == LOSS_OF_SOLVER[0]
"""
    found = solver_number_uses(source, "toy.py")
    assert [line.split(":")[1] for line in found] == [str(i) for i in range(2, 12)], found
    allowed = """
if params.solver_type not in SOLVERS: pass
spec = SOLVERS[params.solver_type]
same = a.solver_type == b.solver_type
if params.spec.loss == "hinge" and params.cd_block in (1, 2): pass
SKLEARN_SOLVERS = ("liblinear", "lbfgs")
penalty = {0: "l2", 1: "l1"}[l1_ratio]
"""
    assert solver_number_uses(allowed, "toy.py") == []


@pytest.mark.parametrize("spec", list(SOLVERS.values()), ids=lambda s: s.name)
def test_every_available_solver_has_a_fit_function_of_its_kind(spec):
    """fit(task, params), or for an all-classes solver fit(problem, class_of_row,
    weighted_C, params, seed); a row without one is marked unavailable."""
    if not spec.available:
        with pytest.raises(LookupError):
            spec.fit
        return
    required = [p for p in inspect.signature(spec.fit).parameters.values()
                if p.default is inspect.Parameter.empty]
    assert len(required) == (5 if spec.all_classes else 2), spec.fit


# one function decides the threads (dlinear.threads.available_cores: affinity and the
# cgroup CPU quota); nothing else asks the system for its cores
CORE_COUNT_CALLS = ("cpu_count", "sched_getaffinity")


def core_count_askers(directories) -> list:
    found = []
    for directory in directories:
        for root, _, files in os.walk(directory):
            for name in sorted(files):
                if name.endswith(".py"):
                    path = os.path.join(root, name)
                    with open(path) as f:
                        text = f.read()
                    if any(call in text for call in CORE_COUNT_CALLS):
                        found.append(os.path.relpath(path, os.path.dirname(directory)))
    return sorted(found)


def test_one_file_asks_for_the_core_count():
    scripts = os.path.join(os.path.dirname(PACKAGE_DIR), "scripts")
    assert core_count_askers([PACKAGE_DIR, scripts]) == [os.path.join("dlinear", "threads.py")]


def test_the_core_count_check_catches_a_call(tmp_path):
    pkg = tmp_path / "toy"
    pkg.mkdir()
    (pkg / "a.py").write_text("import os\nn = os.cpu_count()\n")
    (pkg / "b.py").write_text("import multiprocessing\nn = multiprocessing.cpu_count()\n")
    (pkg / "c.py").write_text("n = 1\n")
    assert core_count_askers([str(pkg)]) == ["toy/a.py", "toy/b.py"]
