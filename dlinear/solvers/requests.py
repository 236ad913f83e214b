"""Requests: how the Newton drivers and their objectives ask for values without calling.

A driver (dlinear.solvers.newton) or an objective's method is written as a generator that
yields requests, `(method, args)` naming a method of whatever serves it, is sent each
request's result and returns its own value. Written so, the code does not care who
answers:

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


def serve(steps, server):
    """Runs the generator `steps` to its end, answering each request (method, args) with
    server.method(*args); returns what the generator returns."""
    try:
        request = next(steps)
        while True:
            method, args = request
            request = steps.send(getattr(server, method)(*args))
    except StopIteration as stop:
        return stop.value


@dataclass
class Rounds:
    """What a lockstep run cost: its rounds, and how many generators each one served."""
    n_rounds: int = 0
    columns_per_round: list = field(default_factory=list)


def serve_in_lockstep(steps: list, execute, on_done=None):
    """Runs the generators steps[c] (c = 0..K-1), which yield data-term requests (LossTerm's
    methods: at, grad_precond, hv, along, loss_along, move), in lockstep. A round serves
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
            while request[0] == "move":
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
        requests, pending = pending, {}
        round_moves, moves = moves, {}
        answers = execute(round_moves, requests)
        rounds.n_rounds += 1
        rounds.columns_per_round.append(len(requests))
        for c in sorted(requests):
            advance(c, answers[c])
    return results, rounds
