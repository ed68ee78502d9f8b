"""Heat diffusion on a plate: explicit time steps of the 2-D heat equation.

The temperature ``u`` on a square grid evolves by ``du/dt = D * laplacian(u)``. Each explicit
(forward Euler) step updates the interior points in place with the 5-point stencil

    u[i, j] += alpha * (u[i-1, j] + u[i+1, j] + u[i, j-1] + u[i, j+1] - 4 u[i, j])

where ``alpha = D * dt / dx**2`` must stay below 1/4 for stability. The border rows and
columns are never written: they hold the boundary temperatures (Dirichlet conditions).
The time loop stays a loop: its body is traced once (the step count is a Python int, fixed
for the compiled entry), and the compiled function is one Numba function with a real ``for``
loop around the stencil kernel, which writes the interior in place.

Run it to see gcompile's eager-vs-compiled report:

    python examples/heat_diffusion.py

or through the command line:

    gcompile compare examples/heat_diffusion.py:diffuse
"""

from __future__ import annotations

import numpy as np

import gcompile


def diffuse(u, alpha: float, steps: int):
    """Advance the grid ``u`` by ``steps`` explicit heat-equation steps, in place.

    Returns the largest temperature change of the last step, a convergence measure.
    """
    change = np.zeros_like(u[1:-1, 1:-1])
    for _ in range(steps):
        laplacian = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * u[1:-1, 1:-1]
        change = alpha * laplacian
        u[1:-1, 1:-1] += change
    return np.max(np.abs(change))


def example_inputs(n: int = 512, steps: int = 20):
    """An ``n`` x ``n`` plate at 20 degrees with a hot top edge (100) and a cold bottom edge (0),
    and a hot spot in the middle; ``alpha`` = 0.2 (stable), ``steps`` steps."""
    u = np.full((n, n), 20.0)
    u[0, :] = 100.0
    u[-1, :] = 0.0
    middle = slice(n // 2 - n // 16, n // 2 + n // 16)
    u[middle, middle] = 80.0
    return u, 0.2, steps


if __name__ == "__main__":
    print(gcompile.compare(diffuse, *example_inputs(), repeat=10))
