"""Realistic NumPy functions shared by the golden and fusion tests (one definition each)."""

from __future__ import annotations

import numpy as np


def softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def layernorm(x, gamma, beta, eps: float = 1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    centered = x - mean
    var = (centered * centered).mean(axis=-1, keepdims=True)
    return centered / np.sqrt(var + eps) * gamma + beta


def black_scholes(spot, strike, years, rate: float, vol: float):
    """European call and put prices, with the tanh approximation of the normal CDF."""
    sqrt_t = np.sqrt(years)
    d1 = (np.log(spot / strike) + (rate + 0.5 * vol * vol) * years) / (vol * sqrt_t)
    d2 = d1 - vol * sqrt_t
    cdf = lambda z: 0.5 * (1.0 + np.tanh(0.7978845608 * (z + 0.044715 * z**3)))  # noqa: E731
    discount = np.exp(-rate * years)
    call = spot * cdf(d1) - strike * discount * cdf(d2)
    put = strike * discount * cdf(-d2) - spot * cdf(-d1)
    return call, put


def adam_step(w, grad, m, v, step, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8):
    """One Adam update of ``w``, ``m`` and ``v`` in place."""
    m *= beta1
    m += (1 - beta1) * grad
    v *= beta2
    v += (1 - beta2) * grad * grad
    m_hat = m / (1 - beta1**step)
    v_hat = v / (1 - beta2**step)
    w -= lr * m_hat / (np.sqrt(v_hat) + eps)
