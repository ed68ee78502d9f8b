"""Functionalization: in-place writes become ``update`` values plus ``writeback``s.

Golden texts before and after ``functionalize`` (then ``dce``) for realistic mutation
patterns; the shape of the result (no ``setitem`` left, one ``writeback`` per written
argument, placed just before the output, returned aliases taken from it); identity and
aliasing of returned arguments and views; the refusals (reshapes of strided arrays that are
written, arguments that share memory); and differential tests against eager NumPy.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pytest

import gcompile
from gcompile.ir import ops
from gcompile.ir.alias import alias_chain
from gcompile.passes.dce import dce
from gcompile.passes.functionalize import functionalize
from tests.support import (
    BACKENDS,
    assert_same_value,
    check,
    golden,
    run_eager,
    run_graph,
)

# -- helpers ---------------------------------------------------------------------------------------


def calls(graph, op: ops.OpDef) -> list:
    return [n for n in graph.nodes if n.op == "call" and n.target is op]


def written_arguments(graph) -> list[str]:
    """Names of the placeholders a functionalized graph writes back, in writeback order."""
    return [n.args[0].name for n in calls(graph, ops.WRITEBACK)]


def assert_functional_form(graph, written: set) -> None:
    """No ``setitem``; one ``writeback`` per written argument, last before the output (only
    views of write-backs may follow); returned aliases of written arguments come from them."""
    assert not calls(graph, ops.SETITEM)
    writebacks = calls(graph, ops.WRITEBACK)
    names = written_arguments(graph)
    assert sorted(names) == sorted(written) and len(set(names)) == len(names)
    assert all(w.args[0].op == "placeholder" for w in writebacks)
    if writebacks:
        nodes = graph.nodes
        tail = nodes[nodes.index(writebacks[0]) : -1]
        for node in tail:
            assert node in writebacks or (
                node.kind == "view" and alias_chain(node)[0] in writebacks
            ), f"%{node.name} comes after a writeback"
    written_placeholders = {w.args[0] for w in writebacks}
    for value in graph.output_node.all_input_nodes:
        assert alias_chain(value)[0] not in written_placeholders, (
            f"%{value.name} is returned from a written argument, not its writeback"
        )


def assert_runs_like_eager(graph, fn: Callable, args: tuple) -> None:
    expected, expected_args = run_eager(fn, args)
    actual, actual_args = run_graph(graph, fn, args)
    assert_same_value(expected, actual, where="result")
    assert_same_value(expected_args, actual_args, where="arguments after the call")


# -- golden texts ----------------------------------------------------------------------------------


def stencil_into(u, out):
    out[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.25 * (
        u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1]
    )


def stencil_in_place(u, alpha: float):
    u[1:-1, 1:-1] += alpha * (
        u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1]
    )


def adam(w, g, m, v, lr: float, b1: float, b2: float):
    m *= b1
    m += (1 - b1) * g
    v *= b2
    v += (1 - b2) * g * g
    w -= lr * m / (np.sqrt(v) + 1e-8)


def write_through_views(a):
    a.T[1, 0] = -1.0
    a.reshape(-1)[0] = 9.0


def copy_into(a, b):
    np.copyto(a, b * 2)


def intermediate_buffer(x):
    out = np.zeros_like(x)
    out[1:] = x[:-1]
    out[0] = x[-1]
    out *= 2
    return out


def view_read_around_write(a):
    view = a[:2]
    before = view * 3
    a[0] = 5.0
    after = view * 3
    return before, after


def make_grid():
    return np.arange(25.0).reshape(5, 5) ** 1.5


GOLDEN = {
    # name: (function, arguments, whether dce changes the functionalized graph, before, after)
    "stencil_into": (
        stencil_into,
        lambda: (make_grid(), np.zeros((5, 5))),
        False,
        """
        graph stencil_into(u: f64[s0,s1], out: f64[s0,s1]):
          %getitem_1  : f64[s0-2,s1-2] = getitem(%u, index=[1:-1, 1:-1])
          %getitem_2  : f64[s0-2,s1-2] = getitem(%u, index=[:-2, 1:-1])
          %getitem_3  : f64[s0-2,s1-2] = getitem(%u, index=[2:, 1:-1])
          %add_1      : f64[s0-2,s1-2] = add(%getitem_2, %getitem_3)
          %getitem_4  : f64[s0-2,s1-2] = getitem(%u, index=[1:-1, :-2])
          %add_2      : f64[s0-2,s1-2] = add(%add_1, %getitem_4)
          %getitem_5  : f64[s0-2,s1-2] = getitem(%u, index=[1:-1, 2:])
          %add_3      : f64[s0-2,s1-2] = add(%add_2, %getitem_5)
          %getitem_6  : f64[s0-2,s1-2] = getitem(%u, index=[1:-1, 1:-1])
          %multiply_1 : f64[s0-2,s1-2] = multiply(4, %getitem_6)
          %subtract_1 : f64[s0-2,s1-2] = subtract(%add_3, %multiply_1)
          %multiply_2 : f64[s0-2,s1-2] = multiply(0.25, %subtract_1)
          %add_4      : f64[s0-2,s1-2] = add(%getitem_1, %multiply_2)
          %setitem_1  : f64[s0,s1]     = setitem(%out, %add_4, index=[1:-1, 1:-1])
          return None
        """,
        """
        graph stencil_into(u: f64[s0,s1], out: f64[s0,s1]):
          %getitem_1   : f64[s0-2,s1-2] = getitem(%u, index=[1:-1, 1:-1])
          %getitem_2   : f64[s0-2,s1-2] = getitem(%u, index=[:-2, 1:-1])
          %getitem_3   : f64[s0-2,s1-2] = getitem(%u, index=[2:, 1:-1])
          %add_1       : f64[s0-2,s1-2] = add(%getitem_2, %getitem_3)
          %getitem_4   : f64[s0-2,s1-2] = getitem(%u, index=[1:-1, :-2])
          %add_2       : f64[s0-2,s1-2] = add(%add_1, %getitem_4)
          %getitem_5   : f64[s0-2,s1-2] = getitem(%u, index=[1:-1, 2:])
          %add_3       : f64[s0-2,s1-2] = add(%add_2, %getitem_5)
          %getitem_6   : f64[s0-2,s1-2] = getitem(%u, index=[1:-1, 1:-1])
          %multiply_1  : f64[s0-2,s1-2] = multiply(4, %getitem_6)
          %subtract_1  : f64[s0-2,s1-2] = subtract(%add_3, %multiply_1)
          %multiply_2  : f64[s0-2,s1-2] = multiply(0.25, %subtract_1)
          %add_4       : f64[s0-2,s1-2] = add(%getitem_1, %multiply_2)
          %update_1    : f64[s0,s1]     = update(%out, %add_4, index=[1:-1, 1:-1])
          %writeback_1 : f64[s0,s1]     = writeback(%out, %update_1)
          return None
        """,
    ),
    "stencil_in_place": (
        stencil_in_place,
        lambda: (make_grid(), 0.1),
        False,
        """
        graph stencil_in_place(u: f64[s0,s1], alpha: float):
          %getitem_1  : f64[s0-2,s1-2] = getitem(%u, index=[1:-1, 1:-1])
          %getitem_2  : f64[s0-2,s1-2] = getitem(%u, index=[:-2, 1:-1])
          %getitem_3  : f64[s0-2,s1-2] = getitem(%u, index=[2:, 1:-1])
          %add_1      : f64[s0-2,s1-2] = add(%getitem_2, %getitem_3)
          %getitem_4  : f64[s0-2,s1-2] = getitem(%u, index=[1:-1, :-2])
          %add_2      : f64[s0-2,s1-2] = add(%add_1, %getitem_4)
          %getitem_5  : f64[s0-2,s1-2] = getitem(%u, index=[1:-1, 2:])
          %add_3      : f64[s0-2,s1-2] = add(%add_2, %getitem_5)
          %getitem_6  : f64[s0-2,s1-2] = getitem(%u, index=[1:-1, 1:-1])
          %multiply_1 : f64[s0-2,s1-2] = multiply(4, %getitem_6)
          %subtract_1 : f64[s0-2,s1-2] = subtract(%add_3, %multiply_1)
          %multiply_2 : f64[s0-2,s1-2] = multiply(%alpha, %subtract_1)
          %add_4      : f64[s0-2,s1-2] = add(%getitem_1, %multiply_2)
          %setitem_1  : f64[s0-2,s1-2] = setitem(%getitem_1, %add_4, index=[...])
          %setitem_2  : f64[s0,s1]     = setitem(%u, %getitem_1, index=[1:-1, 1:-1])
          return None
        """,
        """
        graph stencil_in_place(u: f64[s0,s1], alpha: float):
          %getitem_1   : f64[s0-2,s1-2] = getitem(%u, index=[1:-1, 1:-1])
          %getitem_2   : f64[s0-2,s1-2] = getitem(%u, index=[:-2, 1:-1])
          %getitem_3   : f64[s0-2,s1-2] = getitem(%u, index=[2:, 1:-1])
          %add_1       : f64[s0-2,s1-2] = add(%getitem_2, %getitem_3)
          %getitem_4   : f64[s0-2,s1-2] = getitem(%u, index=[1:-1, :-2])
          %add_2       : f64[s0-2,s1-2] = add(%add_1, %getitem_4)
          %getitem_5   : f64[s0-2,s1-2] = getitem(%u, index=[1:-1, 2:])
          %add_3       : f64[s0-2,s1-2] = add(%add_2, %getitem_5)
          %getitem_6   : f64[s0-2,s1-2] = getitem(%u, index=[1:-1, 1:-1])
          %multiply_1  : f64[s0-2,s1-2] = multiply(4, %getitem_6)
          %subtract_1  : f64[s0-2,s1-2] = subtract(%add_3, %multiply_1)
          %multiply_2  : f64[s0-2,s1-2] = multiply(%alpha, %subtract_1)
          %add_4       : f64[s0-2,s1-2] = add(%getitem_1, %multiply_2)
          %update_1    : f64[s0,s1]     = update(%u, %add_4, index=[1:-1, 1:-1])
          %getitem_7   : f64[s0-2,s1-2] = getitem(%update_1, index=[1:-1, 1:-1])
          %update_2    : f64[s0,s1]     = update(%update_1, %getitem_7, index=[1:-1, 1:-1])
          %writeback_1 : f64[s0,s1]     = writeback(%u, %update_2)
          return None
        """,
    ),
    "adam": (
        adam,
        lambda: (
            *(np.linspace(0.5, 1.5, 4, dtype=np.float32) + i for i in range(4)),
            1e-3,
            0.9,
            0.99,
        ),
        False,
        """
        graph adam(w: f32[s0], g: f32[s0], m: f32[s0], v: f32[s0], lr: float, b1: float, b2: float):
          %multiply_1 : f32[s0] = multiply(%m, %b1)
          %setitem_1  : f32[s0] = setitem(%m, %multiply_1, index=[...])
          %subtract_1 : float   = subtract(1, %b1)
          %multiply_2 : f32[s0] = multiply(%subtract_1, %g)
          %add_1      : f32[s0] = add(%m, %multiply_2)
          %setitem_2  : f32[s0] = setitem(%m, %add_1, index=[...])
          %multiply_3 : f32[s0] = multiply(%v, %b2)
          %setitem_3  : f32[s0] = setitem(%v, %multiply_3, index=[...])
          %subtract_2 : float   = subtract(1, %b2)
          %multiply_4 : f32[s0] = multiply(%subtract_2, %g)
          %multiply_5 : f32[s0] = multiply(%multiply_4, %g)
          %add_2      : f32[s0] = add(%v, %multiply_5)
          %setitem_4  : f32[s0] = setitem(%v, %add_2, index=[...])
          %multiply_6 : f32[s0] = multiply(%lr, %m)
          %sqrt_1     : f32[s0] = sqrt(%v)
          %add_3      : f32[s0] = add(%sqrt_1, 1e-08)
          %divide_1   : f32[s0] = divide(%multiply_6, %add_3)
          %subtract_3 : f32[s0] = subtract(%w, %divide_1)
          %setitem_5  : f32[s0] = setitem(%w, %subtract_3, index=[...])
          return None
        """,
        """
        graph adam(w: f32[s0], g: f32[s0], m: f32[s0], v: f32[s0], lr: float, b1: float, b2: float):
          %multiply_1  : f32[s0] = multiply(%m, %b1)
          %update_1    : f32[s0] = update(%m, %multiply_1, index=[...])
          %subtract_1  : float   = subtract(1, %b1)
          %multiply_2  : f32[s0] = multiply(%subtract_1, %g)
          %add_1       : f32[s0] = add(%update_1, %multiply_2)
          %update_2    : f32[s0] = update(%update_1, %add_1, index=[...])
          %multiply_3  : f32[s0] = multiply(%v, %b2)
          %update_3    : f32[s0] = update(%v, %multiply_3, index=[...])
          %subtract_2  : float   = subtract(1, %b2)
          %multiply_4  : f32[s0] = multiply(%subtract_2, %g)
          %multiply_5  : f32[s0] = multiply(%multiply_4, %g)
          %add_2       : f32[s0] = add(%update_3, %multiply_5)
          %update_4    : f32[s0] = update(%update_3, %add_2, index=[...])
          %multiply_6  : f32[s0] = multiply(%lr, %update_2)
          %sqrt_1      : f32[s0] = sqrt(%update_4)
          %add_3       : f32[s0] = add(%sqrt_1, 1e-08)
          %divide_1    : f32[s0] = divide(%multiply_6, %add_3)
          %subtract_3  : f32[s0] = subtract(%w, %divide_1)
          %update_5    : f32[s0] = update(%w, %subtract_3, index=[...])
          %writeback_1 : f32[s0] = writeback(%m, %update_2)
          %writeback_2 : f32[s0] = writeback(%v, %update_4)
          %writeback_3 : f32[s0] = writeback(%w, %update_5)
          return None
        """,
    ),
    "write_through_views": (
        write_through_views,
        lambda: (np.arange(6.0).reshape(2, 3),),
        True,
        """
        graph write_through_views(a: f64[s0,s1]):
          %transpose_1 : f64[s1,s0] = transpose(%a)
          %setitem_1   : f64[s1,s0] = setitem(%transpose_1, -1.0, index=[1, 0])
          %reshape_1   : f64[s0*s1] = reshape(%a, shape=(-1,))
          %setitem_2   : f64[s0*s1] = setitem(%reshape_1, 9.0, index=[0])
          return None
        """,
        """
        graph write_through_views(a: f64[s0,s1]):
          %update_1    : f64[s0,s1] = update(%a, -1.0, index=[1, 0], views=(transpose(),))
          %update_2    : f64[s0,s1] = update(%update_1, 9.0, index=[0], views=(reshape(shape=(-1,)),))
          %writeback_1 : f64[s0,s1] = writeback(%a, %update_2)
          return None
        """,
    ),
    "copy_into": (
        copy_into,
        lambda: (np.zeros(3), np.arange(3.0)),
        False,
        """
        graph copy_into(a: f64[s0], b: f64[s0]):
          %multiply_1 : f64[s0] = multiply(%b, 2)
          %setitem_1  : f64[s0] = setitem(%a, %multiply_1, index=[...])
          return None
        """,
        """
        graph copy_into(a: f64[s0], b: f64[s0]):
          %multiply_1  : f64[s0] = multiply(%b, 2)
          %update_1    : f64[s0] = update(%a, %multiply_1, index=[...])
          %writeback_1 : f64[s0] = writeback(%a, %update_1)
          return None
        """,
    ),
    "intermediate_buffer": (
        intermediate_buffer,
        lambda: (np.arange(4.0),),
        False,
        """
        graph intermediate_buffer(x: f64[s0]):
          %zeros_1    : f64[s0]   = zeros(dtype=float64, order='C', shape=(s0,))
          %getitem_1  : f64[s0-1] = getitem(%x, index=[:-1])
          %setitem_1  : f64[s0]   = setitem(%zeros_1, %getitem_1, index=[1:])
          %getitem_2  : f64[]     = getitem(%x, index=[-1])
          %setitem_2  : f64[s0]   = setitem(%zeros_1, %getitem_2, index=[0])
          %multiply_1 : f64[s0]   = multiply(%zeros_1, 2)
          %setitem_3  : f64[s0]   = setitem(%zeros_1, %multiply_1, index=[...])
          return %zeros_1
        """,
        """
        graph intermediate_buffer(x: f64[s0]):
          %zeros_1    : f64[s0]   = zeros(dtype=float64, order='C', shape=(s0,))
          %getitem_1  : f64[s0-1] = getitem(%x, index=[:-1])
          %update_1   : f64[s0]   = update(%zeros_1, %getitem_1, index=[1:])
          %getitem_2  : f64[]     = getitem(%x, index=[-1])
          %update_2   : f64[s0]   = update(%update_1, %getitem_2, index=[0])
          %multiply_1 : f64[s0]   = multiply(%update_2, 2)
          %update_3   : f64[s0]   = update(%update_2, %multiply_1, index=[...])
          return %update_3
        """,
    ),
    "view_read_around_write": (
        view_read_around_write,
        lambda: (np.arange(4.0),),
        False,
        """
        graph view_read_around_write(a: f64[s0]):
          %getitem_1  : f64[2]  = getitem(%a, index=[:2])
          %multiply_1 : f64[2]  = multiply(%getitem_1, 3)
          %setitem_1  : f64[s0] = setitem(%a, 5.0, index=[0])
          %multiply_2 : f64[2]  = multiply(%getitem_1, 3)
          return (%multiply_1, %multiply_2)
        """,
        """
        graph view_read_around_write(a: f64[s0]):
          %getitem_1   : f64[2]  = getitem(%a, index=[:2])
          %multiply_1  : f64[2]  = multiply(%getitem_1, 3)
          %update_1    : f64[s0] = update(%a, 5.0, index=[0])
          %getitem_2   : f64[2]  = getitem(%update_1, index=[:2])
          %multiply_2  : f64[2]  = multiply(%getitem_2, 3)
          %writeback_1 : f64[s0] = writeback(%a, %update_1)
          return (%multiply_1, %multiply_2)
        """,
    ),
}


@pytest.mark.parametrize("name", list(GOLDEN))
def test_functionalize_golden(name):
    fn, make_args, dce_changes, before, after = GOLDEN[name]
    args = make_args()
    graph = gcompile.trace(fn, *args)
    assert str(graph) == golden(before)
    assert_runs_like_eager(graph, fn, args)
    assert functionalize(graph) is True
    graph.verify()
    assert dce(graph) is dce_changes
    graph.verify()
    assert str(graph) == golden(after)
    assert_runs_like_eager(graph, fn, args)


def test_functionalize_without_writes_changes_nothing():
    def pure(x):
        return x[1:] * 2

    graph = gcompile.trace(pure, np.arange(3.0))
    text = str(graph)
    assert functionalize(graph) is False
    assert str(graph) == text


# -- differential tests: compiled (every backend) against eager NumPy ------------------------------


def stepped_slices(a, b):
    a[::2] = b[1::2] * 3
    a[1:7:3] -= 1


def negative_steps(a):
    a[::-1] += np.arange(8.0)
    a[6:1:-2] = -a[1:6:2]
    return a[::-3] * 1


def ellipsis_index(a):
    a[..., 1] = a[..., 0] * 2
    a[0, ...] += 1
    a[...] *= 0.5


def none_index(a):
    a[None, 1:] += 1
    a[None, 0] = 7.0
    a[2, None] = a[3]


def integer_index(a):
    a[1, 2] = 3.0
    a[-1] = a[0]
    a[0, -1] += a[1, 2]
    return a[1] * 1


def element_read_then_written(a):
    first = a[0]
    a[0] = 5.0
    a[1] += a[1]
    return first, a[0]


def through_transpose(a):
    a.T[0] += 1
    np.transpose(a, (1, 2, 0))[..., 0] = 0.0


def through_swapaxes(a):
    np.swapaxes(a, 0, 1)[0, 1:] = -1.0
    s = a.swapaxes(0, 2)
    s *= 2


def through_expand_dims_squeeze_moveaxis(a):
    np.expand_dims(a, 0)[0, 1] = 5.0
    np.expand_dims(a, -1)[2:, :, 0] += 1
    np.moveaxis(a, 0, -1)[..., 0] = 1.0
    np.squeeze(a[:, :1])[1] = 2.0


def ufunc_out(a, b):
    np.exp(a, out=b)
    np.multiply(a[1::2], 2, out=a[::2])
    return np.sqrt(b, out=b)


def add_out_second(a, b):
    np.add(a, b, out=b)
    return b.sum()


def overlapping_writes(a):
    a[1:5] = 1.0
    a[3:7] += a[0:4]
    a[::3] *= -1
    a[2:] = a[:-2]
    a[:-1] += a[1:]
    a[...] = a[::-1]


def read_older_views(a):
    v = a[2:]
    w = v[::2]
    a[3] = 100.0
    before = w * 1
    a[2:6] = -1.0
    return v.sum(), w * 1, before


def loop_over_rows(a):
    for i in range(1, a.shape[0]):
        a[i] = a[i - 1] * 0.5 + a[i]
    for i in range(a.shape[0]):
        a[i, i] = 0.0


def dict_of_arrays(state, dt: float):
    state["x"] += state["v"] * dt
    state["v"] *= 0.9
    state["t"][...] = state["t"] + dt
    return state


def view_of_view(a):
    v = a[1:]
    w = v[::2]
    w[:] = 0.0
    v[-1] = 4.0


def through_c_reshape_and_ravel(a):
    a.reshape(3, 4)[1] = 0.0
    flat = a.ravel()
    flat[-1] = 9.0
    return flat * 1


def fortran_reshape_is_a_copy(a):
    flat = a.reshape(-1)
    a[0, 0] = 5.0
    flat[1] = -5.0
    return flat * 1, a.sum()


def fortran_transpose_reshapes_as_a_view(a):
    a.T.reshape(-1)[0] = 42.0


def swapped_names(a, b):
    a, b = b, a
    a[0] = 1.0
    b[-1] += a[0]


def written_intermediate_and_its_view(x):
    t = x * 2
    r = t[:2]
    t[0] = 100.0
    return t, r


def cast_on_write(a, b):
    a[:2] = b[:2]
    b[2:] = a[2:] * 1.5


def strided_and_fortran_arguments(a, f):
    a[1] = 5.0
    a[::2] += 1
    f[0] = 1.0
    f[:, 1] += f[:, 0]


def zero_d_and_bool(z, mask):
    z[...] = 3.0
    z += 1
    mask[1:] |= mask[:-1]
    return z[()]


def returns_written_argument(a):
    a += 1
    return a


def returns_views_of_written_argument(a):
    before = a[1:]
    a *= 2
    return before, a.T, a.reshape(2, 2)[::-1]


def grid():
    return np.arange(24.0).reshape(2, 3, 4)


CASES = [
    # (function, arguments, names of the arguments written back)
    (stepped_slices, lambda: (np.arange(8.0), np.arange(8.0)), {"a"}),
    (negative_steps, lambda: (np.arange(8.0),), {"a"}),
    (ellipsis_index, lambda: (grid(),), {"a"}),
    (none_index, lambda: (np.arange(4.0),), {"a"}),
    (integer_index, lambda: (np.arange(12.0).reshape(3, 4),), {"a"}),
    (element_read_then_written, lambda: (np.arange(3.0),), {"a"}),
    (through_transpose, lambda: (grid(),), {"a"}),
    (through_swapaxes, lambda: (grid(),), {"a"}),
    (through_expand_dims_squeeze_moveaxis, lambda: (np.arange(12.0).reshape(4, 3),), {"a"}),
    (ufunc_out, lambda: (np.arange(6.0), np.zeros(6)), {"a", "b"}),
    (add_out_second, lambda: (np.arange(4.0), np.ones(4)), {"b"}),
    (overlapping_writes, lambda: (np.arange(10.0),), {"a"}),
    (read_older_views, lambda: (np.arange(10.0),), {"a"}),
    (loop_over_rows, lambda: (np.arange(16.0).reshape(4, 4),), {"a"}),
    (
        dict_of_arrays,
        lambda: ({"x": np.zeros(3), "v": np.ones(3), "t": np.zeros(())}, 0.1),
        {"state_x", "state_v", "state_t"},
    ),
    (view_of_view, lambda: (np.arange(8.0),), {"a"}),
    (through_c_reshape_and_ravel, lambda: (np.arange(12.0),), {"a"}),
    (fortran_reshape_is_a_copy, lambda: (np.asfortranarray(grid()[0]),), {"a"}),
    (fortran_transpose_reshapes_as_a_view, lambda: (np.asfortranarray(grid()[0]),), {"a"}),
    (swapped_names, lambda: (np.arange(3.0), np.arange(3.0) + 10), {"a", "b"}),
    (written_intermediate_and_its_view, lambda: (np.arange(4.0),), set()),
    (cast_on_write, lambda: (np.zeros(4, np.float32), np.arange(4, dtype=np.int16)), {"a", "b"}),
    (
        strided_and_fortran_arguments,
        lambda: (np.arange(12.0)[::2], np.asfortranarray(grid()[0].T)),
        {"a", "f"},
    ),
    (zero_d_and_bool, lambda: (np.zeros(()), np.array([True, False, False, True])), {"z", "mask"}),
    (returns_written_argument, lambda: (np.arange(3.0),), {"a"}),
    (returns_views_of_written_argument, lambda: (np.arange(4.0),), {"a"}),
]
GOLDEN_WRITTEN = {
    "stencil_into": {"out"},
    "stencil_in_place": {"u"},
    "adam": {"w", "m", "v"},
    "write_through_views": {"a"},
    "copy_into": {"a"},
    "intermediate_buffer": set(),
    "view_read_around_write": {"a"},
}
CASES += [(GOLDEN[name][0], GOLDEN[name][1], written) for name, written in GOLDEN_WRITTEN.items()]
CASE_IDS = [fn.__name__ for fn, _, _ in CASES]


@pytest.mark.parametrize("fn, make_args, written", CASES, ids=CASE_IDS)
def test_mutation_matches_eager(fn, make_args, written):
    check(fn, *make_args())


@pytest.mark.parametrize("fn, make_args, written", CASES, ids=CASE_IDS)
def test_functional_form(fn, make_args, written):
    args = make_args()
    graph = gcompile.trace(fn, *args)
    assert functionalize(graph)
    graph.verify()
    assert_functional_form(graph, written)
    assert_runs_like_eager(graph, fn, args)
    dce(graph)
    graph.verify()
    assert_functional_form(graph, written)
    assert_runs_like_eager(graph, fn, args)


# -- identity and aliasing of returned values ------------------------------------------------------


def test_a_returned_written_argument_comes_from_its_writeback():
    graph = gcompile.trace(returns_written_argument, np.arange(3.0))
    functionalize(graph)
    (returned,) = graph.output_node.args[0]
    assert returned.target is ops.WRITEBACK


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_returned_written_argument_is_the_callers_array(backend):
    compiled = gcompile.compile(returns_written_argument, backend=backend, fullgraph=True)
    a = np.arange(3.0)
    assert compiled(a) is a
    np.testing.assert_array_equal(a, [1.0, 2.0, 3.0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_returned_views_of_a_written_argument_are_views_of_the_callers_array(backend):
    compiled = gcompile.compile(returns_views_of_written_argument, backend=backend, fullgraph=True)
    a = np.arange(4.0)
    results = compiled(a)
    expected = returns_views_of_written_argument(np.arange(4.0))
    for result, want in zip(results, expected):
        assert np.shares_memory(result, a)
        np.testing.assert_array_equal(result, want)
    results[0][0] = -7.0  # writing through a returned view reaches the caller's array
    assert a[1] == -7.0


# -- refusals --------------------------------------------------------------------------------------


def write_through_reshape(a):
    a.reshape(-1)[0] = 1.0


def read_reshape_of_written(a):
    flat = a.reshape(-1)
    a[0, 0] = 5.0
    return flat * 1


def strided():
    return np.arange(48.0).reshape(6, 8)[::2, ::2]


@pytest.mark.parametrize("fn", [write_through_reshape, read_reshape_of_written])
def test_reshapes_of_written_strided_arrays_are_refused(fn):
    gcompile.trace(fn, strided())  # tracing records the reshape; functionalization refuses it
    with pytest.raises(gcompile.UnsupportedError, match="reshape"):
        gcompile.trace(fn, strided(), stage="optimized")


@pytest.mark.parametrize("fn", [write_through_reshape, read_reshape_of_written])
def test_reshapes_of_written_strided_arrays_run_eagerly(fn):
    compiled = gcompile.compile(fn, backend="interpreter")
    a, expected_a = strided(), strided()
    with pytest.warns(gcompile.GcompileWarning, match="reshape"):
        result = compiled(a)
    assert_same_value(fn(expected_a), result)
    assert_same_value(expected_a, a)


def read_reshape_then_write(a):
    flat = a.T.reshape(-1)  # (a view or a copy: read before the write, the same values)
    total = flat * 2.0
    a[:] = flat.reshape(a.shape[::-1]).T[::-1] + 1.0  # (read by the write itself)
    return total


def test_a_reshape_read_only_before_a_write_into_its_array_compiles():
    for a, expected in ((strided(), strided()), (np.arange(12.0).reshape(3, 4),) * 2):
        expected = expected.copy()
        result = gcompile.compile(read_reshape_then_write, fullgraph=True)(a)
        assert_same_value(read_reshape_then_write(expected), result)
        assert_same_value(expected, a)


def writes_first_reads_second(a, b):
    a += 1
    return b * 2


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "split",
    [lambda base: (base[:6],) * 2, lambda base: (base[:6], base[2:])],
    ids=["same_array_twice", "overlapping_slices"],
)
def test_a_written_argument_sharing_memory_runs_eagerly(backend, split):
    """The compiled graph reads every argument before writing any back; eager mode interleaves."""
    compiled = gcompile.compile(writes_first_reads_second, backend=backend)
    compiled(np.arange(6.0), np.arange(6.0))  # separate arrays: compiled
    base, expected_base = np.arange(8.0), np.arange(8.0)
    expected = writes_first_reads_second(*split(expected_base))
    with pytest.warns(gcompile.GcompileWarning, match="share memory"):
        result = compiled(*split(base))
    assert_same_value(expected, result)
    assert_same_value(expected_base, base)
    assert compiled.stats["fallbacks"] == 1 and compiled.stats["traces"] == 1
    strict = gcompile.compile(writes_first_reads_second, backend=backend, fullgraph=True)
    strict(np.arange(6.0), np.arange(6.0))
    with pytest.raises(gcompile.UnsupportedError, match="share memory"):
        strict(*split(np.arange(8.0)))
