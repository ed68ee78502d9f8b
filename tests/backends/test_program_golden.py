"""Golden texts of loop programs: the Numba function a graph with loops (or of many steps)
becomes, as ``fn.code`` shows it. Each statement sits under its IR line and the user's line;
kernels are called by the names their listings give, their ints by keyword; sizes are plain
expressions. The file's path is written ``<here>``."""

from __future__ import annotations

import textwrap

import numpy as np

import gcompile

HERE = __file__


def diagonal_then_add(a):
    t = 0.0
    for i in range(a.shape[0]):
        t += np.tanh(a[i, i])
    return a + t


def forward_solve(L, b):
    x = np.zeros_like(b)
    for i in range(b.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


def periodic_laplacian(u, dx):
    lap = np.empty_like(u)
    lap[1:-1] = u[:-2] - 2.0 * u[1:-1] + u[2:]
    lap[0] = u[-1] - 2.0 * u[0] + u[1]
    lap[-1] = u[-2] - 2.0 * u[-1] + u[0]
    return lap / (dx * dx)


def program_text(fn, *args) -> str:
    compiled = gcompile.compile(fn, fullgraph=True)
    compiled(*args)
    ((_, source),) = compiled.entries[-1].run.program.loops
    return source.replace(HERE, "<here>")


def golden(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


DIAGONAL = golden("""
    def kernel(a0, b0, c0):
        s0, s1 = a0.shape
        # sizes checked by table c0: s0 >= 2, s1 >= 2, -s0+s1 >= 0, s0*s1 < 4194304
        if _size_checks.broken((s0, s1), c0):
            raise _GuardFailure('the inputs have sizes this program was not compiled for')
        # %for_range_1 : f64[] = for_range(f64(0.0), %a, start=0, step=1, stop=s0)    # <here>:19
        t = 0.0
        a = a0
        for k0 in range(s0):
            # %getitem_1 : f64[] = getitem(%a, index=[k0, k0])    # <here>:20
            getitem_1 = a[np.uint64(k0), np.uint64(k0)]
            # %tanh_1 : f64[] = tanh(%getitem_1)    # <here>:20
            tanh_1 = np.float64(math.tanh(getitem_1))
            # %add_1 : f64[] = add(%t, %tanh_1)    # <here>:20
            add_1 = (t + tanh_1)
            t, = add_1,
        # %fused_1 : f64[s0,s1] = fused_1(%a, %for_range_1)
        out0_fused_1 = b0
        _fused_1(out0_fused_1, a0, t, n0=s0, n1=s1, st0=s1)
        fused_1 = out0_fused_1
        return
""")

FORWARD_SOLVE = golden("""
    def kernel(a0, a1, b0, c0):
        s0, s1 = a0.shape
        s2, = a1.shape
        # sizes checked by table c0: s0 >= 2, s1 >= 2, s2 >= 2, s0-s2 >= 0, s1-s2 >= 0
        if _size_checks.broken((s0, s1, s2), c0):
            raise _GuardFailure('the inputs have sizes this program was not compiled for')
        out0_fused_1 = _memory.empty((1,), np.float64)
        # %zeros_1 : f64[s2] = zeros(dtype=float64, order='C', shape=(s2,))    # <here>:25
        zeros_1 = b0
        b0[...] = 0.0
        # %for_range_1 : f64[s2] = for_range(%b, %L, %zeros_1, start=0, step=1, stop=s2)    # <here>:26
        b_v = a1
        L = a0
        zeros_1_2 = zeros_1
        for k0 in range(s2):
            # %getitem_1 : f64[] = getitem(%b, index=[k0])    # <here>:27
            getitem_1 = b_v[np.uint64(k0)]
            # %fused_1 : f64[] = fused_1(%L, %zeros_1)
            _fused_1(out0_fused_1, L, zeros_1_2, n0=k0, o0=k0 * s1)
            fused_1 = out0_fused_1[0]
            # %subtract_1 : f64[] = subtract(%getitem_1, %fused_1)    # <here>:27
            subtract_1 = (getitem_1 - fused_1)
            # %getitem_4 : f64[] = getitem(%L, index=[k0, k0])    # <here>:27
            getitem_4 = L[np.uint64(k0), np.uint64(k0)]
            # %divide_1 : f64[] = divide(%subtract_1, %getitem_4)    # <here>:27
            divide_1 = (subtract_1 / getitem_4)
            # %store_1 : f64[s2] = store(%zeros_1, %divide_1, index=[k0])    # <here>:27
            zeros_1_2[np.uint64(k0)] = divide_1
        return
""")

LAPLACIAN = golden("""
    def kernel(a0, a1, b0, c0):
        s0, = a0.shape
        # sizes checked by table c0: s0 >= 2, s0 < 4194304
        if _size_checks.broken((s0,), c0):
            raise _GuardFailure('the inputs have sizes this program was not compiled for')
        # %empty_1 : f64[s0] = empty(dtype=float64, order='C', shape=(s0,))    # <here>:32
        empty_1 = b0
        # %fused_1 : f64[s0] = fused_1(%empty_1, %u)
        _fused_1(a0, empty_1, n0=s0 - 2, o0=1, o1=2)
        # %getitem_4 : f64[] = getitem(%u, index=[-1])    # <here>:34
        getitem_4 = a0[-1]
        # %getitem_5 : f64[] = getitem(%u, index=[0])    # <here>:34
        getitem_5 = a0[0]
        # %multiply_2 : f64[] = multiply(2.0, %getitem_5)    # <here>:34
        multiply_2 = (2.0 * getitem_5)
        # %subtract_2 : f64[] = subtract(%getitem_4, %multiply_2)    # <here>:34
        subtract_2 = (getitem_4 - multiply_2)
        # %getitem_6 : f64[] = getitem(%u, index=[1])    # <here>:34
        getitem_6 = a0[1]
        # %add_2 : f64[] = add(%subtract_2, %getitem_6)    # <here>:34
        add_2 = (subtract_2 + getitem_6)
        # %store_2 : f64[s0] = store(%fused_1, %add_2, index=[0])    # <here>:34
        empty_1[0] = add_2
        # %getitem_7 : f64[] = getitem(%u, index=[-2])    # <here>:35
        getitem_7 = a0[-2]
        # %multiply_3 : f64[] = multiply(2.0, %getitem_4)    # <here>:35
        multiply_3 = (2.0 * getitem_4)
        # %subtract_3 : f64[] = subtract(%getitem_7, %multiply_3)    # <here>:35
        subtract_3 = (getitem_7 - multiply_3)
        # %add_3 : f64[] = add(%subtract_3, %getitem_5)    # <here>:35
        add_3 = (subtract_3 + getitem_5)
        # %store_3 : f64[s0] = store(%store_2, %add_3, index=[-1])    # <here>:35
        empty_1[-1] = add_3
        # %multiply_4 : float = multiply(%dx, %dx)    # <here>:36
        multiply_4 = (a1 * a1)
        # %fused_2 : f64[s0] = fused_2(%store_3, %multiply_4)
        _fused_2(empty_1, multiply_4, n0=s0)
        return
""")


def test_a_loop_then_a_kernel_on_host_buffers():
    text = program_text(diagonal_then_add, np.random.default_rng(0).random((6, 6)))
    assert text == DIAGONAL, text


def test_a_solve_calls_its_dot_product_kernel_by_name():
    L = np.tril(np.random.default_rng(1).random((8, 8))) + 8 * np.eye(8)
    text = program_text(forward_solve, L, np.ones(8))
    assert text == FORWARD_SOLVE, text


def test_a_straight_line_graph_of_many_steps():
    text = program_text(periodic_laplacian, np.random.default_rng(2).random(9), 0.5)
    assert text == LAPLACIAN, text


def names_of_the_program_itself(a0, b0, s0):
    c0 = np.zeros_like(a0)
    for k0 in range(a0.shape[0]):
        c0[k0] = a0[k0] * b0[k0] + s0
    return c0


def test_user_names_that_a_program_uses_itself_are_renamed():
    a, b = np.arange(5.0), np.arange(5.0) + 1
    compiled = gcompile.compile(names_of_the_program_itself, fullgraph=True)
    np.testing.assert_array_equal(compiled(a, b, 2.0), names_of_the_program_itself(a, b, 2.0))
    ((_, source),) = compiled.entries[-1].run.program.loops
    assert "def kernel(a0, a1, a2, b0, c0):" in source
    assert "a0_v = a0" in source and "b0_v = a1" in source and "s0_v = a2" in source
