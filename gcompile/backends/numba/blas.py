"""Matrix products in loop programs: BLAS's ``gemm`` and ``gemv`` (SciPy's, through Numba's own
entry points ``numba_xxgemm``, ``numba_xxgemv``) called on the operands' memory as it is.

Numba's ``np.dot`` copies every operand whose type is not contiguous, a slice of columns
``data[:, i:]`` included, on every call; BLAS reads a matrix whose rows (or columns) are
contiguous in place, given the distance between them (its leading dimension). ``matmul_into``
therefore copies an operand only when neither axis is contiguous (``a[::2, ::2]``) or a stride
is negative. A matrix-vector product is a ``gemv`` call (its vector copied when strided: Numba's
entry point takes unit strides); SciPy's OpenBLAS runs a ``gemm`` of one row 2.7x slower.

BLAS is column-major: the C-contiguous result ``out`` (m x n) is, to BLAS, the column-major
matrix ``out.T`` (n x m), computed as ``b.T @ a.T``. An operand whose rows are contiguous is, to
BLAS, its own transpose with the row stride as leading dimension (no transposition requested);
one whose columns are contiguous is itself (transposition requested).

SciPy is the one requirement: Numba's BLAS entry point loads SciPy's ``cython_blas`` on its
first call. Float and complex operands only (BLAS has no integer product).
"""

from __future__ import annotations

import ctypes
import functools
import glob
import os

import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from ... import config

_KINDS = {types.float32: "s", types.float64: "d", types.complex64: "c", types.complex128: "z"}
_NOT_DESCRIBED = -1


def available() -> str | None:
    """None when BLAS can be called from loop programs, else the reason it cannot. The first
    time, SciPy's OpenBLAS is given ``GCOMPILE_BLAS_THREADS`` threads (``threads``)."""
    try:
        import scipy.linalg.cython_blas  # noqa: F401  (Numba loads BLAS from there)
    except ImportError:
        return "matrix products in loop bodies need SciPy's BLAS (pip install scipy)"
    threads()
    return None


@functools.cache
def threads() -> int | None:
    """Set SciPy's OpenBLAS (the BLAS loop programs call) to ``GCOMPILE_BLAS_THREADS`` threads,
    1 by default, once per process; the count set, or None where SciPy's BLAS is not an
    OpenBLAS this can find. Measured on 2 cores: a program calling 16 products of 32 rows per
    call (polybench's covariance) took 460 ms instead of 3 ms in about every other process,
    with OpenBLAS's threads waiting on each other, and never with one thread. NumPy's own
    BLAS (a library of its own) keeps its threads; SciPy's functions in the same process run
    on the count set here."""
    import scipy

    count = config.get("blas_threads")
    folder = os.path.join(os.path.dirname(scipy.__file__), os.pardir, "scipy.libs")
    for path in sorted(glob.glob(os.path.join(folder, "libscipy_openblas*.so*"))):
        library = ctypes.CDLL(path)
        for name in ("scipy_openblas_set_num_threads", "openblas_set_num_threads"):
            if hasattr(library, name):
                getattr(library, name)(ctypes.c_int(count))
                return count
    return None


def _blas_codegen(symbol: str, layout: str):
    """Code calling Numba's BLAS entry point ``symbol`` (``numba_xxgemm``, ``numba_xxgemv``):
    its first argument the dtype's letter, then one per ``layout`` letter: ``c`` a character
    (from an int), ``n`` a size, ``p`` an array's data, ``1``/``0`` alpha/beta (no argument)."""
    char, size, pointer = ir.IntType(8), ir.IntType(64), cgutils.voidptr_t
    kinds = {"c": char, "n": size, "p": pointer, "1": pointer, "0": pointer}
    function_type = ir.FunctionType(ir.IntType(32), [char] + [kinds[k] for k in layout])

    def codegen(context, builder, sig, args):
        function = cgutils.get_or_insert_function(builder.module, function_type, symbol)
        dtype = next(t.dtype for t in sig.args if isinstance(t, types.Array))
        call, given = [ir.Constant(char, ord(_KINDS[dtype]))], iter(zip(sig.args, args))
        for kind in layout:
            if kind in "10":
                value = context.get_constant_generic(builder, dtype, int(kind))
                call.append(builder.bitcast(cgutils.alloca_once_value(builder, value), pointer))
                continue
            typ, value = next(given)
            if kind == "p":
                data = context.make_array(typ)(context, builder, value).data
                call.append(builder.bitcast(data, pointer))
            else:
                value = context.cast(builder, value, typ, types.int64)
                call.append(builder.trunc(value, char) if kind == "c" else value)
        return builder.call(function, call)

    return codegen


def _typed(args, codegen):
    arrays = [a for a in args if isinstance(a, types.Array)]
    if any(a.dtype != arrays[0].dtype for a in arrays) or arrays[0].dtype not in _KINDS:
        return None
    return types.int32(*args), codegen


_GEMM = _blas_codegen("numba_xxgemm", "ccnnn1pnpn0pn")
_GEMV = _blas_codegen("numba_xxgemv", "cnn1pnp0p")


@intrinsic
def _xxgemm(typingctx, trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc):
    """BLAS ``c = op(a) @ op(b)`` (column-major, ``gemm``) on the arrays' data."""
    return _typed((trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc), _GEMM)


@intrinsic
def _xxgemv(typingctx, trans, m, n, a, lda, x, y):
    """BLAS ``y = op(a) @ x`` (column-major, ``gemv``; x and y contiguous)."""
    return _typed((trans, m, n, a, lda, x, y), _GEMV)


@numba.njit(cache=True)
def _leading(rows, columns, row_stride, column_stride):
    """How BLAS reads a (rows x columns) operand with these element strides: ``(transposed,
    leading)``, ``transposed`` 1 when its columns are contiguous; leading -1 when neither axis
    is contiguous with a valid leading dimension (the operand is copied)."""
    width, height = max(columns, 1), max(rows, 1)
    if columns <= 1 or column_stride == 1:
        leading = row_stride if rows > 1 else width
        if leading >= width:
            return 0, leading
    if rows <= 1 or row_stride == 1:
        leading = column_stride if columns > 1 else height
        if leading >= height:
            return 1, leading
    return 0, _NOT_DESCRIBED


@numba.njit(cache=True)
def _operand(x, rows, columns, row_stride, column_stride):
    """``(x or its contiguous copy, transposed, leading)`` for BLAS (see ``_leading``)."""
    transposed, leading = _leading(rows, columns, row_stride, column_stride)
    if leading == _NOT_DESCRIBED:
        return np.ascontiguousarray(x), 0, max(columns, 1)
    return x, transposed, leading


@numba.njit(cache=True)
def _strides(x):
    """Element strides of x as a matrix: a vector is a row (``as_row``) or a column."""
    step = x.itemsize
    if x.ndim == 2:
        return x.shape[0], x.shape[1], x.strides[0] // step, x.strides[1] // step
    return 1, x.shape[0], 0, x.strides[0] // step


@numba.njit(cache=True)
def matmul_into(out, a, b):
    """``out = a @ b`` for 1-D or 2-D ``a`` and ``b`` of ``out``'s float or complex dtype,
    ``out`` C-contiguous of the product's shape (a vector operand is a row on the left and a
    column on the right, as in NumPy)."""
    if a.ndim == 2 and b.ndim == 1:
        _matrix_vector(out, a, b, True)
    elif a.ndim == 1 and b.ndim == 2:
        _matrix_vector(out, b, a, False)
    else:
        _matrix_matrix(out, a, b)


@numba.njit(cache=True)
def _matrix_vector(out, matrix, vector, matrix_left):
    """``out = matrix @ vector`` (``matrix_left``) or ``vector @ matrix``: ``gemv``."""
    rows, columns, row_stride, column_stride = _strides(matrix)
    inner = columns if matrix_left else rows
    if out.size == 0:
        return
    if inner == 0:
        out.fill(0)
        return
    data, transposed, leading = _operand(matrix, rows, columns, row_stride, column_stride)
    x = vector if vector.strides[0] == vector.itemsize else np.ascontiguousarray(vector)
    trans = ord("t") if (transposed == 0) == matrix_left else ord("n")
    if transposed == 0:  # to BLAS the matrix's transpose (columns x rows)
        rows, columns = columns, rows
    if _xxgemv(trans, rows, columns, data, leading, x, out) != 0:
        raise RuntimeError("BLAS gemv failed")


@numba.njit(cache=True)
def _matrix_matrix(out, a, b):
    """``out = a @ b``, vectors as a row (``a``) and a column (``b``): ``gemm``. To BLAS,
    ``out`` is its column-major transpose, computed as ``b.T @ a.T``."""
    m, k, a_rows, a_columns = _strides(a)
    if b.ndim == 2:
        _, n, b_rows, b_columns = _strides(b)
    else:  # a column: (k x 1)
        n, b_rows, b_columns = 1, b.strides[0] // b.itemsize, 0
    if m == 0 or n == 0:
        return
    if k == 0:
        out.fill(0)
        return
    a_data, a_transposed, lda = _operand(a, m, k, a_rows, a_columns)
    b_data, b_transposed, ldb = _operand(b, k, n, b_rows, b_columns)
    trans_b = ord("t") if b_transposed else ord("n")
    trans_a = ord("t") if a_transposed else ord("n")
    if _xxgemm(trans_b, trans_a, n, m, k, b_data, ldb, a_data, lda, out, n) != 0:
        raise RuntimeError("BLAS gemm failed")
