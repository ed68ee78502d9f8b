"""Golden text of realistic graphs at each stage: "traced", "optimized" and "fused".

Each entry is the exact ``str(graph)`` of ``gcompile.trace(fn, *args, stage=...)``.
What to look for when one changes: the optimized graph has no ``setitem`` (writes
became ``update`` values and ``writeback``s to the caller's arrays), CSE merged
the repeated subexpressions (``vol * sqrt_t`` and ``strike * discount`` in
Black-Scholes), and the fused graph has the kernels listed in ``KERNELS``: the
row patterns (softmax, layernorm, pairwise distances) in one row kernel, the
elementwise programs in one pointwise kernel, the stencil's interior in one
kernel reading the input through views cloned into it.
"""

from __future__ import annotations

import numpy as np
import pytest

import gcompile
from gcompile.ir import ops
from gcompile.ir.kernel import FusedKernel
from tests.realistic import adam_step, black_scholes, layernorm, softmax
from tests.support import check

STAGES = ("traced", "optimized", "fused")


def stencil(u):
    """One Jacobi step of the 5-point Laplace stencil; the boundary is kept."""
    out = u.copy()
    out[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return out


def pairwise_distances(x, y):
    return np.sqrt(((x[:, None, :] - y[None, :, :]) ** 2).sum(-1))


def xorshift_hash(x):
    x = x ^ (x << 13)
    x = x ^ (x >> 17)
    x = x ^ (x << 5)
    return x * np.uint32(0x9E3779B1)


GOLDEN = {
    "softmax": (
        softmax,
        lambda: (np.ones((4, 8), np.float32),),
        {
            "traced": """\
graph softmax(x: f32[s0,s1]):
  %amax_1     : f32[s0,1]  = amax(%x, axis=-1, keepdims=True)
  %subtract_1 : f32[s0,s1] = subtract(%x, %amax_1)
  %exp_1      : f32[s0,s1] = exp(%subtract_1)
  %sum_1      : f32[s0,1]  = sum(%exp_1, axis=-1, keepdims=True)
  %divide_1   : f32[s0,s1] = divide(%exp_1, %sum_1)
  return %divide_1
""",
            "optimized": """\
graph softmax(x: f32[s0,s1]):
  %amax_1     : f32[s0,1]  = amax(%x, axis=-1, keepdims=True)
  %subtract_1 : f32[s0,s1] = subtract(%x, %amax_1)
  %exp_1      : f32[s0,s1] = exp(%subtract_1)
  %sum_1      : f32[s0,1]  = sum(%exp_1, axis=-1, keepdims=True)
  %divide_1   : f32[s0,s1] = divide(%exp_1, %sum_1)
  return %divide_1
""",
            "fused": """\
graph softmax(x: f32[s0,s1]):
  %fused_1 : f32[s0,s1] = fused_1(%x)
    graph fused_1(x: f32[s0,s1]):    # row over [s0,s1]
      %amax_1     : f32[s0,1]  = amax(%x, axis=-1, keepdims=True)
      %subtract_1 : f32[s0,s1] = subtract(%x, %amax_1)
      %exp_1      : f32[s0,s1] = exp(%subtract_1)
      %sum_1      : f32[s0,1]  = sum(%exp_1, axis=-1, keepdims=True)
      %divide_1   : f32[s0,s1] = divide(%exp_1, %sum_1)
      return (%divide_1,)
  return %fused_1
""",
        },
    ),
    "layernorm": (
        layernorm,
        lambda: (np.ones((4, 8), np.float32), np.ones(8, np.float32), np.zeros(8, np.float32)),
        {
            "traced": """\
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
            "optimized": """\
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
            "fused": """\
graph layernorm(x: f32[s0,s1], gamma: f32[s1], beta: f32[s1], eps: float):
  %fused_1 : f32[s0,s1] = fused_1(%x, %eps, %gamma, %beta)
    graph fused_1(x: f32[s0,s1], eps: float, gamma: f32[s1], beta: f32[s1]):    # row over [s0,s1]
      %mean_1     : f32[s0,1]  = mean(%x, axis=-1, keepdims=True)
      %subtract_1 : f32[s0,s1] = subtract(%x, %mean_1)
      %multiply_1 : f32[s0,s1] = multiply(%subtract_1, %subtract_1)
      %mean_2     : f32[s0,1]  = mean(%multiply_1, axis=-1, keepdims=True)
      %add_1      : f32[s0,1]  = add(%mean_2, %eps)
      %sqrt_1     : f32[s0,1]  = sqrt(%add_1)
      %divide_1   : f32[s0,s1] = divide(%subtract_1, %sqrt_1)
      %multiply_2 : f32[s0,s1] = multiply(%divide_1, %gamma)
      %add_2      : f32[s0,s1] = add(%multiply_2, %beta)
      return (%add_2,)
  return %fused_1
""",
        },
    ),
    "black_scholes": (
        black_scholes,
        lambda: (np.ones(4), np.ones(4), np.ones(4), 0.03, 0.25),
        {
            "traced": """\
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
            "optimized": """\
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
  %subtract_1  : f64[s0] = subtract(%divide_2, %multiply_4)
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
  %negative_2  : f64[s0] = negative(%subtract_1)
  %power_3     : f64[s0] = power(%negative_2, 3)
  %multiply_17 : f64[s0] = multiply(0.044715, %power_3)
  %add_7       : f64[s0] = add(%negative_2, %multiply_17)
  %multiply_18 : f64[s0] = multiply(0.7978845608, %add_7)
  %tanh_3      : f64[s0] = tanh(%multiply_18)
  %add_8       : f64[s0] = add(1.0, %tanh_3)
  %multiply_19 : f64[s0] = multiply(0.5, %add_8)
  %multiply_20 : f64[s0] = multiply(%multiply_11, %multiply_19)
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
            "fused": """\
graph black_scholes(spot: f64[s0], strike: f64[s0], years: f64[s0], rate: float, vol: float):
  %multiply_1      : float              = multiply(0.5, %vol)
  %multiply_2      : float              = multiply(%multiply_1, %vol)
  %add_1           : float              = add(%rate, %multiply_2)
  %negative_1      : float              = negative(%rate)
  %fused_1         : (f64[s0], f64[s0]) = fused_1(%years, %spot, %strike, %add_1, %vol, %negative_1)
    graph fused_1(years: f64[s0], spot: f64[s0], strike: f64[s0], add_1: float, vol: float, negative_1: float):    # pointwise over [s0]
      %sqrt_1      : f64[s0] = sqrt(%years)
      %divide_1    : f64[s0] = divide(%spot, %strike)
      %log_1       : f64[s0] = log(%divide_1)
      %multiply_3  : f64[s0] = multiply(%add_1, %years)
      %add_2       : f64[s0] = add(%log_1, %multiply_3)
      %multiply_4  : f64[s0] = multiply(%vol, %sqrt_1)
      %divide_2    : f64[s0] = divide(%add_2, %multiply_4)
      %subtract_1  : f64[s0] = subtract(%divide_2, %multiply_4)
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
      %negative_2  : f64[s0] = negative(%subtract_1)
      %power_3     : f64[s0] = power(%negative_2, 3)
      %multiply_17 : f64[s0] = multiply(0.044715, %power_3)
      %add_7       : f64[s0] = add(%negative_2, %multiply_17)
      %multiply_18 : f64[s0] = multiply(0.7978845608, %add_7)
      %tanh_3      : f64[s0] = tanh(%multiply_18)
      %add_8       : f64[s0] = add(1.0, %tanh_3)
      %multiply_19 : f64[s0] = multiply(0.5, %add_8)
      %multiply_20 : f64[s0] = multiply(%multiply_11, %multiply_19)
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
  %kernel_output_1 : f64[s0]            = kernel_output(%fused_1, item=0)
  %kernel_output_2 : f64[s0]            = kernel_output(%fused_1, item=1)
  return (%kernel_output_1, %kernel_output_2)
""",
        },
    ),
    "stencil": (
        stencil,
        lambda: (np.ones((6, 6)),),
        {
            "traced": """\
graph stencil(u: f64[s0,s1]):
  %copy_1     : f64[s0,s1]     = copy(%u, order='C')
  %getitem_1  : f64[s0-2,s1-2] = getitem(%u, index=[:-2, 1:-1])
  %getitem_2  : f64[s0-2,s1-2] = getitem(%u, index=[2:, 1:-1])
  %add_1      : f64[s0-2,s1-2] = add(%getitem_1, %getitem_2)
  %getitem_3  : f64[s0-2,s1-2] = getitem(%u, index=[1:-1, :-2])
  %add_2      : f64[s0-2,s1-2] = add(%add_1, %getitem_3)
  %getitem_4  : f64[s0-2,s1-2] = getitem(%u, index=[1:-1, 2:])
  %add_3      : f64[s0-2,s1-2] = add(%add_2, %getitem_4)
  %multiply_1 : f64[s0-2,s1-2] = multiply(0.25, %add_3)
  %setitem_1  : f64[s0,s1]     = setitem(%copy_1, %multiply_1, index=[1:-1, 1:-1])
  return %copy_1
""",
            "optimized": """\
graph stencil(u: f64[s0,s1]):
  %copy_1     : f64[s0,s1]     = copy(%u, order='C')
  %getitem_1  : f64[s0-2,s1-2] = getitem(%u, index=[:-2, 1:-1])
  %getitem_2  : f64[s0-2,s1-2] = getitem(%u, index=[2:, 1:-1])
  %add_1      : f64[s0-2,s1-2] = add(%getitem_1, %getitem_2)
  %getitem_3  : f64[s0-2,s1-2] = getitem(%u, index=[1:-1, :-2])
  %add_2      : f64[s0-2,s1-2] = add(%add_1, %getitem_3)
  %getitem_4  : f64[s0-2,s1-2] = getitem(%u, index=[1:-1, 2:])
  %add_3      : f64[s0-2,s1-2] = add(%add_2, %getitem_4)
  %multiply_1 : f64[s0-2,s1-2] = multiply(0.25, %add_3)
  %update_1   : f64[s0,s1]     = update(%copy_1, %multiply_1, index=[1:-1, 1:-1])
  return %update_1
""",
            "fused": """\
graph stencil(u: f64[s0,s1]):
  %fused_1 : f64[s0,s1] = fused_1(%u)
    graph fused_1(u: f64[s0,s1]):    # pointwise over [s0,s1]
      %copy_1 : f64[s0,s1] = copy(%u, order='C')
      return (%copy_1,)
  %fused_2 : f64[s0,s1] = fused_2(%fused_1, %u)
    graph fused_2(fused_1: f64[s0,s1], u: f64[s0,s1]):    # pointwise over [s0-2,s1-2]
      %getitem_1  : f64[s0-2,s1-2] = getitem(%u, index=[:-2, 1:-1])
      %getitem_2  : f64[s0-2,s1-2] = getitem(%u, index=[2:, 1:-1])
      %add_1      : f64[s0-2,s1-2] = add(%getitem_1, %getitem_2)
      %getitem_3  : f64[s0-2,s1-2] = getitem(%u, index=[1:-1, :-2])
      %add_2      : f64[s0-2,s1-2] = add(%add_1, %getitem_3)
      %getitem_4  : f64[s0-2,s1-2] = getitem(%u, index=[1:-1, 2:])
      %add_3      : f64[s0-2,s1-2] = add(%add_2, %getitem_4)
      %multiply_1 : f64[s0-2,s1-2] = multiply(0.25, %add_3)
      %store_1    : f64[s0,s1]     = store(%fused_1, %multiply_1, index=[1:-1, 1:-1])
      return (%store_1,)
  return %fused_2
""",
        },
    ),
    "adam_step": (
        adam_step,
        lambda: (*(np.ones(10, np.float32) for _ in range(4)), 3),
        {
            "traced": """\
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
            "optimized": """\
graph adam_step(w: f32[s0], grad: f32[s0], m: f32[s0], v: f32[s0], lr: float, beta1: float, beta2: float, eps: float):
  %multiply_1  : f32[s0] = multiply(%m, %beta1)
  %subtract_1  : float   = subtract(1, %beta1)
  %multiply_2  : f32[s0] = multiply(%subtract_1, %grad)
  %add_1       : f32[s0] = add(%multiply_1, %multiply_2)
  %multiply_3  : f32[s0] = multiply(%v, %beta2)
  %subtract_2  : float   = subtract(1, %beta2)
  %multiply_4  : f32[s0] = multiply(%subtract_2, %grad)
  %multiply_5  : f32[s0] = multiply(%multiply_4, %grad)
  %add_2       : f32[s0] = add(%multiply_3, %multiply_5)
  %power_1     : float   = power(%beta1, 3)
  %subtract_3  : float   = subtract(1, %power_1)
  %divide_1    : f32[s0] = divide(%add_1, %subtract_3)
  %power_2     : float   = power(%beta2, 3)
  %subtract_4  : float   = subtract(1, %power_2)
  %divide_2    : f32[s0] = divide(%add_2, %subtract_4)
  %multiply_6  : f32[s0] = multiply(%lr, %divide_1)
  %sqrt_1      : f32[s0] = sqrt(%divide_2)
  %add_3       : f32[s0] = add(%sqrt_1, %eps)
  %divide_3    : f32[s0] = divide(%multiply_6, %add_3)
  %subtract_5  : f32[s0] = subtract(%w, %divide_3)
  %writeback_1 : f32[s0] = writeback(%m, %add_1)
  %writeback_2 : f32[s0] = writeback(%v, %add_2)
  %writeback_3 : f32[s0] = writeback(%w, %subtract_5)
  return None
""",
            "fused": """\
graph adam_step(w: f32[s0], grad: f32[s0], m: f32[s0], v: f32[s0], lr: float, beta1: float, beta2: float, eps: float):
  %subtract_1      : float                       = subtract(1, %beta1)
  %subtract_2      : float                       = subtract(1, %beta2)
  %power_1         : float                       = power(%beta1, 3)
  %subtract_3      : float                       = subtract(1, %power_1)
  %power_2         : float                       = power(%beta2, 3)
  %subtract_4      : float                       = subtract(1, %power_2)
  %fused_1         : (f32[s0], f32[s0], f32[s0]) = fused_1(%m, %beta1, %subtract_1, %grad, %v, %beta2, %subtract_2, %subtract_3, %subtract_4, %lr, %eps, %w)
    graph fused_1(m: f32[s0], beta1: float, subtract_1: float, grad: f32[s0], v: f32[s0], beta2: float, subtract_2: float, subtract_3: float, subtract_4: float, lr: float, eps: float, w: f32[s0]):    # pointwise over [s0]
      %multiply_1 : f32[s0] = multiply(%m, %beta1)
      %multiply_2 : f32[s0] = multiply(%subtract_1, %grad)
      %add_1      : f32[s0] = add(%multiply_1, %multiply_2)
      %multiply_3 : f32[s0] = multiply(%v, %beta2)
      %multiply_4 : f32[s0] = multiply(%subtract_2, %grad)
      %multiply_5 : f32[s0] = multiply(%multiply_4, %grad)
      %add_2      : f32[s0] = add(%multiply_3, %multiply_5)
      %divide_1   : f32[s0] = divide(%add_1, %subtract_3)
      %divide_2   : f32[s0] = divide(%add_2, %subtract_4)
      %multiply_6 : f32[s0] = multiply(%lr, %divide_1)
      %sqrt_1     : f32[s0] = sqrt(%divide_2)
      %add_3      : f32[s0] = add(%sqrt_1, %eps)
      %divide_3   : f32[s0] = divide(%multiply_6, %add_3)
      %subtract_5 : f32[s0] = subtract(%w, %divide_3)
      return (%add_1, %add_2, %subtract_5)
  %kernel_output_1 : f32[s0]                     = kernel_output(%fused_1, item=0)
  %kernel_output_2 : f32[s0]                     = kernel_output(%fused_1, item=1)
  %kernel_output_3 : f32[s0]                     = kernel_output(%fused_1, item=2)
  %writeback_1     : f32[s0]                     = writeback(%m, %kernel_output_1)
  %writeback_2     : f32[s0]                     = writeback(%v, %kernel_output_2)
  %writeback_3     : f32[s0]                     = writeback(%w, %kernel_output_3)
  return None
""",
        },
    ),
    "pairwise_distances": (
        pairwise_distances,
        lambda: (np.ones((5, 3)), np.ones((4, 3))),
        {
            "traced": """\
graph pairwise_distances(x: f64[s0,s1], y: f64[s2,s1]):
  %getitem_1  : f64[s0,1,s1]  = getitem(%x, index=[:, None, :])
  %getitem_2  : f64[1,s2,s1]  = getitem(%y, index=[None, :, :])
  %subtract_1 : f64[s0,s2,s1] = subtract(%getitem_1, %getitem_2)
  %square_1   : f64[s0,s2,s1] = square(%subtract_1)
  %sum_1      : f64[s0,s2]    = sum(%square_1, axis=-1)
  %sqrt_1     : f64[s0,s2]    = sqrt(%sum_1)
  return %sqrt_1
""",
            "optimized": """\
graph pairwise_distances(x: f64[s0,s1], y: f64[s2,s1]):
  %getitem_1  : f64[s0,1,s1]  = getitem(%x, index=[:, None, :])
  %getitem_2  : f64[1,s2,s1]  = getitem(%y, index=[None, :, :])
  %subtract_1 : f64[s0,s2,s1] = subtract(%getitem_1, %getitem_2)
  %square_1   : f64[s0,s2,s1] = square(%subtract_1)
  %sum_1      : f64[s0,s2]    = sum(%square_1, axis=-1)
  %sqrt_1     : f64[s0,s2]    = sqrt(%sum_1)
  return %sqrt_1
""",
            "fused": """\
graph pairwise_distances(x: f64[s0,s1], y: f64[s2,s1]):
  %fused_1 : f64[s0,s2] = fused_1(%x, %y)
    graph fused_1(x: f64[s0,s1], y: f64[s2,s1]):    # row over [s0,s2,s1]
      %getitem_1  : f64[s0,1,s1]  = getitem(%x, index=[:, None, :])
      %getitem_2  : f64[1,s2,s1]  = getitem(%y, index=[None, :, :])
      %subtract_1 : f64[s0,s2,s1] = subtract(%getitem_1, %getitem_2)
      %square_1   : f64[s0,s2,s1] = square(%subtract_1)
      %sum_1      : f64[s0,s2]    = sum(%square_1, axis=-1)
      %sqrt_1     : f64[s0,s2]    = sqrt(%sum_1)
      return (%sqrt_1,)
  return %fused_1
""",
        },
    ),
    "xorshift_hash": (
        xorshift_hash,
        lambda: (np.ones(16, np.uint32),),
        {
            "traced": """\
graph xorshift_hash(x: u32[s0]):
  %left_shift_1  : u32[s0] = left_shift(%x, 13)
  %bitwise_xor_1 : u32[s0] = bitwise_xor(%x, %left_shift_1)
  %right_shift_1 : u32[s0] = right_shift(%bitwise_xor_1, 17)
  %bitwise_xor_2 : u32[s0] = bitwise_xor(%bitwise_xor_1, %right_shift_1)
  %left_shift_2  : u32[s0] = left_shift(%bitwise_xor_2, 5)
  %bitwise_xor_3 : u32[s0] = bitwise_xor(%bitwise_xor_2, %left_shift_2)
  %multiply_1    : u32[s0] = multiply(%bitwise_xor_3, u32(2654435761))
  return %multiply_1
""",
            "optimized": """\
graph xorshift_hash(x: u32[s0]):
  %left_shift_1  : u32[s0] = left_shift(%x, 13)
  %bitwise_xor_1 : u32[s0] = bitwise_xor(%x, %left_shift_1)
  %right_shift_1 : u32[s0] = right_shift(%bitwise_xor_1, 17)
  %bitwise_xor_2 : u32[s0] = bitwise_xor(%bitwise_xor_1, %right_shift_1)
  %left_shift_2  : u32[s0] = left_shift(%bitwise_xor_2, 5)
  %bitwise_xor_3 : u32[s0] = bitwise_xor(%bitwise_xor_2, %left_shift_2)
  %multiply_1    : u32[s0] = multiply(%bitwise_xor_3, u32(2654435761))
  return %multiply_1
""",
            "fused": """\
graph xorshift_hash(x: u32[s0]):
  %fused_1 : u32[s0] = fused_1(%x)
    graph fused_1(x: u32[s0]):    # pointwise over [s0]
      %left_shift_1  : u32[s0] = left_shift(%x, 13)
      %bitwise_xor_1 : u32[s0] = bitwise_xor(%x, %left_shift_1)
      %right_shift_1 : u32[s0] = right_shift(%bitwise_xor_1, 17)
      %bitwise_xor_2 : u32[s0] = bitwise_xor(%bitwise_xor_1, %right_shift_1)
      %left_shift_2  : u32[s0] = left_shift(%bitwise_xor_2, 5)
      %bitwise_xor_3 : u32[s0] = bitwise_xor(%bitwise_xor_2, %left_shift_2)
      %multiply_1    : u32[s0] = multiply(%bitwise_xor_3, u32(2654435761))
      return (%multiply_1,)
  return %fused_1
""",
        },
    ),
}

# name -> styles of the fused graph's kernels, in order
KERNELS = {
    "softmax": ["row"],
    "layernorm": ["row"],
    "black_scholes": ["pointwise"],
    "stencil": ["pointwise", "pointwise"],
    "adam_step": ["pointwise"],
    "pairwise_distances": ["row"],
    "xorshift_hash": ["pointwise"],
}


def _graph(name: str, stage: str):
    fn, make_args, _ = GOLDEN[name]
    return gcompile.trace(fn, *make_args(), stage=stage)


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_text(name, stage):
    expected = GOLDEN[name][2][stage]
    assert str(_graph(name, stage)) == expected.rstrip("\n")


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_optimized_and_fused_graphs_have_no_setitem(name):
    for stage in ("optimized", "fused"):
        graph = _graph(name, stage)
        graph.verify()
        assert not any(n.op == "call" and n.target is ops.SETITEM for n in graph.nodes)


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_fused_kernels(name):
    graph = _graph(name, "fused")
    kernels = [
        n.target for n in graph.nodes if n.op == "call" and isinstance(n.target, FusedKernel)
    ]
    assert [k.style for k in kernels] == KERNELS[name]
    for kernel in kernels:
        kernel.graph.verify()


def _random_like(value, rng):
    if not isinstance(value, np.ndarray):
        return value
    if value.dtype == np.uint32:
        return rng.integers(0, 2**32, value.shape, dtype=np.uint32)
    return rng.uniform(0.5, 2.0, value.shape).astype(value.dtype)


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_functions_run_like_numpy(name):
    fn, make_args, _ = GOLDEN[name]
    rng = np.random.default_rng(0)
    check(fn, *(_random_like(a, rng) for a in make_args()))
