"""Arrays of other libraries: taken without a copy (DLPack, the array interface, buffers), their
dtype, strides and read-only flag kept, guarded on their type, written through into the
caller's memory, results given back as the caller's kind of array; other devices refused.

The producers are the suite's own (``tests/producers.py``): NumPy arrays behind DLPack only, so
no array library is needed.
"""

import array

import numpy as np
import pytest

import gcompile
from bench.per_call import periodic_laplacian
from gcompile.errors import DeviceError
from tests.producers import Interfaced, Opaque, Tensor


def scaled_sum(x, y):
    return np.sqrt(x * x + y) * 2.0, (x - y).sum()


def accumulate(x, y):
    x[1:] += y[1:] * 0.5
    return x.mean()


SCALED_SUM = gcompile.compile(scaled_sum)
ACCUMULATE = gcompile.compile(accumulate)
RNG = np.random.default_rng(23)


def _data(*shape, dtype=np.float64):
    return RNG.random(shape).astype(dtype)


def _memory(value) -> np.ndarray:
    return np.from_dlpack(value)


def test_dlpack_arguments_are_taken_in_place_and_results_come_back_as_the_callers_kind():
    x, y = _data(40, 3), _data(40, 3)
    for kind, result_kind in ((Tensor, Tensor), (Opaque, np.ndarray), (np.asarray, np.ndarray)):
        out, total = SCALED_SUM(kind(x), kind(y))
        want, want_total = scaled_sum(x, y)
        assert type(out) is result_kind
        np.testing.assert_allclose(np.from_dlpack(out), want, rtol=1e-15)
        assert np.isclose(total, want_total) and np.ndim(total) == 0
    first = [entry.guards()[0] for entry in SCALED_SUM.entries]
    assert first[0].endswith(f"(from {Tensor.__module__}.Tensor)"), first
    assert first[1].endswith(f"(from {Opaque.__module__}.Opaque)"), first
    assert len(first) == 3  # one entry per array type: none serves another type
    change = " ".join(" ".join(r.changes) for r in SCALED_SUM.recompiles)
    assert f"x: {Tensor.__module__}.Tensor -> {Opaque.__module__}.Opaque" in change


def test_the_result_is_the_memory_the_kernel_wrote():
    x, y = _data(64, 3), _data(64, 3)
    out, _ = SCALED_SUM(Tensor(x), Tensor(y))
    memory = _memory(out)
    memory[0, 0] = -1.0  # the Tensor's memory is the NumPy array the program returned
    assert _memory(out)[0, 0] == -1.0


def test_strided_read_only_and_other_dtypes_keep_their_layout():
    base = _data(30, 8, dtype=np.float32)
    strided, other = base[::3, 1::2], _data(10, 4, dtype=np.float32)
    frozen = other.copy()
    frozen.flags.writeable = False
    for x, y in ((strided, other), (strided.T.copy().T, frozen), (frozen, strided)):
        taken = np.from_dlpack(Tensor(x))
        assert np.shares_memory(taken, x) and taken.strides == x.strides
        assert taken.flags.writeable == x.flags.writeable
        out, total = SCALED_SUM(Tensor(x), Tensor(y))
        want, want_total = scaled_sum(x, y)
        assert _memory(out).dtype == np.float32
        np.testing.assert_allclose(_memory(out), want, rtol=1e-6)
        assert np.isclose(total, want_total, rtol=1e-5)
    guards = "\n".join(line for entry in SCALED_SUM.entries for line in entry.guards())
    assert "read-only (from" in guards


def test_writes_land_in_the_callers_memory():
    x, y = _data(50), _data(50)
    want = x.copy()
    want_mean = accumulate(want, y)
    for wrap in (Tensor, Opaque, Interfaced):
        target = x.copy()
        mean = ACCUMULATE(wrap(target), wrap(y))
        np.testing.assert_allclose(target, want, rtol=1e-15)
        assert np.isclose(mean, want_mean)
    buffer = array.array("d", x)  # the buffer protocol: writes land in the array.array
    ACCUMULATE(buffer, memoryview(array.array("d", y)))
    np.testing.assert_allclose(np.frombuffer(buffer), want, rtol=1e-15)


def test_a_read_only_argument_that_is_written_raises_numpys_error():
    frozen = _data(20)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        ACCUMULATE(Tensor(frozen), Tensor(_data(20)))


def test_an_array_on_another_device_is_refused_by_name():
    x = _data(8)
    with pytest.raises(DeviceError, match="CUDA device 1"):
        SCALED_SUM(Tensor(x, device=(2, 1)), Tensor(x))
    with pytest.raises(DeviceError, match="DLPack device type 99"):
        SCALED_SUM(x, Opaque(x, device=(99, 0)))


def test_an_array_numpy_cannot_take_runs_eagerly_with_the_reason():
    class Unreadable(Opaque):
        def __dlpack__(self, **options):
            raise BufferError("no export")

    def twice(x):
        return x * 2

    with pytest.warns(gcompile.GcompileWarning, match="cannot take without a copy"):
        with pytest.raises(TypeError):  # eager NumPy then fails on the object as well
            gcompile.compile(twice)(Unreadable(_data(4)))


def test_numpy_calls_keep_the_fast_entry_after_calls_of_other_arrays():
    laplacian = gcompile.compile(periodic_laplacian)  # one program: it has a fast entry
    u = _data(30)
    want = periodic_laplacian(u, 0.5)
    np.testing.assert_allclose(laplacian(u, 0.5), want)
    numpy_entry = laplacian.entries[0]
    assert numpy_entry.fast.calls == 0
    result = laplacian(Tensor(u), 0.5)  # another entry, taken by the general path only
    assert type(result) is Tensor and laplacian.entries[1].fast is None
    np.testing.assert_allclose(_memory(result), want)
    np.testing.assert_allclose(laplacian(u, 0.5), want)
    assert numpy_entry.fast.calls == 1


def test_jax_cpu_arrays_are_read_in_place():
    jnp = pytest.importorskip("jax.numpy")
    x, y = _data(16, 3), _data(16, 3)
    out, total = SCALED_SUM(jnp.asarray(x), jnp.asarray(y))
    want, want_total = scaled_sum(x, y)
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6)
    assert np.isclose(total, want_total, rtol=1e-6)
