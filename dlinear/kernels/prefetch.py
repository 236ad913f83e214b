"""Software prefetch: a row of a 2-D array, for the k-column kernels' gathers and
scatters, and a span of a 1-D array, for the CD solvers' rows visited in random order.

A k-column pass reads and writes the rows S[j, :] of (n, k) arrays, j = the column index
of each nonzero: tens of MB for a text set (47,236 x 20 x 8 B = 7.5 MB each), so every
nonzero waits on a cache line from L3 or memory, and the out-of-order window covers only
a few nonzeros ahead. The indices of the next nonzeros are known, so asking for their
rows some nonzeros ahead hides that latency: measured on one core (BENCHMARKS.md,
"Multi-class Newton"), X^T(D(X S)) and X W with k = 20 columns ran 1.6-2.2x faster. A
prefetch is only a hint: it changes no result.

A dual CD sweep visits the rows in a random order, so each row's nonzeros start with a
miss to memory that the hardware prefetcher cannot foresee: on the rcv1-shaped set a
sweep of x_i.w and w += a x_i took 0.44 s in a random order against 0.11 s in file
order. The order is known a sweep ahead, so `prefetch_span` asks for the rows a few
visits ahead (BENCHMARKS.md, "Dual CD: rows prefetched in the sweep's order").

Numba has no prefetch, so these emit LLVM's `llvm.prefetch` intrinsic (read or write
intent, keep in all cache levels) once per 64-byte line.
"""
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

CACHE_LINE = 64


def _row_prefetch(write: int):
    @intrinsic
    def prefetch_row(typingctx, array, row, n_bytes):
        """Prefetches bytes [0, n_bytes) of array[row] (array: C-order 2-D)."""
        if not isinstance(array, types.Array) or array.ndim != 2:
            return None
        sig = types.void(array, row, n_bytes)

        def codegen(context, builder, signature, args):
            array_type, row_type, bytes_type = signature.args
            arr = context.make_array(array_type)(context, builder, args[0])
            index = context.cast(builder, args[1], row_type, types.intp)
            stop = context.cast(builder, args[2], bytes_type, types.intp)
            row_stride = cgutils.unpack_tuple(builder, arr.strides)[0]
            byte_ptr = ir.IntType(8).as_pointer()
            start = builder.gep(builder.bitcast(arr.data, byte_ptr),
                                [builder.mul(index, row_stride)])
            _emit_lines(context, builder, start, stop, write)
            return context.get_dummy_value()

        return sig, codegen

    return prefetch_row


def _emit_lines(context, builder, start, stop, write):
    """llvm.prefetch for each 64-byte line of the bytes [start, start + stop)."""
    i32 = ir.IntType(32)
    byte_ptr = ir.IntType(8).as_pointer()
    fn = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(ir.VoidType(), [byte_ptr, i32, i32, i32]),
        "llvm.prefetch.p0")
    zero = ir.Constant(stop.type, 0)
    line = ir.Constant(stop.type, CACHE_LINE)
    with cgutils.for_range_slice(builder, zero, stop, line) as (offset, _):
        # (address, 0 read / 1 write, locality 3 = all levels, 1 = data)
        builder.call(fn, [builder.gep(start, [offset]), i32(write), i32(3), i32(1)])


@intrinsic
def prefetch_span(typingctx, array, lo, hi):
    """Prefetches (for reading) array[lo:hi] of a 1-D array."""
    if not isinstance(array, types.Array) or array.ndim != 1:
        return None
    sig = types.void(array, lo, hi)

    def codegen(context, builder, signature, args):
        array_type, lo_type, hi_type = signature.args
        arr = context.make_array(array_type)(context, builder, args[0])
        lo = context.cast(builder, args[1], lo_type, types.intp)
        hi = context.cast(builder, args[2], hi_type, types.intp)
        stride = cgutils.unpack_tuple(builder, arr.strides)[0]
        byte_ptr = ir.IntType(8).as_pointer()
        start = builder.gep(builder.bitcast(arr.data, byte_ptr), [builder.mul(lo, stride)])
        _emit_lines(context, builder, start, builder.mul(builder.sub(hi, lo), stride), 0)
        return context.get_dummy_value()

    return sig, codegen


prefetch_row_read = _row_prefetch(0)
prefetch_row_write = _row_prefetch(1)
