"""Threads that meet inside one kernel: each thread adds itself to a shared counter and
waits until every thread has (`wait_for_all`), then reads what the others wrote before
they arrived (`combined`).

For kernels whose threads must add up partial sums for every step (-s 5's coordinate
descent meets about three times for each of ~10^5 column visits a second): a hand-over
through dlinear.threads.PassPool costs tens of microseconds, a meeting here under one.
Every thread of such a kernel must be running at once (one PassPool part each, no more
parts than threads). A waiting thread spins on the counter with the CPU's pause hint for
a few microseconds, then sleeps (Linux: a futex on the meetings' generation word, which
the last thread to arrive advances and wakes), so that where there are more threads than
free cores a thread it waits for gets the core (spinning alone made 3 threads on 2
cores 10x slower than 1). Elsewhere the waiter yields its core (sched_yield) instead.
"""
import platform

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

# spins (each a pause, tens of cycles: about 20 microseconds in all) before a waiting
# thread sleeps (or yields its core)
SPINS_BEFORE_SLEEP = 1 << 10

_X86 = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686")
# Linux's futex system call: its number on this machine (None: no futex, yield instead)
_SYS_FUTEX = ({"x86_64": 202, "amd64": 202, "aarch64": 98, "arm64": 98}.get(
    platform.machine().lower()) if platform.system() == "Linux" else None)
_FUTEX_WAIT_PRIVATE, _FUTEX_WAKE_PRIVATE = 128, 129
_POSIX = platform.system() != "Windows"

# the meeting place's int64 slots: the arrivals counter, and (on its own cache line) the
# generation word, a 32-bit futex in the slot's low half
ARRIVALS, GENERATION = 0, 8


def _is_counters(counters):
    """Whether an intrinsic's argument is typed as the int64 array its codegen expects
    (otherwise Numba looks for another signature)."""
    return isinstance(counters, types.Array) and counters.dtype == types.int64


def _counter_pointer(context, builder, array_type, array, index):
    view = context.make_array(array_type)(context, builder, array)
    return cgutils.get_item_pointer(context, builder, array_type, view, [index],
                                    wraparound=False, boundscheck=False)


@intrinsic
def increment(typingctx, counters, i):
    """counters[i] += 1 as one atomic operation (sequentially consistent: what this
    thread wrote before is visible to a thread that sees the new count); returns the new
    count."""
    if not _is_counters(counters):
        return None

    def codegen(context, builder, signature, args):
        ptr = _counter_pointer(context, builder, signature.args[0], args[0], args[1])
        one = ir.Constant(ir.IntType(64), 1)
        return builder.add(builder.atomic_rmw("add", ptr, one, "seq_cst"), one)
    return types.int64(counters, i), codegen


def _word_pointer(context, builder, array_type, array, index):
    """The 32-bit word at the start of counters[i] (the futex)."""
    ptr = _counter_pointer(context, builder, array_type, array, index)
    return builder.bitcast(ptr, ir.IntType(32).as_pointer())


def _futex(builder, word, op, value):
    """syscall(SYS_futex, word, op, value, NULL, NULL, 0)."""
    i64 = ir.IntType(64)
    null = ir.Constant(ir.IntType(8).as_pointer(), None)
    fn = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(i64, [i64], var_arg=True), "syscall")
    builder.call(fn, [i64(_SYS_FUTEX), word, i64(op), builder.sext(value, i64)
                      if value.type != i64 else value, null, null, i64(0)])


@intrinsic
def generation(typingctx, counters, i):
    """The generation word in counters[i], read atomically (acquire order)."""
    if not _is_counters(counters):
        return None

    def codegen(context, builder, signature, args):
        word = _word_pointer(context, builder, signature.args[0], args[0], args[1])
        return builder.sext(builder.load_atomic(word, "acquire", 4), ir.IntType(64))
    return types.int64(counters, i), codegen


@intrinsic
def advance_generation(typingctx, counters, i):
    """The generation word in counters[i] += 1 (atomically), and every thread sleeping on
    it woken."""
    if not _is_counters(counters):
        return None

    def codegen(context, builder, signature, args):
        word = _word_pointer(context, builder, signature.args[0], args[0], args[1])
        builder.atomic_rmw("add", word, ir.Constant(ir.IntType(32), 1), "seq_cst")
        if _SYS_FUTEX is not None:
            _futex(builder, word, _FUTEX_WAKE_PRIVATE, ir.Constant(ir.IntType(64), 2**31 - 1))
        return context.get_dummy_value()
    return types.void(counters, i), codegen


@intrinsic
def sleep_while(typingctx, counters, i, value):
    """Sleep until woken if the generation word in counters[i] still holds `value` (a
    futex wait: no wake-up is lost between the test and the sleep); without futexes,
    give the core away once (sched_yield) or, on Windows, return."""
    if not _is_counters(counters):
        return None

    def codegen(context, builder, signature, args):
        if _SYS_FUTEX is not None:
            word = _word_pointer(context, builder, signature.args[0], args[0], args[1])
            _futex(builder, word, _FUTEX_WAIT_PRIVATE, args[2])
        elif _POSIX:
            fn = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.IntType(32), []), "sched_yield")
            builder.call(fn, [])
        return context.get_dummy_value()
    return types.void(counters, i, value), codegen


@intrinsic
def load_acquire(typingctx, counters, i):
    """counters[i], read atomically with acquire order (no later read moves before it)."""
    if not _is_counters(counters):
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


@njit(cache=True, nogil=True, inline="always")
def wait_for_all(arrivals, n_threads, meeting):
    """Meeting number `meeting` (0, 1, 2, ... counted alike by every thread): count this
    thread in and return once all n_threads have come. The last to come advances the
    generation and wakes the sleepers; a waiter reads the generation before it looks at
    the count, so a wake-up between the two only makes its sleep return at once."""
    target = n_threads * (meeting + 1)
    if increment(arrivals, ARRIVALS) == target:
        advance_generation(arrivals, GENERATION)
        return
    spins = 0
    while True:
        seen = generation(arrivals, GENERATION)
        if load_acquire(arrivals, ARRIVALS) >= target:
            return
        if spins < SPINS_BEFORE_SLEEP:
            spins += 1
            pause()
        else:
            sleep_while(arrivals, GENERATION, seen)


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


# partials[buffer, thread]: the two partial sums, and (thread 0's) the stop it read
STOP = 2


@njit(cache=True, nogil=True, inline="always")
def combined_unless_stopped(partials, arrivals, t, n_threads, meeting, a, b, ctrl_c):
    """combined(...), and whether ctrl_c[0] (a Ctrl-C: dlinear.threads.stop_flag) was set
    when thread 0 came to the meeting: thread 0's reading, handed over with its partial
    sums, so that every thread gets the same answer and all stop at the same step (a
    thread that read the flag itself could stop while another waits for it at the next
    meeting)."""
    if n_threads == 1:
        return a, b, ctrl_c[0] != 0
    buf = meeting & 1
    if t == 0:
        partials[buf, 0, STOP] = 1.0 if ctrl_c[0] != 0 else 0.0
    sa, sb = combined(partials, arrivals, t, n_threads, meeting, a, b)
    return sa, sb, partials[buf, 0, STOP] != 0.0


def meeting_place(n_threads: int):
    """(partials, arrivals) for `combined` / `wait_for_all` among n_threads threads (the
    arrivals counter and the generation word each on its own cache line)."""
    return np.zeros((2, max(n_threads, 1), 3)), np.zeros(16, dtype=np.int64)
