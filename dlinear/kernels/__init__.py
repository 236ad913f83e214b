"""@njit(cache=True, nogil=True) kernels on raw arrays.

Numba's on-disk cache of these kernels goes to the user's cache directory
($XDG_CACHE_HOME/dlinear/numba, else ~/.cache/dlinear/numba), never into the installed
package. Files Numba writes next to the sources are not in the wheel's RECORD: `pip
uninstall` leaves them behind, and the leftover `site-packages/dlinear/` then imports as
a namespace package that shadows a later editable install. NUMBA_CACHE_DIR, when set,
still wins, as Numba documents (the stamp below applies there too).

Numba checks a cached kernel against the source file that defines it only, but a kernel's
machine code also holds the kernels it calls or inlines from other files: a changed
`one_variable_newton` in dual_cd_lr.py left local_dual_cd.py's sweeps running the old
one. So each cached kernel here is also stamped with a digest of every file in this
package, and a change to any of them compiles the kernels afresh.
"""
import functools
import hashlib
import os
import sys

from numba import njit
from numba.core import caching, config

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNELS_DIR = os.path.dirname(os.path.abspath(__file__))


@functools.lru_cache(maxsize=None)
def kernel_sources_digest(directory: str) -> bytes:
    """SHA-256 of the names and contents of the .py files in `directory` (read once a
    process)."""
    digest = hashlib.sha256()
    for name in sorted(os.listdir(directory)):
        if name.endswith(".py"):
            with open(os.path.join(directory, name), "rb") as f:
                digest.update(name.encode() + b"\0" + f.read() + b"\0")
    return digest.digest()


def cache_root() -> str:
    """Where the compiled kernels are kept: NUMBA_CACHE_DIR when set, else dlinear's
    directory under the user's cache."""
    if config.CACHE_DIR:
        return config.CACHE_DIR
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "dlinear", "numba")


class DlinearCacheLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
    """Numba's cache locator for dlinear's own source files only."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = os.path.join(cache_root(), self.get_suitable_cache_subpath(py_file))

    def get_cache_path(self):
        return self._cache_path

    def get_source_stamp(self):
        return super().get_source_stamp(), kernel_sources_digest(KERNELS_DIR)

    @classmethod
    def from_function(cls, py_func, py_file):
        if not os.path.abspath(py_file).startswith(_PACKAGE_DIR + os.sep):
            return None
        # None too when the directory cannot be made writable: Numba tries its own next
        return super().from_function(py_func, py_file)


# the class is _CacheImpl before Numba 0.62
_locators = getattr(caching, "CacheImpl", None) or caching._CacheImpl
if DlinearCacheLocator not in _locators._locator_classes:
    _locators._locator_classes.insert(0, DlinearCacheLocator)


def kernel_only(func):
    """@njit(cache=True, nogil=True) for a function that only other kernels call: Numba
    builds it no Python and no C entry point, about 0.04 s less of a cold first run each
    (calling it from Python would crash: tests/unit/test_kernel_only.py checks that no
    Python code calls one outside dlinear/kernels)."""
    return njit(cache=True, nogil=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)(func)


def _load_numba_array_math_without_probing_blas():
    """Numba's NumPy support (numba.np.arraymath, loaded with the first kernel) imports
    scipy.linalg to see whether np.dot can call BLAS: 0.17 s of CPU on every run, though
    no kernel here calls BLAS. It is loaded here with that probe answering yes (SciPy is
    a dependency of dlinear); Numba's BLAS functions still import scipy.linalg when a
    kernel compiles one. With another Numba, or arraymath already loaded, nothing is
    changed."""
    if "numba.np.arraymath" in sys.modules:
        return
    from numba.np import linalg
    probe = getattr(linalg, "ensure_blas", None)
    if probe is None:
        return
    linalg.ensure_blas = lambda: None
    try:
        from numba.np import arraymath
    finally:
        linalg.ensure_blas = probe
    if getattr(arraymath, "ensure_blas", None) is not None:
        arraymath.ensure_blas = probe


_load_numba_array_math_without_probing_blas()
