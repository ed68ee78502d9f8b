"""One step of the Adam optimiser, updating parameters and moment estimates in place.

For a parameter vector ``params`` with gradient ``grad`` (Kingma & Ba, 2015):

    m = beta1 m + (1 - beta1) grad            (first moment, running mean of the gradient)
    v = beta2 v + (1 - beta2) grad^2          (second moment, running mean of its square)
    m_hat = m / (1 - beta1^t),  v_hat = v / (1 - beta2^t)      (bias corrections)
    params -= lr m_hat / (sqrt(v_hat) + eps)

The arrays are float32 and are updated in place, as a training loop keeps them.
``adamw_step`` also applies decoupled weight decay (AdamW) and returns the norm of the update
for logging.

The step number ``t`` shows how gcompile treats Python numbers. ``adam_step`` takes it as a
Python int, which is static: every new step re-traces (milliseconds; the kernels are reused),
and after ``GCOMPILE_CACHE_LIMIT`` different steps gcompile warns of a recompile storm.
``adamw_step`` takes it as a Python float, a runtime input: one trace serves every step. In a
training loop, pass ``float(step)``.

Run it to see gcompile's eager-vs-compiled report for each function:

    python examples/adam.py

or through the command line:

    gcompile compare examples/adam.py:adam_step
"""

from __future__ import annotations

import numpy as np

import gcompile


def adam_step(params, grad, m, v, step: int, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8):
    """One Adam update of ``params``, ``m`` and ``v`` in place; ``step`` counts from 1."""
    m *= beta1
    m += (1.0 - beta1) * grad
    v *= beta2
    v += (1.0 - beta2) * grad * grad
    m_hat = m / (1.0 - beta1**step)
    v_hat = v / (1.0 - beta2**step)
    params -= lr * m_hat / (np.sqrt(v_hat) + eps)


def adamw_step(
    params, grad, m, v, step: float, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=1e-2
):
    """One AdamW update in place (Adam plus decoupled weight decay); returns the update's norm."""
    m *= beta1
    m += (1.0 - beta1) * grad
    v *= beta2
    v += (1.0 - beta2) * np.square(grad)
    m_hat = m / (1.0 - beta1**step)
    v_hat = v / (1.0 - beta2**step)
    update = lr * (m_hat / (np.sqrt(v_hat) + eps) + weight_decay * params)
    params -= update
    return np.sqrt(np.sum(update * update))


def _state(n: int):
    """Parameters, a gradient and moment estimates as they look some way into training."""
    rng = np.random.default_rng(11)
    params = rng.standard_normal(n, dtype=np.float32) * np.float32(0.05)
    grad = rng.standard_normal(n, dtype=np.float32) * np.float32(1e-3)
    m = rng.standard_normal(n, dtype=np.float32) * np.float32(1e-4)
    v = np.square(rng.standard_normal(n, dtype=np.float32) * np.float32(1e-3))
    return params, grad, m, v


def example_inputs_adam_step(n: int = 1_000_000):
    """``n`` float32 parameters at step 100."""
    return (*_state(n), 100)


def example_inputs_adamw_step(n: int = 1_000_000):
    """``n`` float32 parameters at step 100 (a float: a runtime input)."""
    return (*_state(n), 100.0)


example_inputs = example_inputs_adam_step

if __name__ == "__main__":
    print(gcompile.compare(adam_step, *example_inputs_adam_step(), repeat=10), end="\n\n")
    print(gcompile.compare(adamw_step, *example_inputs_adamw_step(), repeat=10))
