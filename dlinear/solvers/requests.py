"""Requests: how the Newton drivers and their objectives ask for values without calling.

A driver (dlinear.solvers.newton) or an objective's method is written as a generator that
yields requests, `Request(method, args)` naming a method of whatever serves it, is sent each
request's result and returns its own value. The two contracts are named here: a driver's
requests (ObjectiveRequest) are the methods of an `Objective`, an objective's requests
(TermRequest) those of a `DataTerm`; a k-column term serves a round of them at once
(`LockstepTerm`). Written so, the code does not care who answers:

- `serve` answers one generator's requests by calling the methods of one object (a local
  LossTerm or objective, a cluster's tree of actors);
- `serve_in_lockstep` advances K generators at once: each round collects one request of
  every generator still running and answers them all with one call of
  `execute(moves, requests)`, so the data are passed over once per round for all of
  them (k-column Newton: KColumnLossTerm.execute, or one actor round on a cluster). The
  generators take turns on the calling thread; nothing runs concurrently.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Generator, NamedTuple, Protocol, TypeVar, Union, runtime_checkable

import numpy as np

from ..threads import raise_if_stopped

T = TypeVar("T")


class ObjectiveRequest(StrEnum):
    """What a Newton driver asks of its objective: the methods of `Objective`."""
    FUN = "fun"
    GRAD = "grad"
    HV = "hv"
    DIAG_PRECOND = "diag_precond"
    LINESEARCH_AND_UPDATE = "linesearch_and_update"


class TermRequest(StrEnum):
    """What an objective asks of its data term: the methods of `DataTerm`."""
    AT = "at"
    ALONG = "along"
    LOSS_ALONG = "loss_along"
    GRAD_PRECOND = "grad_precond"
    HV = "hv"
    MOVE = "move"


class Request(NamedTuple):
    """One request: the method to call and its arguments. (A StrEnum compares and hashes
    as its text, so a plain ("at", (w,)) tuple is served alike.)"""
    method: Union[ObjectiveRequest, TermRequest]
    args: tuple = ()


# A driver or an objective's method: yields requests, is sent their answers, returns T.
Steps = Generator[Request, Any, T]


@runtime_checkable
class Objective(Protocol):
    """The objective protocol of the Newton drivers (its contract in detail:
    dlinear.solvers.newton's module text). All vectors are float64 of length n_variables."""
    n_variables: int

    def fun(self, w: np.ndarray) -> float: ...
    def grad(self, w: np.ndarray) -> np.ndarray: ...
    def hv(self, s: np.ndarray) -> np.ndarray: ...
    def diag_precond(self) -> np.ndarray: ...
    def linesearch_and_update(self, w: np.ndarray, s: np.ndarray, f: float, g: np.ndarray,
                              alpha: float) -> tuple: ...


@runtime_checkable
class DataTerm(Protocol):
    """The data term sum_i C_i loss(w^T x_i) of a RegularizedObjective: the local LossTerm
    (dlinear.solvers.primal_objectives) or the sum of the workers' (dlinear.cluster)."""

    def at(self, w: np.ndarray) -> float:
        """The loss at w; keeps z = X w for the calls that follow."""
    def along(self, s: np.ndarray, alpha: float) -> float:
        """Computes X s for the line search; the loss at w + alpha s."""
    def loss_along(self, alpha: float) -> float:
        """The loss at w + alpha s, for the s of the last `along`."""
    def grad_precond(self) -> tuple:
        """(gradient, diagonal preconditioner) of the loss at the current w."""
    def hv(self, s: np.ndarray) -> np.ndarray:
        """The loss's (generalised) Hessian at the current w, times s."""
    def move(self, alpha: float) -> None:
        """Accepts the step: w += alpha s, z += alpha X s."""


@runtime_checkable
class LockstepTerm(Protocol):
    """A data term of K columns serving one round of the K classes' requests in one pass
    (dlinear.solvers.kcolumn.KColumnLossTerm, or one actor round on a cluster)."""

    def execute(self, moves: dict, requests: dict) -> dict:
        """Applies the accepted steps `moves` {c: alpha}, then answers {c: Request}."""


def serve(steps: Steps[T], server) -> T:
    """Runs the generator `steps` to its end, answering each request (method, args) with
    server.method(*args); returns what the generator returns."""
    try:
        request = next(steps)
        while True:
            raise_if_stopped()      # a Ctrl-C whose KeyboardInterrupt Python dropped
            method, args = request
            request = steps.send(getattr(server, method)(*args))
    except StopIteration as stop:
        return stop.value


@dataclass
class Rounds:
    """What a lockstep run cost: its rounds, and how many generators each one served."""
    n_rounds: int = 0
    columns_per_round: list = field(default_factory=list)


def serve_in_lockstep(steps: list, execute, on_done=None) -> tuple:
    """Runs the generators steps[c] (c = 0..K-1), which yield data-term requests (TermRequest:
    DataTerm's methods), in lockstep. A round serves
    one request of each generator still running, by one call
    execute(moves, {c: (method, args)}) -> {c: result}. An accepted line-search step,
    ("move", (alpha,)), needs no round of its own: it is answered at once and travels in
    `moves` {c: alpha} with the next round. on_done(c) is called as generator c returns.
    Returns (the generators' return values in order, Rounds)."""
    results = [None] * len(steps)
    pending = {}            # c -> its request for the next round
    moves = {}
    rounds = Rounds()

    def advance(c, answer):
        """Runs generator c up to its next request for a round (or its end)."""
        try:
            request = steps[c].send(answer)
            while request[0] == TermRequest.MOVE:
                moves[c] = moves.get(c, 0.0) + float(request[1][0])
                request = steps[c].send(None)
        except StopIteration as stop:
            results[c] = stop.value
            if on_done is not None:
                on_done(c)
            return
        pending[c] = request

    for c in range(len(steps)):
        advance(c, None)
    while pending:
        raise_if_stopped()          # a Ctrl-C whose KeyboardInterrupt Python dropped
        requests, pending = pending, {}
        round_moves, moves = moves, {}
        answers = execute(round_moves, requests)
        rounds.n_rounds += 1
        rounds.columns_per_round.append(len(requests))
        for c in sorted(requests):
            advance(c, answers[c])
    return results, rounds
