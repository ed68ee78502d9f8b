"""Op tests generated from the op table (``gcompile.ir.ops.OPS``).

* Every ufunc-backed elementwise op is run for every dtype NumPy has a loop for
  (asked from NumPy on empty arrays), over equal, broadcast, 0-d, size-0,
  strided, negative-stride and Fortran-order operands, Python and NumPy scalar
  operands, the Python operator and its augmented form. Dtypes without a loop
  must be rejected with NumPy's exception. (On Numba, the narrowest and widest
  integers stand for the other widths: see ``numba_for``.)
* Every case of ``op_cases.CASES`` runs for each of its dtypes.
* Every case of ``op_cases.ERROR_CASES`` must fail to trace with the exception
  type eager NumPy raises.
* A coverage test fails for any op or decomposition without a test.

Every run goes through ``tests.support.check`` (eager, traced and verified,
then compiled on each backend, comparing results and mutated arguments), and
the metas of the traced outputs must describe the eager results.
"""

from __future__ import annotations

import operator
import warnings
from dataclasses import replace
from typing import Any, Callable

import numpy as np
import pytest

import gcompile
from gcompile.backends.numba import mathlib
from gcompile.frontend.decompositions import DECOMPOSITIONS
from gcompile.ir.graph import Graph, Node
from gcompile.ir.ops import OPS, load_scipy_special
from gcompile.ir.pytree import flatten
from gcompile.ir.shape_env import data_sizes_in
from gcompile.ir.subgraph import walk
from gcompile.passes import manager
from tests.conftest import _read_back
from tests.ir.op_cases import ALL, CASES, ERROR_CASES, Arg, Case, F, reversed_, scalar, strided
from tests.support import BACKENDS, check, copy_args

# -- argument values -------------------------------------------------------------------------------

FINITE = (-2.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0)
SPECIAL = (np.nan, np.inf, -np.inf, -0.0)


def values(
    rng: np.random.Generator,
    shape: tuple,
    dtype: np.dtype,
    specials: bool = False,
    exponent: bool = False,
) -> np.ndarray:
    """A C array of ``shape``: negatives and zeros; nan, inf and -0.0 with ``specials``;
    small non-negative integers with ``exponent`` (shift counts, integer powers)."""
    if dtype.kind == "b":
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.kind in "iu":
        low, high = (0, 4) if exponent else (0, 10) if dtype.kind == "u" else (-4, 6)
        return np.asarray(rng.integers(low, high, shape), dtype)
    pool = FINITE + SPECIAL if specials else FINITE
    data = np.empty(shape, dtype)
    data.real = rng.choice(pool, shape)
    if dtype.kind == "c":
        data.imag = rng.choice(pool, shape)
    return data


def build(
    rng: np.random.Generator, arg: Arg, dtype: Any, specials: bool = False, exponent: bool = False
) -> Any:
    """The value ``arg`` describes, of ``arg.dtype`` or else ``dtype``."""
    dtype = np.dtype(dtype if arg.dtype is None else arg.dtype)
    ndim = len(arg.shape)
    if arg.form == "scalar":
        return values(rng, (), dtype, specials, exponent)[()]
    if arg.form == "strided":
        return values(rng, tuple(2 * s for s in arg.shape), dtype, specials, exponent)[
            (slice(None, None, 2),) * ndim
        ]
    data = values(rng, arg.shape, dtype, specials, exponent)
    if arg.form == "reversed":
        return data[(slice(None, None, -1),) * ndim]
    if arg.form == "F":
        return np.asfortranarray(data)
    if arg.form == "readonly":
        data.flags.writeable = False
    return data


def case_args(case: Case, dtype: Any) -> tuple:
    rng = np.random.default_rng(0)
    return tuple(build(rng, arg, dtype, case.specials) for arg in case.args)


# -- assertions ------------------------------------------------------------------------------------


def graph_ops(fn: Callable, *args: Any) -> set[str]:
    """Names of the ops in the graphs of ``fn(*args)`` as traced, optimized and fused (passes
    make ``update``, ``writeback`` and ``kernel_output``), inside fused kernels too.

    One trace, brought through the stages in place as ``gcompile.trace(stage=...)`` brings it
    (``run_pipeline``: optimize, then fuse), each stage's graph read back from its text as the
    suite reads back every staged graph (``tests/conftest.py``)."""
    graph = gcompile.trace(fn, *args)
    names = _call_names(graph)
    manager.run_pipeline(graph, "optimized")
    names |= _call_names(graph)
    manager.fuse_graph(graph)
    _read_back(graph)
    return names | _call_names(graph)


def _call_names(graph) -> set[str]:
    return {visit.node.target.name for visit in walk(graph) if visit.node.op == "call"}


def eager(fn: Callable, *args: Any) -> Any:
    """``fn`` run eagerly on copies of ``args``, quietly."""
    eager_args, _ = copy_args(args, {})
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*eager_args)


def assert_output_metas(graph: Graph, result: Any) -> None:
    """Each output node's meta in ``graph`` (traced) describes what eager NumPy returns
    (``result``): shape, dtype, array or scalar, writeability, and the layout it promises
    (``"C"`` or ``"F"``; ``"A"`` promises nothing). A length the data decide (``u0``) has no
    value at the traced sizes: its axis is left to the runs ``check`` compares."""
    leaves, _ = flatten(result)
    for out, (path, value) in zip(graph.output_node.args[0], leaves):
        if not isinstance(out, Node):
            continue
        meta = out.meta.map_sizes(graph.shape_env.hint)
        where = f"output {path or 0}: %{out.name} is {out.meta}"
        decided = [not data_sizes_in(size) for size in out.meta.shape]
        if len(decided) == np.ndim(value):
            meta = replace(
                meta,
                shape=tuple(m if d else v for m, v, d in zip(meta.shape, np.shape(value), decided)),
            )
        assert meta.shape == np.shape(value), f"{where}, eager shape {np.shape(value)}"
        assert meta.dtype == np.asarray(value).dtype, f"{where}, eager {np.asarray(value).dtype}"
        assert meta.scalar != isinstance(value, np.ndarray), f"{where}, eager {type(value)}"
        if isinstance(value, np.ndarray):
            assert meta.writeable == value.flags.writeable, f"{where}, writeable {meta.writeable}"
            promised = {"C": value.flags.c_contiguous, "F": value.flags.f_contiguous, "A": True}
            assert promised[meta.layout], f"{where} with layout {meta.layout}, eager {value.flags}"


def check_op(fn: Callable, *args: Any, numba: bool = True) -> None:
    """``check``, and the traced output metas match the eager results (``check``'s trace and
    eager result: ``assert_output_metas``).

    ``numba=False`` leaves out the Numba backend: every Numba compile costs ~0.15 s, so the
    generated sweeps compile one or two kernels per op and dtype (all values, special ones
    included), and the layouts and broadcasts are swept on the Numba backend by
    ``tests/backends/test_numba_layouts.py``.
    """
    check(fn, *args, backends=BACKENDS if numba else ("interpreter",), on_graph=assert_output_metas)


def eager_error(fn: Callable, *args: Any) -> type[BaseException] | None:
    """The public type of the exception eager NumPy raises for ``fn(*args)``, or None.

    Public means a builtin exception or one of ``numpy.exceptions``: NumPy's private
    subclasses (``numpy._core._exceptions._UFuncOutputCastingError``) give way to the
    public class they derive from (``TypeError``), which is what callers can catch.
    """
    try:
        eager(fn, *args)
    except Exception as exc:  # any NumPy error is the expectation
        return next(
            t for t in type(exc).__mro__ if t.__module__ in ("builtins", "numpy.exceptions")
        )
    return None


def assert_raises_like_numpy(fn: Callable, *args: Any) -> None:
    """Eager NumPy raises for ``fn(*args)``; tracing must raise the same exception type."""
    expected = eager_error(fn, *args)
    assert expected is not None, "NumPy accepts this call; it is not an error case"
    with pytest.raises(expected):
        gcompile.trace(fn, *args)


def assert_same_outcome(fn: Callable, *args: Any, numba: bool = True) -> None:
    """``check`` when eager NumPy accepts ``fn(*args)``, else tracing must raise NumPy's error."""
    if eager_error(fn, *args) is None:
        check_op(fn, *args, numba=numba)
    else:
        assert_raises_like_numpy(fn, *args)


# -- ufunc-backed elementwise ops, generated -------------------------------------------------------

try:  # SciPy's special functions join the table (and these tests) when SciPy is installed
    import scipy.special  # noqa: F401
except ImportError:
    pass
load_scipy_special()

UFUNC_OPS = [op for op in OPS if op.kind == "elementwise" and isinstance(op.impl, np.ufunc)]

# Operand dtypes other than the dtype under test (None): the exponent of ldexp is an integer.
OPERAND_DTYPES = {"ldexp": (None, np.int32)}
# Ops whose second operand gets small non-negative integers: shift counts, integer powers.
EXPONENT_OPS = {"power", "left_shift", "right_shift"}
COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge"}

BINARY_SHAPES = [
    ((2, 3), (2, 3)),
    ((3, 1), (1, 4)),
    ((), (4,)),
    ((2, 1, 3), (4, 1)),
    ((), ()),
    ((0,), (0,)),
    ((0, 3), (3,)),
    (strided((4,)), strided((4,))),
    (strided((3, 2)), (2,)),
    (reversed_((5,)), (5,)),
    (F((3, 4)), F((3, 4))),
    (F((3, 4)), (3, 4)),
]
AUGMENTED_SHAPES = [
    ((3, 4), (3, 4)),
    ((3, 4), (4,)),
    (F((3, 4)), (3, 1)),
    (strided((3, 2)), (2,)),
    ((), ()),
]
UNARY_SHAPES = [
    (2, 3),
    (),
    (0,),
    (0, 3),
    strided((4,)),
    strided((3, 2)),
    reversed_((5,)),
    F((3, 4)),
]


def operand_dtypes(op: Any, dtype: Any) -> tuple:
    fixed = OPERAND_DTYPES.get(op.name, (None,) * op.impl.nin)
    return tuple(np.dtype(dtype if d is None else d) for d in fixed)


def has_loop(op: Any, dtype: Any) -> bool:
    """NumPy has a loop for ``op`` on operands of ``dtype``."""
    try:
        with np.errstate(all="ignore"):
            op.impl(*(np.empty(0, d) for d in operand_dtypes(op, dtype)))
    except TypeError:
        return False
    return True


def _ufunc_params(supported: bool) -> list:
    return [
        pytest.param(op, np.dtype(dtype), id=f"{op.name}-{np.dtype(dtype).name}")
        for op in UFUNC_OPS
        for dtype in ALL
        if has_loop(op, dtype) == supported
    ]


UFUNC_PARAMS = _ufunc_params(supported=True)
UFUNC_REJECTED_PARAMS = _ufunc_params(supported=False)


class Operands:
    """Builds the operands of one ufunc op for one dtype."""

    def __init__(self, op: Any, dtype: np.dtype):
        self.op = op
        self.dtypes = operand_dtypes(op, dtype)
        self.rng = np.random.default_rng(0)

    def __call__(self, position: int, arg: tuple | Arg) -> Any:
        arg = arg if isinstance(arg, Arg) else Arg(arg)
        exponent = position == 1 and self.op.name in EXPONENT_OPS
        return build(self.rng, arg, self.dtypes[position], specials=True, exponent=exponent)

    def scalar(self, position: int) -> Any:
        """A NumPy scalar of the operand's dtype."""
        return self(position, scalar())


def with_constant(binary: Callable, value: Any, position: int) -> Callable:
    """``x -> binary(x, value)`` for ``position`` 1, ``x -> binary(value, x)`` for 0."""
    if position == 1:
        return lambda a: binary(a, value)
    return lambda b: binary(value, b)


@pytest.mark.parametrize("op, dtype", UFUNC_PARAMS)
def test_ufunc(op, dtype):
    if op.impl.nin == 1:
        _check_unary(op, dtype)
    else:
        _check_binary(op, dtype)


# Integer widths whose kernels the Numba sweeps compile: the narrowest and widest of each
# signedness stand for the rest (the generated code differs only in the type names).
NUMBA_INTEGERS = {np.dtype(t) for t in (np.bool_, np.int8, np.int64, np.uint8, np.uint64)}


def numba_for(op, dtype) -> bool:
    """Whether the sweep of ``op`` on ``dtype`` also compiles Numba kernels.

    Numba compiles a kernel per input dtype (0.15-1 s each). Of the integer widths,
    ``NUMBA_INTEGERS`` stand for the others; bool and integer inputs that NumPy casts to a float
    loop all run the same float code after the cast, so int64 stands for them, except for the
    functions with an inlined expansion (0.3-1 s each), whose float code the float dtypes test.
    The narrow integers compile arithmetic only: a comparison or predicate (a bool result) has
    the same code at every width, and int64, uint64 and bool compile it.
    """
    if dtype.kind not in "biu":
        return True
    if dtype == np.int64:
        return op.name not in mathlib.TEMPLATES
    if dtype not in NUMBA_INTEGERS:
        return False
    with np.errstate(all="ignore"):
        result = op.impl(*(np.ones(1, d) for d in operand_dtypes(op, dtype)))
    result = result[0] if isinstance(result, tuple) else result
    if result.dtype.kind == "b" and dtype.kind != "b" and dtype.itemsize == 1:
        return False
    return result.dtype.kind not in "fc"


def _check_unary(op, dtype):
    ufunc = op.impl
    make = Operands(op, dtype)
    call = lambda x: ufunc(x)
    numba = numba_for(op, dtype)
    assert op.name in graph_ops(call, make(0, (3,)))
    for shape in UNARY_SHAPES:
        check_op(call, make(0, shape), numba=numba and shape == UNARY_SHAPES[0])
    check_op(call, make.scalar(0), numba=numba)
    if dtype in (np.float64, np.complex128):
        check_op(call, make.scalar(0).item())  # a Python float or complex argument (a weak input)
    if op.dunder:
        python_op = getattr(operator, f"__{op.dunder}__")
        check_op(lambda x: python_op(x), make(0, (3, 4)), numba=False)
        check_op(lambda x: python_op(x), make.scalar(0))


def _check_binary(op, dtype):
    ufunc = op.impl
    make = Operands(op, dtype)
    call = lambda a, b: ufunc(a, b)
    numba = numba_for(op, dtype)
    assert op.name in graph_ops(call, make(0, (3,)), make(1, (3,)))
    for first, second in BINARY_SHAPES:  # (on Numba: the one function below)
        check_op(call, make(0, first), make(1, second), numba=False)
    # On the Numba backend, one kernel: every pair of values (broadcast), a weak Python float and
    # a 0-d array with an array, all three of the broadcast shape (a.shape[0], b.shape[1]).
    column, row, zero_d = make(0, (3, 1)), make(1, (1, 4)), make(0, ())

    def spread(value, a, b):
        return np.broadcast_to(value, (a.shape[0], b.shape[1]))

    if eager_error(with_constant(ufunc, 2.5, 1), column) is None:
        check_op(
            lambda a, b, s: (ufunc(a, b), ufunc(spread(a, a, b), 2.5), ufunc(s, spread(b, a, b))),
            column,
            row,
            zero_d,
            numba=numba,
        )
    else:
        pair = lambda a, b, s: (ufunc(a, b), ufunc(s, spread(b, a, b)))
        check_op(pair, column, row, zero_d, numba=numba)
    assert_raises_like_numpy(call, make(0, (3,)), make(1, (4,)))
    check_op(call, make.scalar(0), make.scalar(1), numba=numba)
    assert_same_outcome(
        lambda a, b: ufunc(a, b, dtype=np.float64), make(0, (3,)), make(1, (3,)), numba=False
    )

    a, b = make(0, (3, 4)), make(1, (3, 4))
    for value in (2, 2.5, np.float32(2), make.dtypes[1].type(2)):
        assert_same_outcome(with_constant(ufunc, value, 1), a, numba=False)
    for value in (2, 2.5, np.float32(2), make.dtypes[0].type(2)):
        assert_same_outcome(with_constant(ufunc, value, 0), b, numba=False)
    # a Python float argument (a weak input)
    assert_same_outcome(lambda a, s: ufunc(a, s), a, 2.5, numba=False)
    assert_same_outcome(lambda s, b: ufunc(s, b), 2.5, b, numba=False)

    if not op.dunder:
        return
    python_op = getattr(operator, f"__{op.dunder}__")
    check_op(lambda a, b: python_op(a, b), make(0, (3, 4)), make(1, (4,)), numba=False)
    check_op(lambda a, b: python_op(a, b), make.scalar(0), make.scalar(1))
    for value in (2, 2.5):
        assert_same_outcome(with_constant(python_op, value, 1), a, numba=False)
        assert_same_outcome(with_constant(python_op, value, 0), b, numba=False)
    if op.dunder in COMPARISONS:
        return
    augmented_op = getattr(operator, f"__i{op.dunder}__")

    def augmented(a, b):
        a = augmented_op(a, b)  # a op= b
        return a

    def augmented_copy(a, b):
        c = a.copy()
        c = augmented_op(c, b)  # c op= b
        return c

    for first, second in AUGMENTED_SHAPES:
        assert_same_outcome(augmented, make(0, first), make(1, second), numba=first == ())
    assert_same_outcome(augmented_copy, make(0, (3, 4)), make(1, (4,)), numba=False)
    # a NumPy scalar updated by an array (a fresh array), an array updated by a Python int (in
    # place); on Numba one kernel when both run on one array, its old values read first
    scalar, array, by_two = make.scalar(0), make(1, (3,)), lambda a: augmented(a, 2)
    if make.dtypes[0] == make.dtypes[1] and not eager_error(augmented, scalar, array):
        assert_same_outcome(lambda s, a: (augmented(s, a), by_two(a)), scalar, array)
    else:
        assert_same_outcome(augmented, scalar, array)
        assert_same_outcome(by_two, make(0, (3,)))


@pytest.mark.parametrize("op, dtype", UFUNC_REJECTED_PARAMS)
def test_ufunc_rejects_dtype_like_numpy(op, dtype):
    ufunc = op.impl
    arrays = [np.zeros(3, d) for d in operand_dtypes(op, dtype)]
    assert_raises_like_numpy(lambda *xs: ufunc(*xs), *arrays)


# -- the cases of op_cases.py ----------------------------------------------------------------------


def target_name(target: Any) -> str:
    return target if isinstance(target, str) else f"np.{target.__name__}"


def _case_params(table: dict) -> list:
    return [
        pytest.param(
            target,
            case,
            dtype,
            id=f"{target_name(target)}-{i}"
            + (f"-{np.dtype(dtype).name}" if dtype is not None else ""),
        )
        for target, cases in table.items()
        for i, case in enumerate(cases)
        for dtype in case.dtypes
    ]


# The cases run on the Numba backend for float64 (and cases of fixed dtypes); integer and other
# dtypes reach Numba through the ufunc sweep above, and tests/backends/test_numba_layouts.py
# sweeps the reductions over every dtype.
NUMBA_CASE_DTYPES = (np.dtype(np.float64),)


@pytest.mark.parametrize("target, case, dtype", _case_params(CASES))
def test_case(target, case, dtype):
    args = case_args(case, dtype)
    check_op(case.fn, *args, numba=dtype is None or np.dtype(dtype) in NUMBA_CASE_DTYPES)
    if isinstance(target, str):
        ops = graph_ops(case.fn, *args)
        assert target in ops, f"the case for {target} records {sorted(ops)}"


@pytest.mark.parametrize("target, case, dtype", _case_params(ERROR_CASES))
def test_error_like_numpy(target, case, dtype):
    assert_raises_like_numpy(case.fn, *case_args(case, dtype))


# -- coverage --------------------------------------------------------------------------------------


def test_every_op_and_decomposition_has_a_test():
    names = {op.name for op in OPS}
    for table in (CASES, ERROR_CASES):
        unknown = [
            t for t in table if (t not in names if isinstance(t, str) else t not in DECOMPOSITIONS)
        ]
        assert not unknown, f"targets that are neither an op nor a decomposition: {unknown}"

    covered = {param.values[0].name for param in UFUNC_PARAMS}
    for cases in CASES.values():
        for case in cases:
            try:
                covered |= graph_ops(case.fn, *case_args(case, case.dtypes[0]))
            except Exception:  # test_case reports it; a case that does not trace covers nothing
                continue
    untested_ops = sorted(names - covered)
    assert not untested_ops, f"ops that no test records: {untested_ops}"

    # A decomposition's case must call it (by name: np.divmod, divmod, x.clip ...) to count.
    untested = [
        target_name(f)
        for f in DECOMPOSITIONS
        if not any(f.__name__ in case.fn.__code__.co_names for case in CASES.get(f, ()))
    ]
    assert not untested, f"decompositions without a case: {untested}"
