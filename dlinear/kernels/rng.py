"""A tiny seeded PRNG for kernels (xorshift64*), so permutations are reproducible
across runs, machines and worker counts without touching any global random state."""
import numpy as np
from numba import njit

from . import kernel_only

_MULT = np.uint64(0x2545F4914F6CDD1D)


@njit(cache=True, nogil=True, inline="always")
def seed_state(seed):
    """State array for `rand_below`; never zero (xorshift's fixed point)."""
    # splitmix64 scramble so nearby seeds give unrelated streams
    z = np.uint64(seed) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    state = np.empty(1, dtype=np.uint64)
    state[0] = z if z != np.uint64(0) else np.uint64(1)
    return state


@njit(cache=True, nogil=True, inline="always")
def rand_below(state, n):
    """Uniform-ish integer in [0, n) (n < 2**32, so the modulo bias is < 2**-32)."""
    x = state[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    state[0] = x
    return np.int64(((x * _MULT) >> np.uint64(32)) % np.uint64(n))


@kernel_only
def shuffle_prefix(state, index, n):
    """Shuffles index[:n] in place (Fisher-Yates, drawing from `state`): the random order
    of the active variables each CD sweep takes, as LIBLINEAR's solvers do."""
    for s in range(n):
        t = s + rand_below(state, n - s)
        index[s], index[t] = index[t], index[s]
