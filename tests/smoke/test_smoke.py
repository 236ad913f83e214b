"""The smoke suite (`pytest -m smoke`, about two minutes): every solver once in this
process against liblinear-official, every mode once (in this process and on a 2-worker
local cluster), and the commands once. test_the_smoke_suite_covers_every_solver_and_mode
keeps it complete: a new solver row or Mode fails it until a smoke case runs it."""
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from dlinear import Params, predict, train
from dlinear.cluster import engine
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.in_process import train as in_process_train
from dlinear.planning import modes
from dlinear.planning.modes import IN_PROCESS_MODES, Mode
from dlinear.solver_table import SOLVERS
from dlinear.solvers.primal_objective_values import primal_objective
from tests.support.liblinear_oracle import liblinear_options, liblinear_train
from tests.support.problems import regression_on

pytestmark = pytest.mark.smoke

ROOT = Path(__file__).resolve().parents[2]
AVAILABLE = sorted(s.id for s in SOLVERS.values() if s.available)
# the backend-only modes are decided before the data is there, never by a fit
BACKEND_ONLY = {Mode.IN_PROCESS, Mode.CLUSTER}


@pytest.fixture(scope="module")
def binary():
    return make_rcv1_like(600, n_features=300, nnz_per_row=15, seed=5)


@pytest.fixture(scope="module")
def multiclass():
    return make_rcv1_like(600, n_features=300, n_classes=4, nnz_per_row=15, seed=6)


@pytest.fixture(scope="module")
def regression(binary):
    return regression_on(binary, 7)


def data_for(spec, binary, regression):
    return regression if spec.kind == "regression" else binary


@pytest.fixture
def chosen(monkeypatch):
    """The modes the fits of a test ran in (every caller of modes.choose records)."""
    seen = []

    def recording(*args, **kwargs):
        choice = modes.choose(*args, **kwargs)
        seen.append(choice.mode)
        return choice
    for module in (in_process_train, engine):
        monkeypatch.setattr(module, "choose", recording)
    return seen


@pytest.mark.parametrize("solver", AVAILABLE, ids=lambda s: f"s{s}")
def test_every_solver_reaches_liblinears_objective(solver, binary, regression):
    spec = SOLVERS[solver]
    problem = data_for(spec, binary, regression)
    params = Params(solver_type=solver, C=1.0, eps=spec.default_eps / 10)
    model = train(problem, params)
    _, reference = liblinear_train(
        problem, f"-s {solver} -e {params.eps!r} {liblinear_options(params)}")
    f, f_lib = (primal_objective(problem, params, m) for m in (model, reference))
    # both stop by the same rule at the same eps: the objectives agree to that eps's order
    assert abs(f - f_lib) <= 1e-2 * abs(f_lib), (f, f_lib)
    if spec.kind == "classification":
        agree = np.mean(predict(model, problem) == predict(reference, problem))
        assert agree >= 0.97, agree


IN_PROCESS_CASES = {
    Mode.ONE_PROBLEM: (Params(solver_type=11), "regression"),
    Mode.MULTINOMIAL: (Params(solver_type=0, multinomial=True), "multiclass"),
    Mode.ALL_CLASSES: (Params(solver_type=4), "multiclass"),
    Mode.KCOLUMN: (Params(solver_type=0, kcolumn=True), "multiclass"),
    Mode.CLASSES_ON_THREADS: (Params(solver_type=1), "multiclass"),
}


@pytest.mark.parametrize("mode", list(IN_PROCESS_CASES), ids=lambda m: m.name)
def test_every_in_process_mode(mode, chosen, multiclass, regression):
    params, which = IN_PROCESS_CASES[mode]
    problem = {"multiclass": multiclass, "regression": regression}[which]
    model = train(problem, params, n_threads=2)
    assert mode in chosen, chosen
    if which == "multiclass":
        assert np.mean(predict(model, problem) == problem.y) > 0.6


CLUSTER_CASES = {
    Mode.WHOLE_ON_WORKER: (Params(solver_type=0), False, "binary"),
    Mode.NEWTON_GROUPS_ON_COPIES: (Params(solver_type=0), False, "multiclass"),
    Mode.CLASSES_ON_COPIES: (Params(solver_type=1), False, "multiclass"),
    Mode.NEWTON_MAP_REDUCED: (Params(solver_type=0), True, "binary"),
    Mode.KCOLUMN_MAP_REDUCED: (Params(solver_type=0), True, "multiclass"),
    Mode.MULTINOMIAL_MAP_REDUCED: (Params(solver_type=0, multinomial=True), True, "multiclass"),
    Mode.PARTITIONED_DUAL_CD: (Params(solver_type=1, eps=1e-4), True, "binary"),
    Mode.L1_MAP_REDUCED: (Params(solver_type=6, eps=1e-4), True, "binary"),
}


@pytest.mark.cluster
@pytest.mark.parametrize("mode", list(CLUSTER_CASES), ids=lambda m: m.name)
def test_every_cluster_mode_trains_the_in_process_model(mode, chosen, client, binary,
                                                         multiclass):
    params, partition, which = CLUSTER_CASES[mode]
    problem = binary if which == "binary" else multiclass
    model = train(problem, params, client=client, partition=partition)
    assert mode in chosen, chosen
    local = train(problem, replace(params, partition=None))
    f, f_local = (primal_objective(problem, params, m) for m in (model, local))
    assert abs(f - f_local) <= 1e-3 * abs(f_local), (f, f_local)


def test_the_commands_train_and_predict(tmp_path):
    model, out = tmp_path / "m", tmp_path / "p"
    run = [sys.executable, "-m", "dlinear"]
    subprocess.run(run + ["train", "-q", str(ROOT / "examples/rcv1_small.train"), str(model)],
                   check=True)
    result = subprocess.run(run + ["predict", str(ROOT / "examples/rcv1_small.test"),
                                   str(model), str(out)],
                            check=True, capture_output=True, text=True)
    assert result.stdout.startswith("Accuracy = ")
    assert len(out.read_text().splitlines()) > 0


def test_the_smoke_suite_covers_every_solver_and_mode():
    fit_modes = set(Mode) - BACKEND_ONLY
    covered = set(IN_PROCESS_CASES) | set(CLUSTER_CASES)
    assert fit_modes - covered == set(), "modes with no smoke case"
    assert set(IN_PROCESS_CASES) == (IN_PROCESS_MODES - BACKEND_ONLY)
    assert set(AVAILABLE) == {s.id for s in SOLVERS.values() if s.available}
