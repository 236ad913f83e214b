"""The driver <-> objective <-> data-term contract (dlinear.solvers.requests): the request
names are exactly the Protocols' methods, every backend's term and objective has them, and
the drivers and objectives ask for nothing else."""
import numpy as np
import pytest

from dlinear import Params
from dlinear.cluster.objective import TreeColumnsTerm, TreeLossTerm
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.solvers.kcolumn import KColumnLossTerm
from dlinear.solvers.newton import fit_steps, newton_tol
from dlinear.solvers.primal_objectives import LOSS_CODE, LossTerm, PrimalObjective, RegularizedObjective
from dlinear.solvers.requests import (DataTerm, LockstepTerm, Objective, ObjectiveRequest, Request,
                                      TermRequest, serve)


def _methods(protocol):
    return {name for name, value in vars(protocol).items()
            if callable(value) and not name.startswith("_")}


def test_request_names_are_the_protocols_methods():
    assert {str(m) for m in ObjectiveRequest} == _methods(Objective)
    assert {str(m) for m in TermRequest} == _methods(DataTerm)
    assert _methods(LockstepTerm) == {"execute"}


@pytest.mark.parametrize("cls, protocol", [
    (LossTerm, DataTerm), (TreeLossTerm, DataTerm),
    (RegularizedObjective, Objective), (PrimalObjective, Objective),
    (KColumnLossTerm, LockstepTerm), (TreeColumnsTerm, LockstepTerm)])
def test_every_backend_implements_its_protocol(cls, protocol):
    missing = {m for m in _methods(protocol) if not callable(getattr(cls, m, None))}
    assert missing == set()


@pytest.mark.parametrize("newton", ["linesearch", "tron"])
def test_drivers_and_objectives_ask_only_named_requests(newton):
    """A whole fit of each driver, its requests recorded at both seams."""
    problem = make_rcv1_like(200, n_features=50, nnz_per_row=8, seed=3)
    y = np.where(problem.y > 0, 1.0, -1.0)
    params = Params(solver_type=2, C=1.0, newton=newton).resolved()
    objective = PrimalObjective(problem, y, np.ones(len(y)), 1.0, LOSS_CODE[params.spec.loss])
    assert isinstance(objective, Objective) and isinstance(objective.loss_term, DataTerm)
    asked = {"objective": [], "term": []}

    class Recording:
        def __init__(self, server, kind):
            self.server, self.kind = server, kind

        def __getattr__(self, name):
            asked[self.kind].append(name)
            return getattr(self.server, name)

    objective.loss_term = Recording(objective.loss_term, "term")
    steps = fit_steps(params, None, objective.n_variables, newton_tol(params, y))
    plain = serve(fit_steps(params, None, objective.n_variables, newton_tol(params, y)),
                  PrimalObjective(problem, y, np.ones(len(y)), 1.0,
                                  LOSS_CODE[params.spec.loss]))
    result = serve(steps, Recording(objective, "objective"))
    np.testing.assert_array_equal(result.w, plain.w)
    assert asked["objective"] and set(asked["objective"]) <= set(ObjectiveRequest)
    assert asked["term"] and set(asked["term"]) <= set(TermRequest)


def test_a_plain_tuple_request_is_served_alike():
    """StrEnum members compare and hash as their text: ("at", args) and Request(AT, args)
    reach the same method."""
    assert Request(TermRequest.AT, (1,)) == ("at", (1,))
    assert {"at": 1}[TermRequest.AT] == 1

    def steps():
        return (yield ("fun", (2.0,))) + (yield Request(ObjectiveRequest.FUN, (3.0,)))

    class Squares:
        def fun(self, x):
            return x * x

    assert serve(steps(), Squares()) == 13.0
