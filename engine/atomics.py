"""Atomic read-modify-write on numpy array elements from nogil numba code (LLVM atomics).

The search threads share one tree; these give them lock-free counters and claims.
"""
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


def _element_pointer(context, builder, array_type, array, index, index_type):
    ary = context.make_array(array_type)(context, builder, array)
    idx = context.cast(builder, index, index_type, types.intp)
    return cgutils.get_item_pointer(context, builder, array_type, ary, [idx])


@intrinsic
def atomic_add(typingctx, array, index, value):
    """array[index] += value atomically; returns the old value (integer arrays only)."""
    def codegen(context, builder, sig, args):
        array_type = sig.args[0]
        ptr = _element_pointer(context, builder, array_type, args[0], args[1], sig.args[1])
        val = context.cast(builder, args[2], sig.args[2], array_type.dtype)
        return builder.atomic_rmw("add", ptr, val, "seq_cst")
    return array.dtype(array, index, value), codegen


@intrinsic
def atomic_cas(typingctx, array, index, expected, new):
    """Set array[index] = new if it equals expected, atomically; returns the old value."""
    def codegen(context, builder, sig, args):
        array_type = sig.args[0]
        ptr = _element_pointer(context, builder, array_type, args[0], args[1], sig.args[1])
        exp = context.cast(builder, args[2], sig.args[2], array_type.dtype)
        new = context.cast(builder, args[3], sig.args[3], array_type.dtype)
        pair = builder.cmpxchg(ptr, exp, new, "seq_cst", "seq_cst")
        return builder.extract_value(pair, 0)
    return array.dtype(array, index, expected, new), codegen
