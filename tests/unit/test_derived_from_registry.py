"""The help text, the docs' solver table and the tools' case lists are made from the solver
registry's rows (dlinear/solver_table.py): they list exactly its solvers, and a new row
appears in them without editing any of them."""
import re
from dataclasses import replace

from dlinear.cli import solver_help
from dlinear.cli.train_predict import TRAIN_USAGE
from dlinear.solver_table import SOLVERS, solver_ids

SOLVER_LINE = re.compile(r"^\t ?(\d+) -- (.+)$", re.M)


def test_the_help_lists_exactly_the_registrys_solvers():
    assert [(int(i), text) for i, text in SOLVER_LINE.findall(TRAIN_USAGE)] == [
        (s.id, s.description) for s in sorted(SOLVERS.values(), key=lambda s: (
            ["classification", "regression", "oneclass"].index(s.kind), s.id))]
    available = re.search(r"^Solvers available in this version: (.*)$", TRAIN_USAGE, re.M)
    assert available.group(1) == ", ".join(f"-s {s.id}" for s in SOLVERS.values()
                                           if s.available)


def test_the_help_names_each_options_solvers_from_their_rows():
    assert "--online : -s 1, 3 and -s 2 --primal-cd" in TRAIN_USAGE      # LIBLINEAR 2.50's rows
    assert f"--newton {{linesearch,tron}} : -s {solver_help.ids(lambda s: s.newton)} by" \
        in TRAIN_USAGE
    assert "-C : find parameters (C for -s 0, 1, 2, 3 and C, p for -s 11)" in TRAIN_USAGE


def test_a_new_row_is_listed_without_editing_a_text(monkeypatch):
    new = replace(SOLVERS[1], id=99, name="NEW_SOLVER", description="a new dual solver")
    monkeypatch.setitem(SOLVERS, 99, new)
    assert "\t99 -- a new dual solver\n" in solver_help.solver_lines("classification")
    assert solver_help.ids(lambda s: s.online) == "1, 3, 99"
    assert solver_ids()[-1] == 99
    monkeypatch.setitem(SOLVERS, 99, replace(new, available=False))
    assert 99 not in solver_ids()


def test_tool_and_benchmark_case_lists_cover_every_solver():
    from scripts.benchmarks.solvers import LiblinearPeer, shape_of
    from scripts.tools import model_hashes
    assert LiblinearPeer.params == solver_ids()
    assert {shape_of(s) for s in solver_ids()} == {"rcv1", "rcv1_regression", "multiclass"}
    names = [name for name, _, _ in model_hashes.training_cases(*model_hashes.data_sets())]
    assert {int(re.match(r"-s (\d+)", n).group(1)) for n in names} == set(solver_ids())
