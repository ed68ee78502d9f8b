"""The few LLVM operations the math templates need and Numba's typing would widen or branch on.

Numba widens ``int32`` arithmetic to ``int64`` and turns ``a if c else b`` into a branch that
LLVM must first if-convert; a float32 template written with them loses half its vector lanes or
its vectorisation. These intrinsics emit the single LLVM instruction instead, typed by their
operands: ``fma`` (one rounding, ``llvm.fma``), bit casts between a float and the integer of its
width, integer arithmetic that stays at that width, float <-> integer conversion, and ``select``;
and ``horner``, the polynomial evaluation the templates share.
All are pure, so they vectorise. Integer operands of one call must have the same type.

Also the two ways a math function reaches a kernel's loop, ``inline_in_numba_ir`` (every
function of the family modules) and ``inline_in_llvm`` (what the package exports to kernels for
all families but ``exp``; see the package docstring).
"""

from __future__ import annotations

from llvmlite import ir
from numba import njit
from numba.core import cgutils, types
from numba.extending import intrinsic

# Numba copies the function's IR into each caller and types it there: no call is left, but every
# call site is typed and lowered again. Never compiled alone, so no disk cache (``cache=True``
# would only probe the cache directory once per function at import).
inline_in_numba_ir = njit(inline="always", error_model="numpy", nogil=True)
# Compiled once per signature (and kept in Numba's disk cache); its LLVM function carries
# ``alwaysinline``, so LLVM inlines it into each caller before vectorising the caller's loops.
inline_in_llvm = njit(forceinline=True, error_model="numpy", cache=True, nogil=True)

_INT_OF_FLOAT = {types.float32: types.int32, types.float64: types.int64}
_FLOAT_OF_INT = {
    types.int32: types.float32,
    types.int64: types.float64,
    types.uint32: types.float32,
    types.uint64: types.float64,
}


@intrinsic
def fma(typingctx, a, b, c):
    """``a * b + c`` rounded once (floats of one type)."""
    if not (isinstance(a, types.Float) and a == b == c):
        return None

    def codegen(context, builder, signature, args):
        lltype = context.get_value_type(signature.return_type)
        fn = cgutils.get_or_insert_function(
            builder.module,
            ir.FunctionType(lltype, [lltype] * 3),
            f"llvm.fma.{lltype.intrinsic_name}",
        )
        return builder.call(fn, args)

    return a(a, b, c), codegen


@intrinsic
def as_int(typingctx, x):
    """The IEEE bits of float ``x`` as the signed integer of its width."""
    if x not in _INT_OF_FLOAT:
        return None
    result = _INT_OF_FLOAT[x]

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(result))

    return result(x), codegen


@intrinsic
def as_float(typingctx, bits):
    """The float whose IEEE bits are the (32- or 64-bit) integer ``bits``."""
    if bits not in _FLOAT_OF_INT:
        return None
    result = _FLOAT_OF_INT[bits]

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(result))

    return result(bits), codegen


def _int_binary(name, emit):
    def typer(typingctx, a, b):
        if not (isinstance(a, types.Integer) and a == b):
            return None

        def codegen(context, builder, signature, args):
            return emit(builder, *args)

        return a(a, b), codegen

    typer.__name__ = name
    typer.__doc__ = f"Integer ``{name}`` at the operands' own width (no widening to int64)."
    return intrinsic(typer)


iadd = _int_binary("iadd", lambda b, x, y: b.add(x, y))
isub = _int_binary("isub", lambda b, x, y: b.sub(x, y))
iand = _int_binary("iand", lambda b, x, y: b.and_(x, y))
ior = _int_binary("ior", lambda b, x, y: b.or_(x, y))
ixor = _int_binary("ixor", lambda b, x, y: b.xor(x, y))
ishl = _int_binary("ishl", lambda b, x, y: b.shl(x, y))  # shift counts below the width
ishr = _int_binary("ishr", lambda b, x, y: b.ashr(x, y))  # arithmetic (sign-filling) shift


@intrinsic
def to_int(typingctx, x):
    """Float ``x`` truncated to the signed integer of its width (``x`` must fit)."""
    if x not in _INT_OF_FLOAT:
        return None
    result = _INT_OF_FLOAT[x]

    def codegen(context, builder, signature, args):
        return builder.fptosi(args[0], context.get_value_type(result))

    return result(x), codegen


@intrinsic
def to_float(typingctx, i):
    """Signed integer ``i`` (32 or 64 bits) as the float of its width."""
    if i not in (types.int32, types.int64):
        return None
    result = _FLOAT_OF_INT[i]

    def codegen(context, builder, signature, args):
        return builder.sitofp(args[0], context.get_value_type(result))

    return result(i), codegen


@intrinsic
def select(typingctx, condition, a, b):
    """``a if condition else b`` as one LLVM select (no branch); ``a`` and ``b`` of one type."""
    if not (isinstance(condition, types.Boolean) and a == b):
        return None

    def codegen(context, builder, signature, args):
        return builder.select(args[0], args[1], args[2])

    return a(condition, a, b), codegen


@inline_in_numba_ir
def horner(z, coefficients):
    """The polynomial with ``coefficients`` (highest degree first) at ``z``, one fma per term."""
    p = coefficients[0]
    for i in range(1, len(coefficients)):
        p = fma(p, z, coefficients[i])
    return p
