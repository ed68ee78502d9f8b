"""Every program the loop fuzzer (``tests/loop_fuzz.py``) found wrong, shrunk by hand: each one
agrees with eager NumPy (results, their types, and the arguments afterwards), with no internal
error (the suite verifies every graph)."""

import numpy as np
import pytest

import gcompile
from gcompile import UnsupportedError
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


def shift_then_loop(A, B):
    """``B[1:] = B[:-1]`` overlaps: NumPy buffers it; the loop program copied element by element
    (found in the 10,000-program sweep, wrong values on Numba)."""
    B[1:][...] = B[:-1]
    for _ in range(B.shape[0] - 1, 0, -1):
        B[1 : B.shape[0] - 1] += 0.5 * np.abs(A[::2]) * np.exp(-np.abs(B[0]))


def shift_in_a_loop(A, B):
    for _ in B:
        A[1:][...] = A[:-1]
        A[1:] *= 0.75


def equal_zeros_written_and_read(A, B):
    """CSE merged two ``np.zeros`` of one shape that the loop writes and reads (verify flagged
    the loop's arguments as shared memory; by value they are not)."""
    w0 = np.zeros(B.shape)
    w1 = np.zeros(w0.shape)
    for _ in range(1, w1.shape[0]):
        for _ in range(w0.shape[0]):
            w0[::-1] += B.min(axis=0, keepdims=True) * np.sin(np.sum(w1)) + w1[1:-1, :]
    return w0


def element_of_a_sliced_view(A, B):
    """A store through a view with a symbolic slice, run by the Numba host: the view's bounds
    were passed unevaluated."""
    v0 = A[1 : A.shape[0] - 1]
    v0[0] = B.max()


def inner_loop_declined_after_lifting(A, B, x, n):
    """The inner loop lifted ``x`` into the outer body, then declined (``v6`` rebinds shared
    memory): the lifted placeholder was erased but still handed out."""
    for r4 in B:
        v6 = A[:, ::2][:, ::2]
        for k7 in range(n):
            v6[k7] += v6[k7] * x
            v6 = v6 * 0.5 + r4[1::2]


def load_reused_after_a_reduction(A, B, n):
    """A row kernel's inner reduction loop named its load ``ld0`` again, overwriting the row's
    ``ld0`` read after it: wrong values on Numba (in the code before issue 19 too)."""
    for j in range(A.shape[0] - 1, 0, -1):
        B[j, j] = np.mean(B)
        mean = np.mean(A, axis=0)
        A[j] += (mean * np.cos(n * 0.25) - np.maximum(B[-1], A[j])) - np.cos(
            np.minimum(mean, B.max(axis=1))
        )
    return A[:-1]


def carried_view_of_one_element(A, B):
    """``v0`` (``A[1::2]``, one element) carried: its type settled as ``f64[1]`` while its first
    value is ``f64[s0//2]``."""
    v0 = A[1::2]
    for _ in range(A.shape[0] - 1):
        v0 = v0 * 0.5 + np.minimum(-v0[::2], np.mean(A))
    return v0


def unrolled_shrinking_views(A, B, x, n):
    """The unrolled copies kept their metas (``max(s0-3,0)``) where their rules now give
    ``s0-3``."""
    for i1 in range(n):
        B[i1:] += 0.5 * np.maximum(A[i1:], B[: B.shape[0] - i1])


def row_from_its_own_column(A):
    """``A[k] = A[:, -1]``: the program copied the column first; NumPy's copy loop (one axis,
    strides the same way) runs backwards and sees the element it wrote (seed 103)."""
    for k in range(A.shape[0] - 1):
        A[k] = A[:, -1]
        A[k + 1, ::-1] = A[:, 0] * 1.0  # (a new array: simplify keeps it one)
        A[k + 1] = A[:, -2] * 1.0
        A[::-1, 1][1:] = A[k, 1:]  # (strides opposite ways: NumPy buffers it)


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
    (shift_then_loop, lambda: (RNG.random(5), RNG.random(5))),
    (shift_in_a_loop, lambda: (RNG.random((5, 4)), RNG.random((5, 4)))),
    (equal_zeros_written_and_read, lambda: (RNG.random((3, 7)), RNG.random((3, 7)))),
    (element_of_a_sliced_view, lambda: (RNG.random(3), RNG.random(3))),
    (inner_loop_declined_after_lifting, lambda: (RNG.random((6, 5)), RNG.random((6, 5)), 0.5, 1)),
    (load_reused_after_a_reduction, lambda: (RNG.random((6, 6)), RNG.random((6, 6)), 1)),
    (carried_view_of_one_element, lambda: (RNG.random(3), RNG.random(6))),
    (unrolled_shrinking_views, lambda: (RNG.random(6), RNG.random(6), 0.5, 5)),
    (row_from_its_own_column, lambda: (RNG.random((30, 30)),)),
]
# found wrong (or failing) on Numba only
NUMBA = {
    broadcast_by_guard,
    python_float_carried,
    shift_then_loop,
    shift_in_a_loop,
    element_of_a_sliced_view,
    load_reused_after_a_reduction,
    row_from_its_own_column,
}


@pytest.mark.parametrize("fn, make", CASES, ids=[fn.__name__ for fn, _ in CASES])
def test_fuzz_finding_agrees_with_eager(fn, make):
    backends = ("interpreter", "numba") if fn in NUMBA else ("interpreter",)
    check(fn, *make(), backends=backends)


def reductions_of_a_strided_argument(A, B, n):
    """An unrolled loop's ``A[3:]`` (``max(s0-3,0)`` when fused, ``s0-3`` in the kernel):
    the kernel's space kept the old form, and its loads fell out of its loop (LoopIRError)."""
    for k in range(n):
        B[k] = (A[k:] * 2.0).sum() + np.exp(A[1:]).max()
    return B


def test_a_kernels_space_takes_the_forms_of_its_body():
    A = RNG.random(20)[::2]  # no layout promise: read through views
    check(reductions_of_a_strided_argument, A, np.zeros(5), 5)  # unrolled


def test_a_loop_programs_kernels_read_strided_inputs_through_their_views():
    A = RNG.random(100)[::2]  # (the loop ran in the interpreter: views the host applied)
    check(reductions_of_a_strided_argument, A, np.zeros(40), 40, backends=("numba",))


def range_split_on_a_size_found_equal_later(A, B, x, n):
    """The loop's range is split on ``B``'s size; ``A``'s is found to be 3 afterwards, and the
    split question has no answer for every trip in the final sizes (before issue 19 the host
    failed with a NameError at run time)."""
    for i0 in range(A.shape[0] - 1, 0, -1):
        scale = np.minimum(i0 * 0.125, np.abs(A[1 : A.shape[0] - 1]))
        B[: B.shape[0] - i0] -= 0.5 * scale * np.sin(np.cos(np.abs(B[1::2])))


def test_an_unanswerable_split_is_a_refusal_with_its_reason():
    A, B = RNG.random(3), RNG.random(3)
    with pytest.raises(UnsupportedError, match="a loop whose range was split on sizes"):
        gcompile.trace(range_split_on_a_size_found_equal_later, A, B, 0.5, 1)
    compiled = gcompile.compile(range_split_on_a_size_found_equal_later)
    expected, actual = B.copy(), B.copy()
    range_split_on_a_size_found_equal_later(A.copy(), expected, 0.5, 1)
    with pytest.warns(gcompile.GcompileWarning, match="runs range_split_on_a_size_found_equal_l"):
        compiled(A.copy(), actual, 0.5, 1)
    np.testing.assert_array_equal(actual, expected)
