"""Transformer-block building blocks: softmax, layer normalisation and attention probabilities.

The row-wise kernels of a transformer layer in plain NumPy, float32 throughout, on a batch of
32 sequences of 128 tokens with a model width of 256:

- ``softmax(x)``: softmax over the last axis, with the row maximum subtracted first so that
  ``exp`` cannot overflow;
- ``layernorm(x, gamma, beta, eps)``: normalise each token's features to zero mean and unit
  variance, then scale by ``gamma`` and shift by ``beta``;
- ``attention_probs(q, k)``: the attention weights ``softmax(q @ k^T / sqrt(d))`` of a
  single head.

Run it to see gcompile's eager-vs-compiled report for each function:

    python examples/transformer_block.py

or one of them through the command line:

    gcompile compare examples/transformer_block.py:layernorm
"""

from __future__ import annotations

import math

import numpy as np

import gcompile


def softmax(x):
    """Softmax over the last axis (max-subtracted, so large logits do not overflow)."""
    shifted = x - np.max(x, axis=-1, keepdims=True)
    e = np.exp(shifted)
    return e / np.sum(e, axis=-1, keepdims=True)


def layernorm(x, gamma, beta, eps: float = 1e-5):
    """Layer normalisation over the feature (last) axis, with learned scale and shift."""
    mean = np.mean(x, axis=-1, keepdims=True)
    centered = x - mean
    var = np.mean(centered * centered, axis=-1, keepdims=True)
    return centered / np.sqrt(var + eps) * gamma + beta


def attention_probs(q, k):
    """Scaled dot-product attention weights of one head: ``softmax(q @ k^T / sqrt(d))``."""
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    return softmax(scores)


def example_inputs_softmax(batch: int = 32, seq: int = 128, width: int = 256):
    """Logits of shape ``(batch, seq, width)``."""
    rng = np.random.default_rng(0)
    return (rng.standard_normal((batch, seq, width), dtype=np.float32) * 4.0,)


def example_inputs_layernorm(batch: int = 32, seq: int = 128, width: int = 256):
    """Activations ``(batch, seq, width)`` and the per-feature ``gamma``, ``beta`` of width ``width``."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((batch, seq, width), dtype=np.float32) * 2.0 + 0.5
    gamma = (1.0 + 0.1 * rng.standard_normal(width)).astype(np.float32)
    beta = (0.1 * rng.standard_normal(width)).astype(np.float32)
    return x, gamma, beta, 1e-5


def example_inputs_attention_probs(batch: int = 32, seq: int = 128, head_dim: int = 64):
    """Queries and keys of one head, each ``(batch, seq, head_dim)``."""
    rng = np.random.default_rng(2)
    q = rng.standard_normal((batch, seq, head_dim), dtype=np.float32)
    k = rng.standard_normal((batch, seq, head_dim), dtype=np.float32)
    return q, k


example_inputs = example_inputs_softmax

if __name__ == "__main__":
    print(gcompile.compare(softmax, *example_inputs_softmax(), repeat=10), end="\n\n")
    print(gcompile.compare(layernorm, *example_inputs_layernorm(), repeat=10), end="\n\n")
    print(gcompile.compare(attention_probs, *example_inputs_attention_probs(), repeat=10))
