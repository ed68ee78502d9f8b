"""Lazy mode: values whose NumPy operations are recorded and compiled together when one is
needed give eager NumPy's results, compile once per structure, and keep eager's semantics
for writes and views."""

import numpy as np
import pytest

import gcompile
from gcompile.deferred import replay
from gcompile.deferred.array import LazyArray

RNG = np.random.default_rng(23)
pytestmark = pytest.mark.filterwarnings("error::gcompile.GcompileWarning")  # all compiled


def chain(a, t):
    b = a * 2.0
    b = b + t
    b = np.sin(b)
    b = b * b
    b = np.exp(b - 0.5)
    b = b / 3.0
    b = b + a
    return np.sqrt(b) * 1.5


def test_a_loop_of_lines_compiles_once_and_gives_eagers_results():
    x = RNG.random(300)
    before = len(replay._COMPILED)
    for t in (0.5, 1.0, 2.5, -1.0):  # (a new float is a new input, not a new structure)
        result = chain(gcompile.lazy(x), t)
        assert type(result) is LazyArray and result.step is not None  # nothing ran yet
        np.testing.assert_allclose(np.asarray(result), chain(x, t), rtol=1e-14)
    assert len(replay._COMPILED) == before + 1
    (compiled,) = [f for f in replay._COMPILED.values() if f.stats["calls"] == 4]
    assert compiled.stats["traces"] == 1
    # the lines' values the loop dropped are no results: one kernel, one output
    assert len(compiled.entries[0].graph.output_node.args[0]) == 1


def test_each_need_of_a_value_computes_it():
    x = np.arange(1.0, 7.0)
    lazy = gcompile.lazy
    checks = [
        (lambda v: str(v), str(x * 2)),
        (lambda v: repr(v), f"lazy({x * 2!r})"),
        (lambda v: bool(v.sum() > 3), True),
        (lambda v: float(v[2]), 6.0),
        (lambda v: int(v[0]), 2),
        (lambda v: len(v), 6),
        (lambda v: list(v)[-1], 12.0),
        (lambda v: v.shape, (6,)),
        (lambda v: np.linalg.eigvals(np.diag(v)).real.max(), 12.0),  # not recorded: eager
        (lambda v: range(6)[v[0].astype(np.int64)], 2),
    ]
    for need, want in checks:
        assert need(lazy(x) * 2) == want
    with gcompile.lazy() as wrap:
        y = np.where(wrap(x) > 3, wrap(x), 0.0).astype(np.float32).reshape(2, 3).T
        total = y.sum(axis=0)
        assert y.step is not None
    np.testing.assert_array_equal(
        y.value, np.where(x > 3, x, 0.0).astype(np.float32).reshape(2, 3).T
    )
    np.testing.assert_array_equal(total.value, y.value.sum(axis=0))


def test_writes_and_views_keep_eager_semantics():
    x = np.arange(10.0)
    a = gcompile.lazy(x)
    doubled = a * 2  # recorded before the writes: sees the old memory
    view = a[2:5]
    view[0] = 100.0  # a write through a view: lands in x (and flushes what was recorded)
    assert x[2] == 100.0 and doubled.value[2] == 4.0
    later = a * 2
    a += 1  # ``out=``: eager, in place; ``a`` stays lazy
    assert type(a) is LazyArray and x[2] == 101.0 and np.asarray(later)[2] == 200.0
    np.multiply(a, 0.5, out=a)
    assert x[2] == 50.5
    a[-1] = -1.0
    assert x[-1] == -1.0 and float((a[-1] + 1) * 3) == 0.0


OPS = [
    lambda v: v * 1.5,
    lambda v: v - 0.25,
    lambda v: np.tanh(v),
    lambda v: np.abs(v),
    lambda v: np.maximum(v, 0.3),
    lambda v: v[::-1],
    lambda v: v[1:] + v[:-1],
    lambda v: np.where(v > 0.5, v, -v),
    lambda v: (v * v).sum(axis=-1, keepdims=True) + v,
    lambda v: np.exp(-v),
    lambda v: v.T,
]


@pytest.mark.parametrize("seed", range(8))
def test_random_programs_agree_with_eager(seed):
    rng = np.random.default_rng(seed)
    x = rng.random((6, 7))
    program = [OPS[i] for i in rng.integers(len(OPS), size=5)]
    eager, lazy = x, gcompile.lazy(x)
    for op in program:
        eager, lazy = op(eager), op(lazy)
    np.testing.assert_allclose(np.asarray(lazy), eager, rtol=1e-13, atol=1e-15)
    assert np.asarray(lazy).shape == eager.shape


@pytest.mark.filterwarnings("ignore::gcompile.GcompileWarning")  # (the failing call runs eagerly)
def test_numpys_error_is_raised_when_the_value_is_needed_and_only_then():
    bad = gcompile.lazy(np.ones(3)) + gcompile.lazy(np.ones(4))
    good = gcompile.lazy(np.ones(3)) * 2
    np.testing.assert_array_equal(np.asarray(good), [2.0, 2.0, 2.0])  # (bad: still pending)
    for _ in range(2):
        with pytest.raises(ValueError, match="broadcast"):
            np.asarray(bad)
    with pytest.raises(ValueError, match="broadcast"):
        with gcompile.lazy():
            pass  # (a block's end computes what is pending, and raises)
    del bad
