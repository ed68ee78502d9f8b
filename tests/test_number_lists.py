"""Lists of numbers traced as arrays (``capture/number_lists.py``, ``frontend/number_lists.py``):
a dynamic programme's table or a signal kept in a Python list, read and written at loop indices
and at positions the data give, stays in a rolled loop and gives what eager mode's list does."""

import numpy as np
import pytest

import gcompile
from gcompile.capture.convert import convert

from .support import check

RNG = np.random.default_rng(29)


def longest_increasing(A):
    """824zzy/Leetcode's LIS: a table made by a comprehension, ``max`` of its items."""
    dp = [1 for _ in range(len(A) + 1)]
    ans = 0
    for i in range(1, len(A)):
        for j in range(i):
            if A[j] < A[i]:
                dp[i] = max(dp[i], dp[j] + 1)
        ans = max(ans, dp[i])
    return ans, max(dp), min(dp), len(dp)


def common_subsequence(A, B):
    """davll/practical-algorithms' LCS table: rows of a list, returned as lists."""
    m, n = len(A), len(B)
    sz = [[0] * (n + 1) for _ in range(m + 1)]
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            if A[i - 1] == B[j - 1]:
                sz[i][j] = sz[i - 1][j - 1] + 1
            else:
                sz[i][j] = max(sz[i - 1][j], sz[i][j - 1])
    return sz[m][n], sz, len(sz[0])


def crossings(close, lb, flags):
    """A signal list written where the data cross (Bollinger bands), as NumPy converts it."""
    signal = [0] * len(close)
    seen = [False] * flags
    for i in range(1, len(close)):
        if (close[i - 1] <= lb[i - 1]) and (close[i] > lb[i]):
            signal[i] = 1
            seen[i % flags] = True
        signal[-1] += signal[i]  # (a negative position, an augmented write)
    total = np.array(signal)
    signal[0] = 7  # (after the conversion: NumPy's array is a copy)
    return total, np.sum(signal), seen


def knapsack_table(max_weight, weights, values):
    """Remi Pelletier's 0/1 knapsack: a table of rows holding sums of an int64 array's items
    (NumPy scalars in eager mode's list, from the first item the loop stores)."""
    nb_items = len(weights)
    dp = [[0 for x in range(max_weight + 1)] for y in range(nb_items + 1)]
    for i in range(1, nb_items + 1):
        for w in range(1, max_weight + 1):
            if weights[i - 1] <= w:
                dp[i][w] = max(values[i - 1] + dp[i - 1][w - weights[i - 1]], dp[i - 1][w])
            else:
                dp[i][w] = dp[i - 1][w]
    return dp[nb_items][max_weight], len(dp[0])


def test_lists_of_numbers_are_arrays_in_rolled_loops_and_give_what_eager_does():
    A = RNG.integers(0, 50, 40)
    assert check(longest_increasing, A, backends=("numba",))[0] > 1
    expected = check(common_subsequence, A[:15], A[10:32], backends=("numba",))
    assert type(expected[1]) is list and type(expected[1][3][4]) is int
    close = RNG.random(60)
    check(crossings, close, close + RNG.normal(0, 0.1, 60), 5, backends=("numba",))
    graph = gcompile.trace(longest_increasing, A)
    assert graph.notes.loops and all(note.rolled for note in graph.notes.loops)
    best, width = check(knapsack_table, 60, RNG.integers(1, 20, 12), RNG.integers(1, 50, 12))
    assert type(best) is np.int64 and width == 61  # (a NumPy scalar, as eager's list holds it)


def sieve(n):
    """Eratosthenes on a list of flags: the inner range's step is the outer loop's index."""
    is_prime = [True] * (n + 1)
    is_prime[0] = is_prime[1] = False
    for i in range(2, n + 1):
        if is_prime[i]:
            for j in range(i * i, n + 1, i):
                is_prime[j] = False
    return np.nonzero(np.array(is_prime))[0]


def test_a_range_stepping_by_a_loop_index_is_a_while_loop():
    compiled = gcompile.compile(sieve, fullgraph=True)
    for n in (60, 2, 1):
        np.testing.assert_array_equal(compiled(n), sieve(n))
    assert compiled.stats["fallbacks"] == 0
    notes = gcompile.trace(sieve, 60).notes.loops
    assert len(notes) == 3 and all(note.rolled for note in notes)


def sieve_by_slices(N):
    """scipy-lecture-notes' sieve: a slice stepping by the loop index written."""
    mask = np.ones([N], dtype=bool)
    mask[:2] = False
    for j in range(2, int(np.sqrt(N)) + 1):
        if mask[j]:
            mask[j * j :: j] = False
    return np.nonzero(mask)[0]


def strided_fill(x, step):
    for k in range(1, 4):
        x[k :: k * step] = -1.0
    return x


def _overflowing(x):
    a = np.zeros(x.shape[0], np.uint8)
    for k in range(1, 3):
        a[k :: k + 1] = 300
    return a


def narrow_steps(x, s):
    a = np.zeros(x.shape[0], np.uint8)
    a[s[0] :: s[0]] = 7  # (an int8 step: positions counted in int64, never wrapping)
    return a


def test_a_slice_stepping_by_a_loop_index_written_is_a_while_loop():
    compiled = gcompile.compile(sieve_by_slices, fullgraph=True)
    for n in (1000, 1001, 5000):  # (from the second, N a size: j a traced int on each trip)
        np.testing.assert_array_equal(compiled(n), sieve_by_slices(n))
    assert compiled.stats["traces"] == 2
    notes = gcompile.trace(sieve_by_slices, 1000).notes.loops
    assert len(notes) == 3 and all(note.rolled for note in notes), notes
    narrow = gcompile.compile(narrow_steps, fullgraph=True)
    for step in (100, 3):
        args = (np.zeros(300), np.array([step], np.int8))
        np.testing.assert_array_equal(narrow(*args), narrow_steps(*args), strict=True)
    with pytest.raises(OverflowError):  # (as eager: 300 is no uint8)
        gcompile.compile(_overflowing, fullgraph=True)(np.ones(4))
    check = gcompile.compile(strided_fill, fullgraph=True)
    for n, step in ((20, 2), (7, 3), (30, 1)):
        np.testing.assert_array_equal(check(np.zeros(n), step), strided_fill(np.zeros(n), step))


def past_the_end(A, k):
    dp = [0] * len(A)
    for i in range(len(A)):
        dp[i] = A[i] * 2
    return dp[k]


def whole_numbers_into_floats(n):
    dp = [float("inf")] * (n + 1)
    dp[0] = 0  # (eager mode's list holds an int there)
    return dp


def test_list_positions_and_values_that_eager_mode_would_treat_otherwise_are_refused():
    compiled = gcompile.compile(past_the_end, fullgraph=True)
    A = np.arange(6)
    assert compiled(A, -2) == past_the_end(A, -2) == 8
    with pytest.raises(IndexError):
        compiled(A, 6)
    with pytest.raises(gcompile.UnsupportedError, match="int64 stored in a list of floats"):
        gcompile.compile(whole_numbers_into_floats, fullgraph=True)(4)


def kept_as_lists(x, n, m):
    appended = [0] * n
    appended.append(1)  # (a list operation: the list stays Python's)
    sliced = [0.0] * n
    head = sliced[:2]
    aliased = [[0] * m] * n  # (one row n times: a list item, made as Python makes it)
    looped = [1] * n
    given = [2] * n
    for _ in range(n):
        x = x * 2  # (a loop: the function is converted)
    return appended, head, aliased, [v for v in looped], sorted(given), x


def knapsack_same_targets(W, wt, pi, n):
    """ashkanvg/knapsack-0-1's table: both comprehensions name their target ``x``."""
    dp = [[0 for x in range(W + 1)] for x in range(n + 1)]
    for i in range(n + 1):
        for w in range(W + 1):
            if i == 0 or w == 0:
                dp[i][w] = 0
            elif wt[i - 1] <= w:
                dp[i][w] = max(pi[i - 1] + dp[i - 1][w - wt[i - 1]], dp[i - 1][w])
            else:
                dp[i][w] = dp[i - 1][w]
    return dp[n][W]


def test_only_lists_used_by_position_are_made_arrays():
    source = convert(kept_as_lists).source
    for kept in ("appended = [0] * n", "sliced = [0.0] * n", "looped = [1] * n", "given = [2]"):
        assert kept in source, source
    result = gcompile.compile(kept_as_lists)(1.5, 3, 2)
    assert result == kept_as_lists(1.5, 3, 2)
    made = convert(common_subsequence).source
    assert "__gc_rt.number_list(0, m + 1, n + 1)" in made, made
    made = convert(knapsack_same_targets).source
    assert "__gc_rt.number_list(0, n + 1, W + 1)" in made, made


def fresh_tables(x):
    counts = [0] * len(x)
    for _ in range(0):  # (a loop: the function is converted)
        pass
    return counts


def test_a_function_that_only_makes_lists_of_numbers_runs_as_python():
    x = np.arange(5.0)
    assert "full(" in str(gcompile.trace(fresh_tables, x))  # (an array behind the list)
    fn = gcompile.compile(fresh_tables, fullgraph=True)
    assert fn(x) == fresh_tables(x) and type(fn(x)) is list
    assert "runs as Python" in str(gcompile.explain(fresh_tables, x))
