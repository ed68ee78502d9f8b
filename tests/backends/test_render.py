"""The renderer (``backends/numba/render.py``) and the math selection (``mathselect.py``): loop IR
to Numba source in its two forms, identifiers that never clash with generated ones, and why each
float function is computed the way it is."""

from __future__ import annotations

import numpy as np

import gcompile
from gcompile.backends.numba import codegen
from gcompile.backends.numba.render import Namespace, identifier
from tests.loops.helpers import golden, kernel_of


def scaled_exp(x, s):
    return np.exp(x[:, ::2] * s)


def test_the_canonical_form_numbers_values_and_has_no_comments():
    kernel = kernel_of(scaled_exp, np.ones((4, 6), np.float32), np.float32(2.0))
    code = codegen.generate(kernel, {})
    assert code.source == golden(
        """
        def kernel(out0, nd_v1, v2, n0, n1, st0, st1):
            v1 = _s.flat(nd_v1)
            for i0 in range(n0):
                for i1 in range(n1):
                    ld0 = v1[np.uint64(st0 * i0 + st1 * i1)]
                    v0 = (ld0 * v2)
                    v3 = np.float32(_m.exp_f32(v0))
                    out0[i0, i1] = v3
        """
    )
    assert code.params == ["out0", "nd_v1", "v2", "n0", "n1", "st0", "st1"]
    assert code.arguments[1:3] == [("base", 0), ("scalar", 1)]  # x: f32[s0,s1], s
    assert [str(a[1]) for a in code.arguments[3:]] == ["s0", "(s1+1)//2", "s1", "2"]
    assert code.math == {"exp": "inlined expansion _m.exp_f32 in a vector loop"}


def test_the_readable_form_has_node_names_and_ir_lines():
    kernel = kernel_of(scaled_exp, np.ones((4, 6), np.float32), np.float32(2.0))
    lines = codegen.generate(kernel, {}).readable.splitlines()
    assert lines[0] == "def kernel(out0, nd_x, s_v, n0, n1, st0, st1):"  # s: a generated name
    assert lines[1] == "    x = _s.flat(nd_x)"
    assert lines[4].startswith(
        "            # %multiply_1 : f32[s0,(s1+1)//2] = multiply(%getitem_1, %s)    # "
    )
    assert lines[6] == "            multiply_1 = (ld0 * s_v)"


def test_identifiers_never_take_a_generated_or_reserved_name():
    generated = ("blocks", "ld0", "out0", "out_x", "cnt0", "acc_x", "i3", "complex", "_m", "if")
    assert [identifier(name) for name in generated] == [f"{name}_v" for name in generated]
    assert identifier("x") == "x" and identifier("3d") == "3d_v" and identifier("a.b") == "a_b"
    first, second = (type("N", (), {"name": n})() for n in ("a.b", "a_b"))
    names = Namespace(True, (first, second))
    assert (names.name(first), names.name(second)) == ("a_b", "a_b_2")
    assert Namespace(False, (second, first)).name(first) == "v1"


def test_an_argument_named_like_a_generated_variable_keeps_its_value():
    def total(blocks, out0):  # a blocked sum has its own ``blocks``; outputs are ``out<k>``
        return blocks.sum(axis=1) + out0

    fn = gcompile.compile(total, fullgraph=True)
    x, y = np.random.default_rng(1).random((3, 1000)), np.arange(3.0)
    np.testing.assert_allclose(fn(x, y), total(x, y), rtol=1e-12)


def notes(fn, *args) -> dict:
    return codegen.generate(kernel_of(fn, *args), {}).math


def test_math_notes_say_why_a_function_calls_libm():
    def row(x):
        return np.log(x.sum(axis=1)) + np.argmax(np.sin(x), axis=1)

    assert notes(row, np.ones((4, 6))) == {
        "sin": "libm call per element: its loop accumulates a reduction that cannot be split "
        "from it (argmax/argmin, prod), so the loop does not vectorise",
        "log": "libm call: computed once per row, outside the element loops",
    }


def test_over_the_compile_budget_sin_calls_libm_and_its_range_check_goes():
    def sines(x):
        return sum(np.sin(x + k) for k in range(6))

    code = codegen.generate(kernel_of(sines, np.ones(50)), {})
    assert code.source.count("_m.sin_f64(") == 5 and code.source.count("math.sin(") == 7
    flag = next(line for line in code.source.splitlines() if "bad = bad |" in line)
    assert flag.count("abs(") == 5
    assert code.math["sin"].endswith(
        "further calls: libm call per element: the kernel already inlines expansions worth "
        "2.5 s of compile time (budget 2.5 s)"
    )


def test_a_block_left_without_range_checks_is_not_recomputed():
    def exps_then_sin(x):  # ten exps spend the budget: sin calls libm, and nothing is checked
        return sum(np.exp(x + k) for k in range(10)) + np.sin(x)

    source = codegen.generate(kernel_of(exps_then_sin, np.ones(50)), {}).source
    assert source.count("_m.exp_f64(") == 10 and source.count("math.sin(") == 1
    assert "bad = False" in source  # (the flag's reset stays)
    assert "bad = bad |" not in source and "if bad:" not in source
