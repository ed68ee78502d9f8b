"""Image preprocessing: an 8-bit RGB frame to a gamma-corrected, contrast-normalised 8-bit frame.

The steps a camera or vision pipeline applies to every frame:

1. convert the uint8 pixels to float32 in [0, 1];
2. gamma correction with ``np.power`` (``gamma`` < 1 brightens the shadows);
3. per-channel normalisation: subtract each channel's mean and divide by its standard
   deviation, both over the pixel axes (height and width);
4. map back to a target mean and spread, ``clip`` to [0, 1] and convert to uint8 with
   rounding (``np.rint``; a bare ``astype`` would truncate).

``normalize_frame`` returns the float32 network input of step 3; ``enhance_frame`` runs the
whole pipeline and returns the uint8 frame.

Run it to see gcompile's eager-vs-compiled report for each function:

    python examples/image_pipeline.py

or through the command line:

    gcompile compare examples/image_pipeline.py:enhance_frame
"""

from __future__ import annotations

import numpy as np

import gcompile


def normalize_frame(frame, gamma: float, eps: float = 1e-6):
    """Gamma-corrected float32 frame with zero mean and unit variance in each channel."""
    x = np.power(frame.astype(np.float32) / 255.0, gamma)
    # Statistics of two million pixels are accumulated in float64: NumPy sums float32 over
    # non-contiguous axes one pixel at a time in float32, which loses three digits here.
    mean = x.mean(axis=(0, 1), dtype=np.float64, keepdims=True).astype(np.float32)
    std = x.std(axis=(0, 1), dtype=np.float64, keepdims=True).astype(np.float32)
    return (x - mean) / (std + eps)


def enhance_frame(frame, gamma: float, target_mean: float = 0.5, target_std: float = 0.2):
    """Gamma correction and per-channel contrast stretch of an 8-bit frame, back to 8 bits."""
    z = normalize_frame(frame, gamma)
    y = np.clip(z * target_std + target_mean, 0.0, 1.0)
    return np.rint(y * 255.0).astype(np.uint8)


def example_inputs(height: int = 1080, width: int = 1920):
    """A synthetic, dim, colour-cast ``height`` x ``width`` RGB frame: smooth gradients plus
    sensor noise, each channel with a different brightness; ``gamma`` = 0.8."""
    rng = np.random.default_rng(3)
    rows = np.linspace(0.0, 1.0, height)[:, None, None]
    cols = np.linspace(0.0, 1.0, width)[None, :, None]
    channel_gain = np.array([0.55, 0.45, 0.35])
    scene = (0.3 + 0.4 * rows * cols + 0.2 * np.sin(6.0 * cols + 3.0 * rows)) * channel_gain
    noisy = scene * 255.0 + rng.normal(0.0, 6.0, (height, width, 3))
    frame = np.clip(np.rint(noisy), 0, 255).astype(np.uint8)
    return frame, 0.8


if __name__ == "__main__":
    print(gcompile.compare(normalize_frame, *example_inputs(), repeat=10), end="\n\n")
    print(gcompile.compare(enhance_frame, *example_inputs(), repeat=10))
