"""PyTorch tensors and NumPy arrays in one compiled call, without copies.

A CPU tensor is taken as a NumPy array over its memory (DLPack); the result comes back as a
tensor over the buffer the compiled code wrote (``torch.from_dlpack``), and a write into an
argument lands in the tensor. Without PyTorch installed this runs on NumPy arrays alone.

    python examples/torch_interop.py
"""

from __future__ import annotations

import numpy as np

import gcompile


def normalize(x, mean, scale, clip: float):
    """Standardise the columns of ``x`` and clip them to ``[-clip, clip]``."""
    return np.clip((x - mean) / scale, -clip, clip)


def example_inputs(n: int = 1_000_000):
    """``n`` rows of 8 float32 features, their column means and spreads, clip at 3."""
    x = np.random.default_rng(0).standard_normal((n, 8)).astype(np.float32) * 4 + 1
    return x, x.mean(axis=0), x.std(axis=0), 3.0


def mixed_call(n: int = 1_000) -> tuple:
    """``normalize`` called on a torch tensor and NumPy arrays: (result, NumPy's result)."""
    import torch

    x, mean, scale, clip = example_inputs(n)
    result = gcompile.compile(normalize)(torch.from_numpy(x), mean, scale, clip)
    return result, normalize(x, mean, scale, clip)


if __name__ == "__main__":
    try:
        result, expected = mixed_call()
    except ImportError:
        print("PyTorch is not installed: see gcompile.compare on NumPy arrays instead")
        print(gcompile.compare(normalize, *example_inputs(), repeat=5))
    else:
        print(type(result).__name__, result.dtype, "equal to NumPy:", np.allclose(result, expected))
