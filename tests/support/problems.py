"""Problems the tests build and compare: bit-for-bit equality of two Problems, parts
joined back into one, and LIBSVM text with every form the reader accepts."""
import random

import numpy as np

from dlinear.data.libsvm_reader import Problem


def same_bits(a, b):
    """The two arrays hold the same float64 values, bit for bit (signed zeros, NaNs)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and np.array_equal(a.view(np.int64), b.view(np.int64))


def assert_same_problem(a: Problem, b: Problem):
    """The same CSR arrays, labels (bit for bit) and number of features."""
    assert np.array_equal(a.indptr, b.indptr)
    assert np.array_equal(a.indices, b.indices)
    assert same_bits(a.data, b.data)
    assert same_bits(a.y, b.y)
    assert a.n_features == b.n_features


def mixed_file_text(n_lines, seed=0):
    """LIBSVM text of n_lines lines: comments, blank lines and rows with labels and values
    written to between 1 and 17 digits."""
    rng = random.Random(seed)
    lines = []
    for i in range(n_lines):
        r = rng.random()
        if r < 0.05:
            lines.append("# comment 1:2")
        elif r < 0.1:
            lines.append("")
        else:
            columns = sorted(rng.sample(range(1, 60), rng.randint(0, 8)))
            features = " ".join(f"{c}:{rng.uniform(-5, 5):.{rng.randint(1, 17)}g}"
                                for c in columns)
            lines.append(f"{rng.choice(['+1', '-1', '2', '0.5'])} {features}".rstrip())
    return "\n".join(lines) + "\n"


def concatenate(parts):
    """The Problems of consecutive row ranges as one."""
    offsets = np.cumsum([0] + [p.nnz for p in parts[:-1]])
    indptr = np.concatenate([[0]] + [p.indptr[1:] + o for p, o in zip(parts, offsets)])
    return Problem(indptr=indptr,
                   indices=np.concatenate([p.indices for p in parts]),
                   data=np.concatenate([p.data for p in parts]),
                   y=np.concatenate([p.y for p in parts]),
                   n_features=max(p.n_features for p in parts))


def chunk_test_text(n_lines=400, seed=3):
    """Mixed lines, plus 17-digit values and labels (converted by float() after the
    kernel), a line far longer than the small chunks, CRLF ends and a last line
    without a newline."""
    lines = mixed_file_text(n_lines, seed).splitlines()
    lines[10] = ("3.14159265358979323846 5:0.1000000000000000055511151231257827 "
                 "9:-7.2057594037927933e16")
    lines[200] = "1 " + " ".join(f"{c}:{c / 7!r}" for c in range(1, 400))
    lines[300] = lines[300] + "\r"
    return "\n".join(lines)


def regression_on(problem, seed):
    """A regression problem on the rows of `problem`: a planted dense model's values plus
    noise as the targets."""
    rng = np.random.default_rng(seed)
    X = problem.to_scipy()
    y = X @ rng.normal(size=X.shape[1]) + 0.1 * rng.normal(size=X.shape[0])
    return Problem.from_arrays(X, y, n_features=problem.n_features)
