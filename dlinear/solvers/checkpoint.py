"""Checkpoints of a fit in this process (``--checkpoint DIR``, ``checkpoint=``).

A fit asked to checkpoint writes, every ``checkpoint_every`` seconds of training, the
state of each of its problems' solvers at an iteration boundary of the solver's driver
(never inside a kernel) to DIR/problem-K.npz, atomically (dlinear.data.fileio: a crash
leaves the old checkpoint or the new one, whole). DIR/fingerprint names the data and the
options the states belong to; the same fit run again with the same DIR resumes each
problem from its state and stops where the uninterrupted fit stops (its stopping rule).
A DIR written for other data or options is refused. After a fit that ends, its states and
fingerprint are removed (the directory itself is left): a finished fit is the model, and
a rerun trains afresh, as LIBLINEAR's train does. docs/guide/checkpoints.rst.
"""
from __future__ import annotations

import hashlib
import io
import os
import time
from typing import Callable, Optional

import numpy as np

from ..data.fileio import atomic_output
from ..errors import DlinearError
from ..solver_table import solvers_text

DEFAULT_EVERY = 10.0        # seconds of training between two checkpoints
FINGERPRINT = "fingerprint"
STATE_FAILURE = "can't write checkpoint"
# the options that do not change the fit (where it is saved, how often)
_NOT_FITTING = ("checkpoint", "checkpoint_every", "init_sol", "init_duals", "keep_duals")


def _covered_spec(spec) -> bool:
    """The solvers that checkpoint (in some variant): Newton's, -s 1, 3's dual CD and
    the L1 solvers -s 5, 6."""
    return spec.available and (spec.newton or spec.two_variable_cd or spec.penalty == "l1")


def covered(params) -> bool:
    """Whether the solver of `params`, in the variant its options ask for, checkpoints:
    the Newton solvers (not --primal-cd or --multinomial), one-variable dual CD of
    -s 1 and -s 3 (not -R with a bias, --cd-block 2 or --online), -s 5 and -s 6."""
    spec = params.spec
    if not _covered_spec(spec) or params.multinomial or params.primal_cd:
        return False
    if spec.two_variable_cd:
        return params.cd_block == 1 and not params.online and params.regularize_bias
    return True


def check_checkpoint(params) -> None:
    """One line for a checkpoint asked of a fit that cannot take one."""
    if params.checkpoint is None:
        return
    if not params.checkpoint_every > 0:
        raise DlinearError("--checkpoint-every needs a number of seconds > 0")
    if not covered(params):
        raise DlinearError(f"--checkpoint is for {solvers_text(_covered_spec)} only (not "
                           f"with --multinomial, --primal-cd, --cd-block 2, --online, or "
                           f"-R with a dual solver)")


def refuse(params, what: str) -> None:
    """--checkpoint keeps the state of one fit: `what` (-v, -C, a cluster) is refused."""
    if params.checkpoint is not None:
        raise DlinearError(f"--checkpoint saves the state of one fit in this process; it "
                           f"cannot be combined with {what}")


def _digest_arrays(h, *arrays) -> None:
    for a in arrays:
        if a is None:
            h.update(b"-")
            continue
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(memoryview(a).cast("B"))


def fingerprint(problem, params) -> str:
    """A digest of the data (X, y, the instance weights) and of the options of the fit."""
    h = hashlib.blake2b(digest_size=16)
    _digest_arrays(h, problem.indptr, problem.indices, problem.data, problem.y,
                   problem.sample_weight)
    h.update(str(int(problem.n_features)).encode())
    options = {k: v for k, v in vars(params).items() if k not in _NOT_FITTING}
    h.update(repr(sorted(options.items())).encode())
    init = params.init_sol
    if init is not None:
        _digest_arrays(h, getattr(init, "w", init))
    if params.init_duals is not None:
        _digest_arrays(h, *params.init_duals)
    return h.hexdigest()


class CheckpointDir:
    """The checkpoints of one fit in `directory`: checks (or writes) its fingerprint and
    hands each problem its ProblemCheckpoint."""

    def __init__(self, directory, digest: str, every: float = DEFAULT_EVERY):
        self.directory = os.fspath(directory)
        self.every = float(every)
        try:
            os.makedirs(self.directory, exist_ok=True)
        except OSError as e:
            raise DlinearError(f"{STATE_FAILURE} {self.directory}: {e.strerror}") from None
        path = os.path.join(self.directory, FINGERPRINT)
        if os.path.exists(path):
            with open(path) as f:
                found = f.read().strip()
            if found != digest:
                raise DlinearError(f"checkpoint {self.directory} was written for other data "
                                   f"or options; remove it or give another directory")
        else:
            with atomic_output(path, STATE_FAILURE) as f:
                f.write(digest.encode() + b"\n")

    def problem(self, k: int) -> "ProblemCheckpoint":
        return ProblemCheckpoint(os.path.join(self.directory, f"problem-{k}.npz"), self.every)

    def remove(self) -> None:
        """The states and the fingerprint, once the fit has ended."""
        for name in os.listdir(self.directory):
            if name == FINGERPRINT or (name.startswith("problem-") and name.endswith(".npz")):
                try:
                    os.remove(os.path.join(self.directory, name))
                except FileNotFoundError:
                    pass


class ProblemCheckpoint:
    """The state file of one problem's solver: `state()` the saved state (a dict of
    arrays and numbers) or None, `save_if_due(make_state)` writes make_state() when
    `every` seconds have passed since the start or the last save. `stage(name)` is the
    checkpoint of a second solver run on the same problem (the primal after the dual's
    iteration cap)."""

    def __init__(self, path: str, every: float):
        self.path = path
        self.every = every
        self.last = time.monotonic()
        self.saves = 0

    def stage(self, name: str) -> "ProblemCheckpoint":
        base = self.path[:-len(".npz")]
        return ProblemCheckpoint(f"{base}-{name}.npz", self.every)

    def state(self) -> Optional[dict]:
        try:
            with np.load(self.path, allow_pickle=False) as saved:
                return {k: saved[k] for k in saved.files}
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as e:
            raise DlinearError(f"checkpoint {self.path} can't be read: {e}") from None

    def save_if_due(self, make_state: Callable[[], dict]) -> bool:
        if time.monotonic() - self.last < self.every:
            return False
        self.save(make_state())
        return True

    def save(self, state: dict) -> None:
        buffer = io.BytesIO()
        np.savez(buffer, **state)
        with atomic_output(self.path, STATE_FAILURE) as f:
            f.write(buffer.getbuffer())
        self.saves += 1
        self.last = time.monotonic()


# a piece of a kernel's run lasts about this long (or a fraction of the checkpoints'
# interval): short enough to save soon after a checkpoint is due, long enough that the
# returns from the kernel cost nothing
PIECE_SECONDS = 0.5


def run_in_pieces(run: Callable[[int], bool], checkpoint: "ProblemCheckpoint",
                  make_state: Callable[[], dict]) -> None:
    """Runs a solver whose kernel runs n iterations at a time: run(n) -> whether to go
    on; between two pieces, saves make_state() when a checkpoint is due. n doubles while
    a piece is short and halves when it is long."""
    n = 1
    target = min(PIECE_SECONDS, checkpoint.every / 2)
    while True:
        start = time.monotonic()
        going_on = run(n)
        if not going_on:
            return
        checkpoint.save_if_due(make_state)
        took = time.monotonic() - start
        if took < target / 2:
            n *= 2
        elif took > target and n > 1:
            n //= 2


def log_lines(state: dict) -> list:
    """The log lines saved in a state (an array of str)."""
    return [str(line) for line in state.get("log", np.array([], dtype=str))]
