"""Every loop program of bench/loop_programs.py compiled: results and in-place argument updates
agree with eager NumPy (through ``check``: the interpreter exactly, Numba within the error
bounds of any summation order) at two sizes, with every loop kept (or unrolled by the pass,
never by the tracer) and no loop left to the interpreter."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import gcompile
from bench.loop_programs import PROGRAMS

from .support import check

_FIXED = ("steps", "k")  # time steps and filter widths keep their tiny values


def _inputs(program, grow: int) -> tuple:
    params = {
        key: value if key in _FIXED else value + grow
        for key, value in program.sizes["tiny"].items()
    }
    return program.inputs(np.random.default_rng(3), **params)


@pytest.mark.parametrize("grow", [0, 5])
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_compiled_loop_program_matches_eager(program, grow):
    with warnings.catch_warnings():
        warnings.simplefilter("error", gcompile.GcompileWarning)  # no interpreter fallback
        check(program.function, *_inputs(program, grow))


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_no_loop_is_unrolled_by_the_tracer(program):
    graph = gcompile.trace(program.function, *_inputs(program, 0))
    declined = [note for note in graph.notes.loops if not note.rolled]
    assert not declined, [note.reason for note in declined]


def shifted_reads(x, d):
    """Subscripts by loop indices: at least 0 (unsigned), or possibly negative (x[k - 1] at
    k = 0 is NumPy's last element), or read from the data (d[k] may be negative)."""
    n = x.shape[0]
    y = np.zeros(n)
    for k in range(n):
        y[k] = x[k - 1] + x[d[k]]
    for k in range(n - 1, 0, -1):
        y[k] += x[k - 1] * 2.0
    return y


def test_subscripts_by_indices_at_least_zero_are_unsigned_and_others_keep_numpys_meaning():
    x = np.arange(6.0)
    d = np.array([-1, 0, 5, -6, 2, 3])
    check(shifted_reads, x, d, backends=("numba",))
    fn = gcompile.compile(shifted_reads, fullgraph=True)
    fn(x, d)
    ((_, source),) = fn.entries[0].run.program.loops
    assert "a0[-1]" in source  # (the trace peels k = 0, where k - 1 is NumPy's last element)
    assert re.search(r"\[np\.uint64\(k\d+ - 1\)\]", source)  # (k - 1 for k >= 1, both loops)
    assert "np.uint64(getitem" not in source  # (positions read from the data keep their sign)


def joined_and_stored(u, out, w):
    """Joins of arrays of two dtypes in a loop body, and a store of a value whose shape the
    trace cannot tell equal to the region's (``u[2 : n + 2]`` is ``min(n, len(u) - 2)`` long):
    NumPy broadcasts a length of 1 and refuses another length."""
    n = out.shape[0]
    acc = np.zeros((u.shape[0], 3))
    for k in range(2):
        acc += np.concatenate((u[:, None] * k, w[:, None], (u > 1.0)[:, None]), axis=1)
        acc[:, :2] += np.stack((u, w.astype(np.float64)), axis=1)
    out[:, :] = u[2 : n + 2, None] - acc[2 : n + 2, :2]
    return acc, out


def test_region_writes_are_element_loops_that_broadcast_as_numpy():
    """Numba's assignment of an array into a slice compiles its error message's string
    formatting (about 1.5 s on a process's first program), so programs write regions as
    element loops, checking and broadcasting shapes as NumPy does."""
    fn = gcompile.compile(joined_and_stored, fullgraph=True)
    u, w = np.linspace(0.0, 2.0, 7), np.arange(7, dtype=np.int32)
    for rows in (5, 1):  # the value is 5 long, then 1 long (broadcast into 2 rows)
        out = np.zeros((5 if rows == 5 else 2, 2))
        check(joined_and_stored, u if rows == 5 else u[:3], out, w if rows == 5 else w[:3])
        fn(u if rows == 5 else u[:3], out.copy(), w if rows == 5 else w[:3])
    with pytest.raises(ValueError, match="broadcast"):
        fn(u[:5], np.zeros((4, 2)), w[:5])  # a value of 3 rows into 4: NumPy refuses it too
    with pytest.raises(ValueError):
        joined_and_stored(u[:5], np.zeros((4, 2)), w[:5])
    sources = [source for _, source in fn.entries[0].run.program.loops]
    assert sources and not any(re.search(r"\[[^\]\n]*:[^\]\n]*\] = ", s) for s in sources)


def coin_change_and_diagonals(a, m):
    """A coin-change DP's ``a[k] = np.inf`` then ``min``, with -inf and NaN literals beside (the
    program spells them through ``np``), and ``np.diag`` of a matrix and of a vector in a
    loop body (Numba's own: no object mode)."""
    best = np.zeros(a.shape[0])
    for k in range(1, a.shape[0]):
        best[k] = np.inf
        best[k] = min(best[k], best[k - 1] + a[k])
        if a[k] < -1.0:
            best[k] = -np.inf
        elif a[k] > 1.0:
            best[k] = np.nan
    trace = np.zeros(m.shape[0])
    for k in range(3):
        trace = trace + np.diag(m) * k
        m = m + np.diag(trace, 0) * 0.5
    return best, trace, m


def test_non_finite_literals_and_diagonals_in_loop_programs():
    a = np.array([0.0, 0.5, -2.0, 3.0, 0.25])
    with warnings.catch_warnings():
        warnings.simplefilter("error", gcompile.GcompileWarning)  # no interpreter fallback
        check(coin_change_and_diagonals, a, np.arange(9.0).reshape(3, 3), backends=("numba",))
    code = gcompile.compile(coin_change_and_diagonals)
    code(a, np.arange(9.0).reshape(3, 3))
    assert "_objmode" not in code.code and "np.inf" in code.code


def masked_escape(c, n, horizon):
    """Arrays the function made, updated under a mask on every trip: each new value is a
    kernel's output, which the loop takes by swapping buffers (no copy)."""
    counts = np.zeros(c.shape, dtype=np.int64)
    z = np.zeros_like(c)
    first = z[0]  # (a view taken before the loop: it sees the loop's writes)
    for k in range(n):
        inside = np.abs(z) < horizon
        counts[inside] = k
        z[inside] = z[inside] ** 2 + c[inside]
    return counts, z, first.copy()


def masked_decay(u, v, n):
    """Arguments updated under a mask on every trip (one kernel, two outputs written back):
    the caller's arrays hold the results, so no buffer is swapped for them."""
    for _ in range(n):
        high = u > 0.5
        u[high] = u[high] * 0.75
        v[high] = v[high] + u[high]
    return u.sum() + v.sum()


def test_carried_arrays_the_loop_owns_are_swapped_with_the_kernels_buffers():
    c = np.linspace(-1.5, 0.5, 6)[None, :] + 1j * np.linspace(-1.0, 1.0, 5)[:, None]
    for n in (0, 1, 20, 21):  # (an odd number of swaps leaves the result in the other buffer)
        check(masked_escape, c, n, 2.0)
    compiled = gcompile.compile(masked_escape, fullgraph=True)
    compiled(c, 21, 2.0)
    assert "held_" in compiled.code  # (the swap's variable)
    u = np.random.default_rng(4).random(40)
    for n in (1, 20, 21):
        check(masked_decay, u, u[::-1] * 2.0, n)
    written = gcompile.compile(masked_decay, fullgraph=True)
    written(u.copy(), u.copy(), 21)
    assert "writeback" in written.code and "held_" not in written.code
