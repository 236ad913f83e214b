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
costs several times an actor call from the client to a worker, and a Newton iteration
makes several such calls (BENCHMARKS.md, "Newton on a Dask cluster").

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
from typing import Optional

import numpy as np

from ..data.columns import on_local_columns
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
    part's own may be smaller). On the worker's own columns (`columns`, the sorted
    dataset columns its parts use), the parts' indices are renumbered into positions of
    `columns` and n_features is len(columns): the payload's vectors are that long."""
    block: int
    parts: list
    keys: list
    n_features: int
    columns: Optional[np.ndarray] = None


class ColumnCodec:
    """The client's side of a tree whose actors hold their worker's columns only
    (Share.columns): the driver's vectors live on the dataset's occurring columns `used`
    (then the bias when `bias`), in rows of `row_width` values (a multinomial W
    flattened). `down` gives an actor the rows of its columns of every such vector in a
    call's arguments; `up` puts an actor's result vectors back at their rows of the
    driver's, zeros elsewhere. A vector is a float64 array whose last axis has the
    driver's (or, coming up, the actor's) length, 1-D or, for one value per column, 2-D
    (a vector per class: the partitioned dual CD's W and its steps). The payloads' other
    arrays are counts (int64) and, 2-D, statistics of `reserved` values per class: an
    actor whose own length is one of those cannot be told from them (set_blocks says
    so), and its tree keeps all columns."""

    def __init__(self, used: np.ndarray, bias: bool, row_width: int = 1, reserved=()):
        self.used = np.asarray(used)
        self.bias = bool(bias)
        self.row_width = int(row_width)
        self.length = (len(self.used) + self.bias) * self.row_width
        self.reserved = set(reserved)
        self.rows = []

    def set_blocks(self, block_columns: list):
        """The rows of each actor's columns (block i's at rows[i]); ValueError if an
        actor's own length is a reserved one."""
        self.rows = [np.append(np.searchsorted(self.used, c), len(self.used))
                     if self.bias else np.searchsorted(self.used, c)
                     for c in block_columns]
        if any(len(r) * self.row_width in self.reserved for r in self.rows):
            raise ValueError("a worker's own columns are as many as the statistics of "
                             "its payload")

    def on_rows(self, rows: np.ndarray) -> "ColumnCodec":
        """The codec of vectors that hold the driver's rows `rows` (sorted) only: each
        actor gets those of its own columns, in their order (the support-only rounds of
        the L1 driver)."""
        sub = ColumnCodec(rows, bias=False)
        sub.rows = [np.flatnonzero(np.isin(rows, own)) for own in self.rows]
        return sub

    def down(self, value, block: int):
        if isinstance(value, dict):
            return {k: self.down(v, block) for k, v in value.items()}
        if isinstance(value, tuple):
            return tuple(self.down(v, block) for v in value)
        if self._is_vector(value, self.length):
            rows = value.reshape(value.shape[:-1] + (-1, self.row_width))
            return np.ascontiguousarray(
                rows[..., self.rows[block], :].reshape(value.shape[:-1] + (-1,)))
        return value

    def up(self, value, block: int):
        if isinstance(value, dict):
            return {k: self.up(v, block) for k, v in value.items()}
        if isinstance(value, tuple):
            return tuple(self.up(v, block) for v in value)
        if self._is_vector(value, len(self.rows[block]) * self.row_width):
            full = np.zeros(value.shape[:-1] + (self.length,))
            full.reshape(value.shape[:-1] + (-1, self.row_width))[..., self.rows[block], :] \
                = value.reshape(value.shape[:-1] + (-1, self.row_width))
            return full
        return value

    def _is_vector(self, value, length: int) -> bool:
        return (isinstance(value, np.ndarray) and value.dtype == np.float64
                and (value.ndim == 1 or (value.ndim == 2 and self.row_width == 1))
                and value.shape[-1] == length)



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

    def __init__(self, make, args, block, n_features, keys, predecessor, own_columns,
                 *parts):
        from distributed import get_worker

        # its rounds allocate n-vectors: keep them out of mmap while the actor lives
        hold_heap_while_alive(self)
        worker = get_worker()
        kept = [(key, p) for key, p in zip(keys, parts) if p.n_samples > 0]
        parts = [p for _, p in kept]
        self.columns = None
        if own_columns:         # renumbered once: every round then carries these only
            self.columns, parts = on_local_columns(parts, n_features)
            n_features = len(self.columns)
        self.payload = make(Share(block, parts, [key for key, _ in kept], n_features,
                                  self.columns), *args)
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

    def used_columns(self):
        """The dataset columns this actor's payload holds (Share.columns), or None."""
        return self.columns

    def holdings(self) -> dict:
        """Sizes of the arrays the payload holds ({attribute: elements}), for tests that
        check what a worker keeps."""
        return {name: int(value.size) for name, value in vars(self.payload).items()
                if isinstance(value, np.ndarray)}

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

    async def call_own(self, prelude, method, *args):
        """The payload's `method`(*args) of this actor alone (its children are called by
        the client): a tree on the workers' own columns, where each actor's arguments are
        its own. "stats": this actor's (bytes received, bytes sent, seconds computing)."""
        if method != "stats":
            self.bytes_received += nbytes(args)
        loop = asyncio.get_running_loop()
        result = await loop.run_in_executor(self._executor, self._run, prelude, method,
                                            args)
        if method != "stats":
            self.bytes_sent += nbytes(result)
        return result


class ActorTree:
    """The client's side of one TreeActor per worker over `placement`'s parts, each
    holding `make(share, *args)` (see the module text). `replay()`, if given, is called
    after a recovery to give the new actors the state the lost ones had (through `call`);
    a round's `prelude` is not sent again after a recovery, the replay having made the
    state it was to bring.

    With a `codec` (ColumnCodec), each actor holds its worker's columns only, and a round
    is the client's call of each actor with its own columns of the vectors (`down`); the
    client adds up their results (`up`) in the order the tree would, so the sums are
    those of a tree on all columns, bit for bit, and no worker sends or receives more
    than its own columns."""

    def __init__(self, placement: Placement, make, args, replay=None,
                 codec: Optional[ColumnCodec] = None, combine=None):
        self.client = placement.dataset.client
        self.placement = placement
        self.make, self.args = make, tuple(args)
        self._replay = replay
        self.codec = codec
        # how the client adds two subtrees' results on the workers' own columns: the
        # payload's `combine` (make's class's), by default their sum
        self._combine = combine or _add_results_of
        self.n_calls = 0                # rounds
        self.bytes_to_workers = 0       # arrays the client sent to the root
        self.bytes_from_workers = 0     # arrays the client received from the root
        self.round_bytes_each = []      # the last round's bytes per actor, both ways
        self._rows_codec = None
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
                                      self.codec is not None,
                                      *parts, actor=True, workers=[w], pure=False)
                   for block, (w, parts) in enumerate(by_worker.items())]
        actors = self.client.gather(futures)
        if self.codec is not None:
            self.codec.set_blocks([f.result() for f in
                                   [actor.used_columns() for actor in actors]])
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

    def round(self, method, *args, prelude=None, on_rows=None):
        """The payloads' `method`(*args) combined over the tree, the `prelude` call
        (method, args) made on each payload first; counted (rounds and bytes) unless it
        is "stats". A round that loses a worker is repeated on a recovered tree.
        `on_rows`: the vectors of the call and its result hold the driver's rows
        `on_rows` only (on the workers' own columns, each actor gets and returns those of
        its columns; else every actor gets them all)."""
        for attempt in range(MAX_RECOVERIES + 1):
            try:
                if self._stale:
                    self._recover()
                    prelude = None
                if self.codec is not None:
                    codec = None if on_rows is None else self._codec_on(on_rows)
                    result = self._call_each(method, args, prelude, count=True,
                                             codec=codec)
                else:
                    result = self.call(method, *args, prelude=prelude)
                break
            except (OSError, RuntimeError, WorkerLost):   # how a lost worker shows
                if attempt == MAX_RECOVERIES or not self._worker_left(LOST_WORKER_WAIT):
                    raise
                self._stale = True
        if method != "stats":
            self.n_calls += 1
            if self.codec is None:
                self.bytes_to_workers += nbytes(args)
                self.bytes_from_workers += nbytes(result)
        return result

    def call(self, method, *args, prelude=None):
        """The root's result of one call down the tree: neither counted nor repeated
        (for replays); raises WorkerLost if an actor's worker left meanwhile."""
        if self.codec is not None:
            return self._call_each(method, args, prelude)
        return self._wait(self.actors[0].call(prelude, method, *args), method)

    def _wait(self, future, method):
        while True:
            try:
                return future.result(timeout=WATCH_INTERVAL)
            except TimeoutError:
                if self._worker_left(0.0):
                    raise WorkerLost(method) from None

    def _codec_on(self, rows):
        """The codec of vectors on the driver's rows `rows`, made once per support and
        tree (a recovery renumbers the actors' columns)."""
        key = (self._generation, rows.tobytes())
        if self._rows_codec is None or self._rows_codec[0] != key:
            self._rows_codec = (key, self.codec.on_rows(rows))
        return self._rows_codec[1]

    def _call_each(self, method, args, prelude, count=False, codec=None):
        """A call on the workers' own columns (see the class text): each actor gets its
        rows of the vectors in `args`, and the results come back at their rows, added in
        the tree's order (actor i's own, then its children 2i+1 and 2i+2's subtrees).
        `codec`: another than the tree's (vectors on some of the driver's rows)."""
        codec = codec or self.codec
        own_args = [codec.down(args, b) for b in range(len(self.actors))]
        futures = [actor.call_own(prelude, method, *a)
                   for actor, a in zip(self.actors, own_args)]
        results = [self._wait(f, method) for f in futures]
        if method == "stats":
            return results
        if count:
            self.round_bytes_each = [nbytes(a) + nbytes(r)
                                     for a, r in zip(own_args, results)]
            self.bytes_to_workers += sum(nbytes(a) for a in own_args)
            self.bytes_from_workers += sum(nbytes(r) for r in results)
        totals = [None] * len(results)
        for i in reversed(range(len(results))):
            total = codec.up(results[i], i)
            for j in (2 * i + 1, 2 * i + 2):
                if j < len(results):
                    total = self._combine(method, total, totals[j])
            totals[i] = total
        return totals[0]

    def stats(self):
        """(bytes of arrays all actors received from their parents, bytes they sent to
        them, seconds they spent computing), summed over the actors."""
        if self.codec is not None:
            received, sent, busy = np.sum(self.round("stats"), axis=0)
        else:
            received, sent, busy = self.round("stats")
        return int(received), int(sent), float(busy)

    def stats_each(self) -> list:
        """Each actor's own (bytes received, bytes sent, seconds computing), in block order,
        on a tree on the workers' own columns (where the client calls each actor)."""
        if self.codec is None:
            raise ValueError("per-actor statistics need a tree on the workers' columns")
        return [(int(r), int(s), float(b)) for r, s, b in self.round("stats")]

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
