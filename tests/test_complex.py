"""Complex numbers in realistic programs: magnitude, phase and power of a spectrum, rotating
phasors, and what gcompile does with writes into ``.real``/``.imag``.

NumPy's ``.real``/``.imag`` are views into the complex array; gcompile computes them as new
arrays (fused like any elementwise op), turns a write through a part into a write of the complex
array, and takes a part again when it is read after its array was written. The op table's
generated tests (``tests/ir/op_cases.py``) cover the parts op by op; these are whole programs.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gcompile
from gcompile import UnsupportedError
from tests.support import check

EPS = 1e-12


def spectrum(n: int, dtype) -> np.ndarray:
    """The FFT of a noisy two-tone signal (nan-free, with exact zeros and a negative real axis)."""
    t = np.arange(n)
    rng = np.random.default_rng(0)
    signal = np.sin(0.3 * t) + 0.5 * np.cos(1.1 * t) + 0.1 * rng.standard_normal(n)
    z = np.fft.fft(signal).astype(dtype)
    z[3] = 0
    z[5] = -2.0
    return z


def magnitude_and_phase(z):
    magnitude_db = 20 * np.log10(np.abs(z) + EPS)
    phase = np.angle(z)
    power = (z * z.conj()).real
    return magnitude_db, phase, power


def rotate(z, theta):
    """Phasors turned by ``theta``, returned as their parts."""
    w = z * np.exp(1j * theta)
    return w.real, w.imag, np.angle(w, deg=True)


def demodulate(x, omega, t):
    """I/Q demodulation of a real signal: the parts of ``x * e^{-i omega t}``, and its phase."""
    iq = x * np.exp(-1j * omega * t)
    return np.real(iq), np.imag(iq), np.arctan2(iq.imag, iq.real)


def normalise_phasors(z):
    magnitude = np.abs(z)
    unit = np.where(magnitude > 0, z / np.where(magnitude > 0, magnitude, 1), 0)
    return unit, np.hypot(unit.real, unit.imag)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_magnitude_phase_and_power_of_a_spectrum(dtype):
    z = spectrum(64, dtype)
    db, phase, power = check(magnitude_and_phase, z)
    real_dtype = np.finfo(dtype).dtype
    assert db.dtype == phase.dtype == power.dtype == real_dtype
    assert phase[5] == np.pi  # np.angle of a negative real number


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_rotating_phasors(dtype):
    z = spectrum(16, dtype).reshape(4, 4)
    theta = np.linspace(-np.pi, np.pi, 4)
    check(rotate, z, theta)


def test_demodulation_of_a_real_signal():
    t = np.arange(32.0)
    x = np.cos(0.7 * t + 0.25)
    check(demodulate, x, 0.7, t)


def test_normalised_phasors_with_zero_magnitudes():
    check(normalise_phasors, spectrum(32, np.complex128))


def test_parts_of_special_values():
    values = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1.0])
    z = np.empty((6, 6), np.complex128)
    z.real, z.imag = values[:, None], values[None, :]  # every (real, imag) pair, exactly
    check(lambda z: (np.abs(z), np.angle(z), z.real, z.imag, np.conj(z)), z)


def test_returned_part_equals_numpy_view():
    z = spectrum(12, np.complex128).reshape(3, 4)
    real = check(lambda z: z.real, z)
    assert not real.flags.owndata  # eager: a view; compiled: an equal array (checked above)


def test_complex_math_uses_complex_functions_not_float_expansions():
    def f(z, t):
        return np.abs(np.exp(z) * np.sin(z)) + np.exp(t), np.log(z).real

    z, t = spectrum(20, np.complex128).reshape(4, 5), np.linspace(-1, 1, 20).reshape(4, 5)
    check(f, z, t)
    compiled = gcompile.compile(f, fullgraph=True)
    compiled(z, t)
    ((code, _),) = compiled.entries[0].run.program.kernels
    assert all(f"cmath.{name}(" in code.source for name in ("exp", "sin", "log"))
    assert code.source.count("_m.exp_f64(") == 1  # the float exp(t) only


def test_real_part_of_a_real_array_is_the_array():
    def f(x):
        x.real = 3.0  # NumPy: the real part of a real array is the array itself
        x.real += 1
        return x, np.real(x) is x

    check(f, np.zeros(4))


def test_writing_the_imaginary_part_of_a_real_array_says_so():
    def f(x):
        x.imag[0] = 1.0  # NumPy: ValueError, the imaginary part of a real array is read-only
        return x

    with pytest.raises(ValueError, match="the imaginary part of a real array"):
        gcompile.trace(f, np.zeros(3))
    with pytest.raises(ValueError):
        f(np.zeros(3))


def test_part_taken_after_the_write_is_compiled():
    def f(z):
        before = np.abs(z.real)  # a value computed from the part: not a view
        z[0] = 5
        return before, z.real, z

    check(f, spectrum(6, np.complex128))


# -- writes ----------------------------------------------------------------------------------------


def write_real_region(z, x):
    z.real[1:] = x
    return z


def zero_imag(z):
    z.imag[...] = 0
    return z


def shift_real(z):
    z.real += 1
    return z


def assign_parts(z):
    z.imag = z.real  # (z.real is taken before the write: the imaginary part becomes the old real)
    z.real = 3
    return z


def conjugate_in_place_of_a_view(z):
    z[1:].imag *= -1
    return z


def part_view_written(z):
    column = z.imag.T[0]  # a view of a view of the part: the write reaches z
    column[...] = -1
    return z, column


def stale_part(z):
    r = z.real
    z *= 2
    return r + 1, r[1:]


WRITES = [zero_imag, shift_real, assign_parts, conjugate_in_place_of_a_view, part_view_written]


@pytest.mark.parametrize(
    "fn, dtype",
    [(fn, np.complex64) for fn in WRITES + [stale_part]]
    + [(assign_parts, np.complex128), (stale_part, np.complex128)],
)
def test_writes_through_parts_and_reads_after_writes_match_numpy(fn, dtype):
    check(fn, spectrum(12, dtype).reshape(3, 4))


def test_write_real_region_from_a_real_array():
    check(write_real_region, spectrum(8, np.complex128), np.linspace(0, 1, 7, dtype=np.float32))


def test_writes_through_parts_run_compiled():
    def clip_spectrum(z, floor):
        z.real[...] = np.where(np.abs(z) < floor, 0, z.real)
        z.imag[...] = np.where(np.abs(z) < floor, 0, z.imag)
        return np.angle(z)

    z = spectrum(16, np.complex64)
    check(clip_spectrum, z, 2.0)
    with warnings.catch_warnings():  # (check accepts the documented interpreter fallbacks)
        warnings.simplefilter("error", gcompile.GcompileWarning)
        gcompile.compile(clip_spectrum)(z.copy(), 2.0)


def test_parts_of_a_read_only_array_are_read_only():
    z = spectrum(8, np.complex128)
    z.flags.writeable = False

    def f(z):
        z.real[0] = 1
        return z

    with pytest.raises(ValueError, match="read-only"):
        f(z)
    with pytest.raises(ValueError, match="read-only"):
        gcompile.trace(f, z)


def test_part_of_a_scalar_cannot_be_assigned():
    def f(z):
        z.real = 1.0
        return z

    with pytest.raises(AttributeError):
        f(np.complex128(1 + 2j))
    with pytest.raises(AttributeError):
        gcompile.trace(f, np.complex128(1 + 2j))


def reshaped_part(z):
    flat = z.real.reshape(-1)
    z[0] = 1
    return flat


def test_reshape_of_a_part_in_a_writing_function_is_refused_naming_the_line():
    z = spectrum(12, np.complex128).reshape(3, 4)
    with pytest.raises(UnsupportedError, match="reshape or ravel of z.real") as info:
        gcompile.trace(reshaped_part, z)
    assert "flat = z.real.reshape(-1)" in str(info.value)
    compiled = gcompile.compile(reshaped_part)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", gcompile.GcompileWarning)
        result = compiled(z.copy())
    assert "reshape or ravel of z.real" in str(caught[0].message)  # (a graph break there)
    np.testing.assert_array_equal(result, reshaped_part(z.copy()))
    assert "reshape or ravel of z.real" in str(gcompile.explain(reshaped_part, z))


def test_writing_the_imaginary_part_of_a_real_array_fails_like_numpy():
    def f(x):
        x.imag[0] = 1
        return x

    with pytest.raises(ValueError, match="read-only"):
        f(np.zeros(3))
    with pytest.raises(ValueError, match="read-only"):
        gcompile.trace(f, np.zeros(3))


def test_reshape_of_a_part_that_is_not_written_compiles():
    def f(z, x):
        flat = z.real.reshape(-1)
        x[0] = 1  # a write, but not into z
        return flat * x[0]

    check(f, spectrum(12, np.complex128).reshape(3, 4), np.zeros(2))


def test_no_interpreter_fallback_for_parts():
    """The parts compile into a Numba kernel: no warning, no kernel left to the interpreter."""
    z = spectrum(8, np.complex64)
    fn = gcompile.compile(magnitude_and_phase)
    with warnings.catch_warnings():
        warnings.simplefilter("error", gcompile.GcompileWarning)
        got = fn(z)
    for a, b in zip(got, magnitude_and_phase(z)):
        assert a.dtype == b.dtype and a.shape == b.shape
    program = fn.entries[-1].run.program
    assert program.kernels and not program.notes  # notes: kernels run in the interpreter


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_division_is_numpys_to_the_bit_and_a_zero_divisor_gives_inf_or_nan(dtype):
    """NumPy's algorithm (Numba's, CPython's, raises on a zero divisor and rounds otherwise)."""
    parts = np.array([0.0, -0.0, 1.5, -3.0, 1e-30, 7e25, np.inf, -np.inf, np.nan])
    a = (parts[:, None] + 1j * parts[None, :]).ravel().astype(dtype)
    rng = np.random.default_rng(5)
    b = np.concatenate([a, (rng.standard_normal(81) + 1j * rng.standard_normal(81)).astype(dtype)])
    a = np.concatenate([a, a[::-1]])
    real = parts[rng.integers(0, parts.size, a.size)].astype(a.real.dtype)
    with np.errstate(all="ignore"):
        expected = (a / b, a / real, real / a)
        got = gcompile.compile(lambda x, y, r: (x / y, x / r, r / x))(a, b, real)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype
        view = e.real.dtype
        np.testing.assert_array_equal(g.view(view), e.view(view))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_products_and_squares_are_numpys_to_the_bit(dtype):
    """NumPy's loops round each part of a complex product once (an FMA) where the machine has
    FMA; an iteration ``z = z * z + c`` (Mandelbrot) then keeps NumPy's bits for its steps."""
    rng = np.random.default_rng(9)
    a, b = ((rng.standard_normal(257) + 1j * rng.standard_normal(257)).astype(dtype) for _ in "ab")

    def iterate(z, c):
        for _ in range(3):
            z = z * z + c
        return a * b, np.square(a), z

    got, expected = gcompile.compile(iterate)(a, b), iterate(a, b)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype
        np.testing.assert_array_equal(g.view(e.real.dtype), e.view(e.real.dtype))
