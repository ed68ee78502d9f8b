"""Strided views with symbolic sizes (``ir/layout.py``) against NumPy's own views.

The property that makes one trace serve every size: a chain of views applied to a symbolic
array, with its questions answered at some sizes (the hints) and guarded, gives at *any*
other sizes where the guards still hold exactly the shape, strides, offset and contiguity
NumPy gives there.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gcompile.ir import layout
from gcompile.ir.meta import TensorMeta
from gcompile.ir.shape_env import ShapeEnv, using
from gcompile.ir.symbolic import evaluate, is_expr


def _symbolic(env: ShapeEnv, shape: tuple, order: str) -> TensorMeta:
    sizes = tuple(env.size_symbol(s, f"x.shape[{k}]") if s >= 2 else s for k, s in enumerate(shape))
    return TensorMeta(sizes, np.float64, order)


_RULES = {
    "getitem": layout.getitem,
    "transpose": layout.rearranged(np.transpose),
    "swapaxes": layout.rearranged(np.swapaxes),
    "moveaxis": layout.rearranged(np.moveaxis),
    "expand_dims": layout.rearranged(np.expand_dims),
    "squeeze": layout.squeeze,
    "broadcast_to": layout.broadcast_to,
    "reshape": layout.reshape,
    "ravel": layout.ravel,
}


LEAD3 = "(3, *x.shape)"  # a broadcast_to shape naming the array's own sizes, as programs do


def _params(params: dict, shape: tuple) -> dict:
    return {k: (3, *shape) if v == LEAD3 else v for k, v in params.items()}


def _numpy_view(array: np.ndarray, steps: list):
    view = array
    for name, params in steps:
        params = _params(params, array.shape)
        view = getattr(np, name)(view, **params) if name != "getitem" else view[params["index"]]
    return view


def _apply(strided, steps: list, shape: tuple):
    for name, params in steps:
        strided = _RULES[name](strided, **_params(params, shape))
        if strided is None:
            return None
    return strided


def _evaluated(strided, sizes: dict) -> tuple:
    """Shape, strides and offset at ``sizes`` (strides of size-1 axes, which no index moves
    along, as 0: NumPy sets them as it likes)."""

    def at(value):
        return evaluate(value, sizes) if is_expr(value) else value

    shape = tuple(at(s) for s in strided.shape)
    strides = tuple(0 if n == 1 else at(s) for n, s in zip(shape, strided.strides))
    return shape, strides, at(strided.offset)


def _numpy_facts(root: np.ndarray, view: np.ndarray) -> tuple:
    """Shape, strides and offset in elements (of a non-empty view: an empty one reads no
    memory, and NumPy resets its offset and steps)."""
    item = root.itemsize
    offset = (view.__array_interface__["data"][0] - root.__array_interface__["data"][0]) // item
    strides = tuple(0 if n == 1 else s // item for n, s in zip(view.shape, view.strides))
    return view.shape, strides, offset


def _layout_holds(claimed: str, view: np.ndarray) -> bool:
    if view.size == 0:
        return True  # (NumPy calls every empty array contiguous; the rules judge non-empty ones)
    return {"C": view.flags.c_contiguous, "F": view.flags.f_contiguous, "A": True}[claimed]


def _guards_hold(env: ShapeEnv, sizes: dict) -> bool:
    ops = {"==": int.__eq__, "!=": int.__ne__, "<": int.__lt__, "<=": int.__le__}
    ops.update({">": int.__gt__, ">=": int.__ge__})
    for relation, lhs, rhs, _ in env.conditions():
        left, right = (evaluate(v, sizes) if is_expr(v) else v for v in (lhs, rhs))
        if not ops[relation](int(left), int(right)):
            return False
    return True


CHAINS = [
    [("getitem", {"index": (slice(1, -1), slice(None, None, 2))})],
    [("getitem", {"index": (slice(None, None, -1), 0)})],
    [("getitem", {"index": (Ellipsis, None, slice(2, None))})],
    [("getitem", {"index": (-1,)})],
    [("transpose", {}), ("getitem", {"index": (slice(1, None),)})],
    [("swapaxes", {"axis1": 0, "axis2": 1}), ("ravel", {})],
    [("expand_dims", {"axis": 1}), ("squeeze", {"axis": 1})],
    [("moveaxis", {"source": 0, "destination": -1})],
    [("reshape", {"shape": (-1,)}), ("getitem", {"index": (slice(3, None, 3),)})],
    [("getitem", {"index": (slice(None), slice(1, None))}), ("reshape", {"shape": (-1,)})],
    [("getitem", {"index": (slice(None, 1),)}), ("reshape", {"shape": (-1,)})],
    [("getitem", {"index": (None,)}), ("broadcast_to", {"shape": LEAD3})],
]


@settings(max_examples=80, deadline=None)
@given(
    chain=st.sampled_from(range(len(CHAINS))),
    traced=st.tuples(st.integers(1, 7), st.integers(1, 7)),
    other=st.tuples(st.integers(0, 9), st.integers(0, 9)),
    order=st.sampled_from("CF"),
)
def test_view_chains_give_numpys_views_at_every_size_where_the_guards_hold(
    chain, traced, other, order
):
    steps = CHAINS[chain]
    env = ShapeEnv()
    meta = _symbolic(env, traced, order)
    array = np.zeros(traced, order=order)
    try:
        expected = _numpy_view(array, steps)
    except (ValueError, IndexError):
        with using(env), pytest.raises((ValueError, IndexError)):
            _apply(layout.of_meta(meta), steps, meta.shape)
        return
    with using(env):
        strided = _apply(layout.of_meta(meta), steps, meta.shape)
        claimed = layout.layout(strided) if strided is not None else None
    hints = env.hints
    if strided is None:  # NumPy must copy: check that it does
        assert not np.shares_memory(expected, array)
        return
    if expected.size:
        assert _evaluated(strided, hints) == _numpy_facts(array, expected)
    assert _evaluated(strided, hints)[0] == expected.shape
    assert _layout_holds(claimed, expected)
    # the same trace at other sizes: wherever its guards hold, it is NumPy's view there
    sizes = {sym: o for sym, o in zip(meta.shape, other) if is_expr(sym)}
    if any(o < 2 for sym, o in zip(meta.shape, other) if is_expr(sym)):
        return  # a symbol stands for sizes >= 2 only (smaller ones are another trace)
    if not _guards_hold(env, sizes):
        return
    array = np.zeros(tuple(sizes.get(s, s) for s in meta.shape), order=order)
    view = _numpy_view(array, steps)
    assert _evaluated(strided, sizes)[0] == view.shape
    if view.size:
        assert _evaluated(strided, sizes) == _numpy_facts(array, view)


def test_symbolic_slices_simplify_with_the_size_interval():
    env = ShapeEnv()
    with using(env):
        meta = _symbolic(env, (10, 12), "C")
        view = layout.getitem(layout.of_meta(meta), (slice(1, -1), slice(None, -2)))
    s0, s1 = meta.shape
    assert view.shape == (s0 - 2, s1 - 2)
    assert view.strides == (s1, 1) and view.offset == s1
    assert env.guards == []  # nothing had to be assumed


def test_an_out_of_bounds_index_raises_numpys_error_and_a_fitting_one_is_guarded():
    env = ShapeEnv()
    with using(env):
        meta = _symbolic(env, (4,), "C")
        with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 4"):
            layout.getitem(layout.of_meta(meta), (5,))
        view = layout.getitem(layout.of_meta(meta), (3,))
    assert view.offset == 3
    assert [g.text().split(" (")[0] for g in env.guards][-1] == "3 < s0"


def test_a_reshape_with_minus_one_divides_exactly_or_is_guarded():
    env = ShapeEnv()
    with using(env):
        meta = _symbolic(env, (6, 4), "C")
        s0, s1 = meta.shape
        flat = layout.reshape(layout.of_meta(meta), (-1,))
        back = layout.reshape(flat, (s0, -1))
        halves = layout.reshape(flat, (-1, 2))
    assert flat.shape == (s0 * s1,)
    assert back.shape == (s0, s1) and back.strides == (s1, 1)
    assert halves.shape == ((s0 * s1) // 2, 2)
    (guard,) = env.guards  # the element count is even: true for 6*4, false for 5*3
    relation, lhs, rhs = guard.condition()
    assert (relation, rhs) == ("==", 0)
    assert evaluate(lhs, {s0: 6, s1: 4}) == 0 and evaluate(lhs, {s0: 5, s1: 3}) != 0


def test_contiguity_of_views():
    env = ShapeEnv()
    with using(env):
        meta = _symbolic(env, (5, 6), "C")
        base = layout.of_meta(meta)
        assert layout.layout(layout.getitem(base, (0,))) == "C"
        assert layout.layout(layout.getitem(base, (slice(None), 0))) == "A"
        assert layout.layout(layout.rearranged(np.transpose)(base)) == "F"
        assert layout.layout(layout.getitem(base, (slice(None), slice(None, 1)))) == "A"
    assert env.guards == []
