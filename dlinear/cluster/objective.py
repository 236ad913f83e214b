"""The distributed backend of the primal objectives (-s 0, 2, 11), of multinomial
logistic regression and of the L1 solvers' OWL-QN (-s 5, 6: distributed_loss_term, one
round of loss and gradient an evaluation): the data term of the objective summed over
the rows held on Dask workers.

Each problem is an ActorTree (cluster/tree.py) whose actors hold, over the parts their
worker already holds, that problem's terms with its labels and C: a LossTerm for one
binary (or regression) problem (binary_rows), a KColumnLossTerm for all one-vs-rest
problems at once (class_columns), or a MultinomialTerm (multinomial_rows). The row state
the driver reuses (z = X w, X s, the rows with curvature) never leaves the worker; one
n-vector (or scalar) goes down the tree and one comes back per call. The regulariser (and
-R) is added on the client by the same RegularizedObjective as in a local run, so local
and distributed runs share every line of the driver.

An accepted line-search step needs no round of its own: it travels as the prelude of the
next call. The client keeps what the workers' state derives from (the point w, the
line-search direction, whether the curvature is current), and after the tree rebuilt its
actors following a lost worker, replays that state on them before the call is repeated.
"""
from __future__ import annotations

import numpy as np

from ..planning.class_plan import group_rows, multinomial_C, n_binary_problems, targets
from ..solvers.kcolumn import KColumnLossTerm
from ..solvers.multinomial import MultinomialTerm, multinomial_objective
from ..solvers.primal_objectives import LOSS_CODE, LossTerm, RegularizedObjective
from ..solvers.requests import Request, TermRequest
from .dataset import concat_weights
from .tree import ActorTree, ColumnCodec, OnTree, Placement


class CountedLossTerm(LossTerm):
    """A LossTerm that also counts the rows of its binary problem, and serves OWL-QN's
    rounds: on all its columns, or on a support it takes from the point it holds."""

    _point = None               # the last point evaluated (w, on this worker's columns)
    _support = None             # the coordinates of support-only rounds

    def counts(self):
        """(#positive rows, #rows), for the stopping tolerance."""
        return np.array([np.count_nonzero(self.y > 0), len(self.y)], dtype=np.int64)

    def at(self, w):
        self._point = np.asarray(w, dtype=np.float64)
        return super().at(w)

    def loss_gradient(self, w):
        """(loss at w, its gradient): all a first-order driver (OWL-QN) asks of a round."""
        loss = self.at(w)
        self._support = None
        return loss, self.grad_precond()[0]

    def restrict_to_nonzeros(self, keep_last: bool):
        """The next rounds carry the nonzeros of the last point evaluated (then the last
        coordinate, the unpenalised bias, when `keep_last`): the support needs no bytes."""
        support = np.flatnonzero(self._point)
        if keep_last and (len(support) == 0 or support[-1] != self.n_variables - 1):
            support = np.append(support, self.n_variables - 1)
        self._support = support

    def loss_gradient_on_support(self, w_support):
        """(loss, gradient on the support) at the point that is w_support on the support
        and zero elsewhere: X w is computed anew from it, exact, and the gradient's
        entries are those of the full round's, bit for bit."""
        w = np.zeros(self.n_variables)
        w[self._support] = w_support
        loss = self.at(w)
        return loss, self.grad_precond()[0][self._support]


def binary_rows(share, label, k, weighted_C, params) -> CountedLossTerm:
    """Payload: the worker's rows of binary problem k (or of the regression problem,
    label None)."""
    Y, C = targets(np.concatenate([p.y for p in share.parts]), concat_weights(share.parts),
                   label, weighted_C, params, [k])
    return CountedLossTerm(share.parts, np.ascontiguousarray(Y[:, 0]),
                           np.ascontiguousarray(C[:, 0]), params.bias,
                           LOSS_CODE[params.spec.loss], params.p, share.n_features)


def class_columns(share, label, weighted_C, params) -> KColumnLossTerm:
    """Payload: the worker's rows of all one-vs-rest problems (dlinear.solvers.kcolumn),
    whose `execute` serves one round of the classes' requests."""
    Y, C = targets(np.concatenate([p.y for p in share.parts]), concat_weights(share.parts),
                   label, weighted_C, params)
    return KColumnLossTerm(share.parts, Y, C, params.bias,
                           LOSS_CODE[params.spec.loss], params.p, share.n_features)


def multinomial_rows(share, label, weighted_C, params) -> MultinomialTerm:
    """Payload: the worker's share of the softmax loss (dlinear.solvers.multinomial);
    its n-vectors are W flattened."""
    class_of_row = group_rows(label, np.concatenate([p.y for p in share.parts]))
    C = multinomial_C(class_of_row, concat_weights(share.parts), weighted_C)
    return MultinomialTerm(share.parts, class_of_row, C, len(label), params.bias,
                           share.n_features)


class TreeLossTerm(OnTree):
    """LossTerm's methods (or MultinomialTerm's) summed over an ActorTree whose actors
    hold `make(share, *args)` (see the module text); `n_classes`: the columns of the
    matrix its n-vectors flatten (MultinomialTerm's), 1 for one problem."""

    def __init__(self, placement: Placement, make, args, n_variables: int, n_classes=1,
                 codec=None):
        self.n_variables = n_variables if codec is None else codec.length
        self.n_classes = n_classes
        # what the workers' state derives from, to replay it on new actors
        self._w = np.zeros(self.n_variables)
        self._s = None
        self._curvature = False
        self._pending_move = None
        # support-only rounds (OWL-QN's, once the support settles): the coordinates, the
        # point whose nonzeros they are, and the restriction still to send
        self._support = None
        self._support_point = None
        self._pending_restrict = None
        self.support_rounds = 0
        self.support_bytes = 0
        self.tree = ActorTree(placement, make, args, replay=self._replay, codec=codec)

    def _round(self, method, *args, on_rows=None):
        move, self._pending_move = self._pending_move, None
        restrict, self._pending_restrict = self._pending_restrict, None
        prelude = (None if move is None and restrict is None
                   else (TermRequest.MOVE, (move,)) if restrict is None
                   else ("restrict_to_nonzeros", (restrict,)))
        return self.tree.round(method, *args, prelude=prelude, on_rows=on_rows)

    def _replay(self):
        if self._support is not None:
            self.tree.call(TermRequest.AT, self._support_point)
            self.tree.call("restrict_to_nonzeros", self._keeps_last(self._support))
        self.tree.call(TermRequest.AT, self._w)
        if self._s is not None:
            self.tree.call(TermRequest.ALONG, self._s, 0.0)
        if self._curvature:
            self.tree.call(TermRequest.GRAD_PRECOND)

    def counts(self):
        """The payloads' counts, summed."""
        return self._round("counts")

    def at(self, w):
        w = np.ascontiguousarray(w, dtype=np.float64)
        self._w, self._s, self._curvature = w.copy(), None, False
        return float(self._round(TermRequest.AT, w))

    def loss_gradient(self, w):
        """(loss, gradient) at w in one round (dlinear.solvers.owlqn's evaluate)."""
        w = np.ascontiguousarray(w, dtype=np.float64)
        self._w, self._s, self._curvature = w.copy(), None, False
        self._support = self._support_point = self._pending_restrict = None
        loss, g = self._round("loss_gradient", w)
        return float(loss), g

    def _keeps_last(self, support) -> bool:
        return bool(len(support)) and int(support[-1]) == self.n_variables - 1

    def restrict(self, support):
        """The next rounds (loss_gradient_on_support) carry the coordinates `support`
        only: the nonzeros of the point evaluated last, then the last coordinate (the
        unpenalised bias) if in `support`. Each worker takes them from the point it holds,
        so the restriction costs no bytes; it travels as the next round's prelude."""
        support = np.asarray(support, dtype=np.int64)
        keep_last = self._keeps_last(support)
        nonzeros = np.flatnonzero(self._w)
        if keep_last and (len(nonzeros) == 0 or nonzeros[-1] != self.n_variables - 1):
            nonzeros = np.append(nonzeros, self.n_variables - 1)
        if not np.array_equal(nonzeros, support):
            raise ValueError("a support-only round's support must be the nonzeros of "
                             "the point evaluated last")
        self._support, self._support_point = support, self._w.copy()
        self._pending_restrict = keep_last

    def loss_gradient_on_support(self, w_support):
        """(loss, gradient on the support) at the point that is w_support there and zero
        elsewhere, in one round whose vectors hold the support's coordinates only."""
        w_support = np.ascontiguousarray(w_support, dtype=np.float64)
        self._w = np.zeros(self.n_variables)
        self._w[self._support] = w_support
        before = self.tree.bytes_to_workers + self.tree.bytes_from_workers
        loss, g = self._round("loss_gradient_on_support", w_support, on_rows=self._support)
        self.support_rounds += 1
        self.support_bytes += self.tree.bytes_to_workers + self.tree.bytes_from_workers - before
        return float(loss), g

    def grad_precond(self):
        g, M = self._round(TermRequest.GRAD_PRECOND)
        self._curvature = True
        return g, M

    def hv(self, s):
        return self._round(TermRequest.HV, np.ascontiguousarray(s, dtype=np.float64))

    def along(self, s, alpha):
        s = np.ascontiguousarray(s, dtype=np.float64)
        loss = float(self._round(TermRequest.ALONG, s, float(alpha)))
        # a LossTerm's X s takes the place of its Hessian's row weights
        self._s, self._curvature = s.copy(), False
        return loss

    def loss_along(self, alpha):
        return float(self._round(TermRequest.LOSS_ALONG, float(alpha)))

    def move(self, alpha):
        """Sent with the next call: accepting a step needs no round of its own."""
        self._pending_move = float(alpha)
        self._w = self._w + alpha * self._s
        self._curvature = False


def _n_variables(dataset, params) -> int:
    return dataset.n_features + (1 if params.bias >= 0 else 0)


def _codec(columns, params, row_width=1):
    """The ColumnCodec of a fit on the dataset columns `columns` (None: on all)."""
    return None if columns is None else ColumnCodec(columns, params.bias >= 0, row_width)


def distributed_loss_term(dataset, label, k, weighted_C, params, placement=None,
                          columns=None):
    """(TreeLossTerm, (#positive rows, #rows)) of binary problem k on the workers holding
    `dataset`'s parts: the data term alone (the L1 drivers add their regulariser on the
    client); `placement` and `columns` as distributed_objective's."""
    placement = placement if placement is not None else Placement(dataset)
    term = TreeLossTerm(placement, binary_rows, (label, k, weighted_C, params),
                        _n_variables(dataset, params), codec=_codec(columns, params))
    positive, rows = term.counts()
    return term, (int(positive), int(rows))


def distributed_objective(dataset, label, k, weighted_C, params, placement=None,
                          columns=None):
    """(objective, (#positive rows, #rows)) of binary problem k (or the regression
    problem, label None) on the workers holding `dataset`'s parts; several problems may
    share one `placement` (a Placement of the dataset). With `columns` (the dataset's
    occurring columns), each worker holds and exchanges its own columns only and the
    objective's vectors are those columns (then the bias)."""
    term, counts = distributed_loss_term(dataset, label, k, weighted_C, params, placement,
                                         columns)
    return RegularizedObjective(term, term.n_variables, params.regularize_bias), counts


def distributed_multinomial_objective(dataset, label, weighted_C, params, placement=None,
                                      columns=None):
    """(objective, rows per class) of multinomial logistic regression on the workers;
    `columns` as distributed_objective's."""
    placement = placement if placement is not None else Placement(dataset)
    term = TreeLossTerm(placement, multinomial_rows, (label, weighted_C, params),
                        _n_variables(dataset, params) * len(label), len(label),
                        codec=_codec(columns, params, len(label)))
    counts = term.counts()
    return multinomial_objective(term, params.regularize_bias), counts


class TreeColumnsTerm(OnTree):
    """KColumnLossTerm.execute summed over an ActorTree of class_columns: one round per
    round of the lockstep, whatever the number of classes (k-column Newton on a
    cluster). Recovery replays each class's point, line-search direction and curvature,
    as TreeLossTerm does for one problem. `columns` as distributed_objective's."""

    def __init__(self, placement: Placement, label, weighted_C, params, columns=None):
        self.n_classes = n_binary_problems(len(label))
        codec = _codec(columns, params)
        self.n_variables = (_n_variables(placement.dataset, params) if codec is None
                            else codec.length)
        self._W = {c: np.zeros(self.n_variables) for c in range(self.n_classes)}
        self._S = {}            # per class: the line-search direction (X s held)
        self._curved = set()    # classes whose curvature (COEF) is current
        self.tree = ActorTree(placement, class_columns, (label, weighted_C, params),
                              replay=self._replay, codec=codec)

    def _replay(self):
        self.tree.call("execute", {}, {c: Request(TermRequest.AT, (w,)) for c, w in self._W.items()})
        if self._S:
            self.tree.call("execute", {}, {c: Request(TermRequest.ALONG, (s, 0.0))
                                           for c, s in self._S.items()})
        if self._curved:
            self.tree.call("execute", {}, {c: Request(TermRequest.GRAD_PRECOND) for c in self._curved})

    def counts(self):
        """(#positive rows, #rows) of each class, (K, 2)."""
        return self.tree.round("counts")

    def execute(self, moves: dict, requests: dict) -> dict:
        """One round: the accepted steps travel as the prelude, the requests as the call
        (see dlinear.solvers.requests.serve_in_lockstep)."""
        for c, alpha in moves.items():
            self._W[c] = self._W[c] + alpha * self._S[c]
            self._curved.discard(c)
        for c, (method, args) in requests.items():
            if method == TermRequest.AT:
                self._W[c] = args[0].copy()
                self._S.pop(c, None)
                self._curved.discard(c)
            elif method == TermRequest.ALONG:
                self._S[c] = args[0].copy()
            elif method == TermRequest.GRAD_PRECOND:
                self._curved.add(c)
        return self.tree.round("execute", {}, requests,
                               prelude=(TermRequest.MOVE, (dict(moves),)) if moves else None)
