"""The distributed backend of the primal objectives (-s 0, 2, 11): the data term of
Newton/TRON's objective summed over the rows held on Dask workers.

Per binary problem, each worker gets a Dask actor holding a LossTerm over the dataset's
parts that worker already holds (used where they are: no data moves, nothing is copied)
with that problem's labels and C, and the row state the driver reuses (z = X_w w, X_w s,
the rows with curvature), which never leaves the worker. The actors form a binary tree
(actor i's children are 2i+1 and 2i+2). A call goes from the client to the root with the
n-vector (w or a direction) and down the tree; every actor computes its share in the
worker's own thread pool while its children compute theirs, adds their results to its
own and returns the sum to its parent, so one n-vector (or scalar) reaches the client per
call. The regulariser (and -R) is added on the client by the same RegularizedObjective as
in a local run, so local and distributed runs share every line of the driver.

Why actors and not one task per block and call: a task round trip through the scheduler
cost about 30 ms per map-reduce on the benchmark machine, an actor call from the client to
a worker about 2 ms, and a Newton iteration makes several such calls (BENCHMARKS.md).

Actors are not rebuilt by Dask when their worker dies. The client keeps what the workers'
state derives from (the point w, the line-search direction, whether the curvature is
current), so when a call fails because a worker left, it places the dataset's parts
again (Dask recomputes lost parts from their lineage), makes new actors, replays the
state and repeats the call.
"""
from __future__ import annotations

import asyncio
import threading
import time

import numpy as np

from ..plan import group_rows, multinomial_C, n_binary_problems, targets
from ..solvers.kcolumn import KColumnLossTerm
from ..solvers.multinomial import MultinomialTerm, multinomial_objective
from ..solvers.primal_objectives import LOSS_OF_SOLVER, LossTerm, RegularizedObjective
from .dataset import concat_weights
from .session import worker_addresses

MAX_RECOVERIES = 3
LOST_WORKER_WAIT = 30.0       # seconds for the scheduler to notice a dead worker
WATCH_INTERVAL = 1.0          # seconds between checks for lost workers during a call


class WorkerLost(Exception):
    """A worker holding one of a problem's actors left during a call."""


def _add(a, b):
    """Sum of two results of the same call: floats, arrays, or tuples or dicts of them."""
    if isinstance(a, dict):
        return {key: _add(a[key], b[key]) for key in a}
    if isinstance(a, tuple):
        return tuple(_add(x, y) for x, y in zip(a, b))
    return a + b


def _nbytes(value) -> int:
    if isinstance(value, dict):
        return sum(_nbytes(v) for v in value.values())
    if isinstance(value, tuple):
        return sum(_nbytes(v) for v in value)
    return value.nbytes if isinstance(value, np.ndarray) else 0


class BlockActor:
    """Lives on one worker as a Dask actor: that worker's parts of one binary (or
    regression) problem as a LossTerm over them (not concatenated: no copy), and its
    children in the reduction tree."""

    def __init__(self, n_features, label, k, weighted_C, params, *parts):
        parts = [p for p in parts if p.n_samples > 0]
        Y, C = targets(np.concatenate([p.y for p in parts]), concat_weights(parts), label,
                       weighted_C, params, [k])
        y, C = np.ascontiguousarray(Y[:, 0]), np.ascontiguousarray(C[:, 0])
        self.positive = int(np.count_nonzero(y > 0))
        self._hold(LossTerm(parts, y, C, params.bias, LOSS_OF_SOLVER[params.solver_type],
                            params.p, n_features))

    def _hold(self, term):
        """Starts as a leaf of the tree holding `term`, with its traffic counters at 0."""
        from distributed import get_worker

        from .heap import hold_heap_while_alive
        # its rounds allocate n-vectors: keep them out of mmap while the actor lives
        hold_heap_while_alive(self)
        self.term = term
        self.children = []
        self.bytes_received = 0         # array arguments from the parent
        self.bytes_sent = 0             # array results to the parent
        self.busy = 0.0                 # seconds spent computing
        # the passes run in the worker's task threads: no more at once than it has cores
        self._executor = get_worker().executors["default"]

    def _counts(self):
        """(#positive rows, #rows) of the binary problem, for the stopping tolerance."""
        return np.array([self.positive, len(self.term.y)], dtype=np.int64)

    def set_children(self, children) -> int:
        self.children = list(children)
        return len(self.children)

    def _run(self, pending_move, method, args):
        start = time.perf_counter()
        if pending_move is not None:
            self.term.move(pending_move)
        if method == "counts":
            return self._counts()
        if method == "stats":
            return np.array([self.bytes_received, self.bytes_sent, self.busy])
        result = getattr(self.term, method)(*args)
        self.busy += time.perf_counter() - start
        return result

    async def call(self, pending_move, method, *args):
        """LossTerm.`method`(*args) summed over this actor's subtree (after applying a
        line-search step accepted since the last call)."""
        self.bytes_received += sum(_nbytes(a) for a in args)
        pending = [child.call(pending_move, method, *args) for child in self.children]
        loop = asyncio.get_running_loop()
        total = await loop.run_in_executor(self._executor, self._run, pending_move, method,
                                           args)
        for child_result in pending:
            total = _add(total, await child_result)
        if method != "stats":               # the statistics do not count themselves
            self.bytes_sent += _nbytes(total)
        return total


class Placement:
    """Which of the dataset's parts each worker holds (one actor per worker will use
    them where they are). Shared by all binary problems of a training run."""

    def __init__(self, dataset):
        self.dataset = dataset
        self._lock = threading.Lock()
        self.generation = 0
        self.by_worker = self._build()

    def _build(self) -> dict:
        client = self.dataset.client
        holders = client.who_has(self.dataset.parts)
        live = worker_addresses(client)
        by_worker = {}
        rows = dict.fromkeys(live, 0)
        homeless = []
        for part, n_rows in zip(self.dataset.parts, self.dataset.rows):
            workers = sorted(w for w in holders.get(part.key, ()) if w in live)
            if not workers:       # not computed yet, or lost: Dask recomputes it there
                homeless.append((part, n_rows))
                continue
            by_worker.setdefault(workers[0], []).append(part)
            rows[workers[0]] += n_rows
        # a lost worker's parts go to the live workers with the fewest rows, not all to
        # one: no survivor should get twice its share of memory and work
        for part, n_rows in homeless:
            worker = min(live, key=lambda w: (rows[w], w))
            by_worker.setdefault(worker, []).append(part)
            rows[worker] += n_rows
        return dict(sorted(by_worker.items()))

    def rebuilt(self, generation: int):
        """The placement after a worker was lost: made once, whichever problem asks first."""
        with self._lock:
            if self.generation == generation:
                self.by_worker = self._build()
                self.generation += 1
            return self.by_worker, self.generation


class TreeLossTerm:
    """LossTerm's methods summed over one BlockActor per worker (see the module text)."""

    def __init__(self, placement: Placement, label, k, weighted_C, params):
        self.client = placement.dataset.client
        self._placement = placement
        self._problem = (label, k, weighted_C, params)
        self.n_variables = placement.dataset.n_features + (1 if params.bias >= 0 else 0)
        self.n_calls = 0                # map-reduce rounds
        self.bytes_to_workers = 0       # arrays the client sent to the root
        self.bytes_from_workers = 0     # arrays the client received from the root
        # what the workers' state derives from, to replay it on new actors
        self._w = np.zeros(self.n_variables)
        self._s = None
        self._curvature = False
        self._pending_move = None
        self._stale = False
        self._make_actors(placement.by_worker, placement.generation)

    def _submit_actor(self, worker, parts):
        """The future of this problem's actor on `worker` over its `parts`."""
        label, k, weighted_C, params = self._problem
        return self.client.submit(BlockActor, self._placement.dataset.n_features, label, k,
                                  weighted_C, params, *parts, actor=True, workers=[worker],
                                  pure=False)

    def _make_actors(self, by_worker, generation):
        self._generation = generation
        self.workers = list(by_worker)
        self._link([self._submit_actor(w, parts) for w, parts in by_worker.items()])

    def _link(self, futures):
        """Waits for the new actors and makes them a binary tree: actor i's children are
        2i+1 and 2i+2."""
        self._actor_futures = futures
        self.actors = self.client.gather(futures)
        set_up = [actor.set_children([self.actors[j] for j in (2 * i + 1, 2 * i + 2)
                                      if j < len(self.actors)])
                  for i, actor in enumerate(self.actors)]
        for f in set_up:
            f.result()

    def close(self):
        """Releases the actors (and their row state) on the workers."""
        self.actors, self._actor_futures = [], []

    # ---------------------------------------------------------------- one round
    def _round(self, method, *args):
        for attempt in range(MAX_RECOVERIES + 1):
            try:
                if self._stale:
                    self._recover()
                pending, self._pending_move = self._pending_move, None
                result = self._call(pending, method, *args)
                break
            except (OSError, RuntimeError, WorkerLost):   # how a lost worker shows
                if attempt == MAX_RECOVERIES or not self._worker_left(LOST_WORKER_WAIT):
                    raise
                self._stale = True
        if method != "stats":
            self.n_calls += 1
            self.bytes_to_workers += sum(_nbytes(a) for a in args)
            self.bytes_from_workers += _nbytes(result)
        return result

    def _call(self, pending_move, method, *args):
        """The root's result. A call whose subtree lost a worker may never return (the
        actor proxy waits for the lost actor to come back), so a long wait checks once
        per WATCH_INTERVAL whether the workers are all still there."""
        future = self.actors[0].call(pending_move, method, *args)
        while True:
            try:
                return future.result(timeout=WATCH_INTERVAL)
            except TimeoutError:
                if self._worker_left(0.0):
                    raise WorkerLost(method) from None

    def _worker_left(self, wait: float) -> bool:
        """Whether the scheduler has removed one of the actors' workers, waiting up to
        `wait` seconds for it to notice."""
        deadline = time.monotonic() + wait
        while True:
            live = set(worker_addresses(self.client))
            if any(w not in live for w in self.workers):
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.1)

    def _recover(self):
        """New actors on the live workers, with the state the lost ones had."""
        by_worker, generation = self._placement.rebuilt(self._generation)
        self._make_actors(by_worker, generation)
        self._pending_move = None
        self._call(None, "at", self._w)
        if self._s is not None:
            self._call(None, "along", self._s, 0.0)
        if self._curvature:
            self._call(None, "grad_precond")
        self._stale = False

    # ---------------------------------------------------------------- LossTerm's methods
    def counts(self):
        """(#positive rows, #rows) of the problem."""
        pos, l = self._round("counts")
        return int(pos), int(l)

    def stats(self):
        """(bytes of arrays all actors received from their parents, bytes they sent to
        them, seconds they spent computing), summed over the actors."""
        received, sent, busy = self._round("stats")
        return int(received), int(sent), float(busy)

    def at(self, w):
        w = np.ascontiguousarray(w, dtype=np.float64)
        self._w, self._s, self._curvature = w.copy(), None, False
        return float(self._round("at", w))

    def grad_precond(self):
        g, M = self._round("grad_precond")
        self._curvature = True
        return g, M

    def hv(self, s):
        return self._round("hv", np.ascontiguousarray(s, dtype=np.float64))

    def along(self, s, alpha):
        s = np.ascontiguousarray(s, dtype=np.float64)
        loss = float(self._round("along", s, float(alpha)))
        self._s = s.copy()
        return loss

    def loss_along(self, alpha):
        return float(self._round("loss_along", float(alpha)))

    def move(self, alpha):
        """Sent with the next call: accepting a step needs no round of its own."""
        self._pending_move = float(alpha)
        self._w = self._w + alpha * self._s
        self._curvature = False


def distributed_objective(dataset, label, k, weighted_C, params, placement=None):
    """(objective, (#positive rows, #rows)) of binary problem k (or the regression
    problem, label None) on the workers holding `dataset`'s parts; several problems may
    share one `placement` (a Placement of the dataset)."""
    placement = placement if placement is not None else Placement(dataset)
    term = TreeLossTerm(placement, label, k, weighted_C, params)
    counts = term.counts()
    return RegularizedObjective(term, term.n_variables, params.regularize_bias), counts


# ------------------------------------------------------------------ all classes at once
class _ManyClassesActor(BlockActor):
    """A BlockActor over a term of several classes, which counts its own rows."""

    def _counts(self):
        return self.term.counts()


class ColumnsActor(_ManyClassesActor):
    """A BlockActor for all one-vs-rest problems together: the worker's parts as one
    KColumnLossTerm (dlinear.solvers.kcolumn), whose `execute` serves one round of the
    classes' requests; `pending_move` is then a dict {class: alpha}."""

    def __init__(self, n_features, label, weighted_C, params, *parts):
        parts = [p for p in parts if p.n_samples > 0]
        Y, C = targets(np.concatenate([p.y for p in parts]), concat_weights(parts), label,
                       weighted_C, params)
        self._hold(KColumnLossTerm(parts, Y, C, params.bias,
                                   LOSS_OF_SOLVER[params.solver_type], params.p, n_features))


class TreeColumnsTerm(TreeLossTerm):
    """KColumnLossTerm.execute summed over one ColumnsActor per worker: one actor round
    per round of the lockstep, whatever the number of classes (k-column Newton on a
    cluster). Recovery after a lost worker replays each class's point, line-search
    direction and curvature, as TreeLossTerm does for one class."""

    def __init__(self, placement: Placement, label, weighted_C, params):
        self.n_classes = n_binary_problems(len(label))
        self._W = {}            # per class: the point the workers' z derive from
        self._S = {}            # per class: the line-search direction (X s held)
        self._curved = set()    # classes whose curvature (COEF) is current
        super().__init__(placement, label, None, weighted_C, params)
        self._W = {c: np.zeros(self.n_variables) for c in range(self.n_classes)}

    def _submit_actor(self, worker, parts):
        label, _, weighted_C, params = self._problem
        return self.client.submit(ColumnsActor, self._placement.dataset.n_features, label,
                                  weighted_C, params, *parts, actor=True, workers=[worker],
                                  pure=False)

    def _recover(self):
        by_worker, generation = self._placement.rebuilt(self._generation)
        self._make_actors(by_worker, generation)
        self._pending_move = None
        self._call(None, "execute", {}, {c: ("at", (w,)) for c, w in self._W.items()})
        if self._S:
            self._call(None, "execute", {},
                       {c: ("along", (s, 0.0)) for c, s in self._S.items()})
        if self._curved:
            self._call(None, "execute", {}, {c: ("grad_precond", ()) for c in self._curved})
        self._stale = False

    def counts(self):
        """(#positive rows, #rows) of each class, (K, 2)."""
        return self._round("counts")

    def execute(self, moves: dict, requests: dict) -> dict:
        """One round: the accepted steps travel as the pending move, the requests as
        the call (see Lockstep)."""
        for c, alpha in moves.items():
            self._W[c] = self._W[c] + alpha * self._S[c]
            self._curved.discard(c)
        for c, (method, args) in requests.items():
            if method == "at":
                self._W[c] = args[0].copy()
                self._S.pop(c, None)
                self._curved.discard(c)
            elif method == "along":
                self._S[c] = args[0].copy()
            elif method == "grad_precond":
                self._curved.add(c)
        self._pending_move = dict(moves) if moves else None
        return self._round("execute", {}, requests)


# ------------------------------------------------------------------ multinomial
class MultinomialActor(_ManyClassesActor):
    """A BlockActor whose term is the worker's share of the softmax loss (a
    MultinomialTerm, dlinear.solvers.multinomial); n-vectors are W flattened."""

    def __init__(self, n_features, label, weighted_C, params, *parts):
        parts = [p for p in parts if p.n_samples > 0]
        class_of_row = group_rows(label, np.concatenate([p.y for p in parts]))
        C = multinomial_C(class_of_row, concat_weights(parts), weighted_C)
        self._hold(MultinomialTerm(parts, class_of_row, C, len(label), params.bias,
                                   n_features))


class TreeMultinomialTerm(TreeLossTerm):
    """MultinomialTerm's methods summed over one MultinomialActor per worker: the
    distributed multinomial objective (same rounds and replay as a binary problem)."""

    def __init__(self, placement: Placement, label, weighted_C, params):
        super().__init__(placement, label, None, weighted_C, params)
        self.n_classes = len(label)
        self.n_variables *= self.n_classes
        self._w = np.zeros(self.n_variables)

    def _submit_actor(self, worker, parts):
        label, _, weighted_C, params = self._problem
        return self.client.submit(MultinomialActor, self._placement.dataset.n_features,
                                  label, weighted_C, params, *parts, actor=True,
                                  workers=[worker], pure=False)

    def counts(self):
        """Rows per class."""
        return self._round("counts")


def distributed_multinomial_objective(dataset, label, weighted_C, params, placement=None):
    """(objective, rows per class) of multinomial logistic regression on the workers."""
    placement = placement if placement is not None else Placement(dataset)
    term = TreeMultinomialTerm(placement, label, weighted_C, params)
    counts = term.counts()
    return multinomial_objective(term, params.regularize_bias), counts
