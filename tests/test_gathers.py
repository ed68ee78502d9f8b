"""Elements read at positions that come from the data (``x[idx[i]]``, ``A[perm[i], j]``): one
``element`` node each, in loops that stay rolled, with NumPy's IndexError out of range."""

import functools

import numpy as np
import pytest

import gcompile
from gcompile.ir import ops
from gcompile.ir.subgraph import loop_of, walk

from .support import check

RNG = np.random.default_rng(11)


def gather_sum(x, idx):
    total = 0.0
    for i in range(idx.shape[0]):
        total += x[idx[i]]
    return total


def permute_rows(A, perm):
    out = np.empty_like(A)
    for i in range(perm.shape[0]):
        for j in range(A.shape[1]):
            out[i, j] = A[perm[i], j]
    return out


def test_gathers_in_rolled_loops_agree_with_numpy():
    x = RNG.random(30)
    check(gather_sum, x, RNG.integers(-30, 30, 40))
    check(permute_rows, RNG.random((6, 5)), RNG.permutation(6).astype(np.int32))
    graph = gcompile.trace(gather_sum, x, RNG.integers(0, 30, 40))
    members = list(walk(graph))
    assert any(loop_of(v.node) for v in members)
    assert sum(v.node.target is ops.ELEMENT for v in members) == 1


@pytest.mark.parametrize("backend", ["interpreter", "numba"])
def test_a_position_out_of_range_raises_index_error(backend):
    fn = gcompile.compile(gather_sum, backend=backend, fullgraph=True)
    x = RNG.random(10)
    assert fn(x, np.array([9, -10] * 20)) == gather_sum(x, np.array([9, -10] * 20))
    for bad in ([3, 10] * 20, [-11] * 40):
        with pytest.raises(IndexError, match="out of bounds for axis 0"):
            fn(x, np.array(bad))


def regions_at_data_positions(A, k, cube):
    """Regions picked by positions read from the data: beside slices, ``...``, alone (a row)."""
    rows = A[k[0], :] * 2.0 + A[k[1]]
    return rows, cube[k[1], 1:, k[0]] - 1.0, np.sin(cube[..., k[2]]), A[-k[0]].sum()


def gather_rows(A, perm):
    out = np.zeros_like(A)
    for i in range(perm.shape[0]):
        out[i] = A[perm[i]] * 2.0 + A[perm[i], ::-1]
    return out


def written_through(A, k):
    row = A[k[0]]
    row[0] = 5.0  # NumPy writes A here (and so does the graph: A's element k[0], 0)
    A[k[1]][k[0]] += 1.0
    return A


def written_then_read(A, k):
    row = A[k[0]]
    row[0] = 5.0
    return row * 2  # (the graph's copy of the row is stale: refused)


def read_after_a_write(A, k):
    row = A[k[0]]
    A[0, 0] = 7.0
    return row * 2  # NumPy's view sees 7.0 when k[0] is 0


def test_regions_at_data_positions_agree_with_numpy_and_raise_its_error():
    A, cube = RNG.random((3, 4)), RNG.random((3, 5, 4))
    for k in ([1, 2, 3], [-2, 0, -1], [2, -1, 0]):
        check(regions_at_data_positions, A, np.array(k), cube)
    check(gather_rows, RNG.random((40, 6)), RNG.permutation(40))
    for k in ([1, 2], [-1, 0], [2, 2]):  # (row[j] = v and A[k][j] += v write A, as NumPy's)
        check(written_through, RNG.random((3, 3)), np.array(k))
    fn = gcompile.compile(regions_at_data_positions, fullgraph=True)
    with pytest.raises(IndexError, match="out of bounds for axis 0"):
        fn(A, np.array([3, 0, 0]), cube)


def read_in_a_loop_that_writes_its_array(A, k):
    row = A[k[0]]
    t = np.zeros(4)
    for _ in range(3):
        t = t + row  # NumPy's view sees the write of the trip before
        A[...] = A + 1.0
    return t


def region_of_a_region_stale(A, k):
    r = A.reshape(2, 2, 4)[k[0]]
    s = r[k[0]]
    A += 100.0
    return s.sum()


def region_of_a_complex_part_stale(A, k):
    z = A + 1j
    row = z.real[k[0]]
    z[...] = 0
    return row + 0.0


@pytest.mark.parametrize(
    "fn",
    [
        written_then_read,
        read_after_a_write,
        read_in_a_loop_that_writes_its_array,
        region_of_a_region_stale,
        region_of_a_complex_part_stale,
    ],
)
def test_a_region_at_a_data_position_written_or_stale_is_refused(fn):
    """NumPy's region is a view and the graph's a copy: the two must never be told apart."""
    with pytest.raises(gcompile.UnsupportedError, match="region read at a position"):
        gcompile.compile(fn, fullgraph=True)(RNG.random((4, 4)), np.array([0]))
    A = RNG.random((4, 4))
    expected = fn(A.copy(), np.array([0]))
    with pytest.warns(gcompile.GcompileWarning):  # (eager, or a graph break: same answer)
        np.testing.assert_array_equal(gcompile.compile(fn)(A, np.array([0])), expected)


def csr_matvec(indptr, indices, data, x):
    y = np.zeros(indptr.shape[0] - 1)
    for i in range(indptr.shape[0] - 1):
        total = 0.0
        for k in range(indptr[i], indptr[i + 1]):  # bounds read from the data
            total += data[k] * x[indices[k]]
        y[i] = total
    return y


def test_a_loop_over_bounds_read_from_the_data_is_a_while_loop():
    dense = RNG.random((7, 9)) * (RNG.random((7, 9)) < 0.4)
    rows, cols = np.nonzero(dense)
    indptr = np.searchsorted(rows, np.arange(8))
    check(csr_matvec, indptr, cols, dense[rows, cols], RNG.random(9))
    graph = gcompile.trace(csr_matvec, indptr, cols, dense[rows, cols], RNG.random(9))
    assert any(v.node.target.name == "while_loop" for v in walk(graph) if v.node.op == "call")


def integer_array_gathers(x, idx, grid):
    return (
        x[idx] * 2 + 1,
        grid[idx, ...].sum(axis=1),
        x[[0, 2, -1]],
        np.take(grid, idx[:2] % 4, axis=1),
    )


def gathers_at_positions(img, iy, ix):
    """Integer arrays on leading axes, of one shape or broadcast, then ints and slices
    (nearest-neighbour and bilinear image sampling)."""
    return (
        img[iy, ix],
        img[iy + 1, ix] - img[iy, ix + 1],
        img[iy[:, :1], ix[:1, :]],
        img[iy, ix, 1],
        img[iy, ix, 1:],
    )


def softmax_gradient(scores, y):
    """cs231n's softmax loss: positions given as a range beside the labels."""
    probs = np.exp(scores - scores.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    loss = -np.log(probs[range(scores.shape[0]), y]).mean()
    probs[range(scores.shape[0]), y] -= 1
    return loss, probs


def gathers_in_a_loop(x, idx, steps):
    for _ in range(steps):
        x = 0.5 * (x + x[idx])
    return x


def test_integer_array_gathers_are_library_calls_that_agree_with_numpy():
    x, grid = RNG.random(12), RNG.random((12, 4))
    for idx in (np.array([1, -2, 3, 11]), RNG.integers(-12, 12, (2, 3)).astype(np.int32)):
        check(integer_array_gathers, x, idx.ravel(), grid)
    check(gathers_in_a_loop, x, RNG.permutation(12), 5)
    check(softmax_gradient, RNG.random((5, 3)), RNG.integers(0, 3, 5))
    img = RNG.random((6, 5, 3))
    for shape in ((2, 3), (4, 4)):
        check(gathers_at_positions, img, RNG.integers(0, 5, shape), RNG.integers(-4, 4, shape))
    big = RNG.random((200, 200, 2))  # (int16 positions: the flat one, 79900, past int16)
    rows, cols = np.array([[198, 3]], np.int16), np.array([[150, 3]], np.int16)
    check(gathers_at_positions, big, rows, cols)
    check(gathers_at_positions, big, rows.astype(np.uint8), cols.astype(np.uint8))
    graph = gcompile.trace(integer_array_gathers, x, np.array([1, 2]), grid)
    assert sum(node.target is ops.EXTERN for node in graph.nodes) == 4


def test_an_integer_array_gather_out_of_range_raises_numpys_error():
    fn = gcompile.compile(integer_array_gathers, fullgraph=True)
    x, grid = RNG.random(12), RNG.random((12, 4))
    fn(x, np.array([0, 1]), grid)
    with pytest.raises(IndexError, match="index 12 is out of bounds for axis 0 with size 12"):
        fn(x, np.array([0, 12]), grid)


def binned_sum(x, positions):
    total = 0.0
    for i in range(positions.shape[0]):
        total += x[int(positions[i] * 4)]  # (int() of data: a Python int, truncated)
    return total


def rounded_steps(x, t_end, dt):
    """``round()`` of traced scalars: Python ints, half to even (a step count, as simulations
    compute it); with digits, NumPy's scalar."""
    steps = int(round(t_end / dt))
    return np.zeros(steps), round(x[0]) + round(x[1] * 2) + round(3), round(x[2], 1)


def test_round_of_data_is_a_python_int_rounded_half_to_even_with_pythons_errors():
    fn = gcompile.compile(rounded_steps, fullgraph=True)
    for x, t_end in ((np.array([2.5, 1.75, 3.14159]), 10.0), (np.array([-0.5, 0.25, 1.0]), 0.0)):
        got, want = fn(x, t_end, 0.01), rounded_steps(x, t_end, 0.01)
        assert [type(v) for v in got] == [type(v) for v in want]
        assert all(np.array_equal(g, w) for g, w in zip(got, want))
    for value, error in ((np.nan, ValueError), (np.inf, OverflowError)):
        with pytest.raises(error, match="cannot convert float"):
            fn(np.array([value, 0.0, 0.0]), 1.0, 0.1)


def test_int_of_data_indexes_and_raises_pythons_errors():
    x = RNG.random(8)
    check(binned_sum, x, RNG.random(30) * 1.9)
    fn = gcompile.compile(binned_sum, fullgraph=True)
    with pytest.raises(ValueError, match="cannot convert float NaN to integer"):
        fn(x, np.array([0.5, np.nan, 0.1]))
    with pytest.raises(OverflowError, match="cannot convert float infinity"):
        fn(x, np.array([0.5, np.inf, 0.1]))


def returned_region(A, k):
    return A[k[0]]


def region_out_of_a_loop(A, p):
    for i in range(p.shape[0]):
        row = A[p[i]]
    row[0] = 9.0  # NumPy writes A here
    return A


def region_out_of_a_branch(A, k):
    row = A[k[0]]
    chosen = row if k[1] > 0 else A[k[1]]
    chosen[1] = 9.0
    return A


@pytest.mark.parametrize("fn", [returned_region, region_out_of_a_loop, region_out_of_a_branch])
def test_a_region_at_a_data_position_leaving_its_graph_keeps_numpys_view(fn):
    """Returned, carried out of a loop, or out of a branch, the region is refused in the graph
    that made it: whatever runs it (eagerly, a graph break) gives NumPy's view."""
    A, k = RNG.random((3, 4)), np.array([1, 2])
    expected_A = A.copy()
    expected = fn(expected_A, k)
    with pytest.warns(gcompile.GcompileWarning):
        got = gcompile.compile(fn)(A, k)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(A, expected_A)
    if fn is returned_region:
        assert np.shares_memory(got, A)


def _crc32_table():
    table = []
    for i in range(256):
        value = i
        for _ in range(8):
            value = (value >> 1) ^ 0xEDB88320 if value & 1 else value >> 1
        table.append(value)
    return table


CRC32_TABLE = _crc32_table()  # (a module's list of ints: a lookup table)
WEIGHTS = (0.5, 0.25, 0.125, 2.0)
BIG = [2**64 - 1, 1]  # (past int64: not a table NumPy reads as Python does)


def crc32_by_table(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc = (crc >> 8) ^ CRC32_TABLE[(crc & 0xFF) ^ b]
    return (~crc) & 0xFFFFFFFF


def weighted_by_code(codes, x):
    total = 0.0
    for i in range(codes.shape[0]):
        total += WEIGHTS[codes[i]] * x[i]
    return total


def big_entry(x):
    return BIG[int(x.sum())]


def _lookup_in_a_helper(code):
    return CRC32_TABLE[code]  # (the helper's global: not in the compiled function's guard)


def through_a_helper(data):
    crc = 0
    for b in data:
        crc ^= _lookup_in_a_helper(b)
    return crc


def test_lookup_tables_of_the_module_are_constant_arrays_guarded_by_their_items():
    data = RNG.integers(0, 256, 300).astype(np.uint8)
    expected = check(crc32_by_table, data)
    assert type(expected) is int  # (and check compares the types: a Python int too)
    graph = gcompile.trace(crc32_by_table, data)
    assert sum(v.node.target is ops.ELEMENT for v in walk(graph)) == 1
    assert any(loop_of(v.node) for v in walk(graph))
    codes = np.array([3, 0, -1, 2, 1])
    check(weighted_by_code, codes, RNG.random(5))
    fn = gcompile.compile(weighted_by_code, fullgraph=True)
    with pytest.raises(IndexError):
        fn(np.array([0, 4]), RNG.random(2))
    fn = gcompile.compile(crc32_by_table, fullgraph=True)
    assert fn(data) == expected
    first = 0xFF ^ int(data[0])  # (the entry the first byte reads)
    CRC32_TABLE[first] += 1  # a table changed in place: its guard fails, the trace is redone
    try:
        assert fn(data) == crc32_by_table(data) != expected
        assert fn.stats["traces"] == 2
    finally:
        CRC32_TABLE[first] -= 1
    for fn, argument in ((through_a_helper, data), (big_entry, np.zeros(2, np.int64))):
        with pytest.raises(gcompile.UnsupportedError, match="Python integer"):
            gcompile.compile(fn, fullgraph=True)(argument)


@functools.lru_cache
def _cached_crc32_table():
    return _crc32_table()


def crc32_own_table(data):
    """A table the function makes (andrewfurey21/crc's create_lut, cached), read at data
    positions."""
    lut = _cached_crc32_table() if len(data) else [0] * 256
    squares = [k * k for k in range(16)]
    crc = 0xFFFFFFFF
    for b in data:
        crc = (crc >> 8) ^ lut[(crc & 0xFF) ^ b]
    return (~crc) & 0xFFFFFFFF, squares[int(data[0]) & 15]


def changed_table(data):
    lut = [k % 7 for k in range(256)]
    lut[3] = 100  # (a list the function changes is no table: its items are not constants)
    total = 0
    for b in data:
        total += lut[b]
    return total


def test_lists_the_function_makes_and_never_changes_are_tables():
    data = RNG.integers(0, 256, 300).astype(np.uint8)
    assert check(crc32_own_table, data)[0] == crc32_by_table(data)
    graph = gcompile.trace(crc32_own_table, data)
    assert graph.notes.loops and all(note.rolled for note in graph.notes.loops)
    with pytest.raises(gcompile.UnsupportedError, match="Python integer"):
        gcompile.compile(changed_table, fullgraph=True)(data)


def knapsack(weight, value, capacity):
    """LuciusK's 0/1 knapsack: the weights and values Python lists, read at the loop index."""
    bag = np.zeros((len(weight) + 1, capacity + 1), dtype=np.int32)
    for i in range(1, len(weight) + 1):
        for j in range(1, capacity + 1):
            if weight[i - 1] <= j:
                bag[i][j] = max(bag[i - 1][j - weight[i - 1]] + value[i - 1], bag[i - 1][j])
            else:
                bag[i][j] = bag[i - 1][j]
    return bag[-1, -1]


def test_lists_of_numbers_given_as_arguments_are_tables_read_at_loop_indices():
    weight, value = [3, 1, 4, 1, 5, 9, 2, 6], [2, 7, 1, 8, 2, 8, 1, 8]
    fn = gcompile.compile(knapsack, fullgraph=True)
    assert fn(weight, value, 12) == knapsack(weight, value, 12)
    graph = gcompile.trace(knapsack, weight, value, 12)
    assert graph.notes.loops and all(note.rolled for note in graph.notes.loops)
    assert fn(weight[::-1], value, 12) == knapsack(weight[::-1], value, 12)  # (their guard)
    assert fn.stats["traces"] == 2


def centroids(X, labels, k):
    """k-means' update step: the rows of each cluster, by a mask and by their positions."""
    by_mask = np.zeros((k, X.shape[1]))
    by_position = np.zeros((k, X.shape[1]))
    for c in range(k):
        members = X[labels == c]
        by_mask[c] = np.sum(members, axis=0) / max(len(members), 1)
        picked = X[np.where(labels == c)]
        by_position[c] = picked.sum(axis=0)
    return by_mask, by_position


def rows_at(X, positions):
    total = np.zeros(X.shape[1])
    for i in range(positions.shape[0]):
        total += np.take(X, positions[i], axis=0).sum(axis=0)
    return total


def test_rows_gathered_in_a_loop_are_program_loops_with_numpys_errors():
    X, labels = RNG.random((40, 3)), RNG.integers(0, 4, 40)
    check(centroids, X, labels, 5)  # (cluster 4 is empty)
    text = str(gcompile.explain(centroids, X, labels, 5))
    assert "object mode" not in text and "_copies.compress_2d" in text
    compiled = gcompile.compile(rows_at, backend="numba")
    positions = RNG.integers(-40, 40, (6, 5))
    np.testing.assert_allclose(compiled(X, positions), rows_at(X, positions), rtol=1e-15)
    with pytest.raises(IndexError):
        compiled(X, np.full((2, 2), 40))


def chained_positions(A, cube, k):
    """``A[k][j]`` read as one element of ``A`` (not a copy of its row, then an element of it):
    data positions, sizes and ints, negative ones, a region of a region, a row kept and read
    twice."""
    row = A[k[0]]
    return (
        A[k[0]][k[1]] + row[k[1]] + row[0] + A[k[1]][-1],
        cube[k[0]][k[1]][k[2]] * cube[k[2]][1][k[0]],
        cube[k[0]][k[1]] * 2.0,
        A[k[2]][:] + row,
    )


def test_a_region_at_a_data_position_indexed_again_is_one_element_read():
    A, cube = RNG.random((4, 4)), RNG.random((4, 5, 4))
    for k in ([1, 2, 3], [-2, 0, -1], [2, -1, 0]):
        check(chained_positions, A, cube, np.array(k))
    graph = gcompile.trace(chained_positions, A, cube, np.array([1, 2, 3]), stage="optimized")
    reads = [n for n in graph.nodes if n.op == "call" and n.target is ops.ELEMENT]
    regions = [n for n in reads if n.meta.ndim]
    assert all(r.args[0].op == "placeholder" for r in reads)  # (each of A or cube itself)
    assert len(regions) == 3  # (row, cube[k0][k1], A[k2]; no region read an element from)


def new_axes_beside_a_data_index(B, y, i):
    """``np.newaxis`` beside an int read from the data (sweep H's Viterbi), with ``...``."""
    k = y[i]  # (the regions returned as copies: NumPy's would be views of B)
    views = B[None, :, k], B[k, None], B[..., None, k], B[None, k, ..., None], B[..., k]
    return tuple(view.copy() for view in views)


def test_new_axes_beside_an_index_read_from_the_data_are_numpys():
    B, y = np.arange(35.0).reshape(5, 7), np.array([3, 0, 4])
    for i in range(3):
        check(new_axes_beside_a_data_index, B, y, i)
