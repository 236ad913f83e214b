"""Software prefetch: a row of a 2-D array, for the k-column kernels' gathers and
scatters, and a span of a 1-D array, for the CD solvers' rows visited in random order.

A k-column pass reads and writes the rows S[j, :] of (n, k) arrays, j = the column index
of each nonzero: tens of MB for a text set (47,236 x 20 x 8 B = 7.5 MB each), so every
nonzero waits on a cache line from L3 or memory, and the out-of-order window covers only
a few nonzeros ahead. The indices of the next nonzeros are known, so asking for their
rows some nonzeros ahead hides that latency (measured on one core: BENCHMARKS.md,
"Multi-class Newton"). A prefetch is only a hint: it changes no result.

A dual CD sweep visits the rows in a random order, so each row's nonzeros start with a
miss to memory that the hardware prefetcher cannot foresee (a random order's sweep costs
several times a sweep in file order). The order is known a sweep ahead, so `prefetch_span` asks for the next row's
nonzeros one visit ahead (the dual CD sweep's speed: BENCHMARKS.md, "Pass bandwidth
against read bandwidth").

Numba has no prefetch, so these emit LLVM's `llvm.prefetch` intrinsic (read or write
intent, keep in all cache levels) once per 64-byte line.
"""
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

CACHE_LINE = 64


def _emit_lines(builder, start, n_bytes, write):
    """llvm.prefetch for each 64-byte line of the bytes [start, start + n_bytes)."""
    i32 = ir.IntType(32)
    byte_ptr = ir.IntType(8).as_pointer()
    fn = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(ir.VoidType(), [byte_ptr, i32, i32, i32]),
        "llvm.prefetch.p0")
    zero = ir.Constant(n_bytes.type, 0)
    line = ir.Constant(n_bytes.type, CACHE_LINE)
    with cgutils.for_range_slice(builder, zero, n_bytes, line) as (offset, _):
        # (address, 0 read / 1 write, locality 3 = all levels, 1 = data)
        builder.call(fn, [builder.gep(start, [offset]), i32(write), i32(3), i32(1)])


def _prefetch(ndim: int, write: int, until_index: bool):
    """An intrinsic f(array, first, last) prefetching from array[first] (a row when 2-D):
    up to array[last] when until_index, else `last` bytes."""
    @intrinsic
    def prefetch(typingctx, array, first, last):
        if not isinstance(array, types.Array) or array.ndim != ndim:
            return None
        sig = types.void(array, first, last)

        def codegen(context, builder, signature, args):
            array_type, first_type, last_type = signature.args
            arr = context.make_array(array_type)(context, builder, args[0])
            first = context.cast(builder, args[1], first_type, types.intp)
            last = context.cast(builder, args[2], last_type, types.intp)
            stride = cgutils.unpack_tuple(builder, arr.strides)[0]
            byte_ptr = ir.IntType(8).as_pointer()
            start = builder.gep(builder.bitcast(arr.data, byte_ptr),
                                [builder.mul(first, stride)])
            n_bytes = builder.mul(builder.sub(last, first), stride) if until_index else last
            _emit_lines(builder, start, n_bytes, write)
            return context.get_dummy_value()

        return sig, codegen

    return prefetch


# prefetch_row_*(array, row, n_bytes): bytes [0, n_bytes) of row `row` of a C-order 2-D array
prefetch_row_read = _prefetch(2, 0, until_index=False)
prefetch_row_write = _prefetch(2, 1, until_index=False)
# prefetch_span(array, lo, hi): array[lo:hi] of a 1-D array, for reading
prefetch_span = _prefetch(1, 0, until_index=True)
