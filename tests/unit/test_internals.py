"""The internals of other projects that dlinear relies on, each named: when an upgrade
removes or changes one, this file fails first and says which, before a fit misbehaves.
pyproject.toml bounds the versions these were checked with."""
import ctypes
import ctypes.util
import inspect
import platform
import sys

import pytest


def test_numba_np_linalg_ensure_blas_is_still_the_blas_probe():
    """dlinear.kernels loads numba.np.arraymath with this probe answered (0.17 s a run)."""
    from numba.np import linalg
    assert callable(getattr(linalg, "ensure_blas", None)), "numba.np.linalg.ensure_blas is gone"
    import numba.np.arraymath as arraymath
    assert "ensure_blas" in inspect.getsource(arraymath), \
        "numba.np.arraymath no longer calls ensure_blas"


def test_numba_intrinsic_and_cgutils_for_the_spin_counters():
    """dlinear.kernels.spin builds atomics and the futex call as Numba intrinsics."""
    from numba.core import cgutils
    from numba.extending import intrinsic
    assert callable(intrinsic)
    assert callable(getattr(cgutils, "alloca_once_value", None)) or hasattr(cgutils, "gep"), \
        "numba.core.cgutils changed"


def test_distributed_worker_state_actors_and_default_executor():
    """dlinear.cluster.tree finds a replaced actor in worker.state.actors and runs passes in
    worker.executors["default"]."""
    import distributed
    from distributed.worker_state_machine import WorkerState
    assert isinstance(WorkerState().actors, dict), "distributed's WorkerState.actors changed"
    assert "self.executors" in inspect.getsource(distributed.Worker.__init__), \
        "distributed.Worker.executors is gone"
    assert '"default"' in inspect.getsource(distributed.Worker.__init__), \
        "distributed.Worker has no 'default' executor"


@pytest.mark.skipif(sys.platform != "linux", reason="glibc and Linux system calls")
def test_glibc_heap_controls_and_renameat2():
    """dlinear.cluster.heap tunes glibc's heap (mallopt, malloc_trim); dlinear.data.fileio
    replaces a file atomically with renameat2 where the C library has it."""
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    if platform.libc_ver()[0] != "glibc":
        pytest.skip("not glibc")
    for name in ("mallopt", "malloc_trim", "renameat2"):
        assert hasattr(libc, name), f"glibc has no {name}"


@pytest.mark.skipif(sys.platform != "linux", reason="Linux's futex")
def test_spin_knows_this_machines_futex_number():
    from dlinear.kernels import spin
    if platform.machine() in ("x86_64", "amd64", "aarch64", "arm64"):
        assert spin._SYS_FUTEX is not None
