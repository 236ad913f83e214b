"""The package's layers: imports (module and function level) only go down this list, and
no two modules import each other, directly or round a cycle.

A module may import modules of its own layer (without a cycle) and of any layer below.
Every module of the package must be in exactly one layer, so a new module has to be placed.
"""
from __future__ import annotations

import ast
import os
from fnmatch import fnmatchcase

import dlinear
from dlinear.solver_table import SOLVERS
from dlinear.solvers import FIT_ALL_CLASSES, FIT_ONE_TASK

PACKAGE_DIR = os.path.dirname(os.path.abspath(dlinear.__file__))

# top to bottom
LAYERS = [
    ("user surfaces (choose the backend)",
     ["dlinear", "dlinear.__main__", "dlinear.cli", "dlinear.cli_jobs", "dlinear.estimators", "dlinear.api"]),
    ("Dask cluster backend",
     ["dlinear.cluster", "dlinear.cluster.*"]),
    ("in-process training, cross-validation and -C search",
     ["dlinear.train", "dlinear.model_selection"]),
    ("solvers: fit functions, Newton drivers, objectives",
     ["dlinear.solvers", "dlinear.solvers.*"]),
    ("problems, models, parameters and prediction",
     ["dlinear.data", "dlinear.datasets", "dlinear.model", "dlinear.params",
      "dlinear.predict"]),
    ("Numba kernels on raw arrays",
     ["dlinear.kernels", "dlinear.kernels.*"]),
    ("foundation: the solver table, errors, atomic files, progress bars",
     ["dlinear.solver_table", "dlinear.errors", "dlinear.fileio", "dlinear.progress"]),
]

# only the cluster backend talks to a Dask scheduler
DISTRIBUTED_ALLOWED = ["dlinear.cluster", "dlinear.cluster.*"]


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


def test_every_available_solver_has_one_fit_function():
    for spec in SOLVERS.values():
        if spec.available:
            table = FIT_ALL_CLASSES if spec.all_classes else FIT_ONE_TASK
            other = FIT_ONE_TASK if spec.all_classes else FIT_ALL_CLASSES
            assert spec.id in table and spec.id not in other, spec.name
    assert set(FIT_ONE_TASK) | set(FIT_ALL_CLASSES) <= set(SOLVERS)
