"""LU factorisation without pivoting, the textbook loop program.

Doolittle's algorithm overwrites ``A`` with its factors: the unit lower triangle ``L`` below
the diagonal, ``U`` on and above it, so that ``A = L @ U``. Row ``i`` of both factors comes
from dot products of the rows and columns already factored:

    L[i, j] = (A[i, j] - L[i, :j] @ U[:j, j]) / U[j, j]      for j < i
    U[i, j] =  A[i, j] - L[i, :i] @ U[:i, j]                  for j >= i

Eager NumPy pays a library call per dot product (n**2 of them). gcompile keeps both loops as
loops (one trace for every size), turns each dot product into a fused sum read in place, and
compiles the whole function into one Numba function with real ``for`` loops.

Run it to see gcompile's eager-vs-compiled report:

    python examples/lu_factorization.py

or through the command line:

    gcompile compare examples/lu_factorization.py:lu
    gcompile dump examples/lu_factorization.py:lu --stage fused
"""

from __future__ import annotations

import numpy as np

import gcompile


def lu(A):
    """Factor ``A`` in place (no pivoting: ``A`` should be diagonally dominant); returns ``A``."""
    n = A.shape[0]
    for i in range(n):
        for j in range(i):
            A[i, j] = (A[i, j] - A[i, :j] @ A[:j, j]) / A[j, j]
        for j in range(i, n):
            A[i, j] -= A[i, :i] @ A[:i, j]
    return A


def example_inputs(n: int = 200):
    """A random diagonally dominant ``n`` x ``n`` matrix (every pivot is safely non-zero)."""
    rng = np.random.default_rng(0)
    return (rng.random((n, n)) + n * np.eye(n),)


if __name__ == "__main__":
    print(gcompile.compare(lu, *example_inputs(), repeat=10))
