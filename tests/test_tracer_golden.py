"""Golden tests: the traced text form of realistic functions (the contract of DESIGN.md)."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import gcompile
from tests.realistic import adam_step, black_scholes, layernorm, softmax
from tests.support import check


def stencil_step(u, alpha: float):
    u[1:-1, 1:-1] += alpha * (
        u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1]
    )


GOLDEN = {
    "softmax": (
        softmax,
        lambda: (np.ones((64, 16, 128), np.float32),),
        """\
graph softmax(x: f32[s0,s1,s2]):
  %amax_1     : f32[s0,s1,1]  = amax(%x, axis=-1, keepdims=True)
  %subtract_1 : f32[s0,s1,s2] = subtract(%x, %amax_1)
  %exp_1      : f32[s0,s1,s2] = exp(%subtract_1)
  %sum_1      : f32[s0,s1,1]  = sum(%exp_1, axis=-1, keepdims=True)
  %divide_1   : f32[s0,s1,s2] = divide(%exp_1, %sum_1)
  return %divide_1
""",
    ),
    "layernorm": (
        layernorm,
        lambda: (np.ones((8, 32), np.float32), np.ones(32, np.float32), np.zeros(32, np.float32)),
        """\
graph layernorm(x: f32[s0,s1], gamma: f32[s1], beta: f32[s1], eps: float):
  %mean_1     : f32[s0,1]  = mean(%x, axis=-1, keepdims=True)
  %subtract_1 : f32[s0,s1] = subtract(%x, %mean_1)
  %multiply_1 : f32[s0,s1] = multiply(%subtract_1, %subtract_1)
  %mean_2     : f32[s0,1]  = mean(%multiply_1, axis=-1, keepdims=True)
  %add_1      : f32[s0,1]  = add(%mean_2, %eps)
  %sqrt_1     : f32[s0,1]  = sqrt(%add_1)
  %divide_1   : f32[s0,s1] = divide(%subtract_1, %sqrt_1)
  %multiply_2 : f32[s0,s1] = multiply(%divide_1, %gamma)
  %add_2      : f32[s0,s1] = add(%multiply_2, %beta)
  return %add_2
""",
    ),
    "black_scholes": (
        black_scholes,
        lambda: (np.ones(1000), np.ones(1000), np.ones(1000), 0.03, 0.25),
        """\
graph black_scholes(spot: f64[s0], strike: f64[s0], years: f64[s0], rate: float, vol: float):
  %sqrt_1      : f64[s0] = sqrt(%years)
  %divide_1    : f64[s0] = divide(%spot, %strike)
  %log_1       : f64[s0] = log(%divide_1)
  %multiply_1  : float   = multiply(0.5, %vol)
  %multiply_2  : float   = multiply(%multiply_1, %vol)
  %add_1       : float   = add(%rate, %multiply_2)
  %multiply_3  : f64[s0] = multiply(%add_1, %years)
  %add_2       : f64[s0] = add(%log_1, %multiply_3)
  %multiply_4  : f64[s0] = multiply(%vol, %sqrt_1)
  %divide_2    : f64[s0] = divide(%add_2, %multiply_4)
  %multiply_5  : f64[s0] = multiply(%vol, %sqrt_1)
  %subtract_1  : f64[s0] = subtract(%divide_2, %multiply_5)
  %negative_1  : float   = negative(%rate)
  %multiply_6  : f64[s0] = multiply(%negative_1, %years)
  %exp_1       : f64[s0] = exp(%multiply_6)
  %power_1     : f64[s0] = power(%divide_2, 3)
  %multiply_7  : f64[s0] = multiply(0.044715, %power_1)
  %add_3       : f64[s0] = add(%divide_2, %multiply_7)
  %multiply_8  : f64[s0] = multiply(0.7978845608, %add_3)
  %tanh_1      : f64[s0] = tanh(%multiply_8)
  %add_4       : f64[s0] = add(1.0, %tanh_1)
  %multiply_9  : f64[s0] = multiply(0.5, %add_4)
  %multiply_10 : f64[s0] = multiply(%spot, %multiply_9)
  %multiply_11 : f64[s0] = multiply(%strike, %exp_1)
  %power_2     : f64[s0] = power(%subtract_1, 3)
  %multiply_12 : f64[s0] = multiply(0.044715, %power_2)
  %add_5       : f64[s0] = add(%subtract_1, %multiply_12)
  %multiply_13 : f64[s0] = multiply(0.7978845608, %add_5)
  %tanh_2      : f64[s0] = tanh(%multiply_13)
  %add_6       : f64[s0] = add(1.0, %tanh_2)
  %multiply_14 : f64[s0] = multiply(0.5, %add_6)
  %multiply_15 : f64[s0] = multiply(%multiply_11, %multiply_14)
  %subtract_2  : f64[s0] = subtract(%multiply_10, %multiply_15)
  %multiply_16 : f64[s0] = multiply(%strike, %exp_1)
  %negative_2  : f64[s0] = negative(%subtract_1)
  %power_3     : f64[s0] = power(%negative_2, 3)
  %multiply_17 : f64[s0] = multiply(0.044715, %power_3)
  %add_7       : f64[s0] = add(%negative_2, %multiply_17)
  %multiply_18 : f64[s0] = multiply(0.7978845608, %add_7)
  %tanh_3      : f64[s0] = tanh(%multiply_18)
  %add_8       : f64[s0] = add(1.0, %tanh_3)
  %multiply_19 : f64[s0] = multiply(0.5, %add_8)
  %multiply_20 : f64[s0] = multiply(%multiply_16, %multiply_19)
  %negative_3  : f64[s0] = negative(%divide_2)
  %power_4     : f64[s0] = power(%negative_3, 3)
  %multiply_21 : f64[s0] = multiply(0.044715, %power_4)
  %add_9       : f64[s0] = add(%negative_3, %multiply_21)
  %multiply_22 : f64[s0] = multiply(0.7978845608, %add_9)
  %tanh_4      : f64[s0] = tanh(%multiply_22)
  %add_10      : f64[s0] = add(1.0, %tanh_4)
  %multiply_23 : f64[s0] = multiply(0.5, %add_10)
  %multiply_24 : f64[s0] = multiply(%spot, %multiply_23)
  %subtract_3  : f64[s0] = subtract(%multiply_20, %multiply_24)
  return (%subtract_2, %subtract_3)
""",
    ),
    "stencil_step": (
        stencil_step,
        lambda: (np.ones((6, 6)), 0.1),
        """\
graph stencil_step(u: f64[s0,s1], alpha: float):
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
    ),
    "adam_step": (
        adam_step,
        lambda: (*(np.ones(10, np.float32) for _ in range(4)), 3),
        """\
graph adam_step(w: f32[s0], grad: f32[s0], m: f32[s0], v: f32[s0], lr: float, beta1: float, beta2: float, eps: float):
  %multiply_1 : f32[s0] = multiply(%m, %beta1)
  %setitem_1  : f32[s0] = setitem(%m, %multiply_1, index=[...])
  %subtract_1 : float   = subtract(1, %beta1)
  %multiply_2 : f32[s0] = multiply(%subtract_1, %grad)
  %add_1      : f32[s0] = add(%m, %multiply_2)
  %setitem_2  : f32[s0] = setitem(%m, %add_1, index=[...])
  %multiply_3 : f32[s0] = multiply(%v, %beta2)
  %setitem_3  : f32[s0] = setitem(%v, %multiply_3, index=[...])
  %subtract_2 : float   = subtract(1, %beta2)
  %multiply_4 : f32[s0] = multiply(%subtract_2, %grad)
  %multiply_5 : f32[s0] = multiply(%multiply_4, %grad)
  %add_2      : f32[s0] = add(%v, %multiply_5)
  %setitem_4  : f32[s0] = setitem(%v, %add_2, index=[...])
  %power_1    : float   = power(%beta1, 3)
  %subtract_3 : float   = subtract(1, %power_1)
  %divide_1   : f32[s0] = divide(%m, %subtract_3)
  %power_2    : float   = power(%beta2, 3)
  %subtract_4 : float   = subtract(1, %power_2)
  %divide_2   : f32[s0] = divide(%v, %subtract_4)
  %multiply_6 : f32[s0] = multiply(%lr, %divide_1)
  %sqrt_1     : f32[s0] = sqrt(%divide_2)
  %add_3      : f32[s0] = add(%sqrt_1, %eps)
  %divide_3   : f32[s0] = divide(%multiply_6, %add_3)
  %subtract_5 : f32[s0] = subtract(%w, %divide_3)
  %setitem_5  : f32[s0] = setitem(%w, %subtract_5, index=[...])
  return None
""",
    ),
}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_traced_text_is_golden(name):
    fn, make_args, expected = GOLDEN[name]
    assert str(gcompile.trace(fn, *make_args())) == textwrap.dedent(expected).rstrip("\n")


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_functions_run_like_numpy(name):
    fn, make_args, _ = GOLDEN[name]
    rng = np.random.default_rng(0)
    args = [
        rng.uniform(0.5, 2.0, a.shape).astype(a.dtype) if isinstance(a, np.ndarray) else a
        for a in make_args()
    ]
    check(fn, *args)
