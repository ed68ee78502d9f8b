"""Realistic NumPy programs, compiled whole and compared with eager NumPy.

Each program is the kind of function users hand to ``gcompile.compile``: numerics, machine learning, finance,
stencils, integer hashing, image processing and in-place optimiser steps. ``check`` runs every program eagerly,
traces and verifies its graph, runs it compiled on each backend with ``fullgraph=True`` and compares the results and
every argument afterwards (mutations).

Further tests on the same programs:

* independent references (``np.gradient``, ``math.erf``, ``zlib.adler32``, put-call parity, ...), so that the eager
  side is known to compute the right thing;
* the graph's shape, dtype and layout of every value agree with what NumPy computes, and compiled results have the
  memory layout of eager results;
* the compile cache: new values of the same shapes hit it, a new shape, dtype, layout or static value re-traces.
"""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest

import gcompile
from gcompile.backends import interpreter
from gcompile.guards import ArgumentBinder
from gcompile.ir.graph import map_arg
from gcompile.ir.pytree import flatten
from gcompile.ir.shape_env import concrete
from gcompile.ir.subgraph import subgraphs_of
from gcompile.ir.symbolic import evaluate
from tests.support import (
    BACKENDS,
    NUMBA_ULPS,
    assert_same_value,
    check,
    copy_args,
    narrowest_float,
    tolerance,
)

# ---------------------------------------------------------------------------------------------------------------
# shared helpers (called inside traced functions, so they are traced too)
# ---------------------------------------------------------------------------------------------------------------


def rng() -> np.random.Generator:
    """A fresh generator with a fixed seed: every test builds the same inputs."""
    return np.random.default_rng(20240611)


def softmax_rows(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def log_softmax_rows(x):
    shifted = x - np.max(x, axis=-1, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))


def relu(x):
    return np.maximum(x, 0)


def erf_approx(x):
    """Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7)."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    return sign * (1.0 - poly * np.exp(-a * a))


def norm_cdf(x):
    return 0.5 * (1.0 + erf_approx(x / math.sqrt(2.0)))


def zero_padded(a, pad):
    """``a`` with ``pad`` zeros around both trailing axes, built with slice assignment."""
    h, w = a.shape[-2:]
    out = np.zeros(a.shape[:-2] + (h + 2 * pad, w + 2 * pad), dtype=a.dtype)
    out[..., pad : pad + h, pad : pad + w] = a
    return out


# ---------------------------------------------------------------------------------------------------------------
# numerics
# ---------------------------------------------------------------------------------------------------------------


def horner(x, coeffs):
    """Polynomial with coefficients in an array, highest degree first."""
    result = np.full_like(x, coeffs[0])
    for c in coeffs[1:]:
        result = result * x + c
    return result


def horner_python_floats(x, coeffs):
    """Polynomial with coefficients given as a tuple of Python floats (each a graph input)."""
    result = np.zeros_like(x)
    for c in coeffs:
        result = result * x + c
    return result


def horner_in_place(x, coeffs):
    """Horner's rule accumulating into one buffer with ufunc ``out=`` and ``+=``."""
    result = np.zeros_like(x)
    for c in coeffs:
        np.multiply(result, x, out=result)
        result += c
    return result


def eyes_in_loop(x, steps):
    """np.eye in a loop body (a program calls Numba's)."""
    n = x.shape[0]
    for _ in range(steps):
        x = x @ (np.eye(n, k=1) * 0.5 + np.eye(n, dtype=np.float32))
    return x


def newton_sqrt(a, iterations):
    """Babylonian square root, unrolled ``iterations`` times."""
    y = np.where(a > 1, a / 2, 1.0)
    for _ in range(iterations):
        y = 0.5 * (y + a / y)
    return y


def newton_kepler(mean_anomaly, eccentricity, iterations):
    """Solve Kepler's equation E - e sin E = M by Newton's method, a fixed number of steps."""
    e = mean_anomaly.copy()
    for _ in range(iterations):
        e -= (e - eccentricity * np.sin(e) - mean_anomaly) / (1.0 - eccentricity * np.cos(e))
    return e


def trapezoid(y, x):
    """Trapezoid rule along the last axis, with slices."""
    dx = x[..., 1:] - x[..., :-1]
    return np.sum(0.5 * (y[..., 1:] + y[..., :-1]) * dx, axis=-1)


def gradient_2d(f, h):
    """Central differences inside, one-sided at the edges (np.gradient with edge_order=1), both axes."""
    gy = np.empty_like(f)
    gx = np.empty_like(f)
    gy[1:-1, :] = (f[2:, :] - f[:-2, :]) / (2 * h)
    gy[0, :] = (f[1, :] - f[0, :]) / h
    gy[-1, :] = (f[-1, :] - f[-2, :]) / h
    gx[:, 1:-1] = (f[:, 2:] - f[:, :-2]) / (2 * h)
    gx[:, 0] = (f[:, 1] - f[:, 0]) / h
    gx[:, -1] = (f[:, -1] - f[:, -2]) / h
    return gy, gx


def normalize_rows(x, eps):
    norms = np.sqrt(np.sum(x * x, axis=1, keepdims=True))
    return x / np.maximum(norms, eps)


def pairwise_distances(x, y):
    diff = x[:, None, :] - y[None, :, :]
    return np.sqrt(np.sum(diff**2, axis=-1))


def cumulative_moving_average(x):
    n = x.shape[0]
    return np.cumsum(x, axis=0) / np.arange(1, n + 1)[:, None]


def windowed_moving_average(x, window):
    c = np.cumsum(np.concatenate([np.zeros(1, dtype=x.dtype), x]))
    return (c[window:] - c[:-window]) / window


def gaussian_kernel(x, y, sigma):
    sq = np.sum(x * x, axis=1)[:, None] + np.sum(y * y, axis=1)[None, :] - 2 * (x @ y.T)
    return np.exp(-np.maximum(sq, 0) / (2 * sigma**2))


def gaussian_kernel_outer(x, y, sigma):
    """The same kernel from exact squared differences, with ``np.subtract.outer`` per coordinate."""
    sq = np.zeros((x.shape[0], y.shape[0]))
    for j in range(x.shape[1]):
        sq += np.square(np.subtract.outer(x[:, j], y[:, j]))
    return np.exp(-sq / (2 * sigma**2))


# ---------------------------------------------------------------------------------------------------------------
# machine learning
# ---------------------------------------------------------------------------------------------------------------


def softmax(x):
    return softmax_rows(x)


def log_softmax(x):
    return log_softmax_rows(x)


def layernorm(x, gamma, beta, eps):
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def rmsnorm(x, weight, eps):
    rms = np.sqrt(np.mean(np.square(x), axis=-1, keepdims=True) + eps)
    return x / rms * weight


def logsumexp(x):
    m = np.max(x, axis=-1, keepdims=True)
    return np.squeeze(m, axis=-1) + np.log(np.sum(np.exp(x - m), axis=-1))


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def mlp_forward(x, w1, b1, w2, b2):
    return relu(x @ w1 + b1) @ w2 + b2


def cross_entropy_one_hot(logits, one_hot):
    return -np.mean(np.sum(one_hot * log_softmax_rows(logits), axis=-1))


def cross_entropy_int_labels(logits, labels):
    """One-hot built in the function from integer labels, then loss and accuracy."""
    classes = logits.shape[-1]
    one_hot = (labels[:, None] == np.arange(classes)[None, :]).astype(logits.dtype)
    loss = -np.mean(np.sum(one_hot * log_softmax_rows(logits), axis=-1))
    accuracy = np.mean(np.argmax(logits, axis=-1) == labels)
    return loss, accuracy


def standardize_columns(data):
    return (data - data.mean(axis=0)) / data.std(axis=0, ddof=1)


def center_rows_contiguous(x):
    """Rows centred on their mean, handed back C-contiguous (say, for a C library)."""
    return np.ascontiguousarray(x - x.mean(axis=1, keepdims=True))


def cosine_similarity(a, b):
    a_n = a / np.sqrt(np.sum(a * a, axis=1, keepdims=True))
    b_n = b / np.sqrt(np.sum(b * b, axis=1, keepdims=True))
    return a_n @ b_n.T


def causal_attention(q, k, v):
    n, d = q.shape[-2:]
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(d)
    mask = np.arange(n)[:, None] >= np.arange(n)[None, :]
    weights = softmax_rows(np.where(mask, scores, -np.inf))
    return weights @ v, weights


# ---------------------------------------------------------------------------------------------------------------
# finance
# ---------------------------------------------------------------------------------------------------------------


def black_scholes(spot, strike, rate, vol, maturity):
    sqrt_t = np.sqrt(maturity)
    d1 = (np.log(spot / strike) + (rate + 0.5 * vol * vol) * maturity) / (vol * sqrt_t)
    d2 = d1 - vol * sqrt_t
    discount = strike * np.exp(-rate * maturity)
    call = spot * norm_cdf(d1) - discount * norm_cdf(d2)
    put = discount * norm_cdf(-d2) - spot * norm_cdf(-d1)
    return {"call": call, "put": put}


def gbm_paths(z, s0, mu, sigma, dt):
    """Geometric Brownian motion from given standard normal increments (paths x steps)."""
    drift = (mu - 0.5 * sigma**2) * dt
    log_returns = drift + sigma * dt**0.5 * z
    return s0 * np.exp(np.cumsum(log_returns, axis=-1))


def max_drawdown(prices):
    """Largest fall from a running peak, per column (``np.maximum.accumulate``)."""
    peak = np.maximum.accumulate(prices, axis=0)
    return np.min(prices / peak - 1, axis=0)


def portfolio_stats(returns, weights):
    """Portfolio return series, mean, volatility (from the sample covariance) and Sharpe ratio."""
    portfolio = returns @ weights
    centered = returns - returns.mean(axis=0)
    cov = centered.T @ centered / (returns.shape[0] - 1)
    vol = np.sqrt(weights @ cov @ weights)
    mean = portfolio.mean()
    return portfolio, mean, vol, mean / vol


def exponential_moving_average(prices, alpha):
    """EMA along axis 0, unrolled over the (static) number of rows."""
    out = np.empty_like(prices)
    ema = prices[0]
    out[0] = ema
    for t in range(1, prices.shape[0]):
        ema = alpha * prices[t] + (1 - alpha) * ema
        out[t] = ema
    return out


# ---------------------------------------------------------------------------------------------------------------
# stencils
# ---------------------------------------------------------------------------------------------------------------


def heat_step(u, alpha):
    out = u.copy()
    center = u[1:-1, 1:-1]
    out[1:-1, 1:-1] = center + alpha * (
        u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * center
    )
    return out


def heat_steps_in_place(u, scratch, alpha, steps):
    """Several steps swapping two caller-owned buffers; the boundary stays fixed."""
    np.copyto(scratch, u)
    src, dst = u, scratch
    for _ in range(steps):
        c = src[1:-1, 1:-1]
        dst[1:-1, 1:-1] = c + alpha * (
            src[:-2, 1:-1] + src[2:, 1:-1] + src[1:-1, :-2] + src[1:-1, 2:] - 4 * c
        )
        src, dst = dst, src
    return src


def smooth_3point(x):
    y = x.copy()
    y[1:-1] = (x[:-2] + x[1:-1] + x[2:]) / 3
    return y


def life_step(grid):
    padded = zero_padded(grid, 1)
    h, w = grid.shape
    count = np.zeros_like(grid)
    for dy in range(3):
        for dx in range(3):
            if dy != 1 or dx != 1:
                count += padded[dy : dy + h, dx : dx + w]
    alive = (count == 3) | ((grid == 1) & (count == 2))
    return np.where(alive, 1, 0).astype(grid.dtype), count


def life_generations(grid, generations):
    for _ in range(generations):
        grid, _ = life_step(grid)
    return grid


# ---------------------------------------------------------------------------------------------------------------
# integer hashing
# ---------------------------------------------------------------------------------------------------------------


def xorshift32_in_place(state, buckets):
    """Advance a uint32 xorshift state array in place, return the bucket of each new value."""
    state ^= state << 13
    state ^= state >> 17
    state ^= state << 5
    return state % buckets


def murmur3_fmix32(keys, buckets):
    h = keys.astype(np.uint32)
    h ^= h >> 16
    h *= np.uint32(0x85EBCA6B)
    h ^= h >> 13
    h *= np.uint32(0xC2B2AE35)
    h ^= h >> 16
    return h, h % np.uint32(buckets)


def splitmix64(seeds):
    z = seeds + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> 30)) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> 27)) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> 31)


def fibonacci_hash_buckets(keys, bits):
    """Knuth's multiplicative hashing of int64 keys into 2**bits buckets, and the bucket occupancy."""
    h = (keys.astype(np.uint64) * np.uint64(11400714819323198485)) >> np.uint64(64 - bits)
    occupancy = np.sum(h[:, None] == np.arange(2**bits, dtype=np.uint64)[None, :], axis=0)
    return h, occupancy


def spatial_hash(points, cell_size, table_size):
    """Teschner et al.'s spatial hash of 3-D points: grid cell by ``np.divmod``, xor of primes, modulo the table."""
    cell, offset = np.divmod(points, cell_size)
    c = cell.astype(np.int64)
    h = (c[:, 0] * 73856093) ^ (c[:, 1] * 19349663) ^ (c[:, 2] * 83492791)
    return h % table_size, offset / cell_size


def adler32(data):
    """Adler-32 of a uint8 buffer with sums instead of a byte loop."""
    n = data.shape[0]
    a = (1 + np.sum(data, dtype=np.uint64)) % 65521
    b = (n + np.sum(np.cumsum(data, dtype=np.uint64))) % 65521
    return (b << 16) | a


def row_checksums(table):
    """Position-weighted checksum per row of an int32 table, wrapping in uint32, and a total."""
    weights = np.arange(1, table.shape[1] + 1, dtype=np.uint32)
    per_row = np.sum(table.astype(np.uint32) * weights, axis=1, dtype=np.uint32)
    return per_row, np.bitwise_xor(per_row, per_row >> 7).sum(dtype=np.uint64)


# ---------------------------------------------------------------------------------------------------------------
# image processing
# ---------------------------------------------------------------------------------------------------------------


def gamma_to_uint8(img, gamma):
    x = img.astype(np.float32)
    lo, hi = x.min(), x.max()
    x = (x - lo) / (hi - lo)
    x = x ** (1 / gamma)
    return np.clip(np.round(x * 255), 0, 255).astype(np.uint8)


def rgb_to_gray(img):
    weights = np.array([0.299, 0.587, 0.114], dtype=np.float32)
    gray = np.sum(img.astype(np.float32) * weights, axis=-1)
    return np.clip(np.rint(gray), 0, 255).astype(np.uint8)


def box_blur(img, radius):
    padded = zero_padded(img, radius)
    h, w = img.shape
    acc = np.zeros(img.shape, dtype=np.float64)
    for dy in range(2 * radius + 1):
        for dx in range(2 * radius + 1):
            acc += padded[dy : dy + h, dx : dx + w]
    return acc / (2 * radius + 1) ** 2


# ---------------------------------------------------------------------------------------------------------------
# in-place optimiser steps
# ---------------------------------------------------------------------------------------------------------------


def sgd_momentum(w, velocity, grad, lr, momentum):
    velocity *= momentum
    velocity += grad
    w -= lr * velocity


def adam_linear_regression(w, m, v, x, y, lr, t):
    """One Adam step on the mean squared error of x @ w against y; returns the loss before the step."""
    b1, b2, eps = 0.9, 0.999, 1e-8
    err = x @ w - y
    loss = np.mean(err * err)
    grad = 2 * (x.T @ err) / x.shape[0]
    np.multiply(m, b1, out=m)
    m += (1 - b1) * grad
    v[:] = b2 * v + (1 - b2) * grad * grad
    m_hat = m / (1 - b1**t)
    v_hat = v / (1 - b2**t)
    w -= lr * m_hat / (np.sqrt(v_hat) + eps)
    return loss


def adam_scaled_lr(w, m, v, grad, lr, t):
    """Adam with the bias corrections folded into the step size (Kingma and Ba, section 2)."""
    b1, b2, eps = 0.9, 0.999, 1e-7
    m[:] = b1 * m + (1 - b1) * grad
    v[:] = b2 * v + (1 - b2) * np.square(grad)
    step = lr * (1 - b2**t) ** 0.5 / (1 - b1**t)
    w -= step * m / (np.sqrt(v) + eps)


def sgd_params_dict(params, x, y, lr):
    """Logistic regression: gradient step on a dict of parameters, mutated in place; returns the loss."""
    logits = x @ params["w"] + params["b"]
    p = 1 / (1 + np.exp(-logits))
    loss = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
    err = (p - y) / x.shape[0]
    grads = {"w": x.T @ err, "b": np.sum(err, keepdims=True)}
    for name in params:
        params[name] -= lr * grads[name]
    return loss


# ---------------------------------------------------------------------------------------------------------------
# the cases: (program, inputs) with an id naming the program
# ---------------------------------------------------------------------------------------------------------------


def case(name, fn, make_args):
    """A parametrised case; ``make_args(rng)`` builds the arguments tuple."""
    return pytest.param(fn, make_args, id=name)


def _normal(r, shape, dtype=np.float64):
    return r.standard_normal(shape).astype(dtype)


def _uniform(r, shape, low, high, dtype=np.float64):
    return r.uniform(low, high, shape).astype(dtype)


def _fortran(a):
    return np.asfortranarray(a)


CASES = [
    # numerics
    case("horner_array_coeffs_f64", horner, lambda r: (np.linspace(-2, 2, 101), _normal(r, 6))),
    case("horner_in_place_out", horner_in_place, lambda r: (_normal(r, (4, 50)), _normal(r, 5))),
    case(
        "horner_python_coeffs_f32",
        horner_python_floats,
        lambda r: (_uniform(r, (8, 32), -1, 1, np.float32), (0.5, -1.25, 2.0, 0.125, -3.0)),
    ),
    case("eye_in_a_loop", eyes_in_loop, lambda r: (_normal(r, (4, 4)), 30)),
    case("newton_sqrt_f64", newton_sqrt, lambda r: (_uniform(r, 200, 0.01, 1e4), 12)),
    case(
        "newton_sqrt_f32", newton_sqrt, lambda r: (_uniform(r, (10, 20), 0.5, 100, np.float32), 8)
    ),
    case("newton_kepler", newton_kepler, lambda r: (_uniform(r, 128, 0, 2 * np.pi), 0.3, 6)),
    case(
        "trapezoid_rows",
        trapezoid,
        lambda r: (_normal(r, (5, 64)), np.sort(_uniform(r, (5, 64), 0, 10), axis=-1)),
    ),
    case(
        "trapezoid_f32_1d",
        trapezoid,
        lambda r: (_normal(r, 257, np.float32), np.linspace(0, 1, 257, dtype=np.float32)),
    ),
    case("finite_difference_gradient", gradient_2d, lambda r: (_normal(r, (24, 30)), 0.1)),
    case("normalize_rows_f32", normalize_rows, lambda r: (_normal(r, (50, 16), np.float32), 1e-12)),
    case(
        "pairwise_distances",
        pairwise_distances,
        lambda r: (_normal(r, (20, 3)), _normal(r, (15, 3))),
    ),
    case(
        "pairwise_distances_f32",
        pairwise_distances,
        lambda r: (_normal(r, (12, 8), np.float32), _normal(r, (9, 8), np.float32)),
    ),
    case("cumulative_moving_average", cumulative_moving_average, lambda r: (_normal(r, (100, 4)),)),
    case("windowed_moving_average", windowed_moving_average, lambda r: (_normal(r, 120), 7)),
    case(
        "gaussian_kernel",
        gaussian_kernel,
        lambda r: (_normal(r, (30, 5)), _normal(r, (20, 5)), 1.5),
    ),
    case(
        "gaussian_kernel_subtract_outer",
        gaussian_kernel_outer,
        lambda r: (_normal(r, (30, 5)), _normal(r, (20, 5)), 0.8),
    ),
    # machine learning
    case("softmax_f32", softmax, lambda r: (_normal(r, (16, 10), np.float32) * 5,)),
    case("softmax_f64_3d", softmax, lambda r: (_normal(r, (2, 8, 12)),)),
    case("log_softmax_f32", log_softmax, lambda r: (_normal(r, (16, 10), np.float32) * 5,)),
    case(
        "layernorm_f32",
        layernorm,
        lambda r: (
            _normal(r, (4, 6, 32), np.float32),
            _normal(r, 32, np.float32),
            _normal(r, 32, np.float32),
            1e-5,
        ),
    ),
    case(
        "rmsnorm_f32",
        rmsnorm,
        lambda r: (_normal(r, (8, 64), np.float32), _normal(r, 64, np.float32), 1e-6),
    ),
    case("logsumexp", logsumexp, lambda r: (_normal(r, (10, 50)) * 30,)),
    case("gelu_tanh_f32", gelu_tanh, lambda r: (_normal(r, (32, 64), np.float32) * 3,)),
    case(
        "mlp_forward_f32",
        mlp_forward,
        lambda r: (
            _normal(r, (16, 20), np.float32),
            _normal(r, (20, 32), np.float32),
            _normal(r, 32, np.float32),
            _normal(r, (32, 5), np.float32),
            _normal(r, 5, np.float32),
        ),
    ),
    case(
        "cross_entropy_one_hot",
        cross_entropy_one_hot,
        lambda r: (_normal(r, (32, 10)), np.eye(10)[r.integers(0, 10, 32)]),
    ),
    case(
        "cross_entropy_int_labels_f32",
        cross_entropy_int_labels,
        lambda r: (_normal(r, (32, 10), np.float32), r.integers(0, 10, 32)),
    ),
    case(
        "standardize_columns_fortran",
        standardize_columns,
        lambda r: (_fortran(_normal(r, (40, 6)) * 3 + 1),),
    ),
    case(
        "center_rows_fortran", center_rows_contiguous, lambda r: (_fortran(_normal(r, (12, 40))),)
    ),
    case(
        "cosine_similarity_transposed_view",
        cosine_similarity,
        lambda r: (_normal(r, (8, 25)).T, _normal(r, (18, 8))),
    ),
    case(
        "causal_attention_f32",
        causal_attention,
        lambda r: tuple(_normal(r, (2, 12, 16), np.float32) for _ in range(3)),
    ),
    # finance
    case(
        "black_scholes",
        black_scholes,
        lambda r: (_uniform(r, 64, 50, 150), _uniform(r, 64, 60, 140), 0.03, 0.25, 1.5),
    ),
    case(
        "black_scholes_array_maturity",
        black_scholes,
        lambda r: (
            100.0,
            _uniform(r, 40, 80, 120),
            0.01,
            _uniform(r, 40, 0.1, 0.6),
            _uniform(r, 40, 0.1, 3),
        ),
    ),
    case("gbm_paths", gbm_paths, lambda r: (_normal(r, (16, 252)), 100.0, 0.05, 0.2, 1 / 252)),
    case(
        "gbm_paths_f32",
        gbm_paths,
        lambda r: (_normal(r, (16, 252), np.float32), 100.0, 0.05, 0.2, 1 / 252),
    ),
    case(
        "max_drawdown",
        max_drawdown,
        lambda r: (100 * np.exp(np.cumsum(_normal(r, (120, 4)) * 0.02, axis=0)),),
    ),
    case(
        "portfolio_stats",
        portfolio_stats,
        lambda r: (_normal(r, (250, 6)) * 0.01 + 0.0005, r.dirichlet(np.ones(6))),
    ),
    case(
        "ema_unrolled",
        exponential_moving_average,
        lambda r: (100 + np.cumsum(_normal(r, (30, 3)), axis=0), 0.2),
    ),
    # stencils
    case("heat_step", heat_step, lambda r: (_uniform(r, (32, 40), 0, 1), 0.2)),
    case(
        "heat_step_fortran_grid", heat_step, lambda r: (_fortran(_uniform(r, (20, 30), 0, 1)), 0.1)
    ),
    case(
        "heat_steps_in_place_f32",
        heat_steps_in_place,
        lambda r: (_uniform(r, (24, 24), 0, 1, np.float32), np.zeros((24, 24), np.float32), 0.2, 5),
    ),
    case("smooth_3point", smooth_3point, lambda r: (_normal(r, 200),)),
    case("smooth_3point_strided_argument", smooth_3point, lambda r: (_normal(r, 300)[::3],)),
    case("life_step_int8", life_step, lambda r: (r.integers(0, 2, (20, 30)).astype(np.int8),)),
    case("life_generations_int64", life_generations, lambda r: (r.integers(0, 2, (16, 16)), 4)),
    # integer hashing
    case(
        "xorshift32_in_place",
        xorshift32_in_place,
        lambda r: (r.integers(1, 2**32, 256, dtype=np.uint32), 97),
    ),
    case(
        "murmur3_fmix32", murmur3_fmix32, lambda r: (r.integers(0, 2**31, 256, dtype=np.int64), 64)
    ),
    case("splitmix64", splitmix64, lambda r: (np.arange(1000, 1256, dtype=np.uint64),)),
    case(
        "fibonacci_hash_buckets",
        fibonacci_hash_buckets,
        lambda r: (r.integers(-(10**9), 10**9, 500), 4),
    ),
    case("spatial_hash", spatial_hash, lambda r: (_uniform(r, (64, 3), -10, 10), 0.75, 4096)),
    case("adler32", adler32, lambda r: (r.integers(0, 256, 1000, dtype=np.uint8),)),
    case(
        "row_checksums_int32",
        row_checksums,
        lambda r: (r.integers(-(2**31), 2**31, (16, 64), dtype=np.int32),),
    ),
    # image processing
    case(
        "gamma_to_uint8",
        gamma_to_uint8,
        lambda r: (r.integers(10, 240, (32, 48), dtype=np.uint8), 2.2),
    ),
    case("rgb_to_gray", rgb_to_gray, lambda r: (r.integers(0, 256, (24, 32, 3), dtype=np.uint8),)),
    case(
        "rgb_to_gray_channels_first_view",
        rgb_to_gray,
        lambda r: (r.integers(0, 256, (3, 24, 32), dtype=np.uint8).transpose(1, 2, 0),),
    ),
    case("box_blur_f32", box_blur, lambda r: (_uniform(r, (20, 28), 0, 1, np.float32), 1)),
    case(
        "box_blur_uint8_radius2",
        box_blur,
        lambda r: (r.integers(0, 256, (16, 16), dtype=np.uint8), 2),
    ),
    # in-place optimiser steps
    case(
        "sgd_momentum_f32",
        sgd_momentum,
        lambda r: (
            _normal(r, (10, 5), np.float32),
            _normal(r, (10, 5), np.float32),
            _normal(r, (10, 5), np.float32),
            0.01,
            0.9,
        ),
    ),
    case(
        "sgd_momentum_strided_weights",
        sgd_momentum,
        lambda r: (_normal(r, (20, 5))[::2], np.zeros((10, 5)), _normal(r, (10, 5)), 0.1, 0.9),
    ),
    case(
        "adam_linear_regression",
        adam_linear_regression,
        lambda r: (
            _normal(r, 8),
            _normal(r, 8) * 0.1,
            _uniform(r, 8, 0, 0.1),
            _normal(r, (64, 8)),
            _normal(r, 64),
            1e-3,
            3,
        ),
    ),
    case(
        "adam_linear_regression_f32",
        adam_linear_regression,
        lambda r: (
            _normal(r, 8, np.float32),
            np.zeros(8, np.float32),
            np.zeros(8, np.float32),
            _normal(r, (64, 8), np.float32),
            _normal(r, 64, np.float32),
            1e-2,
            1,
        ),
    ),
    case(
        "adam_scaled_lr_f32",
        adam_scaled_lr,
        lambda r: (
            _normal(r, (6, 4), np.float32),
            np.zeros((6, 4), np.float32),
            np.zeros((6, 4), np.float32),
            _normal(r, (6, 4), np.float32),
            1e-3,
            2,
        ),
    ),
    case(
        "sgd_params_dict",
        sgd_params_dict,
        lambda r: (
            {"w": _normal(r, 5) * 0.1, "b": np.zeros(1)},
            _normal(r, (40, 5)),
            r.integers(0, 2, 40).astype(np.float64),
            0.5,
        ),
    ),
]


@pytest.mark.parametrize(("fn", "make_args"), CASES)
def test_program(fn, make_args):
    check(fn, *make_args(rng()))


# ---------------------------------------------------------------------------------------------------------------
# the programs against independent references (so that matching eager NumPy means something)
# ---------------------------------------------------------------------------------------------------------------


def test_horner_matches_polyval():
    r = rng()
    x, coeffs = np.linspace(-2, 2, 101), _normal(r, 6)
    np.testing.assert_allclose(
        check(horner, x, coeffs), np.polyval(coeffs, x), rtol=1e-12, atol=1e-12
    )
    np.testing.assert_allclose(
        check(horner_in_place, x, coeffs), np.polyval(coeffs, x), rtol=1e-12, atol=1e-12
    )
    np.testing.assert_allclose(
        check(horner_python_floats, x, (2.0, -1.0, 0.5)), 2 * x * x - x + 0.5, rtol=1e-12
    )


def test_newton_iterations_converge():
    r = rng()
    a = _uniform(r, 200, 0.01, 1e4)
    np.testing.assert_allclose(check(newton_sqrt, a, 12), np.sqrt(a), rtol=1e-14)
    m = _uniform(r, 128, 0, 2 * np.pi)
    e = check(newton_kepler, m, 0.3, 6)
    np.testing.assert_allclose(e - 0.3 * np.sin(e), m, atol=1e-12)


def test_trapezoid_and_gradient_match_numpy():
    r = rng()
    xs = np.sort(_uniform(r, (5, 64), 0, 10), axis=-1)
    ys = np.sin(xs)
    np.testing.assert_allclose(check(trapezoid, ys, xs), np.trapezoid(ys, xs, axis=-1), rtol=1e-12)
    f = _normal(r, (24, 30))
    gy, gx = check(gradient_2d, f, 0.1)
    ref_y, ref_x = np.gradient(f, 0.1)
    np.testing.assert_allclose(gy, ref_y, rtol=1e-12)
    np.testing.assert_allclose(gx, ref_x, rtol=1e-12)


def test_distances_kernel_and_averages_match_references():
    r = rng()
    p, q = _normal(r, (20, 3)), _normal(r, (15, 3))
    ref = np.array([[math.dist(u, w) for w in q] for u in p])
    np.testing.assert_allclose(check(pairwise_distances, p, q), ref, rtol=1e-12)
    np.testing.assert_allclose(
        check(gaussian_kernel, p, q, 1.5), np.exp(-(ref**2) / 4.5), rtol=1e-10
    )
    np.testing.assert_allclose(
        check(gaussian_kernel_outer, p, q, 1.5), np.exp(-(ref**2) / 4.5), rtol=1e-12
    )
    unit = check(normalize_rows, p, 1e-12)
    np.testing.assert_allclose(np.sum(unit * unit, axis=1), 1, rtol=1e-12)
    s = _normal(r, 120)
    np.testing.assert_allclose(
        check(windowed_moving_average, s, 7), np.convolve(s, np.ones(7) / 7, "valid"), atol=1e-12
    )
    series = _normal(r, (100, 4))
    cma = check(cumulative_moving_average, series)
    np.testing.assert_allclose(cma[49], series[:50].mean(axis=0), rtol=1e-12)


def test_softmax_family_is_consistent():
    r = rng()
    x = _normal(r, (16, 10)) * 5
    p = check(softmax, x)
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(np.exp(check(log_softmax, x)), p, rtol=1e-12)
    big = _normal(r, (10, 50)) * 30
    ref = np.log(np.sum(np.exp(big.astype(np.longdouble)), axis=-1)).astype(np.float64)
    np.testing.assert_allclose(check(logsumexp, big), ref, rtol=1e-12)


def test_gelu_and_norms_match_definitions():
    r = rng()
    xs = np.linspace(-4, 4, 81)
    exact = 0.5 * xs * (1 + np.array([math.erf(v / math.sqrt(2)) for v in xs]))
    np.testing.assert_allclose(check(gelu_tanh, xs), exact, atol=1e-3)
    x = _normal(r, (4, 32)) * 3 + 2
    ln = check(layernorm, x, np.ones(32), np.zeros(32), 0.0)
    np.testing.assert_allclose(ln.mean(axis=-1), 0, atol=1e-12)
    np.testing.assert_allclose(ln.std(axis=-1), 1, rtol=1e-12)
    rms = check(rmsnorm, x, np.ones(32), 0.0)
    np.testing.assert_allclose(np.mean(rms * rms, axis=-1), 1, rtol=1e-12)
    data = _fortran(_normal(r, (40, 6)) * 3 + 1)
    z = check(standardize_columns, data)
    np.testing.assert_allclose(z.mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(z.std(axis=0, ddof=1), 1, rtol=1e-12)


def test_mlp_cosine_and_attention_shapes_and_invariants():
    r = rng()
    x = _normal(r, (16, 20), np.float32)
    w1, b1 = _normal(r, (20, 32), np.float32), _normal(r, 32, np.float32)
    w2, b2 = _normal(r, (32, 5), np.float32), _normal(r, 5, np.float32)
    out = check(mlp_forward, x, w1, b1, w2, b2)
    assert out.shape == (16, 5) and out.dtype == np.float32
    np.testing.assert_allclose(out, np.maximum(x @ w1 + b1, 0) @ w2 + b2, rtol=1e-6)
    a = _normal(r, (8, 25)).T
    sim = check(cosine_similarity, a, a)
    np.testing.assert_allclose(np.diag(sim), 1, rtol=1e-12)
    assert np.all(np.abs(sim) <= 1 + 1e-12)
    out, weights = check(causal_attention, *(_normal(r, (2, 12, 16), np.float32) for _ in range(3)))
    assert out.shape == (2, 12, 16)
    assert np.all(np.triu(weights, k=1) == 0)
    np.testing.assert_allclose(weights.sum(axis=-1), 1, rtol=1e-5)
    np.testing.assert_array_equal(weights[:, 0, 0], 1)


def test_ascontiguousarray_result_is_c_contiguous():
    data = _fortran(_normal(rng(), (12, 40)))
    expected = check(center_rows_contiguous, data)
    assert expected.flags.c_contiguous
    actual = gcompile.compile(center_rows_contiguous, fullgraph=True)(data)
    # the row sums may add in another order than NumPy's walk of the Fortran array
    assert_same_value(expected, actual, NUMBA_ULPS, scale=np.float64)
    assert actual.flags.c_contiguous


def test_cross_entropy_from_labels_matches_one_hot():
    r = rng()
    labels = r.integers(0, 10, 32)
    logits = _normal(r, (32, 10))
    loss, accuracy = check(cross_entropy_int_labels, logits, labels)
    assert loss == pytest.approx(
        check(cross_entropy_one_hot, logits, np.eye(10)[labels]), rel=1e-12
    )
    assert loss == pytest.approx(
        -np.mean(log_softmax_rows(logits)[np.arange(32), labels]), rel=1e-12
    )
    assert accuracy == np.mean(logits.argmax(axis=1) == labels)


def test_black_scholes_erf_and_put_call_parity():
    r = rng()
    xs = np.linspace(-3, 3, 61)
    np.testing.assert_allclose(check(erf_approx, xs), [math.erf(v) for v in xs], atol=2e-7)
    spot, strike = _uniform(r, 64, 50, 150), _uniform(r, 64, 60, 140)
    prices = check(black_scholes, spot, strike, 0.03, 0.25, 1.5)
    parity = spot - strike * np.exp(-0.03 * 1.5)
    np.testing.assert_allclose(prices["call"] - prices["put"], parity, atol=1e-5)
    assert np.all(prices["call"] >= np.maximum(parity, 0) - 1e-5)
    assert np.all(prices["put"] >= 0)


def test_gbm_portfolio_and_ema_match_references():
    r = rng()
    z = _normal(r, (4, 252))
    paths = check(gbm_paths, z, 100.0, 0.05, 0.2, 1 / 252)
    log_growth = np.sum(0.03 / 252 + 0.2 * math.sqrt(1 / 252) * z, axis=1)
    np.testing.assert_allclose(np.log(paths[:, -1] / 100.0), log_growth, rtol=1e-10)
    returns, w = _normal(r, (250, 6)) * 0.01, r.dirichlet(np.ones(6))
    series, mean, vol, _ = check(portfolio_stats, returns, w)
    np.testing.assert_allclose(series, returns @ w)
    assert mean == pytest.approx(np.mean(returns @ w), rel=1e-12)
    assert vol == pytest.approx(math.sqrt(w @ np.cov(returns, rowvar=False) @ w), rel=1e-12)
    closes = 100 + np.cumsum(_normal(r, 30))
    ema = check(exponential_moving_average, closes, 0.2)
    expected = [closes[0]]
    for p in closes[1:]:
        expected.append(0.2 * p + 0.8 * expected[-1])
    np.testing.assert_allclose(ema, expected, rtol=1e-14)


def test_max_drawdown_reference():
    prices = np.array(
        [[100.0, 10.0], [120.0, 11.0], [90.0, 12.0], [95.0, 9.0], [130.0, 12.5], [104.0, 13.0]]
    )
    np.testing.assert_allclose(check(max_drawdown, prices), [-0.25, -0.25])


def test_stencils_match_references():
    r = rng()
    glider = np.zeros((8, 8), np.int8)
    glider[0, 1] = glider[1, 2] = glider[2, 0] = glider[2, 1] = glider[2, 2] = 1
    np.testing.assert_array_equal(
        check(life_generations, glider, 4), np.roll(glider, (1, 1), axis=(0, 1))
    )
    blinker = np.zeros((5, 5), np.int64)
    blinker[2, 1:4] = 1
    np.testing.assert_array_equal(check(life_step, blinker)[0], blinker.T)
    u = _uniform(r, (24, 24), 0, 1)
    final = check(heat_steps_in_place, u, np.zeros_like(u), 0.2, 5)
    np.testing.assert_array_equal(final[0], u[0])
    assert u.min() <= final[1:-1, 1:-1].min() and final[1:-1, 1:-1].max() <= u.max()
    step = u
    for _ in range(5):
        step = heat_step(step, 0.2)
    np.testing.assert_allclose(final, step, rtol=1e-14)
    s = _normal(r, 50)
    np.testing.assert_allclose(
        check(smooth_3point, s)[1:-1], np.convolve(s, np.ones(3) / 3, "valid"), atol=1e-14
    )


def test_hashes_match_references():
    r = rng()
    data = r.integers(0, 256, 1000, dtype=np.uint8)
    assert int(check(adler32, data)) == zlib.adler32(data.tobytes())
    # splitmix64 from state 0: its first three outputs (Vigna's splitmix64.c).
    seeds = np.arange(3, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    assert [hex(v) for v in check(splitmix64, seeds).tolist()] == [
        "0xe220a8397b1dcdaf",
        "0x6e789e6aa1b965f4",
        "0x6c45d188009454f",
    ]
    # murmur3's 32-bit finaliser of 1 (as used by MurmurHash3_x86_32 on an empty input with seed 1).
    assert int(check(murmur3_fmix32, np.array([1]), 64)[0][0]) == 0x514E28B7
    # Marsaglia's xorshift32 from his seed 2463534242: first output 723471715.
    assert (
        int(check(xorshift32_in_place, np.array([2463534242], dtype=np.uint32), 2**31)[0])
        == 723471715
    )
    keys = r.integers(-(10**9), 10**9, 500)
    buckets, occupancy = check(fibonacci_hash_buckets, keys, 4)
    assert occupancy.sum() == 500 and buckets.max() < 16
    cells, offsets = check(spatial_hash, _uniform(r, (50, 3), -5, 5), 0.5, 1024)
    assert cells.min() >= 0 and cells.max() < 1024
    assert offsets.min() >= 0 and offsets.max() < 1


def test_images_match_references():
    r = rng()
    gray = check(rgb_to_gray, np.full((2, 2, 3), 200, np.uint8))
    np.testing.assert_array_equal(gray, np.full((2, 2), 200, np.uint8))
    img = _uniform(r, (20, 28), 0, 1)
    blurred = check(box_blur, img, 1)
    assert blurred[5, 7] == pytest.approx(img[4:7, 6:9].mean(), rel=1e-12)
    out = check(gamma_to_uint8, np.array([[10, 60], [130, 240]], np.uint8), 1.0)
    np.testing.assert_array_equal(
        out, np.round(np.array([[0, 50], [120, 230]]) / 230 * 255).astype(np.uint8)
    )


def test_optimisers_train():
    r = rng()
    x = _normal(r, (64, 8))
    y = x @ _normal(r, 8)
    w, m, v = np.zeros(8), np.zeros(8), np.zeros(8)
    compiled = gcompile.compile(adam_linear_regression, fullgraph=True)
    losses = [compiled(w, m, v, x, y, 0.1, 1) for _ in range(60)]
    assert losses[-1] < 0.05 * losses[0]
    assert compiled.stats["traces"] == 1 and compiled.stats["cache_hits"] == 59
    params = {"w": np.zeros(5), "b": np.zeros(1)}
    xs = _normal(r, (40, 5))
    labels = (xs[:, 0] > 0).astype(np.float64)
    assert check(sgd_params_dict, params, xs, labels, 0.5) == pytest.approx(math.log(2), rel=1e-12)
    assert params["w"][0] == 0  # check() works on copies: the caller's dict is untouched
    step = gcompile.compile(sgd_params_dict, fullgraph=True)
    first = step(params, xs, labels, 0.5)
    second = step(params, xs, labels, 0.5)
    assert first == pytest.approx(math.log(2)) and second < first
    assert params["w"][0] > 0


# ---------------------------------------------------------------------------------------------------------------
# what the graph says about each value (shape, dtype, layout) is what NumPy produces
# ---------------------------------------------------------------------------------------------------------------


def _node_values(graph, inputs):
    """Run ``graph`` node by node as the reference interpreter does; yield ``(node, value)`` for each call."""
    env = dict(zip(graph.placeholders, inputs, strict=True))
    sizes = graph.shape_env.bind(inputs)
    for node in graph.nodes:
        if node.op == "constant":
            env[node] = node.target
        elif node.op == "call":
            kwargs = concrete(map_arg(node.kwargs, env.__getitem__), sizes)
            args = map_arg(node.args, env.__getitem__)
            if subgraphs_of(node):  # (a loop: its own semantics, its body run by the interpreter)
                run = interpreter.run_graphs(interpreter.plans_of(node), sizes)
                value = node.target.interpret(run, args, kwargs)
            else:
                value = node.target.impl(*args, **kwargs)
            env[node] = value.item() if node.meta.weak and hasattr(value, "item") else value
            if not isinstance(value, tuple):  # (a loop's several values: checked item by item)
                yield node, env[node], sizes


def _meta_mismatches(node, value, sizes):
    meta = node.meta.map_sizes(lambda size: evaluate(size, sizes))
    if meta.weak:
        return (
            []
            if type(value) in (bool, int, float, complex)
            else [f"weak, but the value is {type(value).__name__}"]
        )
    problems = []
    if np.shape(value) != meta.shape or np.result_type(value) != meta.dtype:
        problems.append(f"{np.result_type(value)}{np.shape(value)} computed")
    if isinstance(value, np.generic) != meta.scalar:
        problems.append(f"scalar={meta.scalar}, but the value is a {type(value).__name__}")
    if isinstance(value, np.ndarray):
        claimed = {"C": value.flags.c_contiguous, "F": value.flags.f_contiguous}.get(
            meta.layout, True
        )
        if not claimed:
            problems.append(f"layout {meta.layout}, but the value's strides are {value.strides}")
        if meta.writeable != value.flags.writeable:
            problems.append(
                f"writeable={meta.writeable}, but the value's flag is {value.flags.writeable}"
            )
    return problems


@pytest.mark.parametrize(("fn", "make_args"), CASES)
def test_graph_metas_match_values(fn, make_args):
    args = make_args(rng())
    graph = gcompile.trace(fn, *args)
    inputs = ArgumentBinder(fn).bind(args, {}).inputs()
    mismatches = []
    with np.errstate(all="ignore"):
        for node, value, sizes in _node_values(graph, inputs):
            problems = _meta_mismatches(node, value, sizes)
            mismatches += [f"%{node.name} {node.meta}: {p}" for p in problems]
    assert not mismatches, "\n".join(mismatches) + "\n" + str(graph)


def _contiguity(result):
    return [
        (path, value.flags.c_contiguous, value.flags.f_contiguous)
        for path, value in flatten(result, "result")[0]
        if isinstance(value, np.ndarray)
    ]


@pytest.mark.parametrize(("fn", "make_args"), CASES)
def test_results_are_laid_out_like_eager(fn, make_args):
    """Callers see memory layout too (C/F contiguity decides copies in C extensions and ``tobytes`` order)."""
    args = make_args(rng())
    with np.errstate(all="ignore"):
        expected = fn(*copy_args(args, {})[0])
        actual = gcompile.compile(fn, fullgraph=True)(*copy_args(args, {})[0])
    assert _contiguity(actual) == _contiguity(expected)


def assert_matches(actual, expected, backend: str) -> None:
    """``actual`` is eager's ``expected``: bit for bit on the interpreter, within the Numba
    backend's ulps otherwise (see ``tests.support.check``)."""
    assert_same_value(expected, actual, tolerance(backend), backend, narrowest_float(expected))


# ---------------------------------------------------------------------------------------------------------------
# the compile cache
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_cache_hit_gives_fresh_results(backend):
    r = rng()
    compiled = gcompile.compile(layernorm, backend=backend, fullgraph=True)
    gamma, beta = _normal(r, 32, np.float32), _normal(r, 32, np.float32)
    first = _normal(r, (4, 32), np.float32)
    second = _normal(r, (4, 32), np.float32)
    out1 = compiled(first, gamma, beta, 1e-5)
    out2 = compiled(second, gamma, beta, 1e-3)
    assert_matches(out1, layernorm(first, gamma, beta, 1e-5), backend)
    assert_matches(out2, layernorm(second, gamma, beta, 1e-3), backend)
    assert not np.array_equal(out1, out2)
    stats = compiled.stats
    assert (stats["traces"], stats["cache_hits"], stats["cache_entries"], stats["calls"]) == (
        1,
        1,
        1,
        2,
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_cache_hit_mutations_accumulate(backend):
    r = rng()
    compiled = gcompile.compile(sgd_momentum, backend=backend, fullgraph=True)
    w, vel = _normal(r, (10, 5)), np.zeros((10, 5))
    w_ref, vel_ref = w.copy(), vel.copy()
    for _ in range(3):
        grad = _normal(r, (10, 5))
        assert compiled(w, vel, grad, 0.05, 0.9) is None
        sgd_momentum(w_ref, vel_ref, grad, 0.05, 0.9)
        assert_matches(w, w_ref, backend)
        assert_matches(vel, vel_ref, backend)
    assert compiled.stats["traces"] == 1
    assert compiled.stats["cache_hits"] == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_new_sizes(backend):
    r = rng()
    compiled = gcompile.compile(pairwise_distances, backend=backend, fullgraph=True)
    shapes = [
        ((20, 3), (15, 3)),
        ((20, 3), (15, 3)),
        ((7, 3), (15, 3)),
        ((20, 3), (15, 3)),
        ((7, 2), (4, 2)),
    ]
    for a_shape, b_shape in shapes:
        a, b = _normal(r, a_shape), _normal(r, b_shape)
        out = compiled(a, b)
        assert out.shape == (a_shape[0], b_shape[0])
        assert_matches(out, pairwise_distances(a, b), backend)
    stats = compiled.stats
    assert (stats["traces"], stats["cache_hits"], stats["cache_entries"]) == (1, 4, 1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_new_dtype_or_static_value_retraces(backend):
    r = rng()
    compiled = gcompile.compile(newton_sqrt, backend=backend, fullgraph=True)
    a64 = _uniform(r, 50, 1, 100)
    a32 = a64.astype(np.float32)
    for a, iterations in [(a64, 4), (a64, 8), (a32, 8), (a64 * 2, 4), (a32 + 1, 8)]:
        assert_matches(compiled(a, iterations), newton_sqrt(a, iterations), backend)
    stats = compiled.stats
    assert (stats["traces"], stats["cache_hits"]) == (3, 2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_new_float_argument_value_is_not_baked_in(backend):
    r = rng()
    compiled = gcompile.compile(black_scholes, backend=backend, fullgraph=True)
    spot, strike = _uniform(r, 16, 80, 120), _uniform(r, 16, 80, 120)
    for rate, vol in [(0.01, 0.2), (0.05, 0.4), (0.0, 0.1)]:
        got = compiled(spot, strike, rate, vol, 2.0)
        want = black_scholes(spot, strike, rate, vol, 2.0)
        assert_matches(got["call"], want["call"], backend)
        assert_matches(got["put"], want["put"], backend)
    assert compiled.stats["traces"] == 1
    assert compiled.stats["cache_hits"] == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_layout_change_retraces(backend):
    r = rng()
    compiled = gcompile.compile(standardize_columns, backend=backend, fullgraph=True)
    data = _normal(r, (30, 4))
    for arg in (data, _fortran(data), _normal(r, (60, 4))[::2], _fortran(data)):
        assert_matches(compiled(arg), standardize_columns(arg), backend)
    assert compiled.stats["traces"] == 3
    assert compiled.stats["cache_hits"] == 1
