"""Stores that copy a temporary into a region of an array, as loops compiled once per machine.

A store that buffer assignment could not fold into the kernel computing its value (the value
reads the region it overwrites, as in ``u[1:-1, 1:-1] = stencil(u)``) copies that value in, as
NumPy's assignment does, but in parallel on large arrays. The loop is the same for every such
store of one dtype and rank, so it is a function of this module, in Numba's disk cache like the
scalar helpers, and a new program compiles nothing for it. The host writes ::

    if (s0 - 2) * (s1 - 2) >= 131072:
        _copy_parallel(v_fused_1, (s0 - 2, s1 - 2), v_u, s1 + 1, (s1, 1))
    else:
        _copy_serial(v_fused_1, (s0 - 2, s1 - 2), v_u, s1 + 1, (s1, 1))

The value is C or F contiguous and read as its memory, its shape and the region's strides
given in the order of that memory (reversed for F); the destination is read as its memory too,
the region at ``offset + sum(index * strides)`` elements from its start.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ...ir.alias import copied_region
from ...ir.graph import Node
from ...ir.shape_env import using
from ...ir.symbolic import product_of
from ...loops.nodes import Call, Compare, Const, Eval, If, Name, shape_of, size_of
from . import scalar as _s


@njit(cache=True, nogil=True, inline="always")
def _copy_row(source, memory, shape, offset, strides, row):
    """Row ``row`` of the value (its last axis) into its place in the destination's memory."""
    last = len(shape) - 1
    start, rest = offset, row + 0  # (a copy: inlined, ``row`` is a prange index)
    for axis in range(last - 1, -1, -1):
        start += (rest % shape[axis]) * strides[axis]
        rest //= shape[axis]
    step, first = strides[last], row * shape[last]
    for i in range(shape[last]):
        memory[np.uint64(start + step * i)] = source[first + i]


HOST_COPIES = ("copy_serial", "copy_parallel")  # the copy loops a host calls (as _<name>)


# Two functions, not one compiled twice: compiled from one Python function, the two shared
# its cache index, and the serial one could load the parallel machine code (measured: 7.7 us a
# call, not 0.35 us, for a 100-element copy from Python; and a process loading it before
# Numba's threads ran aborted). A loop program stores with element loops of its own
# (``program_regions``).
@njit(cache=True, nogil=True)
def copy_serial(value, shape, destination, offset, strides):
    """Copy ``value`` into its region of ``destination`` (see the module docstring)."""
    source, memory = _s.flat(value), _s.flat(destination)
    if source.size:
        for row in range(source.size // shape[len(shape) - 1]):
            _copy_row(source, memory, shape, offset, strides, row)


@njit(cache=True, nogil=True, parallel=True)
def copy_parallel(value, shape, destination, offset, strides):
    """``copy_serial`` with its rows in parallel."""
    source, memory = _s.flat(value), _s.flat(destination)
    if source.size:
        for row in prange(source.size // shape[len(shape) - 1]):
            _copy_row(source, memory, shape, offset, strides, row)


@njit(cache=True, nogil=True)
def assign_overlapping(destination, source):
    """``destination[...] = source`` of one axis each, in one memory, as NumPy's assignment
    copies them: through a buffer when their strides point opposite ways, else element by
    element, backwards when (in the order of rising addresses) the source starts below the
    destination and reaches it (NumPy's raw copy loop: ``A[k] = A[:, -1]`` sees what it wrote)."""
    n = destination.shape[0]
    ds, ss = destination.strides[0], source.strides[0]
    if ds * ss < 0:
        source = source.copy()
    d_low = destination.ctypes.data + ((n - 1) * ds if ds < 0 else 0)
    s_low = source.ctypes.data + ((n - 1) * ss if ss < 0 else 0)
    backwards = ds * ss >= 0 and s_low < d_low and s_low + n * abs(ss) > d_low
    if (ds > 0) != backwards:
        for i in range(n):
            destination[i] = source[i]
    else:
        for i in range(n - 1, -1, -1):
            destination[i] = source[i]


# A loop program's store of a value of the region's shape (``assign_<n>d``) or of a scalar
# (``fill_<n>d``) calls one of these, not a loop of its own: each is compiled once per types
# and machine, where a loop in the program costs its compile every time (npbench's
# channel_flow, 14 stores: 0.3 s of its program's 2.1 s).
@njit(cache=True, nogil=True)
def assign_1d(region, value):
    """``region[:] = value``, both of one axis and one length."""
    for i in range(region.shape[0]):
        region[i] = value[i]


@njit(cache=True, nogil=True)
def assign_2d(region, value):
    """``region[:, :] = value``, both of one shape."""
    for i in range(region.shape[0]):
        for j in range(region.shape[1]):
            region[i, j] = value[i, j]


@njit(cache=True, nogil=True)
def assign_3d(region, value):
    """``region[:, :, :] = value``, both of one shape."""
    for i in range(region.shape[0]):
        for j in range(region.shape[1]):
            for k in range(region.shape[2]):
                region[i, j, k] = value[i, j, k]


@njit(cache=True, nogil=True)
def fill_1d(region, value):
    """``region[:] = value``, a scalar."""
    for i in range(region.shape[0]):
        region[i] = value


@njit(cache=True, nogil=True)
def fill_2d(region, value):
    """``region[:, :] = value``, a scalar."""
    for i in range(region.shape[0]):
        for j in range(region.shape[1]):
            region[i, j] = value


@njit(cache=True, nogil=True, inline="always")
def _row_index(j, n):
    """Row ``j`` of ``n`` as NumPy's ``take`` finds it (from the end when negative);
    IndexError out of range, as NumPy's."""
    if j < -n or j >= n:
        raise IndexError("index out of bounds for axis 0")
    return j + n if j < 0 else j


@njit(cache=True, nogil=True)
def take_1d(a, indices):
    """``np.take(a, indices, axis=0)`` of a vector: a new vector."""
    out = np.empty(indices.size, a.dtype)
    for i in range(indices.size):
        out[i] = a[_row_index(indices[i], a.shape[0])]
    return out


@njit(cache=True, nogil=True)
def take_2d(a, indices):
    """``np.take(a, indices, axis=0)`` of a matrix: its rows, a new C-ordered matrix."""
    out = np.empty((indices.size, a.shape[1]), a.dtype)
    for i in range(indices.size):
        row = _row_index(indices[i], a.shape[0])
        for j in range(a.shape[1]):
            out[i, j] = a[row, j]
    return out


@njit(cache=True, nogil=True)
def compress_1d(condition, a):
    """``np.compress(condition, a, axis=0)`` of a vector: the elements where it holds (a count,
    then a copy: no vector of positions). IndexError where it holds past ``a``'s end, as
    NumPy's; a shorter condition leaves the rest out, as NumPy's does."""
    n = min(condition.shape[0], a.shape[0])
    for i in range(n, condition.shape[0]):
        if condition[i]:
            _row_index(i, a.shape[0])
    count = 0
    for i in range(n):
        count += condition[i]
    if count * 8 < n:  # (few: copy those only)
        out = np.empty(count, a.dtype)
        k = 0
        for i in range(n):
            if condition[i]:
                out[k] = a[i]
                k += 1
        return out
    # (many: every element up to the last kept written, without a branch, the next one over
    # it unless it holds)
    out = np.empty(count, a.dtype)
    last = n - 1
    while last >= 0 and not condition[last]:
        last -= 1
    k = 0
    for i in range(last + 1):
        out[k] = a[i]
        k += condition[i]
    return out


@njit(cache=True, nogil=True)
def compress_2d(condition, a):
    """``np.compress(condition, a, axis=0)`` of a matrix: the rows where it holds."""
    return take_2d(a, np.nonzero(condition)[0])


# (np.take or np.compress, the array's axes) -> the gather of rows a program calls
ROW_GATHERS = {
    ("take", 1): take_1d,
    ("take", 2): take_2d,
    ("compress", 1): compress_1d,
    ("compress", 2): compress_2d,
}


# (whether the value is a scalar, the region's axes) -> the store
REGION_STORES = {
    (False, 1): assign_1d,
    (False, 2): assign_2d,
    (False, 3): assign_3d,
    (True, 1): fill_1d,
    (True, 2): fill_2d,
}


def copy_statements(
    store: Node, value, base, order: str, threshold: int, parallel: bool
) -> list | None:
    """The loop IR statements copying ``store``'s value (the expression ``value``, an array in
    memory ``order``) into its region of ``base``; None when the store is no such copy."""
    with using(store.graph.shape_env):
        region = copied_region(store)
    if region is None or order not in ("C", "F") or store.meta.dtype == np.float16:
        return None  # (Numba has no float16: NumPy's assignment copies it)
    shape, strides = tuple(region.shape), tuple(region.strides)
    if order == "F":
        shape, strides = shape[::-1], strides[::-1]
    arguments = (value, shape_of(shape), base, size_of(region.offset), shape_of(strides))
    serial = Eval(Call(Name("_copy_serial"), arguments))
    if not parallel:
        return [serial]
    test = Compare((">=",), (size_of(product_of(shape)), Const(int(threshold))))
    return [If(test, (Eval(Call(Name("_copy_parallel"), arguments)),), (serial,))]
