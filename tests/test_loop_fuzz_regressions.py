"""Every program the loop fuzzer (``tests/loop_fuzz.py``) found wrong, shrunk by hand: each one
agrees with eager NumPy (results, their types, and the arguments afterwards), with no internal
error (the suite verifies every graph)."""

import numpy as np
import pytest

from tests.support import check


def broadcast_by_guard(A, B):
    """Numba read ``B[1:(s0+1)//2]`` (one element, by a guard) along the axis: wrong values."""
    for k in range(1, B.shape[0]):
        A[::2] -= B[:-1]
        A[: A.shape[0] - k] += B[1 : B.shape[0] - 1]


def python_float_carried(A, x):
    """The loop program returned ``np.float64`` where eager returns a Python float."""
    s = x
    for _ in range(A.shape[0]):
        s = s * 0.5
    return s


def one_trip_loop_then_a_loop(A):
    """Folding the unrolled one-trip loop left a literal the second loop's placeholder refused."""
    s = 0.0
    for _ in range(1):
        s = s + 1.0
    for _ in range(A.shape[0]):
        s = s * 0.5
    return s


def carried_by_reference_first_value(A, B, x):
    """``A`` carried by reference (``v0`` views it) took the place of ``s`` among the loop's
    arguments."""
    s = x * 0.5
    v0 = A[1::2]
    for _ in range(1, A.shape[0]):
        s = s * 0.5 + x
        A += v0[1:]
    return s


def mean_of_a_shrinking_view(A, B, x):
    """Fusion asked whether ``A[i:]`` is empty, which has no answer for every trip."""
    for i in range(B.shape[0]):
        v = A[i:]
        A[i] = np.minimum(np.mean(v, axis=0), v[0] * x)


def size_one_slices(A):
    """A slice of one element recorded layout ``A`` where its rule gives ``C``."""
    return A[1::2] + A[1 : A.shape[0] - 1]


def size_one_columns(A):
    v = A[:, 1:]
    v[:, :-1] += v[:, ::2]


def last_trip_split_off(A, B):
    """The range split at its last trip recorded a size of 1 its rule gives as ``s0 - k``."""
    for i in range(B.shape[0]):
        B[i:] *= A[i:] * 0.5


def last_trip_split_off_rows(A, B):
    for k in range(A.shape[0]):
        B[k:] += A[1 : A.shape[0] - 1, :]


def equal_sizes_learned_late(A, B, x, n):
    """A slice recorded before the trace learned two sizes equal kept the old form."""
    i0 = 0
    B[1 : B.shape[0] - 1, :][...] = A[i0]
    scale = np.exp(-np.abs(np.minimum(B.max(axis=1), A[:, 0]) * 0.25))
    A[:, ::2] += 0.5 * (np.cos(A.max(axis=1) + A[:, i0]) * scale)


def float_step_counter(x):
    """An unrolled loop's carried Python float became ``np.float64``."""
    t = 0.0
    for _ in range(4):
        x = x + 0.25 * np.sin(t)
        t += 0.25
    return x, t


RNG = np.random.default_rng(19)
CASES = [
    (broadcast_by_guard, lambda: (np.zeros(4), np.array([1.0, 2.0, 3.0]))),
    (python_float_carried, lambda: (np.arange(5.0), 0.25)),
    (one_trip_loop_then_a_loop, lambda: (np.arange(5.0),)),
    (carried_by_reference_first_value, lambda: (np.arange(5.0), np.ones(3), 0.5)),
    (mean_of_a_shrinking_view, lambda: (RNG.random((4, 3)), RNG.random((4, 3)), 0.5)),
    (size_one_slices, lambda: (np.arange(3.0),)),
    (size_one_columns, lambda: (RNG.random((3, 3)),)),
    (last_trip_split_off, lambda: (RNG.random(7), RNG.random(7))),
    (last_trip_split_off_rows, lambda: (RNG.random((3, 4)), RNG.random((3, 4)))),
    (equal_sizes_learned_late, lambda: (RNG.random((3, 6)), RNG.random((3, 6)), 0.5, 2)),
    (float_step_counter, lambda: (np.ones(4),)),
]
NUMBA = {broadcast_by_guard, python_float_carried}  # the two found wrong on Numba only


@pytest.mark.parametrize("fn, make", CASES, ids=[fn.__name__ for fn, _ in CASES])
def test_fuzz_finding_agrees_with_eager(fn, make):
    backends = ("interpreter", "numba") if fn in NUMBA else ("interpreter",)
    check(fn, *make(), backends=backends)
