"""A timed sample of a LIBSVM file: its first whole lines parsed, from which dlinear-train's
cost model scales the file's rows, nonzeros and parse time before reading it."""
from __future__ import annotations

import os
import time
from dataclasses import dataclass

import numpy as np

from .libsvm_reader import Problem, parse_libsvm_bytes
from ..errors import DlinearError
from .input_files import open_input
from ..kernels import libsvm as _libsvm

# dlinear-train times parsing this much of a training file to predict its cost
SAMPLE_BYTES = 4 << 20


@dataclass(frozen=True)
class TextSample:
    """The first whole lines of a LIBSVM file, parsed: the file's shape scaled from them."""
    file_bytes: int
    sample_bytes: int
    problem: Problem
    seconds: float

    @property
    def scale(self) -> float:
        return self.file_bytes / max(1, self.sample_bytes)


def sample_libsvm(path, storage_options: dict | None = None,
                  sample_bytes: int = SAMPLE_BYTES) -> TextSample | None:
    """Parse (and time) the first sample_bytes of a LIBSVM file; None for a compressed
    file (no size to scale by) or when the sample holds no whole line with data. The time
    is CPU time: on a loaded machine the wall clock counts the other jobs' work too."""
    name = os.fspath(path)
    with open_input(name, storage_options) as (f, size):
        if size is None:
            return None
        raw = np.frombuffer(f.read(min(size, int(sample_bytes))), dtype=np.uint8)
    cut = len(raw) if len(raw) == size else _libsvm.end_of_last_line(raw, len(raw))
    if cut == 0:
        return None
    try:
        # parsed twice, the second time timed: the first loads (or compiles) the kernels
        # this text needs, the general one only if some of it is outside the fast path
        parse_libsvm_bytes(raw[:cut], name, allow_empty=True)
        start = time.process_time()
        problem = parse_libsvm_bytes(raw[:cut], name, allow_empty=True)
    except DlinearError:
        return None                    # reading the whole file says where
    seconds = time.process_time() - start
    if problem.n_samples == 0:
        return None
    return TextSample(size, cut, problem, seconds)
