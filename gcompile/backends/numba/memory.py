"""Arrays a compiled program allocates, at the cost NumPy's own allocations have.

NumPy asks Linux for transparent huge pages on every allocation of 4 MiB or more
(``madvise(MADV_HUGEPAGE)``, when the system's policy is ``madvise``); Numba's ``np.empty``
does not, and the first touch of its fresh pages then costs several times more (measured: 26 ms
to allocate and fill 72 MB against NumPy's 4.3 ms). ``empty`` and ``full`` give the same advice,
so a program may allocate its outputs itself instead of having the host allocate them through
NumPy. ``madvise`` is declared as an external symbol (resolved in the process, as ``malloc``
is), so the machine code stays in Numba's disk cache; off Linux the advice is left out.

``empty`` and ``full`` are plain compiled functions, not inlined into Numba's IR: Numba ran its
front end again at each call site of an inlined one (a program of fifteen allocations, npbench's
channel_flow, spent 0.26 s of its 1.5 s compile on that); LLVM inlines them where it pays.
"""

from __future__ import annotations

import sys

import numpy as np
from llvmlite import ir
from numba import njit
from numba.core import cgutils, types
from numba.extending import intrinsic

HUGE = 1 << 22  # NumPy's threshold for the advice (bytes)
POOLED = 1 << 20  # outputs from this size come from the host's buffer pool (host.BufferPool)
_PAGE = 4096
_MADV_HUGEPAGE = 14  # Linux
_ADVISE = sys.platform.startswith("linux")


@intrinsic
def _madvise(typingctx, address, length, advice):
    """``madvise(address, length, advice)`` of the C library (its result is ignored)."""
    signature = types.int32(types.uintp, types.uintp, types.int32)

    def codegen(context, builder, sig, args):
        byte_pointer = ir.IntType(8).as_pointer()
        function_type = ir.FunctionType(
            ir.IntType(32), [byte_pointer, ir.IntType(64), ir.IntType(32)]
        )
        function = cgutils.get_or_insert_function(builder.module, function_type, "madvise")
        return builder.call(function, [builder.inttoptr(args[0], byte_pointer), args[1], args[2]])

    return signature, codegen


@njit(cache=True, nogil=True)
def advise(array):
    """``array`` (fresh, contiguous), its pages advised huge when it is large, as NumPy does."""
    if _ADVISE and array.nbytes >= HUGE:
        start = array.ctypes.data
        skip = (_PAGE - start % _PAGE) % _PAGE  # madvise takes whole pages
        _madvise(start + skip, array.nbytes - skip, np.int32(_MADV_HUGEPAGE))
    return array


@njit(cache=True, nogil=True)
def empty(shape, dtype):
    """``np.empty(shape, dtype)`` (C order), advised."""
    return advise(np.empty(shape, dtype))


@njit(cache=True, nogil=True)
def full(shape, value, dtype):
    """``np.full(shape, value, dtype)`` (C order), advised before its pages are touched."""
    array = advise(np.empty(shape, dtype))
    array[...] = value
    return array
