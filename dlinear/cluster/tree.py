"""One tree of Dask actors over a dataset's parts, generic over what each actor holds.

Each worker that holds parts of the dataset gets one actor, and the actor builds its
payload there from those parts (used where they are: no part moves, nothing is copied).
What the payload is, the tree does not know: the rows of one Newton problem, of all
one-vs-rest classes at once, of the multinomial loss (cluster/objective.py), or a block of
the partitioned dual CD (cluster/partitioned_cd.py). The tree does four things for all of
them:

- link: the actors form a binary tree (actor i's children are 2i+1 and 2i+2);
- round: a call goes from the client to the root and down the tree; every actor runs
  the payload's method in its worker's own thread pool while its children run theirs,
  and combines their results with its own (summed, or by the payload's `combine`), so
  one result reaches the client per round whatever the number of workers;
- watch: a call whose subtree lost a worker may never return (the actor proxy waits for
  the lost actor to come back), so a long wait checks every WATCH_INTERVAL whether the
  actors' workers are all still there;
- recover: Dask does not rebuild actors whose worker died. The tree places the parts
  again (Dask recomputes lost parts from their lineage), makes a new actor on every live
  worker, lets the owner replay the state the lost actors had, and repeats the round.

Why actors and not one task per block and call: a task round trip through the scheduler
cost about 30 ms per map-reduce on the benchmark machine, an actor call from the client to
a worker about 2 ms, and a Newton iteration makes several such calls (BENCHMARKS.md,
"Newton on a Dask cluster").

A payload is built on its worker by `make(share, *args)` (share: a Share) and offers the
methods the owner calls by name. It may also define
- `combine(method, a, b)`: two subtrees' results of `method` as one (default: their sum);
- `take_over(previous)`: state to keep from the payload of the actor it replaces on the
  same worker when the tree is rebuilt (the partitioned dual CD keeps its rows' dual
  variables so).
"""
from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass

import numpy as np

from .heap import hold_heap_while_alive
from .session import worker_addresses

MAX_RECOVERIES = 3
LOST_WORKER_WAIT = 30.0       # seconds for the scheduler to notice a dead worker
WATCH_INTERVAL = 1.0          # seconds between checks for lost workers during a call


class WorkerLost(Exception):
    """A worker holding one of a tree's actors left during a call."""


def add_results(a, b):
    """Sum of two results of the same call: floats, arrays, or tuples or dicts of them."""
    if isinstance(a, dict):
        return {key: add_results(a[key], b[key]) for key in a}
    if isinstance(a, tuple):
        return tuple(add_results(x, y) for x, y in zip(a, b))
    return a + b


def _add_results_of(method, a, b):
    """The default `combine` of payloads."""
    return add_results(a, b)


def nbytes(value) -> int:
    """Bytes of the arrays in a call's arguments or result (scalars count nothing)."""
    if isinstance(value, dict):
        return sum(nbytes(v) for v in value.values())
    if isinstance(value, tuple):
        return sum(nbytes(v) for v in value)
    return value.nbytes if isinstance(value, np.ndarray) else 0


@dataclass
class Share:
    """What one actor holds of the dataset: its place in the tree (`block`, 0 the root),
    its worker's non-empty parts and their keys, and the dataset's number of features (a
    part's own may be smaller)."""
    block: int
    parts: list
    keys: list
    n_features: int


class Placement:
    """Which of the dataset's parts each worker holds (one actor per worker will use
    them where they are). Several trees over one dataset may share it."""

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
        """The placement after a worker was lost: made once, whichever tree asks first."""
        with self._lock:
            if self.generation == generation:
                self.by_worker = self._build()
                self.generation += 1
            return self.by_worker, self.generation


class TreeActor:
    """Lives on one worker as a Dask actor: a payload built there over the worker's
    parts, its children in the tree, and its traffic counters."""

    def __init__(self, make, args, block, n_features, keys, predecessor, *parts):
        from distributed import get_worker

        # its rounds allocate n-vectors: keep them out of mmap while the actor lives
        hold_heap_while_alive(self)
        worker = get_worker()
        kept = [(key, p) for key, p in zip(keys, parts) if p.n_samples > 0]
        self.payload = make(Share(block, [p for _, p in kept], [key for key, _ in kept],
                                  n_features), *args)
        if predecessor is not None and hasattr(self.payload, "take_over"):
            # the tree keeps the replaced actor alive until its successors are linked
            previous = worker.state.actors.get(predecessor)
            if previous is not None:
                self.payload.take_over(previous.payload)
        self.children = []
        self.bytes_received = 0         # array arguments from the parent
        self.bytes_sent = 0             # array results to the parent
        self.busy = 0.0                 # seconds spent computing
        # the passes run in the worker's task threads: no more at once than it has cores
        self._executor = worker.executors["default"]

    def set_children(self, children) -> int:
        self.children = list(children)
        return len(self.children)

    def _run(self, prelude, method, args):
        start = time.perf_counter()
        if prelude is not None:
            getattr(self.payload, prelude[0])(*prelude[1])
        if method == "stats":
            return np.array([self.bytes_received, self.bytes_sent, self.busy])
        result = getattr(self.payload, method)(*args)
        self.busy += time.perf_counter() - start
        return result

    async def call(self, prelude, method, *args):
        """The payload's `method`(*args) combined over this actor's subtree, after the
        `prelude` call (method, args) on each payload if not None; "stats": the
        (bytes received, bytes sent, seconds computing) summed over the subtree."""
        self.bytes_received += nbytes(args)
        pending = [child.call(prelude, method, *args) for child in self.children]
        loop = asyncio.get_running_loop()
        total = await loop.run_in_executor(self._executor, self._run, prelude, method,
                                           args)
        combine = getattr(self.payload, "combine", None)
        if combine is None or method == "stats":
            combine = _add_results_of
        for child_result in pending:
            total = combine(method, total, await child_result)
        if method != "stats":               # the statistics do not count themselves
            self.bytes_sent += nbytes(total)
        return total


class ActorTree:
    """The client's side of one TreeActor per worker over `placement`'s parts, each
    holding `make(share, *args)` (see the module text). `replay()`, if given, is called
    after a recovery to give the new actors the state the lost ones had (through `call`);
    a round's `prelude` is not sent again after a recovery, the replay having made the
    state it was to bring."""

    def __init__(self, placement: Placement, make, args, replay=None):
        self.client = placement.dataset.client
        self.placement = placement
        self.make, self.args = make, tuple(args)
        self._replay = replay
        self.n_calls = 0                # rounds
        self.bytes_to_workers = 0       # arrays the client sent to the root
        self.bytes_from_workers = 0     # arrays the client received from the root
        self.workers, self.actors = [], []
        self._futures = {}              # worker: the future of its linked actor
        self._stale = False
        self._make_actors(placement.by_worker, placement.generation)

    def _make_actors(self, by_worker, generation):
        """New actors over `by_worker`'s parts, linked into a binary tree: actor i's
        children are 2i+1 and 2i+2. Each replaces the linked actor on its worker, if
        any, which stays alive until then (its payload may take over from it)."""
        self._generation = generation
        self.workers = list(by_worker)
        futures = [self.client.submit(TreeActor, self.make, self.args, block,
                                      self.placement.dataset.n_features,
                                      [p.key for p in parts],
                                      self._futures[w].key if w in self._futures else None,
                                      *parts, actor=True, workers=[w], pure=False)
                   for block, (w, parts) in enumerate(by_worker.items())]
        actors = self.client.gather(futures)
        set_up = [actor.set_children([actors[j] for j in (2 * i + 1, 2 * i + 2)
                                      if j < len(actors)])
                  for i, actor in enumerate(actors)]
        for f in set_up:
            f.result()
        self.actors = actors
        self._futures = dict(zip(self.workers, futures))

    def actor_keys(self) -> list:
        """The Dask keys of the linked actors (their workers' `state.actors` keys)."""
        return [f.key for f in self._futures.values()]

    def close(self):
        """Releases the actors (and what their payloads hold) on the workers."""
        self.actors, self._futures = [], {}

    def round(self, method, *args, prelude=None):
        """The payloads' `method`(*args) combined over the tree, the `prelude` call
        (method, args) made on each payload first; counted (rounds and bytes) unless it
        is "stats". A round that loses a worker is repeated on a recovered tree."""
        for attempt in range(MAX_RECOVERIES + 1):
            try:
                if self._stale:
                    self._recover()
                    prelude = None
                result = self.call(method, *args, prelude=prelude)
                break
            except (OSError, RuntimeError, WorkerLost):   # how a lost worker shows
                if attempt == MAX_RECOVERIES or not self._worker_left(LOST_WORKER_WAIT):
                    raise
                self._stale = True
        if method != "stats":
            self.n_calls += 1
            self.bytes_to_workers += nbytes(args)
            self.bytes_from_workers += nbytes(result)
        return result

    def call(self, method, *args, prelude=None):
        """The root's result of one call down the tree: neither counted nor repeated
        (for replays); raises WorkerLost if an actor's worker left meanwhile."""
        future = self.actors[0].call(prelude, method, *args)
        while True:
            try:
                return future.result(timeout=WATCH_INTERVAL)
            except TimeoutError:
                if self._worker_left(0.0):
                    raise WorkerLost(method) from None

    def stats(self):
        """(bytes of arrays all actors received from their parents, bytes they sent to
        them, seconds they spent computing), summed over the actors."""
        received, sent, busy = self.round("stats")
        return int(received), int(sent), float(busy)

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
        """New actors on the live workers, given the lost ones' state by the replay."""
        by_worker, generation = self.placement.rebuilt(self._generation)
        self._make_actors(by_worker, generation)
        if self._replay is not None:
            self._replay()
        self._stale = False


def _of_tree(name: str, doc: str = None):
    """The tree's attribute `name`, read through an object built over it."""
    return property(lambda self: getattr(self.tree, name), doc=doc)


class OnTree:
    """What the objects built over an ActorTree (`self.tree`) show of it to the drivers,
    the engine and the benchmarks."""

    tree: ActorTree
    actors = _of_tree("actors")
    workers = _of_tree("workers")
    n_calls = _of_tree("n_calls", "Rounds so far.")
    bytes_to_workers = _of_tree("bytes_to_workers")
    bytes_from_workers = _of_tree("bytes_from_workers")

    def stats(self):
        return self.tree.stats()

    def close(self):
        self.tree.close()
