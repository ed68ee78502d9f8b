"""compare(fn, *args): eager NumPy against the compiled function, on copies of the same inputs.

The report answers "is the compiled result right?" and "is it faster?": per
output (and per mutated argument) the dtype and shape agreement, the largest
absolute and relative error and the largest distance in ulp; the first call's
time with the compile inside it, the steady-state medians of both, the speed-up.
"""

from __future__ import annotations

import statistics
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..api import CompiledFunction, compile
from ..guards import ArgumentBinder
from ..ir.pytree import flatten


def copy_inputs(value: Any) -> Any:
    """A deep copy of arguments that keeps each array's layout (C, F, or strided with the same stride
    signs) and read-only flag, so two runs see equivalent inputs."""
    if isinstance(value, np.ndarray):
        if value.flags.c_contiguous or value.flags.f_contiguous:
            out = value.copy(order="K")
        else:
            base = np.zeros(tuple(s * 2 for s in value.shape), value.dtype)
            out = base[tuple(slice(None, None, -2 if st < 0 else 2) for st in value.strides)]
            out[...] = value
        out.flags.writeable = value.flags.writeable
        return out
    if isinstance(value, tuple):
        return tuple(copy_inputs(v) for v in value)
    if isinstance(value, list):
        return [copy_inputs(v) for v in value]
    if isinstance(value, dict):
        return {k: copy_inputs(v) for k, v in value.items()}
    return value


def ulp_distance(expected: Any, actual: Any) -> np.ndarray:
    """Elementwise distance in units in the last place of ``expected``'s float dtype.

    Equal values (including two NaNs, or +0 and -0) are 0 apart; a NaN against a number is inf.
    """
    e = np.asarray(expected)
    a = np.asarray(actual).astype(e.dtype)
    if e.dtype.kind == "c":
        return np.maximum(ulp_distance(e.real, a.real), ulp_distance(e.imag, a.imag))
    spacing = np.spacing(np.abs(e))
    spacing = np.where(spacing == 0, np.finfo(e.dtype).smallest_subnormal, spacing)
    with np.errstate(all="ignore"):
        dist = np.abs(a.astype(np.float64) - e.astype(np.float64)) / spacing.astype(np.float64)
    same = (e == a) | (np.isnan(e) & np.isnan(a))
    dist = np.where(same, 0.0, dist)
    return np.where(np.isnan(dist), np.inf, dist)


@dataclass
class Agreement:
    """How one output (or mutated argument) of the compiled run compares with eager's."""

    path: str
    eager_dtype: str
    compiled_dtype: str
    eager_shape: tuple
    compiled_shape: tuple
    max_abs: float = 0.0
    max_rel: float = 0.0
    max_ulp: float = 0.0
    max_scaled_ulp: float = 0.0  # the distance in ulp of the largest eager value
    ok: bool = True

    def line(self) -> str:
        status = "ok  " if self.ok else "DIFF"
        kind = f"{self.eager_dtype}{list(self.eager_shape)}"
        if (self.eager_dtype, self.eager_shape) != (self.compiled_dtype, self.compiled_shape):
            kind += f" vs compiled {self.compiled_dtype}{list(self.compiled_shape)}"
        return (
            f"  {status} {self.path:<16} {kind:<24} max abs {self.max_abs:.3g}  max rel {self.max_rel:.3g}  "
            f"max ulp {self.max_ulp:.3g} ({self.max_scaled_ulp:.3g} at the result's scale)"
        )


@dataclass
class CompareReport:
    """Result of ``compare``; ``str(report)`` is the readable report."""

    name: str
    backend: str
    outputs: list = field(default_factory=list)
    arguments: list = field(default_factory=list)
    first_call_s: float = 0.0
    compile_s: float = 0.0
    eager_median_s: float = 0.0
    compiled_median_s: float = 0.0
    repeat: int = 0
    fallbacks: int = 0

    @property
    def ok(self) -> bool:
        """True when every output and every argument agrees within tolerance."""
        return all(a.ok for a in self.outputs + self.arguments)

    @property
    def speedup(self) -> float:
        """Eager steady-state median over compiled steady-state median."""
        return (
            self.eager_median_s / self.compiled_median_s if self.compiled_median_s else float("nan")
        )

    def __str__(self) -> str:
        lines = [f"gcompile compare: {self.name} (backend {self.backend})", "agreement:"]
        lines += [a.line() for a in self.outputs] or ["  (no outputs)"]
        if self.arguments:
            lines.append("arguments after the call (mutations):")
            lines += [a.line() for a in self.arguments]
        lines += [
            "time:",
            f"  first compiled call {_ms(self.first_call_s)} (of which compile {_ms(self.compile_s)})",
            f"  steady state, median of {self.repeat}: eager {_ms(self.eager_median_s)}, "
            f"compiled {_ms(self.compiled_median_s)}, speed-up {self.speedup:.2f}x",
        ]
        if self.fallbacks:
            lines.append(f"  warning: {self.fallbacks} call(s) ran eagerly (see fn.refusals)")
        lines.append("result: " + ("AGREE" if self.ok else "DISAGREE"))
        return "\n".join(lines)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms"


def agreement(path: str, expected: Any, actual: Any, ulps: float) -> Agreement:
    """Compare one eager value with one compiled value."""
    e, a = np.asarray(expected), np.asarray(actual)
    report = Agreement(path, str(e.dtype), str(a.dtype), e.shape, a.shape)
    if e.dtype != a.dtype or e.shape != a.shape or type(expected) is not type(actual):
        report.ok = False
        return report
    if e.size == 0 or e.dtype.kind not in "biufc":
        report.ok = bool(np.array_equal(e, a))
        return report
    with np.errstate(all="ignore"):
        wide = np.complex128 if e.dtype.kind == "c" else np.float64
        diff = np.abs(e.astype(wide) - a.astype(wide))
        diff = np.where((e == a) | (np.isnan(diff) & (np.isnan(e) & np.isnan(a))), 0.0, diff)
        report.max_abs = float(np.nanmax(np.where(np.isnan(diff), np.inf, diff)))
        scale = np.abs(e.astype(wide))
        rel = np.where(diff == 0, 0.0, diff / np.where(scale == 0, 1.0, scale))
        report.max_rel = float(np.max(rel))
    if e.dtype.kind in "fc":
        # A float agrees when it is within ``ulps`` of eager's value, or within ``ulps`` at the
        # magnitude of the whole result: where a program cancels (a put price of 1e-13 from
        # terms of 100), a last-bit difference in its inputs is many ulps of the tiny result.
        distance = ulp_distance(e, a)
        finite = np.isfinite(e) & np.isfinite(a)
        magnitude = float(np.max(np.abs(e[finite]), initial=0.0))
        unit = float(np.spacing(np.finfo(e.dtype).dtype.type(magnitude)))
        with np.errstate(all="ignore"):
            scaled = np.where(finite, diff / unit, np.inf)
        report.max_ulp = float(np.max(distance))
        report.max_scaled_ulp = float(np.max(np.where(distance == 0, 0.0, scaled)))
        report.ok = float(np.max(np.minimum(distance, scaled))) <= ulps
    else:
        report.ok = report.max_abs == 0
    return report


def _time_once(fn: Callable, args: tuple, kwargs: dict) -> float:
    """Seconds one call of ``fn`` takes on fresh copies of the arguments (copying not timed)."""
    run_args, run_kwargs = copy_inputs(args), copy_inputs(kwargs)
    start = time.perf_counter()
    fn(*run_args, **run_kwargs)
    return time.perf_counter() - start


def compare(
    fn: Callable,
    *args: Any,
    repeat: int = 20,
    ulps: float = 8,
    backend: str | None = None,
    **kwargs: Any,
) -> CompareReport:
    """Run ``fn`` eagerly and compiled on copies of the same inputs and report agreement and time.

    Args:
        fn: a plain function or a ``CompiledFunction`` (its options are reused, its cache is not).
        repeat: runs of each variant for the steady-state medians.
        ulps: largest distance in ulp accepted for float outputs, per element or at the
            magnitude of the whole output. The default allows each transcendental to differ
            by the last bit (Numba calls libm, NumPy its own SIMD loops) and a few operations
            to carry that difference on.
        backend: backend to compile with (default: the function's, else ``"numba"``).

    Example:
        >>> print(gcompile.compare(black_scholes, S, K, T, 0.05, 0.2))
    """
    settings: dict = {}
    if isinstance(fn, CompiledFunction):
        settings = {"static_argnames": fn.static_argnames, "options": fn.options}
        backend = backend or fn.backend
        fn = fn.eager
    backend = backend or "numba"
    compiled = compile(fn, backend=backend, **settings)
    name = getattr(fn, "__name__", "fn")
    report = CompareReport(name, backend, repeat=repeat)

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        eager_args, eager_kwargs = copy_inputs(args), copy_inputs(kwargs)
        expected = fn(*eager_args, **eager_kwargs)
        run_args, run_kwargs = copy_inputs(args), copy_inputs(kwargs)
        start = time.perf_counter()
        actual = compiled(*run_args, **run_kwargs)
        report.first_call_s = time.perf_counter() - start
    entry = compiled.entries[0] if compiled.entries else None
    report.compile_s = sum(entry.timings.values()) if entry else 0.0

    expected_leaves, _ = flatten(expected, "out")
    actual_leaves, _ = flatten(actual, "out")
    if len(expected_leaves) != len(actual_leaves):
        report.outputs.append(
            Agreement(
                "out",
                "structure",
                "structure",
                (len(expected_leaves),),
                (len(actual_leaves),),
                ok=False,
            )
        )
    for (path, e), (_, a) in zip(expected_leaves, actual_leaves):
        report.outputs.append(agreement(path, e, a, ulps))
    binder = ArgumentBinder(fn, settings.get("static_argnames", ()))
    for (path, e), (_, a) in zip(
        binder.bind(eager_args, eager_kwargs).leaves, binder.bind(run_args, run_kwargs).leaves
    ):
        if isinstance(e, np.ndarray):
            report.arguments.append(agreement(path, e, a, ulps))

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        eager_times, compiled_times = [], []
        for _ in range(repeat):  # interleaved, so drift on a shared machine hits both alike
            eager_times.append(_time_once(fn, args, kwargs))
            compiled_times.append(_time_once(compiled, args, kwargs))
    report.eager_median_s = statistics.median(eager_times)
    report.compiled_median_s = statistics.median(compiled_times)
    report.fallbacks = compiled.stats["fallbacks"]
    return report
