"""Vectorised math in generated kernels (issue 6): where expansions are used, split loops,
range-limited fast paths, powers, fastmath flags, vector FMA in the machine code, and realistic
transcendental-heavy programs against eager NumPy."""

from __future__ import annotations

import re

import numpy as np
import pytest
from llvmlite import binding

import gcompile
from examples.black_scholes import black_scholes
from examples.black_scholes import example_inputs as black_scholes_inputs
from examples.haversine import example_inputs as haversine_inputs
from examples.haversine import haversine
from gcompile.backends.numba import cache, mathlib
from gcompile.backends.numba.rules import _POWER_BOUNDS
from tests.mathlib.sweep import ulp_error
from tests.support import NUMBA_ULPS, assert_same_value

HAS_AVX2 = "avx2" in binding.get_host_cpu_features().flatten()
VECTOR_FMA = re.compile(r"\bvfn?m(?:add|sub)\w*p[sd]\s+[^\n]*%[yz]mm")


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def log_softmax(x):
    shifted = x - x.max(axis=1, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))


def logsumexp(x):
    m = x.max(axis=1, keepdims=True)
    return np.log(np.sum(np.exp(x - m), axis=1)) + m[:, 0]


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(0.7978845608 * (x + 0.044715 * x**3)))


def exp_sin_chain(x):
    return np.exp(-x * x) * np.sin(x) + 0.5 * x


def _compiled(fn, **options):
    return gcompile.compile(fn, fullgraph=True, **options)


def _kernel_asm(compiled) -> str:
    """The machine code of the first kernel of ``compiled``'s latest specialisation.

    Compiled afresh from the kernel's module text (Numba shows no machine code for a kernel
    its disk cache loaded).
    """
    (code, _), *_ = compiled.entries[-1].run.program.kernels
    text = cache.module_text(code.source, code.parallel, code.fastmath_flags)
    namespace: dict = {}
    exec(compile(text.replace("cache=True", "cache=False"), "<kernel>", "exec"), namespace)
    kernel = namespace["kernel"]
    kernel.compile(code.signature())
    return "\n".join(kernel.inspect_asm().values())


def test_pointwise_loops_use_the_expansions_and_match_numpy():
    x = np.linspace(-3, 3, 257)
    fn = _compiled(gelu_tanh)
    assert_same_value(gelu_tanh(x), fn(x), NUMBA_ULPS, scale=np.float64)
    assert "_m.tanh_f64(" in fn.code and "math.tanh" not in fn.code
    assert "** 3" not in fn.code  # x**3 became products


def test_a_loop_that_sums_is_split_so_its_exp_vectorises():
    x = np.random.default_rng(0).standard_normal((37, 300)).astype(np.float32)
    fn = _compiled(softmax)
    assert_same_value(softmax(x), fn(x), NUMBA_ULPS, scale=np.float32)
    assert "_m.exp_f32(" in fn.code and "_s.float_lane_sum(" in fn.code
    lse = _compiled(logsumexp)
    assert_same_value(logsumexp(x), lse(x), NUMBA_ULPS, scale=np.float32)
    assert "_m.log_f32(" not in lse.code  # the log runs once per row: libm, not a vector loop


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_split_loops_keep_every_reduction_kind_right(dtype):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 1000)).astype(dtype)
    x[2, 17] = np.nan

    def program(a):
        e = np.exp(a)
        return e.sum(axis=1), e.max(axis=1), e.min(axis=1), (e > 2.0).any(axis=1), e.var(axis=1)

    fn = _compiled(program)
    with np.errstate(invalid="ignore"):
        expected = program(x)
    assert_same_value(expected, fn(x), NUMBA_ULPS, scale=dtype)
    assert fn.code.count("lane_sum(") + fn.code.count("lane_max(") + fn.code.count("lane_min(") >= 4


def test_out_of_range_arguments_are_recomputed_exactly():
    # about one element in a thousand beyond the fast path's range, plus inf and NaN
    x = np.random.default_rng(2).uniform(-50, 50, 100_000)
    x[::997] = np.random.default_rng(3).uniform(1e8, 1e300, x[::997].size)
    x[5], x[6], x[7] = np.inf, -np.inf, np.nan
    fn = _compiled(exp_sin_chain)
    with np.errstate(invalid="ignore", over="ignore"):
        expected = exp_sin_chain(x)
    got = fn(x)
    assert_same_value(expected, got, NUMBA_ULPS, scale=np.float64)
    assert "bad = bad |" in fn.code and "math.sin(" in fn.code  # flagged, recomputed with libm
    limit = mathlib.TEMPLATES["sin"].limit(np.float64)
    huge = np.abs(x) > limit
    assert huge.sum() > 90
    np.testing.assert_array_equal(got[huge], expected[huge])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", sorted(_POWER_BOUNDS))
def test_small_integer_powers_are_products_within_their_bound(dtype, n):
    rng = np.random.default_rng(4)
    big = 160.0 if dtype == np.float64 else 22.0  # results that overflow and that are subnormal
    # (fewer values than the parallel threshold: one serial kernel, cheaper to compile)
    x = (10.0 ** rng.uniform(-big, big, 120_000) * rng.choice([-1, 1], 120_000)).astype(dtype)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0], dtype)
    x = np.concatenate([x, specials])
    fn = _compiled(lambda a: a**n)
    with np.errstate(all="ignore"):
        expected = x.astype(np.longdouble if dtype == np.float64 else np.float64) ** n
        numpy = x**n
        got = fn(x)
    assert got.dtype == dtype and "**" not in fn.code.split("def kernel")[1]
    assert float(np.max(ulp_error(got, expected, dtype))) <= _POWER_BOUNDS[n]
    tail = slice(-specials.size, None)
    assert_same_value(numpy[tail], got[tail])


def test_half_power_is_sqrt_as_in_numpy():
    x = np.array([4.0, 2.0, -0.0, 0.0, -1.0, np.inf, -np.inf, np.nan])
    fn = _compiled(lambda a: a**0.5)
    with np.errstate(invalid="ignore"):
        assert_same_value(x**0.5, fn(x))
        assert "math.sqrt(" in fn.code
        # float_power calls pow: -0.0 and -inf give 0.0 and inf, not sqrt's -0.0 and NaN
        float_power = _compiled(lambda a: np.float_power(a, 0.5))
        assert_same_value(np.float_power(x, 0.5), float_power(x))


def test_fastmath_keeps_only_the_flags_the_expansions_survive():
    x = np.array([1.0, -1.0, 0.5, 700.0, -745.0, np.inf, -np.inf, np.nan])
    fn = _compiled(lambda a: np.exp(a) + 1.0, options={"fastmath": True})
    with np.errstate(over="ignore"):
        expected = np.exp(x) + 1.0
    got = fn(x)
    assert got[0] == pytest.approx(np.e + 1.0, rel=1e-15)  # reassoc+nsz would give 3.0
    assert_same_value(expected, got, NUMBA_ULPS)
    assert "fastmath={'afn', 'arcp', 'contract', 'nsz'}" in fn.code
    plain = _compiled(lambda a: a * 2.0 + 1.0, options={"fastmath": True})
    plain(x)
    assert "fastmath=True" in plain.code


@pytest.mark.optimized  # reads the machine code
@pytest.mark.skipif(not HAS_AVX2, reason="the CPU has no AVX2: no vector FMA to look for")
@pytest.mark.parametrize(
    "fn, x",
    [
        (gelu_tanh, np.linspace(-3, 3, 1000, dtype=np.float32)),
        (softmax, np.ones((4, 300), np.float32)),
        (exp_sin_chain, np.linspace(-3, 3, 1000)),
    ],
    ids=["gelu_tanh_f32", "softmax_f32", "exp_sin_f64"],
)
def test_generated_kernels_use_vector_fma(fn, x):
    compiled = _compiled(fn, options={"parallel": False})
    compiled(x)
    assert len(VECTOR_FMA.findall(_kernel_asm(compiled))) >= 4, (
        "no vector FMA: the loop did not vectorise"
    )


def test_realistic_programs_stay_within_the_documented_error_of_eager():
    rng = np.random.default_rng(5)
    x32 = rng.standard_normal((64, 512)).astype(np.float32)
    for program in (softmax, log_softmax, gelu_tanh):
        fn = _compiled(program)
        assert_same_value(program(x32), fn(x32), NUMBA_ULPS, scale=np.float32)
    args = haversine_inputs(20_000)
    assert_same_value(haversine(*args), _compiled(haversine)(*args), NUMBA_ULPS, scale=np.float64)
    args = black_scholes_inputs(20_000)
    assert_same_value(
        black_scholes(*args), _compiled(black_scholes)(*args), NUMBA_ULPS, scale=np.float64
    )


def test_explain_says_how_each_math_function_is_computed():
    x = np.linspace(0.1, 3.0, 100)

    def program(a):
        return np.arcsinh(a) + np.exp(a) + np.argmax(np.cos(a))

    report = gcompile.explain(program, x)
    text = str(report)
    assert "== math functions in kernels" in text
    how = {function: reason for _, function, reason in report.math}
    assert how["arcsinh"].startswith("libm call per element: gcompile has no vectorisable")
    assert "argmax" in how["cos"]  # the loop also finds the argmax: not vectorisable


def test_a_kernel_past_its_compile_budget_calls_libm_and_says_why():
    x = np.linspace(0.1, 3.0, 50)

    def many_sines(a):
        for _ in range(8):  # each sin expansion costs ~0.5 s of compile: past the 2.5 s budget
            a = np.sin(a) + a
        return a

    report = gcompile.explain(many_sines, x)
    assert_same_value(many_sines(x), _compiled(many_sines)(x), NUMBA_ULPS, scale=np.float64)
    assert "_m.sin_f64(" in report.code and "math.sin(" in report.code
    how = {function: reason for _, function, reason in report.math}["sin"]
    assert how.startswith("inlined expansion") and "further calls: libm" in how and "budget" in how
