"""A multi-layer perceptron classifier: the forward pass of a two-layer network in NumPy.

    hidden = gelu(x @ W1 + b1)          (or relu)
    logits = hidden @ W2 + b2
    output = log_softmax(logits)        (or softmax probabilities)

float32 throughout, for a batch of 256 inputs of 512 features, 1024 hidden units and 10
classes. GELU uses the tanh approximation of GPT-2 and BERT. The matrix products go to BLAS;
the bias, activation and (log-)softmax around them are what gcompile fuses.

Run it to see gcompile's eager-vs-compiled report for each function:

    python examples/mlp.py

or through the command line:

    gcompile compare examples/mlp.py:mlp_log_probs
"""

from __future__ import annotations

import numpy as np

import gcompile


def gelu(x):
    """GELU, tanh approximation: ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``."""
    return 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x**3)))


def relu(x):
    return np.maximum(x, 0.0)


def log_softmax(z):
    """``log(softmax(z))`` over the last axis, computed without overflow or log(0)."""
    shifted = z - np.max(z, axis=-1, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))


def mlp_log_probs(x, w1, b1, w2, b2):
    """Log-probabilities of each class: GELU hidden layer, log-softmax output."""
    hidden = gelu(x @ w1 + b1)
    return log_softmax(hidden @ w2 + b2)


def mlp_probs(x, w1, b1, w2, b2):
    """Class probabilities: ReLU hidden layer, softmax output."""
    hidden = relu(x @ w1 + b1)
    logits = hidden @ w2 + b2
    e = np.exp(logits - np.max(logits, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def example_inputs(batch: int = 256, features: int = 512, hidden: int = 1024, classes: int = 10):
    """A batch of inputs and He-initialised weights (biases small and random)."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((batch, features), dtype=np.float32)
    w1 = rng.standard_normal((features, hidden), dtype=np.float32) * np.float32(
        np.sqrt(2.0 / features)
    )
    b1 = rng.standard_normal(hidden, dtype=np.float32) * np.float32(0.01)
    w2 = rng.standard_normal((hidden, classes), dtype=np.float32) * np.float32(
        np.sqrt(2.0 / hidden)
    )
    b2 = rng.standard_normal(classes, dtype=np.float32) * np.float32(0.01)
    return x, w1, b1, w2, b2


if __name__ == "__main__":
    print(gcompile.compare(mlp_log_probs, *example_inputs(), repeat=10), end="\n\n")
    print(gcompile.compare(mlp_probs, *example_inputs(), repeat=10))
