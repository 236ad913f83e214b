"""Threads that meet inside one kernel: each thread adds itself to a shared counter and
waits until every thread has (`wait_for_all`), then reads what the others wrote before
they arrived (`combined`).

For kernels whose threads must add up partial sums for every step (-s 5's coordinate
descent meets about three times for each of ~10^5 column visits a second): a hand-over
through dlinear.threads.PassPool costs tens of microseconds, a meeting here under one.
Every thread of such a kernel must be running at once (one PassPool part each, no more
parts than threads). A waiting thread spins on the counter with the CPU's pause hint,
then gives its core away (sched_yield) so that a thread it waits for can run where
there are more threads than free cores.
"""
import platform

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

# spins (each a pause, tens of cycles) before a waiting thread starts yielding its core
SPINS_BEFORE_YIELD = 1 << 12

_X86 = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686")


def _counter_pointer(context, builder, array_type, array, index):
    view = context.make_array(array_type)(context, builder, array)
    return cgutils.get_item_pointer(context, builder, array_type, view, [index],
                                    wraparound=False, boundscheck=False)


@intrinsic
def increment(typingctx, counters, i):
    """counters[i] += 1 as one atomic operation (sequentially consistent: what this
    thread wrote before is visible to a thread that sees the new count)."""
    if not (isinstance(counters, types.Array) and counters.dtype == types.int64):
        return None

    def codegen(context, builder, signature, args):
        ptr = _counter_pointer(context, builder, signature.args[0], args[0], args[1])
        builder.atomic_rmw("add", ptr, ir.Constant(ir.IntType(64), 1), "seq_cst")
        return context.get_dummy_value()
    return types.void(counters, i), codegen


@intrinsic
def load_acquire(typingctx, counters, i):
    """counters[i], read atomically with acquire order (no later read moves before it)."""
    if not (isinstance(counters, types.Array) and counters.dtype == types.int64):
        return None

    def codegen(context, builder, signature, args):
        ptr = _counter_pointer(context, builder, signature.args[0], args[0], args[1])
        return builder.load_atomic(ptr, "acquire", 8)
    return types.int64(counters, i), codegen


@intrinsic
def pause(typingctx):
    """The spin-wait hint of x86 (PAUSE); nothing elsewhere."""
    def codegen(context, builder, signature, args):
        if _X86:
            fn = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.VoidType(), []), "llvm.x86.sse2.pause")
            builder.call(fn, [])
        return context.get_dummy_value()
    return types.void(), codegen


@intrinsic
def yield_core(typingctx):
    """sched_yield(): let another thread run on this core."""
    def codegen(context, builder, signature, args):
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.IntType(32), []), "sched_yield")
        builder.call(fn, [])
        return context.get_dummy_value()
    return types.void(), codegen


@njit(cache=True, nogil=True, inline="always")
def wait_for_all(arrivals, n_threads, meeting):
    """Meeting number `meeting` (0, 1, 2, ... counted alike by every thread): count this
    thread in and return once all n_threads have come."""
    increment(arrivals, 0)
    target = n_threads * (meeting + 1)
    spins = 0
    while load_acquire(arrivals, 0) < target:
        if spins < SPINS_BEFORE_YIELD:
            spins += 1
            pause()
        else:
            yield_core()


@njit(cache=True, nogil=True, inline="always")
def combined(partials, arrivals, t, n_threads, meeting, a, b):
    """(sum of a, sum of b) over the n_threads threads, added in thread order (so every
    thread gets the same sums to the bit), at meeting number `meeting`; thread t
    contributes a and b. One thread: (a, b)."""
    if n_threads == 1:
        return a, b
    # two buffers, alternate meetings: a thread can be one meeting ahead (writing) while
    # another still reads the last one, never two
    buf = meeting & 1
    partials[buf, t, 0] = a
    partials[buf, t, 1] = b
    wait_for_all(arrivals, n_threads, meeting)
    sa = partials[buf, 0, 0]
    sb = partials[buf, 0, 1]
    for k in range(1, n_threads):
        sa += partials[buf, k, 0]
        sb += partials[buf, k, 1]
    return sa, sb


def meeting_place(n_threads: int):
    """(partials, arrivals) for `combined` / `wait_for_all` among n_threads threads (the
    counter alone on its cache line)."""
    return np.zeros((2, max(n_threads, 1), 2)), np.zeros(8, dtype=np.int64)
