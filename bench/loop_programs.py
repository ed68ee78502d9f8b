"""Classic loop programs in plain NumPy and Python loops, for bench/loop_bench.py.

Each program is a top-level function written in the subset that NumPy, ``numba.njit`` and
Pythran all compile: int and slice indexing (negative steps included), ``@`` on 1-D slices,
``np.sqrt``/``np.minimum``/``np.sum``, arithmetic, in-place ``+=``/``-=``/``*=`` on slices
and elements, ``np.empty``/``np.zeros`` with an explicit dtype, ``range`` with start, stop
and step. No fancy indexing, boolean masks, lists of arrays, nor ``if`` on array data.
Several programs update their arguments in place, as real code does; the others return
arrays.

``PROGRAMS`` lists them with their inputs at three sizes:

- ``"tiny"``: 8-16 rows and a few time steps: a smoke run of the harness in seconds
  (``--sizes tiny``); tests/test_loop_programs.py checks its argument types too;
- ``"small"``: matrices of 60-120 rows, images of about 120 x 100, 20-50 time steps, the
  recurrence over 200,000 elements;
- ``"medium"``: 2-4x larger per dimension, NumPy eager still under about 2 s per call.

Inputs are well conditioned: the factorisations and solves get diagonally dominant or
symmetric positive definite matrices, so every implementation's rounding stays small.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

# -- dense linear algebra ---------------------------------------------------------------------


def lu(A):
    """LU factorisation without pivoting (Doolittle), in place: unit-lower L below, U on and above the diagonal."""
    n = A.shape[0]
    for i in range(n):
        for j in range(i):
            A[i, j] = (A[i, j] - A[i, :j] @ A[:j, j]) / A[j, j]
        for j in range(i, n):
            A[i, j] -= A[i, :i] @ A[:i, j]


def cholesky(A):
    """Cholesky factorisation A = L L^T of an SPD matrix, in place: L in the lower triangle."""
    n = A.shape[0]
    for i in range(n):
        for j in range(i):
            A[i, j] = (A[i, j] - A[i, :j] @ A[j, :j]) / A[j, j]
        A[i, i] = np.sqrt(A[i, i] - A[i, :i] @ A[i, :i])


def forward_substitution(L, b):
    """Solve L x = b for lower-triangular L by forward substitution; returns x."""
    n = L.shape[0]
    x = np.zeros(n, dtype=np.float64)
    for i in range(n):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


def back_substitution(U, b):
    """Solve U x = b for upper-triangular U by back substitution, in place: x overwrites b."""
    n = U.shape[0]
    for i in range(n - 1, -1, -1):
        b[i] = (b[i] - U[i, i + 1 :] @ b[i + 1 :]) / U[i, i]


def gram_schmidt(A):
    """QR factorisation of A (m x n, m >= n) by modified Gram-Schmidt; returns Q and R."""
    n = A.shape[1]
    Q = A.copy()
    R = np.zeros((n, n), dtype=np.float64)
    for k in range(n):
        R[k, k] = np.sqrt(Q[:, k] @ Q[:, k])
        Q[:, k] /= R[k, k]
        for j in range(k + 1, n):
            R[k, j] = Q[:, k] @ Q[:, j]
            Q[:, j] -= R[k, j] * Q[:, k]
    return Q, R


def levinson_durbin(r, b):
    """Solve the SPD Toeplitz system T x = b, T[i, j] = r[|i - j|] with r[0] = 1, by Levinson-Durbin; returns x."""
    n = b.shape[0]
    x = np.zeros(n, dtype=np.float64)
    y = np.zeros(n, dtype=np.float64)  # the Yule-Walker solution of the leading block
    z = np.zeros(n, dtype=np.float64)
    x[0] = b[0]
    y[0] = -r[1]
    alpha = -r[1]
    beta = 1.0
    for k in range(1, n):
        beta = (1.0 - alpha * alpha) * beta
        mu = (b[k] - r[1 : k + 1] @ x[k - 1 :: -1]) / beta
        x[:k] += mu * y[k - 1 :: -1]
        x[k] = mu
        if k < n - 1:
            alpha = (-r[k + 1] - r[1 : k + 1] @ y[k - 1 :: -1]) / beta
            z[:k] = y[:k] + alpha * y[k - 1 :: -1]  # through z: y is read reversed
            y[:k] = z[:k]
            y[k] = alpha
    return x


def syrk(C, A, alpha, beta):
    """Symmetric rank-k update of C's lower triangle, in place: C = alpha A A^T + beta C."""
    n, m = A.shape
    for i in range(n):
        C[i, : i + 1] *= beta
        for k in range(m):
            C[i, : i + 1] += alpha * A[i, k] * A[: i + 1, k]


def syr2k(C, A, B, alpha, beta):
    """Symmetric rank-2k update of C's lower triangle, in place: C = alpha (A B^T + B A^T) + beta C."""
    n, m = A.shape
    for i in range(n):
        C[i, : i + 1] *= beta
        for k in range(m):
            C[i, : i + 1] += alpha * B[i, k] * A[: i + 1, k] + alpha * A[i, k] * B[: i + 1, k]


def trmm(L, B, alpha):
    """Triangular matrix multiply, in place: B = alpha L B for lower-triangular L (rows bottom-up)."""
    n = B.shape[0]
    for i in range(n - 1, -1, -1):
        B[i, :] *= L[i, i]
        for k in range(i):
            B[i, :] += L[i, k] * B[k, :]
        B[i, :] *= alpha


def floyd_warshall(D):
    """All-pairs shortest path lengths (Floyd-Warshall), in place on the distance matrix D."""
    n = D.shape[0]
    for k in range(n):
        for i in range(n):
            D[i, :] = np.minimum(D[i, :], D[i, k] + D[k, :])


# -- stencils and time stepping ---------------------------------------------------------------


def jacobi_1d(A, B, T):
    """T steps of the 3-point Jacobi average on a line, A and B alternating, in place."""
    for _ in range(T):
        B[1:-1] = (A[:-2] + A[1:-1] + A[2:]) / 3.0
        A[1:-1] = (B[:-2] + B[1:-1] + B[2:]) / 3.0


def jacobi_2d(A, B, T):
    """T steps of the 5-point Jacobi average on a grid, A and B alternating, in place."""
    for _ in range(T):
        B[1:-1, 1:-1] = 0.2 * (
            A[1:-1, 1:-1] + A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:]
        )
        A[1:-1, 1:-1] = 0.2 * (
            B[1:-1, 1:-1] + B[:-2, 1:-1] + B[2:, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:]
        )


def gauss_seidel_2d(A, T):
    """T sweeps of the 9-point Gauss-Seidel average on a grid, in place, point by point."""
    n, m = A.shape
    for _ in range(T):
        for i in range(1, n - 1):
            for j in range(1, m - 1):
                A[i, j] = (
                    A[i - 1, j - 1] + A[i - 1, j] + A[i - 1, j + 1]
                    + A[i, j - 1] + A[i, j] + A[i, j + 1]
                    + A[i + 1, j - 1] + A[i + 1, j] + A[i + 1, j + 1]
                ) / 9.0  # fmt: skip


def fdtd_2d(ex, ey, hz, source, T):
    """T steps of the 2-D finite-difference time-domain (Yee) scheme on fields ex, ey, hz, in place."""
    for t in range(T):
        ey[0, :] = source[t]
        ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] -= 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] -= 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])


def heat_3d(A, B, T):
    """T steps of the explicit 7-point heat equation on a cube, A and B alternating, in place."""
    for _ in range(T):
        B[1:-1, 1:-1, 1:-1] = A[1:-1, 1:-1, 1:-1] + 0.125 * (
            A[2:, 1:-1, 1:-1] + A[:-2, 1:-1, 1:-1]
            + A[1:-1, 2:, 1:-1] + A[1:-1, :-2, 1:-1]
            + A[1:-1, 1:-1, 2:] + A[1:-1, 1:-1, :-2]
            - 6.0 * A[1:-1, 1:-1, 1:-1]
        )  # fmt: skip
        A[1:-1, 1:-1, 1:-1] = B[1:-1, 1:-1, 1:-1] + 0.125 * (
            B[2:, 1:-1, 1:-1] + B[:-2, 1:-1, 1:-1]
            + B[1:-1, 2:, 1:-1] + B[1:-1, :-2, 1:-1]
            + B[1:-1, 1:-1, 2:] + B[1:-1, 1:-1, :-2]
            - 6.0 * B[1:-1, 1:-1, 1:-1]
        )  # fmt: skip


def adi(u, T, r):
    """T Peaceman-Rachford ADI steps of the 2-D heat equation on u (edges fixed), in place:
    Thomas sweeps implicit along axis 0, then along axis 1, all lines of a sweep at once."""
    n = u.shape[0]
    diagonal = 1.0 + 2.0 * r  # the implicit operator is tridiagonal (-r, 1 + 2r, -r)
    c = np.zeros(n, dtype=np.float64)  # Thomas's modified upper diagonal, the same on every line
    for i in range(1, n - 1):
        c[i] = -r / (diagonal + r * c[i - 1])
    v = u.copy()  # the half step; its edges stay u's
    d = np.zeros((n, n), dtype=np.float64)  # Thomas's modified right-hand sides
    for _ in range(T):
        d[0, 1:-1] = u[0, 1:-1]
        for i in range(1, n - 1):
            rhs = r * u[i, :-2] + (1.0 - 2.0 * r) * u[i, 1:-1] + r * u[i, 2:]
            d[i, 1:-1] = (rhs + r * d[i - 1, 1:-1]) / (diagonal + r * c[i - 1])
        for i in range(n - 2, 0, -1):
            v[i, 1:-1] = d[i, 1:-1] - c[i] * v[i + 1, 1:-1]
        d[1:-1, 0] = v[1:-1, 0]
        for j in range(1, n - 1):
            rhs = r * v[:-2, j] + (1.0 - 2.0 * r) * v[1:-1, j] + r * v[2:, j]
            d[1:-1, j] = (rhs + r * d[1:-1, j - 1]) / (diagonal + r * c[j - 1])
        for j in range(n - 2, 0, -1):
            u[1:-1, j] = d[1:-1, j] - c[j] * u[1:-1, j + 1]


# -- signals and images -----------------------------------------------------------------------


def recursive_filter(image, a, b):
    """First-order recursive (IIR) smoothing, forward and backward passes along rows, then
    along columns (y[i] = a x[i] + b y[i-1], as in Deriche's filter); returns the result."""
    h, w = image.shape
    forward = np.empty((h, w), dtype=np.float64)
    backward = np.empty((h, w), dtype=np.float64)
    forward[:, 0] = a * image[:, 0]
    for j in range(1, w):
        forward[:, j] = a * image[:, j] + b * forward[:, j - 1]
    backward[:, w - 1] = 0.0
    for j in range(w - 2, -1, -1):
        backward[:, j] = a * image[:, j + 1] + b * backward[:, j + 1]
    rows = forward + backward
    forward[0, :] = a * rows[0, :]
    for i in range(1, h):
        forward[i, :] = a * rows[i, :] + b * forward[i - 1, :]
    backward[h - 1, :] = 0.0
    for i in range(h - 2, -1, -1):
        backward[i, :] = a * rows[i + 1, :] + b * backward[i + 1, :]
    return forward + backward


def conv2d(image, weights):
    """Direct 2-D correlation ("valid") of an image with a k x k filter, pixel by pixel."""
    h, w = image.shape
    k = weights.shape[0]
    out = np.empty((h - k + 1, w - k + 1), dtype=np.float64)
    for i in range(h - k + 1):
        for j in range(w - k + 1):
            out[i, j] = np.sum(image[i : i + k, j : j + k] * weights)
    return out


def exponential_moving_average(x, alpha):
    """The exponential moving average y[i] = alpha x[i] + (1 - alpha) y[i - 1], y[0] = x[0]."""
    n = x.shape[0]
    y = np.empty(n, dtype=np.float64)
    y[0] = x[0]
    for i in range(1, n):
        y[i] = alpha * x[i] + (1.0 - alpha) * y[i - 1]
    return y


def diagonal_tanh(a):
    """A sum of tanh over a matrix's diagonal, then the matrix plus it (elementwise work over a
    large fresh array inside a loop program)."""
    t = 0.0
    for i in range(a.shape[0]):
        t += np.tanh(a[i, i])
    return a + t


def covariance(M, float_n, data):
    """npbench's polybench covariance: one vector-matrix product per column (BLAS in a loop)."""
    mean = np.mean(data, axis=0)
    data -= mean
    cov = np.zeros((M, M), dtype=data.dtype)
    for i in range(M):
        cov[i:M, i] = cov[i, i:M] = data[:, i] @ data[:, i:M] / (float_n - 1.0)
    return cov


# -- inputs -----------------------------------------------------------------------------------


def _diagonally_dominant(rng, n):
    """A random n x n matrix whose diagonal outweighs the rest of its row."""
    return rng.random((n, n)) + n * np.eye(n)


def _spd(rng, n):
    """A random symmetric positive definite n x n matrix (well conditioned)."""
    m = rng.random((n, n))
    return m @ m.T / n + np.eye(n)


def _lu_inputs(rng, n):
    return (_diagonally_dominant(rng, n),)


def _cholesky_inputs(rng, n):
    return (_spd(rng, n),)


def _forward_inputs(rng, n):
    return np.tril(_diagonally_dominant(rng, n)), rng.random(n)


def _back_inputs(rng, n):
    return np.triu(_diagonally_dominant(rng, n)), rng.random(n)


def _gram_schmidt_inputs(rng, m, n):
    return (rng.random((m, n)) + np.eye(m, n),)


def _levinson_inputs(rng, n):
    """KMS correlations r[k] = rho^k (an SPD Toeplitz matrix) and a random right-hand side."""
    return 0.5 ** np.arange(n, dtype=np.float64), rng.random(n)


def _syrk_inputs(rng, n, m):
    return rng.random((n, n)), rng.random((n, m)), 1.5, 1.2


def _syr2k_inputs(rng, n, m):
    return rng.random((n, n)), rng.random((n, m)), rng.random((n, m)), 1.5, 1.2


def _trmm_inputs(rng, n, m):
    return np.tril(rng.random((n, n))), rng.random((n, m)), 1.5


def _floyd_warshall_inputs(rng, n):
    """Random positive edge lengths, zero on the diagonal."""
    D = rng.random((n, n)) * 10.0 + 1.0
    np.fill_diagonal(D, 0.0)
    return (D,)


def _two_grids(rng, shape, steps):
    return rng.random(shape), rng.random(shape), steps


def _gauss_seidel_inputs(rng, n, m, steps):
    return rng.random((n, m)), steps


def _fdtd_inputs(rng, nx, ny, steps):
    ex, ey, hz = rng.random((nx, ny)), rng.random((nx, ny)), rng.random((nx, ny))
    return ex, ey, hz, np.sin(0.1 * np.arange(steps, dtype=np.float64)), steps


def _adi_inputs(rng, n, steps):
    return rng.random((n, n)), steps, 0.4


def _recursive_filter_inputs(rng, h, w):
    return rng.random((h, w)), 0.3, 0.7


def _conv2d_inputs(rng, h, w, k):
    return rng.random((h, w)), rng.random((k, k)) / (k * k)


def _ema_inputs(rng, n):
    return rng.random(n), 0.05


# -- the table ----------------------------------------------------------------------------------

SIZES = ("tiny", "small", "medium")


@dataclass(frozen=True)
class Program:
    """A loop program, its inputs by size, and its argument types as a Pythran signature
    (``float64[:,:]`` a C-contiguous float64 matrix, ``int`` a Python int, ``float`` a
    Python float): ``make_inputs(size, rng)`` returns arguments of exactly those types."""

    name: str
    function: Callable
    inputs: Callable  # (rng, **parameters) -> args
    sizes: dict  # size name -> keyword parameters of ``inputs``
    pythran_signature: str

    def make_inputs(self, size: str, rng: np.random.Generator) -> tuple:
        """The arguments of ``function`` at ``size`` ("tiny", "small" or "medium")."""
        return self.inputs(rng, **self.sizes[size])


def _sizes(tiny: dict, small: dict, medium: dict) -> dict:
    return dict(zip(SIZES, (tiny, small, medium)))


def _n(tiny: int, small: int, medium: int) -> dict:
    return _sizes({"n": tiny}, {"n": small}, {"n": medium})


MATRIX, VECTOR, INT, FLOAT = "float64[:,:]", "float64[:]", "int", "float"
PROGRAMS = [
    Program("lu", lu, _lu_inputs, _n(12, 100, 300), MATRIX),
    Program("cholesky", cholesky, _cholesky_inputs, _n(12, 100, 300), MATRIX),
    Program(
        "forward_substitution",
        forward_substitution,
        _forward_inputs,
        _n(16, 120, 400),
        f"{MATRIX}, {VECTOR}",
    ),
    Program(
        "back_substitution",
        back_substitution,
        _back_inputs,
        _n(16, 120, 400),
        f"{MATRIX}, {VECTOR}",
    ),
    Program(
        "gram_schmidt",
        gram_schmidt,
        _gram_schmidt_inputs,
        _sizes({"m": 14, "n": 10}, {"m": 120, "n": 100}, {"m": 300, "n": 250}),
        MATRIX,
    ),
    Program(
        "levinson_durbin",
        levinson_durbin,
        _levinson_inputs,
        _n(16, 400, 1200),
        f"{VECTOR}, {VECTOR}",
    ),
    Program(
        "syrk",
        syrk,
        _syrk_inputs,
        _sizes({"n": 12, "m": 10}, {"n": 100, "m": 80}, {"n": 240, "m": 200}),
        f"{MATRIX}, {MATRIX}, {FLOAT}, {FLOAT}",
    ),
    Program(
        "syr2k",
        syr2k,
        _syr2k_inputs,
        _sizes({"n": 12, "m": 10}, {"n": 100, "m": 80}, {"n": 240, "m": 200}),
        f"{MATRIX}, {MATRIX}, {MATRIX}, {FLOAT}, {FLOAT}",
    ),
    Program(
        "trmm",
        trmm,
        _trmm_inputs,
        _sizes({"n": 12, "m": 10}, {"n": 100, "m": 120}, {"n": 300, "m": 360}),
        f"{MATRIX}, {MATRIX}, {FLOAT}",
    ),
    Program("floyd_warshall", floyd_warshall, _floyd_warshall_inputs, _n(12, 100, 250), MATRIX),
    Program(
        "jacobi_1d",
        jacobi_1d,
        lambda rng, n, steps: _two_grids(rng, (n,), steps),
        _sizes({"n": 16, "steps": 4}, {"n": 4000, "steps": 50}, {"n": 12000, "steps": 150}),
        f"{VECTOR}, {VECTOR}, {INT}",
    ),
    Program(
        "jacobi_2d",
        jacobi_2d,
        lambda rng, n, steps: _two_grids(rng, (n, n), steps),
        _sizes({"n": 12, "steps": 3}, {"n": 120, "steps": 50}, {"n": 360, "steps": 100}),
        f"{MATRIX}, {MATRIX}, {INT}",
    ),
    Program(
        "gauss_seidel_2d",
        gauss_seidel_2d,
        _gauss_seidel_inputs,
        _sizes(
            {"n": 10, "m": 8, "steps": 2},
            {"n": 60, "m": 50, "steps": 20},
            {"n": 120, "m": 100, "steps": 30},
        ),
        f"{MATRIX}, {INT}",
    ),
    Program(
        "fdtd_2d",
        fdtd_2d,
        _fdtd_inputs,
        _sizes(
            {"nx": 12, "ny": 10, "steps": 3},
            {"nx": 120, "ny": 100, "steps": 50},
            {"nx": 360, "ny": 300, "steps": 100},
        ),
        f"{MATRIX}, {MATRIX}, {MATRIX}, {VECTOR}, {INT}",
    ),
    Program(
        "heat_3d",
        heat_3d,
        lambda rng, n, steps: _two_grids(rng, (n, n, n), steps),
        _sizes({"n": 8, "steps": 2}, {"n": 30, "steps": 20}, {"n": 80, "steps": 40}),
        "float64[:,:,:], float64[:,:,:], int",
    ),
    Program(
        "adi",
        adi,
        _adi_inputs,
        _sizes({"n": 12, "steps": 2}, {"n": 100, "steps": 20}, {"n": 250, "steps": 40}),
        f"{MATRIX}, {INT}, {FLOAT}",
    ),
    Program(
        "recursive_filter",
        recursive_filter,
        _recursive_filter_inputs,
        _sizes({"h": 12, "w": 10}, {"h": 120, "w": 100}, {"h": 480, "w": 400}),
        f"{MATRIX}, {FLOAT}, {FLOAT}",
    ),
    Program(
        "conv2d",
        conv2d,
        _conv2d_inputs,
        _sizes(
            {"h": 12, "w": 10, "k": 3}, {"h": 120, "w": 100, "k": 5}, {"h": 240, "w": 200, "k": 7}
        ),
        f"{MATRIX}, {MATRIX}",
    ),
    Program(
        "diagonal_tanh",
        diagonal_tanh,
        lambda rng, n: (rng.random((n, n)),),
        _n(16, 3000, 5000),
        MATRIX,
    ),
    Program(
        "covariance",
        covariance,
        lambda rng, m, n: (m, float(n), rng.random((n, m))),
        _sizes({"m": 12, "n": 14}, {"m": 500, "n": 600}, {"m": 1000, "n": 1200}),
        f"{INT}, {FLOAT}, {MATRIX}",
    ),
    Program(
        "exponential_moving_average",
        exponential_moving_average,
        _ema_inputs,
        _n(16, 200_000, 600_000),
        f"{VECTOR}, {FLOAT}",
    ),
]
