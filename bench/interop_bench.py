"""Torch CPU tensors against NumPy arrays through one compiled elementwise function: time per
call (best of several rounds, in one run) and evidence that no copy is made on either side.

    python bench/interop_bench.py [--n 10000000] [--rounds 15]

Needs PyTorch (a bench-only extra: ``pip install torch`` for the CPU). The zero-copy evidence:
each input tensor's ``data_ptr()`` is the address of the array the kernel read, and the result
tensor's ``data_ptr()`` is the address of the array the compiled program returned (recorded by
wrapping ``torch.from_dlpack`` for one call).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

import gcompile
from gcompile.interop import arrays


def transcendental(x, y):
    return np.exp(-x * x) * np.sin(y) + np.log1p(np.abs(x * y))


def _best(fn, args: tuple, rounds: int) -> float:
    fn(*args)
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return min(times)


def _interleaved(fn, numpy_args: tuple, torch_args: tuple, rounds: int) -> tuple[float, float]:
    """Best NumPy and torch times, the two alternating so a noisy neighbour hits both."""
    best_numpy = best_torch = float("inf")
    for _ in range(rounds):
        best_numpy = min(best_numpy, _best(fn, numpy_args, 1))
        best_torch = min(best_torch, _best(fn, torch_args, 1))
    return best_numpy, best_torch


def zero_copy(fn, x: torch.Tensor, y: torch.Tensor) -> dict:
    """Whether the inputs are read in place and the result is the program's own buffer."""
    written = []
    original = torch.from_dlpack

    def recording(array):
        written.append(array.ctypes.data)
        return original(array)

    torch.from_dlpack = recording
    try:
        result = fn(x, y)
    finally:
        torch.from_dlpack = original
    return {
        "inputs read in place": all(
            arrays.as_ndarray(t, "t").ctypes.data == t.data_ptr() for t in (x, y)
        ),
        "result is a torch.Tensor": isinstance(result, torch.Tensor),
        "result memory is the buffer the kernel wrote": written == [result.data_ptr()],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--rounds", type=int, default=15)
    options = parser.parse_args()
    rng = np.random.default_rng(0)
    x = rng.standard_normal(options.n, dtype=np.float32)
    y = rng.standard_normal(options.n, dtype=np.float32)
    tx, ty = torch.from_numpy(x.copy()), torch.from_numpy(y.copy())
    compiled = gcompile.compile(transcendental)
    for check, ok in zero_copy(compiled, tx, ty).items():
        print(f"{check}: {ok}")
    eager = _best(transcendental, (x, y), 3)
    numpy_time, torch_time = _interleaved(compiled, (x, y), (tx, ty), options.rounds)
    print(f"n={options.n} float32, best of {options.rounds}")
    print(f"eager NumPy        {eager * 1e3:8.4g} ms")
    print(f"gcompile on NumPy  {numpy_time * 1e3:8.4g} ms")
    print(f"gcompile on torch  {torch_time * 1e3:8.4g} ms")
    print(f"torch / NumPy      {torch_time / numpy_time:8.3f}")


if __name__ == "__main__":
    main()
