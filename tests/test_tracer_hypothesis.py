"""Random NumPy programs (hypothesis): tracing and replaying them gives eager NumPy's results exactly.

A program is a list of steps over a growing pool of values: elementwise ops drawn
from the op table (unary, binary with broadcasting, Python-scalar operands),
reductions with keepdims, views and in-place updates.
"""

from __future__ import annotations

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gcompile.ir import ops
from tests.support import check, supports

UNARY = [
    op
    for op in ops.OPS
    if op.kind == "elementwise" and isinstance(op.impl, np.ufunc) and op.impl.nin == 1
]
BINARY = [
    op
    for op in ops.OPS
    if op.kind == "elementwise" and isinstance(op.impl, np.ufunc) and op.impl.nin == 2
]
REDUCTIONS = [np.sum, np.max, np.mean, np.prod, np.any]
SHAPES = [(4, 3), (1, 3), (4, 1), (3,), ()]
DTYPES = [np.float64, np.float32, np.int32, np.uint8, np.bool_]


@st.composite
def programs(draw):
    n_inputs = draw(st.integers(1, 3))
    inputs = [
        (draw(st.sampled_from(SHAPES)), draw(st.sampled_from(DTYPES))) for _ in range(n_inputs)
    ]
    steps = []
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["unary", "binary", "scalar", "reduce", "view", "inplace"]))
        a = draw(st.integers(0, 100))
        b = draw(st.integers(0, 100))
        if kind == "unary":
            steps.append((kind, draw(st.sampled_from(UNARY)).impl, a, b))
        elif kind in ("binary", "inplace"):
            steps.append((kind, draw(st.sampled_from(BINARY)).impl, a, b))
        elif kind == "scalar":
            scalar = draw(st.sampled_from([2, -1, 0.5, 3.0, True]))
            steps.append((kind, draw(st.sampled_from(BINARY)).impl, a, scalar))
        elif kind == "reduce":
            steps.append((kind, draw(st.sampled_from(REDUCTIONS)), a, b))
        else:
            steps.append((kind, None, a, b))
    return inputs, steps


def build(steps):
    """The program as a Python function of the inputs; steps that NumPy would reject are skipped."""

    def program(*arrays):
        pool = list(arrays)
        for kind, fn, a, b in steps:
            x = pool[a % len(pool)]
            y = pool[b % len(pool)] if not isinstance(b, (float, bool)) or kind != "scalar" else b
            if kind == "unary" and supports(fn, x.dtype):
                pool.append(fn(x))
            elif kind == "binary" and supports(fn, x.dtype, y.dtype):
                if np.broadcast_shapes(x.shape, y.shape) is not None:
                    pool.append(fn(x, y))
            elif kind == "scalar" and supports(fn, x.dtype, np.asarray(b).dtype):
                pool.append(fn(x, b) if a % 2 else fn(b, x))
            elif kind == "reduce" and x.size:
                axis = -1 if x.ndim and b % 2 else None
                pool.append(fn(x, axis=axis, keepdims=x.ndim > 0 and b % 3 == 0))
            elif kind == "view" and x.ndim:
                pool.append(x[::-1] if b % 2 else x.T[..., None])
            elif (
                kind == "inplace"
                and x.ndim
                and x is not arrays[0]
                and supports(fn, x.dtype, y.dtype)
            ):
                result = fn(x, y)
                if result.shape == x.shape and np.can_cast(result.dtype, x.dtype, "same_kind"):
                    x[...] = result
        return pool[len(arrays) :] or pool[0] * 1

    return program


def make_inputs(specs, seed):
    rng = np.random.default_rng(seed)
    arrays = []
    for shape, dtype in specs:
        values = rng.uniform(-3, 3, shape)
        if dtype == np.bool_:
            arrays.append(values > 0)
        elif np.dtype(dtype).kind == "u":
            arrays.append(np.abs(values * 10).astype(dtype))
        else:
            arrays.append((values * (10 if np.dtype(dtype).kind == "i" else 1)).astype(dtype))
    return arrays


@settings(max_examples=150, deadline=None)
@given(programs(), st.integers(0, 2**16))
@example(  # (a kernel wrote into a temporary that a write-back still read: a cycle)
    program=(
        [((4, 3), np.float64)] * 3,
        [
            ("scalar", np.add, 2, 2),
            ("unary", np.logical_not, 0, 0),
            ("inplace", np.equal, 38, 0),
            ("inplace", np.add, 21, 92),
        ],
    ),
    seed=0,
)
def test_random_programs_replay_like_numpy(program, seed):
    specs, steps = program
    fn = build(steps)
    inputs = make_inputs(specs, seed)
    try:
        with np.errstate(all="ignore"):
            fn(*[a.copy() for a in inputs])
    except (ValueError, TypeError, OverflowError):
        return  # NumPy itself rejects this program (broadcast or casting); nothing to compare
    check(fn, *inputs, backends=("interpreter",))
